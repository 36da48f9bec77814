"""The embedded backend: an in-process object store with the API semantics the loop relies on.

It stands in for the API server by judging writes with the model: the CRDs' schema and CEL rules
for NodePools/NodeClaims (harness.model.crd.validation, the same rule text the local backend installs)
and NodeRestriction for node identities (k8s.io/kubernetes v1.36.3
plugin/pkg/admission/noderestriction/admission.go), a Pod's defaults, LimitRanger, Priority and
DefaultTolerationSeconds admission (harness.model.kube.poddefaults, limitranger, priorityclass), RuntimeClass
admission for new pods (k8s.io/kubernetes v1.36.3 plugin/pkg/admission/runtimeclass/admission.go, in
harness.model.kube.runtimeclass) and ResourceQuota admission with the usage kube-controller-manager's quota
controller keeps (harness.model.kube.quota). The real backends replace these
judgements with the real API server's; the conformance run compares the two.
"""
from __future__ import annotations

import copy
import itertools
import threading

from harness.backends.base import ADMIN, APIRejected, Cause, Identity
from harness.backends.kinds import KINDS, Kind
from harness.model.crd.schema import prune
from harness.model.labels.policy import kubelet_flag_error, node_restriction_forbids
from harness.model.upstream.profile import DEFAULT_PROFILE, load_profile
from harness.model.crd import aksnodeclass, apiversions, nodeoverlay, rules as crdrules
from harness.model.kube import limitranger, poddefaults, podvalidation, priorityclass, quota, runtimeclass
from harness.model.crd.validation import admission_rejection, parse_version


NOT_READY = {"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}


_ATOMS = frozenset({str, int, float, bool, type(None)})


def _clone(obj):
    """A deep copy of JSON-shaped data (dicts, lists, scalars), several times faster than
    copy.deepcopy (scalars are not recursed into); the store hands out copies so callers never share
    its objects."""
    t = type(obj)
    if t is dict:
        return _clone_dict(obj)
    if t is list:
        return _clone_list(obj)
    if isinstance(obj, dict):
        return {k: v if type(v) in _ATOMS else _clone(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [v if type(v) in _ATOMS else _clone(v) for v in obj]
    return obj


# _clone's plain dicts and lists, each value's type looked up once (~20 % less than _clone's own recursion
# on a Node or a Pod); anything else (a subclass) goes back to _clone
def _clone_dict(d: dict) -> dict:
    out = {}
    for k, v in d.items():
        t = type(v)
        out[k] = v if t in _ATOMS else _clone_dict(v) if t is dict else _clone_list(v) if t is list else _clone(v)
    return out


def _clone_list(items: list) -> list:
    return [v if (t := type(v)) in _ATOMS else _clone_dict(v) if t is dict else _clone_list(v) if t is list
            else _clone(v) for v in items]


def _resource(kind: Kind) -> str:
    return f"{kind.plural}.{kind.group}" if kind.group else kind.plural


class EmbeddedCluster:
    backend = "embedded"
    capabilities = frozenset({"cel", "node-restriction"})

    def __init__(self, profile: str = DEFAULT_PROFILE):
        self._objs: dict[tuple[str, str, str], dict] = {}
        # the same objects by kind: a list of one kind reads only that kind's (a cluster of 50,000 pods
        # lists its NodePools every pass)
        self._by_kind: dict[str, dict[tuple[str, str, str], dict]] = {}
        self._rv = itertools.count(1)
        # every write so far (create, update, delete, bind, reset): a reader that found nothing to do can tell
        # that nothing it reads has changed since (binding.py KubeScheduler skips a pass that would repeat one)
        self.writes = 0
        self._uid = itertools.count(1)
        self._lock = threading.RLock()
        self.profile = load_profile(profile)
        self.clock_now = lambda: "2026-01-01T00:00:00Z"
        self.server_version: str | None = None     # None: behave like the newest supported server
        # each ResourceQuota's status as the resourcequota controller keeps it (harness.model.kube.quota), by store key
        self._quotas: dict[tuple[str, str, str], quota.QuotaStatus] = {}

    # -- helpers ------------------------------------------------------------------------------
    @staticmethod
    def _key(kind: str, name: str, namespace: str | None) -> tuple[str, str, str]:
        k = KINDS[kind]
        return kind, (namespace or "default") if k.namespaced else "", name

    def _put(self, key: tuple[str, str, str], obj: dict) -> None:
        self.writes += 1
        self._objs[key] = obj
        self._by_kind.setdefault(key[0], {})[key] = obj

    def _drop(self, key: tuple[str, str, str]) -> None:
        self.writes += 1
        obj = self._objs.pop(key)
        del self._by_kind[key[0]][key]
        if key[0] == "Pod" and self._quotas:
            self._quota_charge(obj, -1)
        elif key[0] == "ResourceQuota":
            self._quotas.pop(key, None)

    def _not_found(self, kind: str, name: str) -> APIRejected:
        return APIRejected(404, "NotFound", f'{_resource(KINDS[kind])} "{name}" not found')

    def _node_restriction(self, obj: dict, old: dict | None, identity: Identity) -> None:
        """NodeRestriction admission for the `nodes` resource (k8s.io/kubernetes v1.36.3
        plugin/pkg/admission/noderestriction/admission.go Plugin.admitNode)."""
        if identity.kind != "node" or obj.get("kind") != "Node":
            return
        name = obj["metadata"]["name"]

        def deny(msg: str) -> APIRejected:
            return APIRejected(403, "Forbidden", f'nodes "{name}" is forbidden: {msg}')

        if name != identity.name:
            raise deny(f'node "{identity.name}" is not allowed to modify node "{name}"')
        labels = obj["metadata"].get("labels") or {}
        if old is None:
            bad = sorted(k for k in labels if node_restriction_forbids(k, self.profile))
            if bad:
                raise deny(f'node "{name}" is not allowed to set the following labels: {", ".join(bad)}')
            return
        if (obj.get("spec") or {}).get("taints") != (old.get("spec") or {}).get("taints"):
            raise deny(f'node "{name}" is not allowed to modify taints')
        old_labels = old["metadata"].get("labels") or {}
        changed = {k for k in set(labels) | set(old_labels) if labels.get(k) != old_labels.get(k)}
        bad = sorted(k for k in changed if node_restriction_forbids(k, self.profile))
        if bad:
            # admission.go words the update case without a subject (conformance-checked)
            raise deny(f'is not allowed to modify labels: {", ".join(bad)}')

    def _admit(self, obj: dict, old: dict | None = None) -> dict:
        """The object as the API server stores it (defaulted), or APIRejected. The profile's release
        decides which API versions are served and which version's rules judge (harness.model.crd.apiversions).
        `old`: the stored object, on update (the CRDs' transition rules and validation ratcheting)."""
        kind = obj.get("kind")
        rejection = apiversions.served_rejection(obj, self.profile)
        if rejection is not None:
            raise rejection
        if kind in ("NodePool", "NodeClaim"):
            if old is not None and old.get("apiVersion") != obj.get("apiVersion"):
                # the store keeps a karpenter.sh/v1beta1 NodePool as v1 (to_model_version), which cannot be
                # converted back to the request's version as the API server would: judged without the old object
                old = None
            rejection = admission_rejection(obj, apiversions.admission_profile(obj, self.profile), self.server_version,
                                            old)
            if rejection is not None:
                raise rejection
            schema = apiversions.admission_profile(obj, self.profile).crd_spec_schema(kind) \
                if kind == "NodePool" and isinstance(obj.get("spec"), dict) else None
            if schema is not None:
                # a field the release's CRD lacks is pruned as the API server stores it (kubectl warns: the
                # envelope's notice), e.g. spec.replicas before core v1.8.0
                spec = copy.deepcopy(obj["spec"])
                if prune(spec, schema, "spec"):
                    obj = {**obj, "spec": spec}
            obj = apiversions.to_model_version(obj)
        elif kind == "NodeOverlay" and (schema := crdrules.spec_schema(self.profile, kind)) is not None:
            admitted = nodeoverlay.admit(obj, schema, parse_version(self.server_version), old)
            if admitted.errors:
                raise nodeoverlay.rejection(obj, admitted.errors)
            obj = admitted.obj
        elif kind == "AKSNodeClass" and (schema := apiversions.nodeclass_schema(obj, self.profile)) is not None:
            admitted = aksnodeclass.admit(obj, schema, parse_version(self.server_version), old)
            if admitted.errors:
                raise aksnodeclass.rejection(obj, admitted.errors)
            obj = admitted.obj
        elif kind == "Pod":
            # the v1 API's defaults, then LimitRanger's defaults (create only), Priority and DefaultTolerationSeconds
            # admission (harness/data/pod-defaults.yaml); status and binding are subresources they skip
            ns = (obj.get("metadata") or {}).get("namespace") or "default"
            classes = self._by_kind.get("PriorityClass")
            obj = poddefaults.admit_pod(obj, old, priorityclass.classes_of(classes.values()) if classes else None,
                                        self._in_namespace("LimitRange", ns) if old is None else None)
            rejection = podvalidation.pod_rejection(obj, parse_version(self.server_version))
            if rejection is not None:
                raise rejection
        elif kind == "PriorityClass":
            obj = priorityclass.admit(obj, [o for k, o in self._by_kind.get(kind, {}).items()
                                            if old is None or k[2] != old["metadata"]["name"]], old)
        elif kind == "LimitRange":
            obj = limitranger.admit_limitrange(obj)
        return obj

    def _in_namespace(self, kind: str, namespace: str) -> list[dict]:
        """The stored objects of `kind` in `namespace`, by name (what an admission plugin's lister lists)."""
        return [o for (_, ns, _), o in sorted(self._by_kind.get(kind, {}).items(), key=lambda kv: kv[0])
                if ns == namespace]

    def _quota_admission(self, pod: dict) -> None:
        """LimitRanger's Validate, then ResourceQuota's, on a pod's create (the last validating plugins of
        AllOrderedPlugins): APIRejected with the plugin's text."""
        ns = pod["metadata"].get("namespace") or "default"
        rejection = limitranger.pod_refusal(pod, self._in_namespace("LimitRange", ns))
        if rejection is None and self._quotas:
            held = [(q, self._quotas[self._key("ResourceQuota", q["metadata"]["name"], ns)])
                    for q in self._in_namespace("ResourceQuota", ns)]
            rejection = quota.admission_refusal(pod, held) if held else None
        if rejection is not None:
            raise rejection

    def _quota_charge(self, pod: dict, sign: int) -> None:
        """The resourcequota controller's usage of a pod that came (`sign` 1) or went (-1), on the quotas of its
        namespace that match it, written to their status."""
        ns = pod["metadata"].get("namespace") or "default"
        usage = None
        for key, st in list(self._quotas.items()):
            obj = self._objs.get(key)
            if key[1] != ns or obj is None or not quota.matches(obj, pod):
                continue
            usage = usage or quota.pod_usage(pod)
            masked = quota.Usage({k: v for k, v in usage.items() if k in st.hard})
            self._quota_store(key, quota.QuotaStatus(st.name, st.hard,
                                                     st.used.plus(masked) if sign > 0 else st.used.minus(masked)))

    def _quota_store(self, key: tuple[str, str, str], st: "quota.QuotaStatus") -> None:
        self._quotas[key] = st
        obj = self._objs[key]
        self._put(key, {**obj, "status": {"hard": {k: st.hard.text(k) for k in sorted(st.hard)},
                                          "used": {k: st.used.text(k) for k in sorted(st.used)}}})

    # -- Cluster protocol ---------------------------------------------------------------------
    def create(self, obj: dict, identity: Identity = ADMIN) -> dict:
        return _clone(self._create(obj, identity))

    def _create(self, obj: dict, identity: Identity) -> dict:
        """create, returning the stored object itself (for a caller that reads none of it)."""
        with self._lock:
            obj = _clone(obj)
            kind = obj["kind"]
            meta = obj.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):
                raise APIRejected(422, "Invalid", "generateName is resolved by the loop, not the embedded store")
            key = self._key(kind, meta["name"], meta.get("namespace"))
            if KINDS[kind].namespaced:
                meta.setdefault("namespace", "default")
            if key in self._objs:
                raise APIRejected(409, "AlreadyExists", f'{_resource(KINDS[kind])} "{meta["name"]}" already exists')
            self._node_restriction(obj, None, identity)
            obj = self._admit(obj)
            if kind == "Pod":
                # RuntimeClass admission, CREATE only (k8s.io/kubernetes v1.36.3
                # plugin/pkg/admission/runtimeclass/admission.go RuntimeClass.Admit, RuntimeClass.Validate):
                # every pod made through the store (bare, a Deployment's, a DaemonSet's) passes here
                obj = runtimeclass.admit_pod(obj, lambda name: self._objs.get(self._key("RuntimeClass", name, None)))
                self._quota_admission(obj)
            meta = obj["metadata"]
            # TaintNodesByCondition admission (k8s.io/kubernetes v1.36.3 plugin/pkg/admission/nodetaint/admission.go,
            # on by default; the
            # local backend's API server adds it the same way): a new Node starts with
            # node.kubernetes.io/not-ready:NoSchedule until the node lifecycle controller sees Ready.
            # Karpenter waits for it to go as a known ephemeral taint (sigs.k8s.io/karpenter v1.14.0
            # pkg/scheduling/taints.go KnownEphemeralTaints; sigs.k8s.io/karpenter v1.14.0
            # pkg/controllers/nodeclaim/lifecycle/initialization.go).
            if kind == "Node":
                taints = obj.setdefault("spec", {}).setdefault("taints", [])
                if not any(t.get("key") == NOT_READY["key"] and t.get("effect") == NOT_READY["effect"] for t in taints):
                    taints.append(dict(NOT_READY))
            # status is a subresource: dropped on create for custom resources, reset for Pods
            if kind == "Pod":
                obj["status"] = {"phase": "Pending"}
            elif KINDS[kind].group not in ("", "apps"):
                obj.pop("status", None)
            meta["resourceVersion"] = str(next(self._rv))
            # a deletion is never created: the API server wipes both fields (k8s.io/apiserver v0.36.3
            # pkg/registry/rest/meta.go WipeObjectMetaSystemFields), only a delete sets them
            meta.pop("deletionTimestamp", None)
            meta.pop("deletionGracePeriodSeconds", None)
            meta["uid"] = meta.get("uid") or f"00000000-0000-0000-0000-{next(self._uid):012d}"
            meta.setdefault("creationTimestamp", self.clock_now())
            obj.setdefault("apiVersion", KINDS[kind].api_version)
            self._put(key, obj)
            if kind == "Pod" and self._quotas:
                self._quota_charge(obj, 1)
            elif kind == "ResourceQuota":
                self._quota_store(key, quota.status_of(obj, self._in_namespace("Pod", key[1])))
                obj = self._objs[key]
            return obj

    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        """A copy of the object; `shared`: the stored object itself, for a caller that only reads it (a write
        replaces a stored object, never changes it: `delete` and `bind` too)."""
        with self._lock:
            obj = self._objs.get(self._key(kind, name, namespace))
            return obj if shared or obj is None else _clone(obj)

    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]:
        with self._lock:
            return [o if shared else _clone(o)
                    for (_, ns, _), o in sorted(self._by_kind.get(kind, {}).items(), key=lambda kv: kv[0])
                    if namespace is None or ns == namespace]

    def _replace(self, obj: dict, identity: Identity, status_only: bool) -> dict:
        with self._lock:
            kind, meta = obj["kind"], obj["metadata"]
            key = self._key(kind, meta["name"], meta.get("namespace"))
            old = self._objs.get(key)
            if old is None:
                raise self._not_found(kind, meta["name"])
            if meta.get("resourceVersion") and meta["resourceVersion"] != old["metadata"]["resourceVersion"]:
                raise APIRejected(409, "Conflict",
                                  f'Operation cannot be fulfilled on {_resource(KINDS[kind])} "{meta["name"]}": '
                                  "the object has been modified; please apply your changes to the latest version and try again")
            if status_only:
                # the stored object with the caller's status; its other parts are shared with the object it
                # replaces (a stored object is never changed, only replaced), its metadata copied one level,
                # the level written below
                status = _clone(obj.get("status"))
                new = {k: status if k == "status" else v for k, v in old.items()}
                new.setdefault("status", status)
                new["metadata"] = dict(old["metadata"])
            else:
                new = _clone(obj)
                new["status"] = old.get("status")         # a PUT of the main resource ignores status
                self._node_restriction(new, old, identity)
                new = self._admit(new, old)
            new["metadata"]["resourceVersion"] = str(next(self._rv))
            new["metadata"]["uid"] = old["metadata"]["uid"]
            new["metadata"]["creationTimestamp"] = old["metadata"].get("creationTimestamp")
            if old["metadata"].get("deletionTimestamp"):
                new["metadata"]["deletionTimestamp"] = old["metadata"]["deletionTimestamp"]
                if not new["metadata"].get("finalizers"):
                    self._drop(key)                 # the last finalizer is gone: deletion completes
                    return _clone(new)
            self._put(key, new)
            if kind == "Pod" and self._quotas and status_only and quota.terminal(new) != quota.terminal(old):
                self._quota_charge(old, -1)          # a pod that ran to completion uses its count alone
                self._quota_charge(new, 1)
            elif kind == "ResourceQuota" and not status_only:
                self._quota_store(key, quota.status_of(new, self._in_namespace("Pod", key[1])))
                new = self._objs[key]
            return _clone(new)

    def update(self, obj: dict, identity: Identity = ADMIN) -> dict:
        return self._replace(obj, identity, status_only=False)

    def update_status(self, obj: dict, identity: Identity = ADMIN) -> dict:
        return self._replace(obj, identity, status_only=True)

    def delete(self, kind: str, name: str, namespace: str | None = None, identity: Identity = ADMIN,
               graceful: bool = False) -> None:
        """An object with finalizers is only marked (deletionTimestamp) until they are removed. `graceful` changes
        nothing: the loop keeps a terminating pod's state itself (LoopState.terminate_pod) and deletes it here
        when its kubelet confirms."""
        with self._lock:
            key = self._key(kind, name, namespace)
            obj = self._objs.get(key)
            if obj is None:
                raise self._not_found(kind, name)
            if obj["metadata"].get("finalizers"):
                if not obj["metadata"].get("deletionTimestamp"):
                    self._put(key, {**obj, "metadata": {**obj["metadata"], "deletionTimestamp": self.clock_now(),
                                                        "resourceVersion": str(next(self._rv))}})
                return
            self._drop(key)

    def bind(self, pod: dict, node_name: str, identity: Identity = ADMIN, *, read_back: bool = True) -> dict | None:
        with self._lock:
            key = self._key("Pod", pod["metadata"]["name"], pod["metadata"].get("namespace"))
            cur = self._objs.get(key)
            if cur is None:
                raise self._not_found("Pod", pod["metadata"]["name"])
            if (cur.get("spec") or {}).get("nodeName"):
                # the API server's exact text (checked against `local`)
                name, bound = pod["metadata"]["name"], cur["spec"]["nodeName"]
                raise APIRejected(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": '
                                                   f'pod {name} is already assigned to node "{bound}"')
            new = {**cur, "spec": {**(cur.get("spec") or {}), "nodeName": node_name},
                   "metadata": {**cur["metadata"], "resourceVersion": str(next(self._rv))}}
            self._put(key, new)
            return _clone(new) if read_back else None

    def kubelet_refusal(self, node_labels: dict[str, str], profile) -> str | None:
        """The model's ValidateKubeletFlags (k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go;
        k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags)."""
        return kubelet_flag_error(node_labels, profile)

    def register_kubelet(self, node: dict, node_labels: dict[str, str], profile, provider_id: str) -> str | None:
        refusal = self.kubelet_refusal(node_labels, profile)
        if refusal is None:
            self._create(node, Identity.node(node["metadata"]["name"]))
        return refusal

    def configure(self, kubernetes_version: str | None = None) -> None:
        """Emulate the API server of this Kubernetes version (message formats differ by version)."""
        self.server_version = kubernetes_version

    def install_profile(self, profile) -> None:
        """`profile` is a name or a Profile (one carrying scenario knobs)."""
        self.profile = load_profile(profile) if isinstance(profile, str) else profile

    def reset(self) -> None:
        with self._lock:
            self.writes += 1
            self._objs.clear()
            self._by_kind.clear()
            self._quotas.clear()
            # a run's uids are its own (an event names a pod by uid: kube-scheduler's Preempted)
            self._uid = itertools.count(1)

    def close(self) -> None:
        self.reset()


class EmbeddedBackend:
    name = "embedded"

    def available(self) -> tuple[bool, str]:
        return True, ""

    def start(self) -> EmbeddedCluster:
        return EmbeddedCluster()


__all__ = ["EmbeddedBackend", "EmbeddedCluster", "Cause"]
