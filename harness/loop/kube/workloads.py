"""Manifests into the cluster, and the workload controllers that turn them into pods.

`apply` creates objects in dependency order (as `kubectl apply -f` of a directory would need them to
exist); an object that already exists is updated, as `kubectl apply` does (`update`): a Deployment
is scaled or rolled, a NodePool, AKSNodeClass, DaemonSet or volume object takes the new spec, a Pod
its new labels and annotations (its spec is immutable: harness/scenario/shapes.py refuses a changed
one before the run). A Deployment's pods are made here (the Deployment and ReplicaSet controllers, kubernetes
v1.36.3 pkg/controller/deployment, pkg/controller/replicaset), before the apply's bare Pods or, with
`given.loop.controllerPods: raced`, after them in a seeded choice; a StatefulSet goes to its controller
(statefulsets.py), which makes its first pod at once; a DaemonSet is only remembered: its
pods are placed when a Node initializes (initialization.py, as the DaemonSet controller
pkg/controller/daemon does for each eligible Node). StorageClasses, PVs and PVCs also go to the
volume model (harness/loop/scheduling/volumes.py).
"""
from __future__ import annotations

import copy
from typing import Callable

from harness.backends.base import ADMIN, APIRejected
from harness.backends.kinds import apply_order
from harness.loop.kube.jobs import Jobs
from harness.loop.kube.rollout import Rollouts
from harness.loop.state import LoopState
from harness.loop.kube.statefulsets import StatefulSets
from harness.loop.scheduling.pods import daemonset_pod_view
from harness.loop.result import NodeClassResult, NodePoolResult
from harness.model.kube.poddefaults import made_from_template, same_template
from harness.model.kube.quota import status_of

VOLUME_KINDS = ("StorageClass", "PersistentVolume", "PersistentVolumeClaim")
# kinds whose refusal by the API server is an input error of the run (Workloads.refused), as the real engine
# reports any refused manifest but a NodePool's, AKSNodeClass's or Pod's (which expectations name)
REFUSALS_REPORTED = ("PriorityClass", "LimitRange", "ResourceQuota", "ReplicaSet", "NodeOverlay")


class Workloads:
    """Applies manifests; a NodePool's admission verdict lands on its NodePoolResult."""

    def __init__(self, state: LoopState, jobs: Jobs, statefulsets: StatefulSets):
        self.state = state
        self.jobs = jobs
        self.statefulsets = statefulsets
        # given.loop.podsArrive: staggered - the pod creations held back until after the first provisioning
        # round (Simulation._arrive_late), and whether this apply's workloads have started arriving late
        self.late: list[Callable[[], None]] = []
        self._first = True
        # given.loop.controllerPods: raced - the Deployments of this apply whose ReplicaSet creates its pods
        # only after the apply's bare Pods exist
        self._after_bare: list[Callable[[], None]] = []
        # a changed template's rollout, progressing as the loop runs (Simulation.converge)
        self.rollouts = Rollouts(state, self._create_now, self._scale_down_order)
        # (owner kind, namespace, name) -> what admission read when its pods were last refused (reconcile)
        self._retried: dict[tuple[str, str, str], tuple] = {}
        # "<Kind> <name>: <the API server's message>" of each refused object of REFUSALS_REPORTED, in order
        self.refused: list[str] = []

    def apply(self, manifests: list[dict]) -> None:
        self._first = True
        for obj in sorted(manifests, key=lambda o: apply_order(o.get("kind"))):
            obj = copy.deepcopy(obj)
            if self.exists(obj):
                self.update(obj)
            else:
                self._apply_one(obj)
        held, self._after_bare = self._after_bare, []
        for create in held:
            create()

    def exists(self, obj: dict) -> bool:
        """The object is already in the cluster (or, for the kinds the loop expands itself, known to it)."""
        s = self.state
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        if kind == "Deployment":
            return (ns, meta.get("name")) in s.deployments
        if kind == "ReplicaSet":
            return (ns, meta.get("name")) in s.replicasets
        if kind == "DaemonSet":
            return any(ds["metadata"]["name"] == meta.get("name") for ds, _ in s.daemonsets)
        if kind == "StatefulSet":
            return (ns, meta.get("name")) in self.statefulsets.sets
        if kind == "Job":
            return (ns, meta.get("name")) in self.jobs.jobs
        if kind == "CronJob":
            return (ns, meta.get("name")) in self.jobs.crons
        if kind == "Pod":
            key = f"{ns}/{meta.get('name')}"
            return key in s.pod_views
        if kind == "StorageClass":
            return meta.get("name") in s.volumes.classes
        try:
            return s.cluster.get(kind, meta.get("name"), meta.get("namespace")) is not None
        except (KeyError, APIRejected):
            return False

    # -- updates (kubectl apply of an existing object) ------------------------------------------------
    def update(self, obj: dict) -> None:
        """`kubectl apply` of an object that exists: the new desired state replaces the old one
        (kubectl's three-way merge, with the whole manifest as the last-applied configuration)."""
        s = self.state
        kind, name = obj.get("kind"), obj["metadata"]["name"]
        s.trace(f"update of {kind} {name}")
        if kind == "Deployment":
            self._update_deployment(obj)
        elif kind == "StatefulSet":
            self.statefulsets.update(obj)
        elif kind == "ReplicaSet":
            self._update_replicaset(obj)
        elif kind == "DaemonSet":
            view = daemonset_pod_view(obj)
            s.daemonsets = [(obj, view) if ds["metadata"]["name"] == name else (ds, v) for ds, v in s.daemonsets]
        elif kind == "Pod":
            self._update_pod(obj)
        elif kind == "CronJob":         # the next schedule time follows the new spec
            self.jobs.crons[(obj["metadata"].get("namespace") or "default", name)].obj = obj
        elif kind == "Job":
            self.jobs.update_job(obj)
        elif kind == "StorageClass":
            s.volumes.add(obj)
        else:
            self._update_object(obj)

    def _update_object(self, obj: dict) -> None:
        """NodePool, AKSNodeClass, PV, PVC, Namespace, RuntimeClass: the stored object with the
        manifest's spec (a RuntimeClass's handler, overhead, scheduling), labels and annotations; the
        API server judges the update like a create (CRD rules). Pods made before a RuntimeClass
        changes keep what admission wrote into them."""
        s = self.state
        kind, name = obj["kind"], obj["metadata"]["name"]
        current = s.cluster.get(kind, name, obj["metadata"].get("namespace"))
        new = copy.deepcopy(current)
        # kubectl sends the manifest's version: a karpenter.sh/v1beta1 NodePool the store keeps as v1
        # (harness.model.crd.apiversions.to_model_version) is judged again at v1beta1, as its release serves it
        new["apiVersion"] = obj.get("apiVersion") or new.get("apiVersion")
        for k in ("labels", "annotations"):
            if k in obj["metadata"]:
                new["metadata"][k] = obj["metadata"][k]
        if "spec" in obj:
            new["spec"] = obj["spec"]
        top = {"RuntimeClass": ("handler", "overhead", "scheduling"),
               "PriorityClass": ("value", "globalDefault", "preemptionPolicy", "description")}.get(kind)
        if top:                             # node.k8s.io/v1, scheduling.k8s.io/v1: fields at the top level, no spec
            for k in top:
                if k in obj:
                    new[k] = obj[k]
                else:
                    new.pop(k, None)
        try:
            stored = s.cluster.update(new, ADMIN)
        except APIRejected as e:
            s.trace(f"update of {kind} {name} rejected: {e.message}")
            if kind in REFUSALS_REPORTED:
                self.refused.append(f"{kind} {name}: {e.message}")
            if kind == "NodePool" and name in s.result.nodepools:
                res = s.result.nodepools[name]
                res.accepted, res.stage, res.message = False, "admission", e.message
                res.causes = [c.message for c in e.causes]
            if kind == "AKSNodeClass":      # the old spec stays, but a refused update is no silent no-op
                s.result.nodeclasses[name] = NodeClassResult.of(obj, None, e)
            return
        if kind in VOLUME_KINDS:
            s.volumes.add(copy.deepcopy(stored))
        if kind == "AKSNodeClass":
            s.result.nodeclasses[name] = NodeClassResult.of(obj, stored)

    def _update_pod(self, obj: dict) -> None:
        """A Pod's labels and annotations (its spec is immutable: kubernetes v1.36.3
        pkg/apis/core/validation/validation.go ValidatePodUpdate)."""
        s = self.state
        key = s.pod_key(obj)
        pv = s.pod_views[key]
        current = s.cluster.get("Pod", obj["metadata"]["name"], pv.namespace) or pv.obj
        new = copy.deepcopy(current)
        for k in ("labels", "annotations"):
            new["metadata"][k] = dict(obj["metadata"].get(k) or {})
        stored = s.cluster.update(new, ADMIN)
        pv.obj = stored
        pv.topology_cache.clear()
        s.changed_in_place(key)

    def _update_deployment(self, dep: dict) -> None:
        """The Deployment controller's answer to a new spec (kubernetes v1.36.3 pkg/controller/deployment):
        a changed pod template starts a rollout of its pods to the new template (rollout.py: by maxSurge and
        maxUnavailable, or Recreate), which the loop carries on; otherwise the ReplicaSet is scaled to the
        new replicas (during a rollout, the rollout's steps reach them). The templates are compared as stored,
        defaulted (harness.model.kube.poddefaults.same_template): a manifest that leaves out what the API server
        defaults (a dump's full object applied again in short form) only scales."""
        s = self.state
        ns = dep["metadata"].get("namespace") or "default"
        name = dep["metadata"]["name"]
        old = s.deployments[(ns, name)]
        s.deployments[(ns, name)] = dep
        live = [k for k in s.pods_of_owner("Deployment", ns, name) if s.result.pods[k].state != "deleted"]
        if not same_template((old.get("spec") or {}).get("template") or {}, (dep.get("spec") or {}).get("template") or {}):
            self.rollouts.start(ns, name, live)
            return
        if self.rollouts.rolling(ns, name):
            return
        want = int((dep.get("spec") or {}).get("replicas", 1))
        if want > len(live):
            self._create_deployment_pods(dep, want - len(live))
        elif want < len(live):
            for key in self._scale_down_order(live)[:len(live) - want]:
                s.delete_pod(key, f"Deployment {name} scaled to {want}")

    def _arrive(self, create: Callable[[], None]) -> None:
        """One workload's pods (a bare Pod, a Deployment's) reach the API server: at once, or with
        `given.loop.podsArrive: staggered` after the first provisioning round - the first of an apply never,
        each later one in a seeded choice, and once one is late every later one is too (kubectl creates them
        in order). A Deployment's pods arrive together: the ReplicaSet controller's slow-start batches
        (kubernetes v1.36.3 pkg/controller/replicaset/replica_set.go slowStartBatch) follow one another within
        milliseconds, far inside core's 1 s batch window."""
        s = self.state
        if s.cfg.pods_arrive == "staggered" and not self._first and (self.late or s.arrive_rng.random() < 0.5):
            self.late.append(create)
        else:
            create()
        self._first = False

    def _scale_down_order(self, keys: list[str]) -> list[str]:
        """Which pods a ReplicaSet deletes first (kubernetes v1.36.3 pkg/controller/controller_utils.go
        ActivePods Less: unassigned before assigned, then the newest first; the readiness, restart
        and co-location ranks do not apply to simulated pods)."""
        s = self.state
        return sorted(keys, key=lambda k: (s.result.pods[k].node is not None, -s.pod_views[k].order))

    def delete(self, kind: str, name: str, namespace: str | None = None) -> None:
        """A step's delete (kubectl delete): the object goes from the API server; a Pod is deleted gracefully
        and leaves the loop's view once its kubelet confirms (LoopState.terminate_pod)."""
        s = self.state
        if kind == "Pod":
            key = f"{namespace or 'default'}/{name}"
            if key in s.pod_views:
                s.terminate_pod(key, "deleted")
                return
        if kind == "StatefulSet":
            self.statefulsets.delete(namespace or "default", name)
            return
        s.cluster.delete(kind, name, namespace)

    def _apply_one(self, obj: dict) -> None:
        s = self.state
        kind = obj.get("kind")
        if kind == "Deployment":
            self._create_deployment_pods(obj)
            return
        if kind == "StatefulSet":
            self.statefulsets.add(obj)
            return
        if kind == "ReplicaSet":
            self._create_replicaset_pods(obj)
            return
        if kind == "Job":
            self._arrive(lambda: self.jobs.add_job(obj))
            return
        if kind == "CronJob":
            self.jobs.add_cronjob(obj)
            return
        if kind == "DaemonSet":
            s.daemonsets.append((obj, daemonset_pod_view(obj)))
            return
        if kind == "Pod":
            owner = next((o for o in (obj.get("metadata") or {}).get("ownerReferences") or []
                          if o.get("controller") and o.get("kind") == "DaemonSet"), None)
            kind, name = ("DaemonSet", owner["name"]) if owner else ("", "")
            self._arrive(lambda: self._create_pod(obj, kind, name))
            return
        if kind in VOLUME_KINDS:
            if kind == "PersistentVolumeClaim":
                s.volumes.default_class(obj)
            s.volumes.add(copy.deepcopy(obj))
            if kind == "StorageClass":            # read by the loop only (the backends do not serve it)
                return
        try:
            stored = s.cluster.create(obj, ADMIN)
            if kind == "ResourceQuota" and not stored.get("status"):
                self._quota_status(stored)
            if kind == "NodePool":
                s.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(obj["metadata"]["name"])
            elif kind == "AKSNodeClass":
                # what the API server stored: defaulted, unknown fields pruned (harness/model/crd/aksnodeclass.py)
                s.result.nodeclasses[obj["metadata"]["name"]] = NodeClassResult.of(obj, stored)
        except APIRejected as e:
            if kind == "NodePool":
                s.result.nodepools[obj["metadata"]["name"]] = NodePoolResult(
                    obj["metadata"]["name"], accepted=False, stage="admission", message=e.message,
                    causes=[c.message for c in e.causes])
            elif kind == "AKSNodeClass":
                s.result.nodeclasses[obj["metadata"]["name"]] = NodeClassResult.of(obj, None, e)
            elif kind in REFUSALS_REPORTED:
                self.refused.append(f"{kind} {obj['metadata'].get('name')}: {e.message}")
            s.trace(f"{kind} {obj['metadata'].get('name')} rejected: {e.message}")

    def _create_deployment_pods(self, dep: dict, count: int | None = None) -> None:
        """spec.replicas (or `count`) pods from the template, named `<deployment>-<5 random chars>`
        (harness simplification: the ReplicaSet's pod-template-hash segment is left out).

        When: at once, before the apply's bare Pods (the harness's order: APPLY_ORDER puts Deployments
        first), or with `given.loop.controllerPods: raced`, in a seeded choice per Deployment, after them.
        A real apply races: kubectl's next create is one request, while the Deployment's pods take the
        Deployment controller's and then the ReplicaSet controller's informer and work queue (kubernetes
        v1.36.3 pkg/controller/deployment/deployment_controller.go addDeployment, syncDeployment;
        pkg/controller/replicaset/replica_set.go manageReplicas), so bare Pods applied with it are mostly
        created, queued and bound first."""
        spec = dep.get("spec") or {}
        ns, name = dep["metadata"].get("namespace") or "default", dep["metadata"]["name"]
        self.state.deployments[(ns, name)] = dep
        if count is None:      # pods of it already running (given.existingNodes) count toward replicas
            current = self._seeded_of(dep)
            # an old revision's pods among them: the rollout makes the new ones (rollout.py)
            count = 0 if self.rollouts.rolling(ns, name) else max(int(spec.get("replicas", 1)) - len(current), 0)
        pods = self._pods_of(dep, count)

        def arrive() -> None:
            self._arrive(lambda: [self._create_pod(pod, "Deployment", name) for pod in pods])

        if self.state.cfg.controller_pods == "raced" and self.state.owned_rng.random() < 0.5:
            self._after_bare.append(arrive)
        else:
            arrive()

    def _pods_of(self, dep: dict, count: int) -> list[dict]:
        """`count` pods from the Deployment's template, named `<deployment>-<5 random chars>`."""
        tmpl = (dep.get("spec") or {}).get("template") or {}   # apply() copied the manifest; each pod copies again
        return [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}),
                              "name": self.state.name(dep["metadata"]["name"] + "-"),
                              "namespace": dep["metadata"].get("namespace") or "default"},
                 "spec": copy.deepcopy(tmpl.get("spec") or {})} for _ in range(count)]

    def _create_now(self, dep: dict, count: int) -> None:
        """A rollout's new pods (rollout.py): the ReplicaSet controller creates them as the loop runs."""
        for pod in self._pods_of(dep, count):
            self._create_pod(pod, "Deployment", dep["metadata"]["name"])

    def _seeded_of(self, dep: dict) -> list[str]:
        """The Deployment's pods already running (given.existingNodes, a dump's): its ReplicaSet's, which it
        adopts. Pods not made from its template (poddefaults.made_from) are an old revision's: the
        Deployment rolls them to a new ReplicaSet as at an update (rollout.py); only the current ones count
        toward replicas here."""
        s = self.state
        ns, name = dep["metadata"].get("namespace") or "default", dep["metadata"]["name"]
        live = [k for k in s.pods_of_owner("Deployment", ns, name) if s.result.pods[k].state != "deleted"]
        made = made_from_template((dep.get("spec") or {}).get("template") or {})
        old = [k for k in live if k in s.pod_views and not made(s.pod_views[k].obj)]
        if old:
            self.rollouts.start(ns, name, old)
        return [k for k in live if k not in old]

    # -- a bare ReplicaSet (kubernetes v1.36.3 pkg/controller/replicaset): its pods, scaled, replaced; no rollout
    def _create_replicaset_pods(self, rs: dict) -> None:
        """spec.replicas pods from the template (the ReplicaSet's running pods counted: given.existingNodes, a
        dump's), named `<replicaset>-<5 random chars>` (getPodsPrefix), arriving as a Deployment's do."""
        ns, name = rs["metadata"].get("namespace") or "default", rs["metadata"]["name"]
        self.state.replicasets[(ns, name)] = rs
        current = self._live_of("ReplicaSet", ns, name)
        pods = self._pods_of(rs, max(int((rs.get("spec") or {}).get("replicas", 1)) - len(current), 0))
        self._arrive(lambda: [self._create_pod(pod, "ReplicaSet", name) for pod in pods])

    def _update_replicaset(self, rs: dict) -> None:
        """A ReplicaSet applied again: scaled to its replicas; a changed template only makes the new pods
        (its controller never replaces a running pod for a new template)."""
        s = self.state
        ns, name = rs["metadata"].get("namespace") or "default", rs["metadata"]["name"]
        s.replicasets[(ns, name)] = rs
        live = self._live_of("ReplicaSet", ns, name)
        want = int((rs.get("spec") or {}).get("replicas", 1))
        for pod in self._pods_of(rs, max(want - len(live), 0)):
            self._create_pod(pod, "ReplicaSet", name)
        for key in self._scale_down_order(live)[:max(len(live) - want, 0)]:
            s.delete_pod(key, f"ReplicaSet {name} scaled to {want}")

    def _live_of(self, kind: str, ns: str, name: str) -> list[str]:
        s = self.state
        return [k for k in s.pods_of_owner(kind, ns, name) if s.result.pods[k].state != "deleted"]

    def reconcile(self) -> bool:
        """The ReplicaSet controller's retry of the pods the API server refused (FailedCreate): a Deployment's
        (not rolling) or a bare ReplicaSet's missing pods are created again once what admission reads in its
        namespace changed since the refusal - a PriorityClass, RuntimeClass, LimitRange or ResourceQuota
        (whose status moves as pods come and go). Upstream retries with backoff whether or not anything
        changed; a retry refused as before changes nothing a run reports, so the loop skips it."""
        s = self.state
        progress = False
        for owner_kind, ns, name in list(s.failed_creates):
            obj = (s.deployments if owner_kind == "Deployment" else s.replicasets).get((ns, name)) \
                if owner_kind in ("Deployment", "ReplicaSet") else None
            if obj is None or (owner_kind == "Deployment" and self.rollouts.rolling(ns, name)):
                continue
            token = self._admission_inputs(ns)
            if self._retried.setdefault((owner_kind, ns, name), token) == token:
                continue
            self._retried[(owner_kind, ns, name)] = token
            want = int((obj.get("spec") or {}).get("replicas", 1)) - len(self._live_of(owner_kind, ns, name))
            before = len(s.pod_views)
            for pod in self._pods_of(obj, max(want, 0)):
                self._create_pod(pod, owner_kind, name)
            progress |= len(s.pod_views) > before
        return progress

    def unmade(self) -> dict[str, int | None]:
        """The workloads whose pods the API server refused and that still lack pods now (RunResult.unmade):
        a Deployment's or ReplicaSet's replicas less its live pods, a Job's wanted active pods less its active
        ones; a DaemonSet's is not counted (None)."""
        s = self.state
        out: dict[str, int | None] = {}
        for kind, ns, name in s.failed_creates:
            missing: int | None = None
            if kind in ("Deployment", "ReplicaSet"):
                obj = (s.deployments if kind == "Deployment" else s.replicasets).get((ns, name)) or {}
                missing = int((obj.get("spec") or {}).get("replicas", 1)) - len(self._live_of(kind, ns, name))
            elif kind == "Job" and (job := self.jobs.jobs.get((ns, name))) is not None:
                missing = 0 if job.finished or job.suspended else \
                    min(job.parallelism, job.completions - job.succeeded) - len(job.active)
            if missing is None or missing > 0:
                out[f"{kind}/{name}"] = missing
        return out

    def _admission_inputs(self, ns: str) -> tuple:
        """What the API server's admission of a pod in `ns` reads besides the pod, as a token: the
        PriorityClasses and RuntimeClasses, the namespace's LimitRanges and ResourceQuotas (their status too)."""
        c = self.state.cluster
        return tuple((kind, tuple((o["metadata"]["name"], o["metadata"].get("resourceVersion"))
                                  for o in c.list(kind, ns if kind in ("LimitRange", "ResourceQuota") else None,
                                                  shared=True)))
                     for kind in ("PriorityClass", "RuntimeClass", "LimitRange", "ResourceQuota"))

    def _quota_status(self, stored: dict) -> None:
        """A ResourceQuota on an API server without kube-controller-manager (the local backend): the loop writes
        the status its resourcequota controller would (hard, and the usage of the namespace's pods), without
        which the quota admission refuses every pod ("status unknown for quota"). The API server's admission
        then adds each pod it admits; a pod's end is not subtracted there (harness simplification)."""
        s = self.state
        st = status_of(stored, s.cluster.list("Pod", stored["metadata"].get("namespace") or "default"))
        try:
            s.cluster.update_status({**stored, "status": {"hard": {k: st.hard.text(k) for k in st.hard},
                                                          "used": {k: st.used.text(k) for k in st.used}}}, ADMIN)
        except APIRejected as e:
            s.trace(f"ResourceQuota {stored['metadata']['name']}: status not written: {e.message}")

    def _create_pod(self, pod: dict, owner_kind: str, owner_name: str) -> None:
        try:
            self.state.create_pod(pod, owner_kind, owner_name)
        except APIRejected as e:
            self.state.refused_pod(pod, owner_kind, owner_name, e)
