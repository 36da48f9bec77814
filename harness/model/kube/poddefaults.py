"""What kube-apiserver writes into a Pod before storing it, for the embedded backend: the v1 API's
defaulting, then the default-on LimitRanger (its defaults: harness.model.kube.limitranger), Priority (the
cluster's PriorityClasses: harness.model.kube.priorityclass) and DefaultTolerationSeconds admission plugins, in
that order (k8s.io/kubernetes v1.36.3 pkg/kubeapiserver/options/plugins.go AllOrderedPlugins; RuntimeClass,
later in that order, is harness.model.kube.runtimeclass). The values are harness/data/pod-defaults.yaml, which
also lists the other default-on plugins and why the embedded backend leaves them out. The real backends'
API server does all this itself.

The same defaulting of a workload's pod template (`default_template`) lets an apply be compared with the
stored template as the Deployment controller compares them (`same_template`): a manifest that leaves out
what the API server defaults has the template it had.
"""
from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from harness.model.kube import limitranger
from harness.model.kube.apistatus import forbidden
from harness.model.kube.priorityclass import PriorityClass, default_class
from harness.model.data import DATA_DIR, load_yaml
from harness.model.values.resources import QuantityError, parse_quantity

__all__ = ["PodDefaults", "admit_pod", "default_template", "made_from", "made_from_template", "same_template"]

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
    spec: dict                       # field -> value every PodSpec that leaves the field out gets
    pod_only: dict                   # the same, a Pod's only (not a template's)
    container: dict
    image_pull_policy: dict          # `latest` / `other` tag -> the policy
    port_protocol: str
    probe: dict
    http_get: dict
    grpc: dict
    field_ref: dict
    volume_sources: dict             # volume source -> its defaults
    claim_template_spec: dict
    service_account_token: dict
    default_priority: int
    preemption_policy: str
    classes: dict                    # PriorityClass name -> value
    tolerations: tuple               # DefaultTolerationSeconds' tolerations

    @staticmethod
    @lru_cache(maxsize=1)
    def load() -> "PodDefaults":
        d = load_yaml((DATA_DIR / DEFAULTS_FILE).read_text())
        return PodDefaults(spec=d["podSpec"], pod_only=d["podOnly"], container=d["container"],
                           image_pull_policy=d["imagePullPolicy"], port_protocol=d["portProtocol"],
                           probe=d["probe"], http_get=d["httpGet"], grpc=d["grpc"], field_ref=d["fieldRef"],
                           volume_sources=d["volumeSources"], claim_template_spec=d["claimTemplateSpec"],
                           service_account_token=d["serviceAccountToken"],
                           default_priority=int(d["priority"]["default"]),
                           preemption_policy=d["priority"]["preemptionPolicy"],
                           classes={str(k): int(v) for k, v in d["priority"]["classes"].items()},
                           tolerations=tuple(d["tolerations"]))


def _fill(obj, defaults: dict, zero_unset: bool = False) -> None:
    """Each field of `defaults` that `obj` (a dict, else nothing) leaves out, sets to null or, a string
    field, to "" (the Go defaulters test `== ""`); with `zero_unset` also a 0 (the probe's counters are
    plain int32s, tested `== 0`; every other defaulted number is a pointer, where 0 is a value)."""
    if isinstance(obj, dict):
        for k, v in defaults.items():
            have = obj.get(k)
            if have is None or have == "" or (zero_unset and have == 0 and not isinstance(have, bool)):
                obj[k] = copy.deepcopy(v)


def image_tag(image: str) -> str:
    """The tag ParseImageName finds: after the last `:` of the last path segment, before a digest;
    `latest` when there is neither a tag nor a digest (k8s.io/kubernetes v1.36.3 pkg/util/parsers)."""
    name, _, digest = str(image or "").partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    return tag or ("" if digest else "latest")


def _default_container(c, table: PodDefaults) -> None:
    """SetDefaults_Container and the container's nested defaults (ports, env fieldRefs, probes, handlers)."""
    if not isinstance(c, dict):
        return
    _fill(c, table.container)
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = table.image_pull_policy["latest" if image_tag(c.get("image")) == "latest" else "other"]
    for p in c.get("ports") or []:
        if isinstance(p, dict) and not p.get("protocol"):
            p["protocol"] = table.port_protocol
    for e in c.get("env") or []:
        _fill(((e or {}).get("valueFrom") or {}).get("fieldRef"), table.field_ref)
    handlers = [c.get(k) for k in ("livenessProbe", "readinessProbe", "startupProbe")]
    for probe in handlers:
        _fill(probe, table.probe, zero_unset=True)
        _fill((probe or {}).get("grpc") if isinstance(probe, dict) else None, table.grpc)
    handlers += [((c.get("lifecycle") or {}).get(k)) for k in ("postStart", "preStop")]
    for h in handlers:
        _fill(h.get("httpGet") if isinstance(h, dict) else None, table.http_get)


def _default_volume(v, table: PodDefaults) -> None:
    """SetDefaults_Volume and the volume source's defaults."""
    if not isinstance(v, dict):
        return
    if not any(k != "name" and val is not None for k, val in v.items()):
        v["emptyDir"] = {}
    for source, defaults in table.volume_sources.items():
        _fill(v.get(source), defaults)
    for item in ((v.get("downwardAPI") or {}).get("items") or []):
        _fill((item or {}).get("fieldRef"), table.field_ref)
    for src in ((v.get("projected") or {}).get("sources") or []):
        for item in (((src or {}).get("downwardAPI") or {}).get("items") or []):
            _fill((item or {}).get("fieldRef"), table.field_ref)
        _fill((src or {}).get("serviceAccountToken"), table.service_account_token)
    _fill((((v.get("ephemeral") or {}).get("volumeClaimTemplate") or {}).get("spec")), table.claim_template_spec)


def _default_pod_spec(spec: dict, table: PodDefaults) -> None:
    """SetDefaults_PodSpec with the containers' and volumes' nested defaults: every PodSpec's."""
    _fill(spec, table.spec)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            _default_container(c, table)
    for v in spec.get("volumes") or []:
        _default_volume(v, table)


def _default_spec(spec: dict, table: PodDefaults) -> None:
    """A Pod's: every PodSpec's defaults, then SetDefaults_Pod's (a container's limits stand in for the
    requests it leaves out; with hostNetwork a port's hostPort is its containerPort)."""
    _default_pod_spec(spec, table)
    _fill(spec, table.pod_only)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            for p in c.get("ports") or []:
                if spec.get("hostNetwork") and not p.get("hostPort") and p.get("containerPort"):
                    p["hostPort"] = p["containerPort"]
            res = c.get("resources") or {}
            if res.get("limits"):
                res["requests"] = {**res["limits"], **(res.get("requests") or {})}


def default_template(template: dict) -> dict:
    """A copy of a workload's pod template (a Deployment's, DaemonSet's, Job's spec.template) as the API
    server stores it: every PodSpec's defaults, none of a Pod's own."""
    out = copy.deepcopy(template or {})
    spec = out.setdefault("spec", {})
    if isinstance(spec, dict):
        _default_pod_spec(spec, PodDefaults.load())
    return out


# the label the ReplicaSet controller adds to a Deployment's templates, left out of their comparison
# (k8s.io/kubernetes v1.36.3 pkg/controller/deployment/util/deployment_util.go EqualIgnoreHash)
POD_TEMPLATE_HASH = "pod-template-hash"
# where a pod spec holds resource quantities, compared by value
_QUANTITY_MAPS = ("limits", "requests", "overhead", "sizeLimit")


def _semantic(value, key: str = ""):
    """The value apimachinery's Semantic.DeepEqual compares: an absent, null or empty field alike, and a
    quantity by its amount (`0.5` is `500m`)."""
    if key in _QUANTITY_MAPS:
        try:
            if isinstance(value, dict):
                return {k: parse_quantity(v) for k, v in value.items()} or None
            if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                return parse_quantity(value)
        except QuantityError:
            pass
    if isinstance(value, dict):
        out = {k: _semantic(v, k) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None} or None
    if isinstance(value, list):
        return [_semantic(v) for v in value] or None
    return value


def semantic(value):
    """`value` as apimachinery's Semantic.DeepEqual compares it: an absent, null or empty field alike, a quantity
    by its amount; two values are semantically equal when these are equal."""
    return _semantic(value)


def stored_template(template: dict):
    """A workload pod template as the controllers compare it: defaulted, without the pod-template-hash label,
    semantic (`semantic`)."""
    t = default_template(template)
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(POD_TEMPLATE_HASH, None)
    return _semantic(t)


def same_template(old: dict, new: dict) -> bool:
    """Whether two workload pod templates are the same once stored: both defaulted, compared as the
    Deployment controller compares a ReplicaSet's template with the Deployment's (EqualIgnoreHash:
    Semantic.DeepEqual without the pod-template-hash label)."""
    return stored_template(old) == stored_template(new)


def _priority(pod: dict, old: dict | None, table: PodDefaults, classes: Mapping[str, PriorityClass] | None) -> None:
    """Priority admission (admitPod): on create the class's value and preemption policy, refusing a class
    that does not exist or a value the pod gives that differs; a pod naming no class gets the globalDefault
    class (its name too), else 0 and PreemptLowerPriority; on update the stored ones are kept. `classes`: every
    class the cluster holds (harness.model.kube.priorityclass.classes_of), None for the system ones alone."""
    spec = pod["spec"]
    if old is not None:
        for k in ("priority", "preemptionPolicy"):
            if spec.get(k) is None and (old.get("spec") or {}).get(k) is not None:
                spec[k] = old["spec"][k]
        return
    if classes is None:
        classes = {n: PriorityClass(n, v) for n, v in table.classes.items()}
    name = spec.get("priorityClassName") or ""
    if name and name not in classes:
        raise forbidden("pods", pod, NO_CLASS.format(name=name))
    chosen = classes[name] if name else default_class(classes)
    if chosen is not None:
        spec["priorityClassName"] = chosen.name
    computed = chosen.value if chosen is not None else table.default_priority
    if spec.get("priority") is not None and spec["priority"] != computed:
        raise forbidden("pods", pod, PRIORITY_GIVEN.format(given=spec["priority"], computed=computed))
    spec["priority"] = computed
    # every class has a policy (SetDefaults_PriorityClass); no class: PreemptLowerPriority
    policy = chosen.preemption_policy if chosen is not None else table.preemption_policy
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


def admit_pod(pod: dict, old: dict | None = None, classes: Mapping[str, PriorityClass] | None = None,
              limit_ranges: list[dict] | None = None) -> dict:
    """`pod` as the API server has it after defaulting, LimitRanger's defaults (on create, `limit_ranges` of
    the pod's namespace: harness.model.kube.limitranger), Priority (`classes`: the cluster's PriorityClasses, None
    for the system ones) and DefaultTolerationSeconds, on create (`old` None) or update (`old` the stored pod),
    in the API server's order (AllOrderedPlugins); modified in place and returned, or APIRejected with the
    plugin's text."""
    table = PodDefaults.load()
    spec = pod.setdefault("spec", {})
    _default_spec(spec, table)
    if old is None and limit_ranges:
        limitranger.default_pod(pod, limit_ranges)
    _priority(pod, old, table, classes)
    _default_tolerations(spec, table)
    return pod


# what a running pod holds besides its template: admission's additions (a service account's token volume
# and its mounts, DefaultTolerationSeconds' tolerations, the priority), the binding and the pod's own defaults
_ADDED_LISTS = ("volumes", "tolerations", "volumeMounts", "imagePullSecrets")


def made_from(pod: dict, template: dict) -> bool:
    """Whether a running pod can be of `template`'s revision: both defaulted, its labels hold the template's
    (the pod-template-hash aside), the same containers by name, and every field both give the same; a list
    admission adds to (volumes, tolerations, mounts) holds the template's items. A dump's pod differs from
    its ReplicaSet's template only where admission, the scheduler or the kubelet wrote, and scenarios
    shorten pods, so a field only one side gives says nothing; a field the new template removed goes
    unseen (docs/architecture/real-engine.md, Seeded pods and their owners)."""
    return made_from_template(template)(pod)


def made_from_template(template: dict) -> Callable[[dict], bool]:
    """made_from for many pods of one template (a Deployment's running pods), the template defaulted once."""
    tmpl = default_template(template)
    labels = {k: v for k, v in ((tmpl.get("metadata") or {}).get("labels") or {}).items() if k != POD_TEMPLATE_HASH}
    want = tmpl.get("spec") or {}

    def made(pod: dict) -> bool:
        have = ((pod or {}).get("metadata") or {}).get("labels") or {}
        if not all(have.get(k) == v for k, v in labels.items()):
            return False
        # the pod's spec defaulted (its metadata is read above, not copied)
        return _agrees(default_template({"spec": (pod or {}).get("spec") or {}}).get("spec") or {}, want)
    return made


def _agrees(have, want, key: str = "") -> bool:
    """`want`'s fields as `have` gives them, where both give them (_semantic values)."""
    if key in ("containers", "initContainers"):
        named = {c.get("name"): c for c in have or [] if isinstance(c, dict)}
        return [c.get("name") for c in want or [] if isinstance(c, dict)] == list(named) and \
            all(_agrees(named[c.get("name")], c) for c in want or [] if isinstance(c, dict))
    if key in _ADDED_LISTS:
        items = [_semantic(i) for i in have or []]
        return all(_semantic(i) in items for i in want or [])
    if isinstance(have, dict) and isinstance(want, dict) and key not in _QUANTITY_MAPS:
        return all(_agrees(have[k], v, k) for k, v in want.items() if have.get(k) is not None and v is not None)
    return _semantic(have, key) == _semantic(want, key)
