"""StatefulSets: kube-controller-manager's StatefulSet controller (k8s.io/kubernetes v1.36.3
pkg/controller/statefulset stateful_set_control.go updateStatefulSet), one sync per set each loop iteration.

A set's pods are `<set>-<ordinal>`, each with its claims `<claim>-<set>-<ordinal>` from volumeClaimTemplates
(stateful_set_utils.go getPodName, getPersistentVolumeClaimName), made before the pod and kept after it: a pod
made again mounts the same claim, whose volume's node affinity pins it to its zone. OrderedReady makes an
ordinal once the lower ones are Running, Ready and available, and removes the highest first, one at a time;
Parallel does both at once. RollingUpdate replaces from the highest ordinal down to its partition, one at a
time; OnDelete when a pod is deleted. persistentVolumeClaimRetentionPolicy is the claims' owner references,
which the garbage collector follows. Why it is built this way: docs/architecture/loop.md.
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field

from harness.backends.base import ADMIN, APIRejected, retry_on_conflict
from harness.loop.state import LoopState
from harness.loop.scheduling.topology import selector_matches
from harness.model.kube.poddefaults import made_from_template, stored_template

# k8s.io/api apps/v1 types.go: StatefulSetRevisionLabel, StatefulSetPodNameLabel, PodIndexLabel
REVISION_LABEL = "controller-revision-hash"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
ORDERED_READY, PARALLEL = "OrderedReady", "Parallel"
ROLLING_UPDATE, ON_DELETE = "RollingUpdate", "OnDelete"
RETAIN, DELETE = "Retain", "Delete"
_ORDINAL = re.compile(r"(.*)-([0-9]+)$")        # stateful_set_utils.go statefulPodRegex


def parent_and_ordinal(pod_name: str) -> tuple[str, int]:
    """getParentNameAndOrdinal: ("", -1) for a name that ends in no ordinal."""
    m = _ORDINAL.fullmatch(pod_name)
    if m is None:
        return "", -1
    ordinal = int(m.group(2))
    return (m.group(1), ordinal) if ordinal < 2 ** 31 else (m.group(1), -1)


def defaulted(obj: dict) -> dict:
    """A copy of a StatefulSet as the API server stores it (k8s.io/kubernetes v1.36.3 pkg/apis/apps/v1/defaults.go
    SetDefaults_StatefulSet): OrderedReady, RollingUpdate with partition 0 when no type is given (a RollingUpdate
    type given without rollingUpdate keeps none), Retain/Retain, one replica. rollingUpdate.maxUnavailable is
    dropped: the MaxUnavailableStatefulSet gate is off by default (pkg/features/kube_features.go, beta since 1.35)
    and the strategy drops a disabled field on create (pkg/registry/apps/statefulset/strategy.go
    dropStatefulSetDisabledFields)."""
    out = copy.deepcopy(obj)
    spec = out.setdefault("spec", {})
    spec["podManagementPolicy"] = spec.get("podManagementPolicy") or ORDERED_READY
    strategy = spec.get("updateStrategy") or {}
    if not strategy.get("type"):
        strategy = {**strategy, "type": ROLLING_UPDATE, "rollingUpdate": strategy.get("rollingUpdate") or {}}
    if strategy["type"] == ROLLING_UPDATE and isinstance(strategy.get("rollingUpdate"), dict):
        ru = dict(strategy["rollingUpdate"])
        ru.setdefault("partition", 0)
        ru.pop("maxUnavailable", None)
        strategy["rollingUpdate"] = ru
    spec["updateStrategy"] = strategy
    policy = dict(spec.get("persistentVolumeClaimRetentionPolicy") or {})
    policy["whenDeleted"] = policy.get("whenDeleted") or RETAIN
    policy["whenScaled"] = policy.get("whenScaled") or RETAIN
    spec["persistentVolumeClaimRetentionPolicy"] = policy
    spec["replicas"] = 1 if spec.get("replicas") is None else int(spec["replicas"])
    return out


def revision_of(name: str, template: dict) -> str:
    """The controller-revision-hash of a pod template: `<set>-<hash>`. (harness assumption: the hash is a digest
    of the stored template of the harness's own, not history.HashControllerRevision's digits; two templates the
    API server stores alike get one revision, as getStatefulSetRevisions finds an equal one.)"""
    text = json.dumps(stored_template(template), sort_keys=True, default=str)
    return f"{name}-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


@dataclass
class SetRun:
    """One StatefulSet as its controller holds it: the stored object, its revisions' pod templates, the current
    and update revision (status.currentRevision, updateRevision) and status.currentReplicas."""
    namespace: str
    name: str
    obj: dict
    uid: str
    templates: dict[str, dict] = field(default_factory=dict)
    current: str = ""
    update: str = ""
    current_replicas: int = 0
    adopted: dict[str, str] = field(default_factory=dict)     # pod key -> revision, for the pods adopted at create

    @property
    def spec(self) -> dict:
        return self.obj["spec"]

    @property
    def replicas(self) -> int:
        return int(self.spec.get("replicas", 1))

    @property
    def start(self) -> int:
        return int((self.spec.get("ordinals") or {}).get("start") or 0)

    @property
    def monotonic(self) -> bool:
        return self.spec.get("podManagementPolicy") != PARALLEL

    @property
    def policy(self) -> dict:
        return self.spec["persistentVolumeClaimRetentionPolicy"]

    def in_range(self, ordinal: int) -> bool:
        return self.start <= ordinal < self.start + self.replicas


class StatefulSets:
    """The StatefulSet controller: `add` a set (a manifest applied), `update` it (kubectl apply, scale, rollout
    restart), `delete` it; `reconcile` syncs each set once."""

    def __init__(self, state: LoopState):
        self.state = state
        self.sets: dict[tuple[str, str], SetRun] = {}
        self.owned: set[tuple[str, str]] = set()      # the claims a set gave an owner reference (_collect_claims)

    # -- what Workloads applies --------------------------------------------------------------------------
    def add(self, obj: dict) -> None:
        """A StatefulSet created: stored as the API server stores it; pods of it already running
        (given.existingNodes, a dump's) are adopted - of its template's revision when made from it, else of an old
        revision the update strategy replaces."""
        s = self.state
        obj = defaulted(obj)
        ns = obj["metadata"].get("namespace") or "default"
        obj["metadata"]["namespace"] = ns
        stored = s.cluster.create(obj, ADMIN)
        st = SetRun(ns, obj["metadata"]["name"], obj, stored["metadata"]["uid"])
        tmpl = (obj["spec"].get("template")) or {}
        st.update = st.current = revision_of(st.name, tmpl)
        st.templates[st.update] = copy.deepcopy(tmpl)
        made = made_from_template(tmpl)
        for key in self._orphans(st):
            self._adopt(st, key)
        for key in self._live(st):
            if made(s.pod_views[key].obj):
                st.adopted[key] = st.update
            else:                # a dump's pod of another revision: the update strategy replaces it
                st.adopted[key] = st.current = f"{st.name}-adopted"
        self.sets[(ns, st.name)] = st
        s.trace(f"StatefulSet {ns}/{st.name}: {st.replicas} replica(s), {st.spec['podManagementPolicy']}, "
                f"{st.spec['updateStrategy']['type']}, revision {st.update}")
        self._sync(st)

    def _orphans(self, st: SetRun) -> list[str]:
        """The live pods the set claims (stateful_set.go getPodsForStatefulSet, ClaimPods with isMemberOf): in
        its namespace, named `<set>-<ordinal>`, its selector matching their labels, owned by no workload of the
        loop (a running pod given.existingNodes or a dump seeded), not terminating (ClaimObject ignores those)."""
        s = self.state
        selector = st.spec.get("selector")
        prefix = f"{st.namespace}/{st.name}-"
        return [k for k, pv in s.pod_views.items()
                if k.startswith(prefix) and not pv.owner_kind and parent_and_ordinal(pv.name)[0] == st.name
                and not self._terminating(k) and selector_matches(selector, pv.labels)]

    def _adopt(self, st: SetRun, key: str) -> None:
        """An orphan the set claims becomes its pod, with its controller reference (k8s.io/kubernetes v1.36.3
        pkg/controller/controller_ref_manager.go AdoptPod): core then sees it as the set's (IsOwnedByStatefulSet)."""
        s = self.state
        s.adopt_pod(key, "StatefulSet", st.name)
        pv = s.pod_views[key]
        meta = pv.obj["metadata"]
        ref = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": st.name, "uid": st.uid,
               "controller": True, "blockOwnerDeletion": True}
        meta["ownerReferences"] = [r for r in meta.get("ownerReferences") or [] if not r.get("controller")] + [ref]
        stored = s.cluster.get("Pod", pv.name, pv.namespace)
        if stored is not None:
            stored["metadata"]["ownerReferences"] = meta["ownerReferences"]
            try:
                s.cluster.update(stored, ADMIN)
            except APIRejected:
                pass
        s.changed_in_place(key)

    def update(self, obj: dict) -> None:
        """`kubectl apply` of a StatefulSet that exists: replicas, template, updateStrategy, minReadySeconds,
        ordinals and the retention policy may change (the loader refused any other change: the API server's
        ValidateStatefulSetUpdate); a new template is a new update revision."""
        s = self.state
        ns = obj["metadata"].get("namespace") or "default"
        st = self.sets[(ns, obj["metadata"]["name"])]
        new = defaulted(obj)
        new["metadata"]["namespace"] = ns
        for k in ("replicas", "template", "updateStrategy", "minReadySeconds", "ordinals",
                  "persistentVolumeClaimRetentionPolicy"):
            if k in new["spec"]:
                st.spec[k] = new["spec"][k]
            else:
                st.spec.pop(k, None)
        for k in ("labels", "annotations"):
            if k in new["metadata"]:
                st.obj["metadata"][k] = new["metadata"][k]
        rev = revision_of(st.name, st.spec.get("template") or {})
        if rev != st.update:
            st.templates.setdefault(rev, copy.deepcopy(st.spec.get("template") or {}))
            st.update = rev
            s.trace(f"StatefulSet {ns}/{st.name}: update revision {rev}")
        self._store(st)
        self._sync(st)

    def _store(self, st: SetRun) -> None:
        """The set's new spec and metadata, written to the API server."""
        s = self.state
        stored = s.cluster.get("StatefulSet", st.name, st.namespace)
        if stored is None:
            return
        stored["spec"] = copy.deepcopy(st.spec)
        for k in ("labels", "annotations"):
            if k in st.obj["metadata"]:
                stored["metadata"][k] = st.obj["metadata"][k]
        s.cluster.update(stored, ADMIN)

    def delete(self, namespace: str, name: str) -> None:
        """`kubectl delete statefulset NAME` (background propagation): the set goes, the garbage collector
        deletes its pods and the claims it owns (whenDeleted: Delete); a claim it does not own stays."""
        s = self.state
        st = self.sets.pop((namespace, name))
        try:
            s.cluster.delete("StatefulSet", name, namespace)
        except APIRejected:
            pass
        for key in self._live(st):
            s.terminate_pod(key, f"its owner, StatefulSet {name}, was deleted (garbage collector)")
        self._collect_claims()

    def reconcile(self) -> bool:
        progress = self._collect_claims()
        for st in list(self.sets.values()):
            progress |= self._sync(st)
        return progress

    def next_deadline(self) -> float | None:
        """When a pod bound already becomes available (minReadySeconds past its start), for a set waiting on it."""
        now, times = self.state.clock.now(), []
        for st in self.sets.values():
            if int(st.spec.get("minReadySeconds") or 0) <= 0:
                continue
            for key in self._live(st):
                at = self._available_at(st, key)
                if at is not None and at > now:
                    times.append(at)
        return min(times, default=None)

    # -- one sync (stateful_set_control.go updateStatefulSet) ----------------------------------------------
    def _live(self, st: SetRun) -> list[str]:
        """The set's pods that exist (terminating ones included), as the controller lists them."""
        s = self.state
        return [k for k in s.pods_of_owner("StatefulSet", st.namespace, st.name)
                if k in s.pod_views and s.result.pods[k].state != "deleted"]

    def _terminating(self, key: str) -> bool:
        return key in self.state.terminating or bool(self.state.pod_views[key].obj["metadata"].get("deletionTimestamp"))

    def _ready(self, key: str) -> bool:
        """isRunningAndReady: a simulated pod runs, and is Ready, once bound."""
        pr = self.state.result.pods[key]
        return bool(pr.node) and pr.state == "scheduled" and not self._terminating(key)

    def _available_at(self, st: SetRun, key: str) -> float | None:
        s = self.state
        if not self._ready(key):
            return None
        pr = s.result.pods[key]
        started = s.disruption.pod_started.get(key, pr.at.get("bound", s.clock.now()))
        return started + int(st.spec.get("minReadySeconds") or 0)

    def _available(self, st: SetRun, key: str) -> bool:
        """isRunningAndAvailable; isUnavailable is its negation, or terminating."""
        at = self._available_at(st, key)
        return at is not None and at <= self.state.clock.now()

    def _revision(self, st: SetRun, key: str) -> str:
        """The pod's revision: its controller-revision-hash, or for a pod adopted at the set's create the
        revision it was judged to be of."""
        if key in st.adopted:
            return st.adopted[key]
        return (self.state.pod_views[key].obj["metadata"].get("labels") or {}).get(REVISION_LABEL, "")

    def _sync(self, st: SetRun) -> bool:
        progress = self._sync_pods(st)
        self._update_status(st)
        return progress

    def _sync_pods(self, st: SetRun) -> bool:
        s = self.state
        by_ordinal: dict[int, str] = {}
        condemned: list[tuple[int, str]] = []
        for key in self._live(st):
            parent, ordinal = parent_and_ordinal(s.pod_views[key].name)
            if ordinal < 0 or parent != st.name:
                continue
            if st.in_range(ordinal):
                by_ordinal[ordinal] = key
            else:
                condemned.append((ordinal, key))
        condemned.sort(reverse=True)
        ordinals = range(st.start, st.start + st.replicas)
        progress = False
        # processReplica, in ordinal order; OrderedReady stops at the first that blocks
        for ordinal in ordinals:
            key = by_ordinal.get(ordinal)
            if key is None:
                if not self._claim_is_stale(st, ordinal):
                    progress |= self._create(st, ordinal)
                if st.monotonic:
                    return progress
                continue
            progress |= self._claims_for_retention(st, ordinal, key)
            if st.monotonic and not self._available(st, key):      # terminating, not Ready, or not yet available
                return progress
        # condemned pods: their claims follow whenScaled, then they go, the highest ordinal first; OrderedReady
        # waits for each to be gone, and deletes one not available only when it is the first unhealthy pod
        for ordinal, key in condemned:
            progress |= self._claims_for_retention(st, ordinal, key)
        first_unhealthy = next((k for _, k in reversed(condemned) if not self._available(st, k)), None)
        for ordinal, key in condemned:
            if self._terminating(key):
                if st.monotonic:
                    return progress
                continue
            if st.monotonic and key != first_unhealthy and not self._available(st, key):
                return progress
            self._delete_pod(st, key, f"StatefulSet {st.name} scaled to {st.replicas}")
            progress = True
            if st.monotonic:
                return progress
        strategy = st.spec["updateStrategy"]
        if strategy.get("type") == ON_DELETE:
            return progress
        partition = int((strategy.get("rollingUpdate") or {}).get("partition") or 0)
        # the highest ordinal not at the update revision goes; one at a time, each waiting for the one before
        for ordinal in reversed(ordinals):
            if ordinal - st.start < partition:
                break
            key = by_ordinal.get(ordinal)
            if key is None:                    # made in this sync (Parallel): not available yet
                return progress
            if self._revision(st, key) != st.update and not self._terminating(key):
                self._delete_pod(st, key, f"StatefulSet {st.name} rolled to revision {st.update}")
                return True
            if not self._available(st, key):
                return progress
        return progress

    def _update_status(self, st: SetRun) -> None:
        """status.currentReplicas, and completeRollingUpdate: once every replica is Ready at the update revision,
        the update revision is current."""
        live = [k for k in self._live(st) if not self._terminating(k)]
        if st.spec["updateStrategy"].get("type") == ROLLING_UPDATE and st.current != st.update and \
                len(live) == st.replicas and all(self._ready(k) and self._revision(st, k) == st.update for k in live):
            st.current = st.update
            self.state.trace(f"StatefulSet {st.namespace}/{st.name}: revision {st.update} is current")
        st.current_replicas = sum(1 for k in live if self._revision(st, k) == st.current)

    def _new_revision(self, st: SetRun, ordinal: int) -> str:
        """newVersionedStatefulSetPod: below the partition (or, without rollingUpdate, below currentReplicas) a
        pod is made at the current revision, else at the update revision."""
        strategy = st.spec["updateStrategy"]
        ru = strategy.get("rollingUpdate")
        if strategy.get("type") == ROLLING_UPDATE and ru is None and ordinal < st.start + st.current_replicas:
            return st.current
        if ru is not None and ordinal < st.start + int(ru.get("partition") or 0):
            return st.current
        return st.update

    def _create(self, st: SetRun, ordinal: int) -> bool:
        """CreateStatefulPod: the pod's claims first (a missing one created), then the pod."""
        s = self.state
        revision = self._new_revision(st, ordinal)
        if revision not in st.templates:         # an adopted pod's revision: the template is not known
            revision = st.update
        tmpl = st.templates[revision]
        name = f"{st.name}-{ordinal}"
        for claim in self._claims(st, ordinal):
            error = self._create_claim(st, name, claim)
            if error is not None:
                s.record_event("StatefulSet", st.name, "FailedCreate",
                               f"Create Pod {name} in StatefulSet {st.name} failed error: {error}", st.namespace)
                return False
        meta = copy.deepcopy(tmpl.get("metadata") or {})
        meta.pop("name", None)
        labels = dict(meta.get("labels") or {})
        labels.update({REVISION_LABEL: revision, POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)})
        meta.update({"name": name, "namespace": st.namespace, "labels": labels,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": st.name,
                                          "uid": st.uid, "controller": True, "blockOwnerDeletion": True}]})
        spec = copy.deepcopy(tmpl.get("spec") or {})
        spec["hostname"] = name
        if st.spec.get("serviceName"):
            spec["subdomain"] = st.spec["serviceName"]
        claims = [c["metadata"]["name"] for c in st.spec.get("volumeClaimTemplates") or []]
        spec["volumes"] = [{"name": c, "persistentVolumeClaim": {"claimName": f"{c}-{name}"}} for c in claims] + \
            [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
        key = f"{st.namespace}/{name}"
        s.launches_for.pop(key, None)          # the NodeClaims made for an earlier pod of this name
        try:
            s.create_pod(pod, "StatefulSet", st.name)
        except APIRejected as e:       # admission refused it; the controller retries at its next sync
            s.refused_pod(pod, "StatefulSet", st.name, e)
            s.record_event("StatefulSet", st.name, "FailedCreate",
                           f"Create Pod {name} in StatefulSet {st.name} failed error: {e.message}", st.namespace)
            return False
        st.adopted.pop(key, None)
        s.record_event("StatefulSet", st.name, "SuccessfulCreate",
                       f"Create Pod {name} in StatefulSet {st.name} successful", st.namespace)
        s.trace(f"StatefulSet {st.name} created pod {key} (revision {revision})")
        self._claims_for_retention(st, ordinal, key)
        return True

    def _delete_pod(self, st: SetRun, key: str, why: str) -> None:
        s = self.state
        name = s.pod_views[key].name
        s.record_event("StatefulSet", st.name, "SuccessfulDelete",
                       f"Delete Pod {name} in StatefulSet {st.name} successful", st.namespace)
        s.terminate_pod(key, why)

    # -- claims ---------------------------------------------------------------------------------------------
    def _claims(self, st: SetRun, ordinal: int) -> list[dict]:
        """getPersistentVolumeClaims: each volumeClaimTemplate as the claim of `ordinal`, labelled with the
        set's selector matchLabels."""
        out = []
        match = (st.spec.get("selector") or {}).get("matchLabels") or {}
        for tmpl in st.spec.get("volumeClaimTemplates") or []:
            claim = copy.deepcopy(tmpl)
            meta = claim.setdefault("metadata", {})
            meta["name"] = f"{meta.get('name')}-{st.name}-{ordinal}"
            meta["namespace"] = st.namespace
            meta["labels"] = {**(meta.get("labels") or {}), **match}
            for k in ("uid", "resourceVersion", "creationTimestamp"):
                meta.pop(k, None)
            claim.update({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
            claim.pop("status", None)
            out.append(claim)
        return out

    def _create_claim(self, st: SetRun, pod_name: str, claim: dict) -> str | None:
        """createPersistentVolumeClaims for one claim: an existing one is kept (bound, its volume pinned where it
        was provisioned); a missing one is created (DefaultStorageClass admission gives it the default class).
        The error the pod's creation then fails with, or None."""
        s = self.state
        ns, name = st.namespace, claim["metadata"]["name"]
        if (ns, name) in s.volumes.pvcs:
            return None
        s.volumes.default_class(claim)
        try:
            stored = s.cluster.create(claim, ADMIN)
        except APIRejected as e:
            s.record_event("StatefulSet", st.name, "FailedCreate",
                           f"Create Claim {name} for Pod {pod_name} in StatefulSet {st.name} failed error: "
                           f"{e.message}", ns)
            return f"failed to create PVC {name}: {e.message}"
        s.volumes.add(copy.deepcopy(stored))
        s.record_event("StatefulSet", st.name, "SuccessfulCreate",
                       f"Create Claim {name} Pod {pod_name} in StatefulSet {st.name} success", ns)
        s.trace(f"StatefulSet {st.name} created PersistentVolumeClaim {ns}/{name}")
        return None

    def _claim_owner(self, st: SetRun, ordinal: int, pod_key: str) -> tuple[str, str] | None:
        """updateClaimOwnerRefForSetAndPod: who owns the claims of `ordinal` under the retention policy - the set
        (whenDeleted Delete, the pod in range), the pod (whenScaled Delete, the pod scaled down) or no one."""
        scaled_down = not st.in_range(ordinal)
        if st.policy["whenScaled"] == DELETE and scaled_down:
            return "Pod", self.state.pod_views[pod_key].uid
        if st.policy["whenDeleted"] == DELETE and not scaled_down:
            return "StatefulSet", st.uid
        return None

    def _claims_for_retention(self, st: SetRun, ordinal: int, pod_key: str) -> bool:
        """UpdatePodClaimForRetentionPolicy: each existing claim of the pod gets the owner reference the policy
        asks for (and loses this set's or this pod's that it does not)."""
        s = self.state
        owner = self._claim_owner(st, ordinal, pod_key)
        pod = s.pod_views[pod_key]
        changed = False
        for claim in self._claims(st, ordinal):
            pvc = s.volumes.pvcs.get((st.namespace, claim["metadata"]["name"]))
            if pvc is None:
                continue
            meta = pvc.setdefault("metadata", {})
            refs = [r for r in meta.get("ownerReferences") or []
                    if not ((r.get("kind") == "StatefulSet" and r.get("name") == st.name)
                            or (r.get("kind") == "Pod" and r.get("name") == pod.name))]
            if owner is not None:
                kind, uid = owner
                refs.append({"apiVersion": "apps/v1" if kind == "StatefulSet" else "v1", "kind": kind,
                             "name": st.name if kind == "StatefulSet" else pod.name, "uid": uid,
                             "controller": True, "blockOwnerDeletion": True})
            if refs != (meta.get("ownerReferences") or []):
                if refs:
                    meta["ownerReferences"] = refs
                    self.owned.add((st.namespace, claim["metadata"]["name"]))
                else:
                    meta.pop("ownerReferences", None)
                changed = True
        return changed

    def _claim_is_stale(self, st: SetRun, ordinal: int) -> bool:
        """PodClaimIsStale: with whenScaled Delete, a claim an earlier pod of this name owns is about to go;
        the pod waits for it."""
        if st.policy["whenScaled"] != DELETE:
            return False
        name = f"{st.name}-{ordinal}"
        return any(r.get("kind") == "Pod" and r.get("name") == name
                   for c in self._claims(st, ordinal)
                   for r in ((self.state.volumes.pvcs.get((st.namespace, c["metadata"]["name"])) or {})
                             .get("metadata") or {}).get("ownerReferences") or [])

    def _collect_claims(self) -> bool:
        """The garbage collector for the claims the sets gave an owner: one whose owner (a set's or a pod's uid) no
        longer exists is deleted once no pod uses it (kubernetes.io/pvc-protection), with its volume when its class
        reclaims it (the PV controller: reclaimPolicy Delete)."""
        s = self.state
        if not self.owned:
            return False
        live_sets = {st.uid for st in self.sets.values()}
        progress = False
        for ns, name in list(self.owned):
            pvc = s.volumes.pvcs.get((ns, name))
            refs = ((pvc or {}).get("metadata") or {}).get("ownerReferences") or []
            if pvc is None or not refs:
                self.owned.discard((ns, name))
                continue
            if any(r.get("uid") in live_sets if r.get("kind") == "StatefulSet" else
                   (pv := s.pod_views.get(f"{ns}/{r.get('name')}")) is not None and pv.uid == r.get("uid")
                   for r in refs):
                continue
            if any(s.volumes.claim_name(pv.obj, v) == name for pv in s.pod_views.values() if pv.namespace == ns
                   for v in pv.spec.get("volumes") or []):
                continue                  # still mounted: pvc-protection holds it until the pod is gone
            self.owned.discard((ns, name))
            volume = s.volumes.delete_claim(ns, name)
            self._delete_unmounted_claim(ns, name)
            s.trace(f"garbage collector deleted PersistentVolumeClaim {ns}/{name} (its owner is gone)"
                    + (f"; the PV controller deleted its volume {volume} (reclaimPolicy Delete)" if volume else ""))
            progress = True
        return progress

    def _delete_unmounted_claim(self, ns: str, name: str) -> None:
        """Delete a claim no pod mounts. A real API server's admission (StorageObjectInUseProtection) gave it the
        kubernetes.io/pvc-protection finalizer, so the delete only marks it; kube-controller-manager's
        pvc-protection controller then removes the finalizer, as no pod uses it (kubernetes v1.36.3
        pkg/controller/volume/pvcprotection). Without that, a set recreating the claim would find it
        "being deleted" for ever."""
        cluster = self.state.cluster
        try:
            cluster.delete("PersistentVolumeClaim", name, ns)
        except APIRejected:
            return

        def release() -> None:
            marked = cluster.get("PersistentVolumeClaim", name, ns)
            finalizers = ((marked or {}).get("metadata") or {}).get("finalizers") or []
            if PVC_PROTECTION in finalizers:
                marked["metadata"]["finalizers"] = [f for f in finalizers if f != PVC_PROTECTION]
                cluster.update(marked, ADMIN)
        try:
            retry_on_conflict(release)
        except APIRejected:
            pass
