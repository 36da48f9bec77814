"""What kube-apiserver writes into a Pod before storing it, for the embedded backend: the v1 API's
defaulting, then the default-on Priority and DefaultTolerationSeconds admission plugins, in that order
(k8s.io/kubernetes v1.36.3 pkg/kubeapiserver/options/plugins.go AllOrderedPlugins; RuntimeClass, later in
that order, is harness.model.runtimeclass). The values are harness/data/pod-defaults.yaml, which also
lists the other default-on plugins and why the embedded backend leaves them out. The real backends'
API server does all this itself.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache

import yaml

from harness.model.apistatus import forbidden
from harness.model.data import DATA_DIR

__all__ = ["PodDefaults", "admit_pod"]

DEFAULTS_FILE = "pod-defaults.yaml"
# the Priority plugin's refusals (k8s.io/kubernetes v1.36.3 plugin/pkg/admission/priority/admission.go
# resolvePriorityClass, admitPod)
NO_CLASS = "no PriorityClass with name {name} was found"
PRIORITY_GIVEN = ("the integer value of priority ({given}) must not be provided in pod spec; priority admission "
                  "controller computed {computed} from the given PriorityClass name")
POLICY_GIVEN = ("the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission "
                "controller computed {computed} from the given PriorityClass name")


@dataclass(frozen=True)
class PodDefaults:
    spec: dict                       # field -> value a pod that leaves the field out gets
    port_protocol: str
    default_priority: int
    preemption_policy: str
    classes: dict                    # PriorityClass name -> value
    tolerations: tuple               # DefaultTolerationSeconds' tolerations

    @staticmethod
    @lru_cache(maxsize=1)
    def load() -> "PodDefaults":
        d = yaml.safe_load((DATA_DIR / DEFAULTS_FILE).read_text())
        return PodDefaults(spec=d["spec"], port_protocol=d["portProtocol"],
                           default_priority=int(d["priority"]["default"]),
                           preemption_policy=d["priority"]["preemptionPolicy"],
                           classes={str(k): int(v) for k, v in d["priority"]["classes"].items()},
                           tolerations=tuple(d["tolerations"]))


def _default_spec(spec: dict, table: PodDefaults) -> None:
    """SetDefaults_PodSpec / SetDefaults_Pod and the generated port defaults; a container's limits stand in
    for the requests it leaves out (SetDefaults_Pod)."""
    for k, v in table.spec.items():
        if spec.get(k) is None:
            spec[k] = copy.deepcopy(v)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            for p in c.get("ports") or []:
                if not p.get("protocol"):
                    p["protocol"] = table.port_protocol
                if spec.get("hostNetwork") and not p.get("hostPort") and p.get("containerPort"):
                    p["hostPort"] = p["containerPort"]
            res = c.get("resources") or {}
            if res.get("limits"):
                res["requests"] = {**res["limits"], **(res.get("requests") or {})}


def _priority(pod: dict, old: dict | None, table: PodDefaults) -> None:
    """Priority admission (admitPod): on create the class's value and preemption policy, refusing a class
    that does not exist or a value the pod gives that differs; on update the stored ones are kept."""
    spec = pod["spec"]
    if old is not None:
        for k in ("priority", "preemptionPolicy"):
            if spec.get(k) is None and (old.get("spec") or {}).get(k) is not None:
                spec[k] = old["spec"][k]
        return
    name = spec.get("priorityClassName") or ""
    if name and name not in table.classes:
        raise forbidden("pods", pod, NO_CLASS.format(name=name))
    computed = table.classes[name] if name else table.default_priority
    if spec.get("priority") is not None and spec["priority"] != computed:
        raise forbidden("pods", pod, PRIORITY_GIVEN.format(given=spec["priority"], computed=computed))
    spec["priority"] = computed
    policy = table.preemption_policy       # every class here has one (SetDefaults_PriorityClass)
    if spec.get("preemptionPolicy") not in (None, policy):
        raise forbidden("pods", pod, POLICY_GIVEN.format(given=spec["preemptionPolicy"], computed=policy))
    spec["preemptionPolicy"] = policy


def _default_tolerations(spec: dict, table: PodDefaults) -> None:
    """DefaultTolerationSeconds Admit: a default toleration is added unless one of the pod's tolerates its
    key's NoExecute taint (matched on key and effect only, an empty one matching any)."""
    have = spec.get("tolerations") or []
    added = [dict(d) for d in table.tolerations
             if not any(t.get("key") in (None, "", d["key"]) and t.get("effect") in (None, "", d["effect"])
                        for t in have)]
    if added:
        spec["tolerations"] = list(have) + added


def admit_pod(pod: dict, old: dict | None = None) -> dict:
    """`pod` as the API server has it after defaulting, Priority and DefaultTolerationSeconds, on create
    (`old` None) or update (`old` the stored pod); modified in place and returned, or APIRejected with
    the plugin's text."""
    table = PodDefaults.load()
    spec = pod.setdefault("spec", {})
    _default_spec(spec, table)
    _priority(pod, old, table)
    _default_tolerations(spec, table)
    return pod
