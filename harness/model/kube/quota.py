"""ResourceQuotas as kube-apiserver applies them to pods: what a pod uses (count/pods, pods, cpu and memory
requests and limits, ephemeral storage, hugepages, extended resources), which quotas of its namespace match
it (their resources and scopes), the quota admission's refusals in its words ("must specify ...",
"exceeded quota: ..."), and the usage the resourcequota controller writes to a quota's status.

Upstream: k8s.io/kubernetes v1.36.3 pkg/quota/v1/evaluator/core/pods.go (podEvaluator Constraints,
MatchingResources, PodUsageFunc, podComputeUsageHelper, podMatchesScopeFunc, QuotaV1Pod);
k8s.io/apiserver v0.36.3 pkg/admission/plugin/resourcequota/controller.go CheckRequest, prettyPrint;
pkg/quota/v1/generic/evaluator.go Matches.

Harness assumption: the quota controller has synced before a pod arrives (its status.hard is the spec's and
its used counts the live pods), so the API server's "status unknown for quota" refusal of a pod created in
the moment after a quota is never given.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from harness.model.kube.apistatus import APIRejected, forbidden
from harness.model.values.resources import format_quantity, parse_quantity, quantity_format

__all__ = ["Usage", "admission_refusal", "matches", "pod_usage", "refused_probe", "status_of"]

COUNT = "count/pods"
# podResources: what a quota on pods may limit, besides the prefixed names below
POD_RESOURCES = frozenset({COUNT, "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory",
                           "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage",
                           "pods"})
# the names a container must state when a matching quota limits them (validationSet)
MUST_SPECIFY = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
NATIVE = frozenset({"cpu", "memory", "ephemeral-storage", "storage", "pods"})
SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
          "CrossNamespacePodAffinity")


class Usage(dict):
    """A ResourceList being summed: name -> (amount, the format of its first quantity), as Quantity.Add keeps
    the receiver's format, so the refusal prints the amounts as the API server does."""

    def add(self, name: str, amount: Fraction, fmt: str) -> None:
        have = self.get(name)
        self[name] = (amount, fmt) if have is None else (have[0] + amount, have[1] if have[0] else fmt)

    def plus(self, other: "Usage") -> "Usage":
        out = Usage(self)
        for k, (v, f) in other.items():
            out.add(k, v, f)
        return out

    def minus(self, other: "Usage") -> "Usage":
        out = Usage(self)
        for k, (v, f) in other.items():
            if k in out:
                out[k] = (out[k][0] - v, out[k][1])
        return out

    def text(self, name: str) -> str:
        amount, fmt = self[name]
        return format_quantity(amount, "BinarySI" if fmt == "BinarySI" else "DecimalSI")

    def pretty(self, names) -> str:
        """prettyPrint: `name=value` of `names`, sorted, joined by ','."""
        return ",".join(f"{k}={self.text(k)}" for k in sorted(names) if k in self)


def _native(name: str) -> bool:
    """helper.IsNativeResource: no domain, or the kubernetes.io domain."""
    return "/" not in name or name.split("/", 1)[0].endswith("kubernetes.io")


def _list(res: dict | None) -> Usage:
    out = Usage()
    for k, v in (res or {}).items():
        try:
            out.add(k, parse_quantity(v), quantity_format(v))
        except ValueError:
            continue
    return out


def _pod_totals(spec: dict, section: str) -> Usage:
    """resourcehelper.PodRequests / PodLimits: the containers' sum, each sidecar added, the largest init need;
    pod-level cpu and memory replace them; the pod's overhead is added."""
    total, sidecars, init_max = Usage(), Usage(), Usage()
    for c in spec.get("containers") or []:
        total = total.plus(_list((c.get("resources") or {}).get(section)))
    for c in spec.get("initContainers") or []:
        own = _list((c.get("resources") or {}).get(section))
        if c.get("restartPolicy") == "Always":
            total, sidecars = total.plus(own), sidecars.plus(own)
            need = Usage(sidecars)
        else:
            need = own.plus(sidecars)
        for k, (v, f) in need.items():
            if k not in init_max or v > init_max[k][0]:
                init_max[k] = (v, f)
    for k, (v, f) in init_max.items():
        if k not in total or v > total[k][0]:
            total[k] = (v, f)
    for k, (v, f) in _list(((spec.get("resources") or {}).get(section))).items():
        if k in ("cpu", "memory"):
            total[k] = (v, f)
    return total.plus(_list(spec.get("overhead")))


def _compute(requests: Usage, limits: Usage) -> Usage:
    """podComputeUsageHelper: pods 1, each request under its own name and `requests.<name>`, each limit as
    `limits.<name>` (cpu, memory, ephemeral-storage); hugepages and extended resources as `requests.<name>`."""
    out = Usage()
    out.add("pods", Fraction(1), "DecimalSI")
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = requests[name]
            out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            out[name] = value
            out[f"requests.{name}"] = value
        elif not _native(name):
            out[f"requests.{name}"] = value
    return out


def terminal(pod: dict) -> bool:
    return ((pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed")


def pod_usage(pod: dict) -> Usage:
    """PodUsageFunc: count/pods, and for a pod that is not terminal its requests and limits (QuotaV1Pod)."""
    out = Usage()
    out.add(COUNT, Fraction(1), "DecimalSI")
    if terminal(pod):
        return out
    spec = pod.get("spec") or {}
    return out.plus(_compute(_pod_totals(spec, "requests"), _pod_totals(spec, "limits")))


def _best_effort(spec: dict) -> bool:
    """qos.GetPodQOS == BestEffort: no container (init ones included) requests or limits cpu or memory."""
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = c.get("resources") or {}
        if any(k in ("cpu", "memory") for sec in ("requests", "limits") for k in (res.get(sec) or {})):
            return False
    level = spec.get("resources") or {}
    return not any(k in ("cpu", "memory") for sec in ("requests", "limits") for k in (level.get(sec) or {}))


def _cross_namespace(spec: dict) -> bool:
    aff = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        a = aff.get(kind) or {}
        terms = list(a.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        terms += [t.get("podAffinityTerm") or {} for t in a.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in terms):
            return True
    return False


def _scope_matches(sel: dict, pod: dict) -> bool:
    """podMatchesScopeFunc for one scope selector requirement."""
    spec = pod.get("spec") or {}
    scope, op = sel.get("scopeName"), sel.get("operator") or "Exists"
    if scope == "Terminating":
        return spec.get("activeDeadlineSeconds") is not None and int(spec["activeDeadlineSeconds"]) >= 0
    if scope == "NotTerminating":
        return not (spec.get("activeDeadlineSeconds") is not None and int(spec["activeDeadlineSeconds"]) >= 0)
    if scope == "BestEffort":
        return _best_effort(spec)
    if scope == "NotBestEffort":
        return not _best_effort(spec)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        if op == "Exists":
            return bool(name)
        values = [str(v) for v in sel.get("values") or []]
        if op == "In":
            return bool(name) and name in values
        if op == "NotIn":
            return not name or name not in values
        if op == "DoesNotExist":
            return not name
        return False
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace(spec)
    return False


def _selectors(quota: dict) -> list[dict]:
    """getScopeSelectorsFromQuota: spec.scopes as Exists, then spec.scopeSelector's expressions."""
    spec = quota.get("spec") or {}
    out = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    return out + list(((spec.get("scopeSelector") or {}).get("matchExpressions")) or [])


def _matching_resources(names) -> list[str]:
    """podEvaluator.MatchingResources: the names of `names` a pod can use."""
    return [n for n in names if n in POD_RESOURCES or n.startswith(("hugepages-", "requests.hugepages-"))
            or (n.startswith("requests.") and not _native(n[len("requests."):]))]


def matches(quota: dict, pod: dict) -> bool:
    """generic.Matches: the quota limits a resource a pod uses, and every scope selector matches the pod."""
    hard = ((quota.get("spec") or {}).get("hard")) or {}
    return bool(_matching_resources(hard)) and all(_scope_matches(s, pod) for s in _selectors(quota))


def _missing(pod: dict, required: set[str]) -> str | None:
    """podEvaluator.Constraints: every container (init ones too) must state each cpu/memory request or limit a
    matching quota limits; None when all do."""
    need = required & MUST_SPECIFY
    if not need:
        return None
    spec = pod.get("spec") or {}
    if ((spec.get("resources") or {}).get("requests") or (spec.get("resources") or {}).get("limits")):
        return None                  # pod-level resources set (PodLevelResources): the containers need not
    missing: dict[str, set[str]] = {}
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        res = c.get("resources") or {}
        have = set(_compute(_list(res.get("requests")), _list(res.get("limits"))))
        for name in need - have:
            missing.setdefault(name, set()).add(c.get("name") or "")
    if not missing:
        return None
    return "must specify " + "; ".join(f"{n} for: {','.join(sorted(missing[n]))}" for n in sorted(missing))


@dataclass(frozen=True)
class QuotaStatus:
    name: str
    hard: Usage
    used: Usage


def status_of(quota: dict, pods) -> QuotaStatus:
    """What the resourcequota controller writes: hard is the spec's, used the sum of what the matching live
    pods of `pods` (the quota's namespace) use, for each hard name (0 when none)."""
    hard = _list(((quota.get("spec") or {}).get("hard")) or {})
    used = Usage({k: (Fraction(0), f) for k, (_, f) in hard.items()})
    for pod in pods:
        if matches(quota, pod):
            u = pod_usage(pod)
            for k in hard:
                if k in u:
                    used.add(k, *u[k])
    return QuotaStatus(quota["metadata"]["name"], hard, used)


def admission_refusal(pod: dict, quotas: list[tuple[dict, QuotaStatus]]) -> APIRejected | None:
    """CheckRequest on a pod's create against its namespace's quotas (each with its status): a matching quota
    whose resources a container leaves out ("failed quota: NAME: must specify ..."), else the first (in list
    order) the pod's usage would take past its hard limit ("exceeded quota: NAME, requested: ..., used: ...,
    limited: ..."), or None."""
    matched = []
    for quota, st in quotas:
        if not matches(quota, pod):
            continue
        why = _missing(pod, set(_matching_resources(st.hard)))
        if why:
            return forbidden("pods", pod, f"failed quota: {st.name}: {why}", validating=True)
        matched.append(st)
    usage = pod_usage(pod)
    for st in matched:
        requested = Usage({k: v for k, v in usage.items() if k in st.hard and v[0] != 0})
        if not requested:
            continue
        over = [k for k in requested if st.used.get(k, (Fraction(0), ""))[0] + requested[k][0] > st.hard[k][0]]
        if over:
            return forbidden("pods", pod, f"exceeded quota: {st.name}, requested: {requested.pretty(over)}, "
                                          f"used: {st.used.pretty(over)}, limited: {st.hard.pretty(over)}",
                             validating=True)
    return None


# what a probe container asks for: more than any quota a scenario writes allows
_PROBE_AMOUNTS = {"cpu": "100000", "memory": "1Pi", "ephemeral-storage": "1Pi"}


def refused_probe(quota: dict, st: QuotaStatus) -> dict | None:
    """A pod this quota (with status `st`) refuses: first one whose container states nothing ("must specify"),
    then one that asks for more than any hard limit ("exceeded quota"), each shaped to the quota's Terminating
    and PriorityClass In scopes. A real API server's quota admission reads quotas through an informer that can
    lag the quota's create, so a backend dry-runs this pod until it is refused (realcluster.py). None when
    neither form is refused (a quota on `pods` with room left, a scope the probe does not take on)."""
    spec: dict = {}
    for sel in _selectors(quota):
        if sel.get("scopeName") == "Terminating":
            spec["activeDeadlineSeconds"] = 1
        elif sel.get("scopeName") == "PriorityClass" and sel.get("operator") == "In" and sel.get("values"):
            spec["priorityClassName"] = str(sel["values"][0])
    ns = quota["metadata"].get("namespace") or "default"
    for res in ({}, {"requests": _PROBE_AMOUNTS, "limits": _PROBE_AMOUNTS}):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "harness-quota-probe", "namespace": ns},
               "spec": {**spec, "containers": [{"name": "probe", "image": "probe", "resources": dict(res)}]}}
        if admission_refusal(pod, [(quota, st)]) is not None:
            return pod
    return None
