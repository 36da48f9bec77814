"""Pods as Karpenter and kube-scheduler see them: requirements, requests, tolerations, preferences.

Upstream sigs.k8s.io/karpenter v1.14.0: pkg/scheduling/requirements.go NewPodRequirements,
pkg/controllers/provisioning/provisioner.go Provisioner.Validate (pod admission),
pkg/controllers/provisioning/scheduling/preferences.go Preferences.Relax (relaxation);
sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go, pkg/controllers/provisioning/scheduling/scheduler.go
NewScheduler, pkg/controllers/provisioning/scheduling/preferences.go Relax.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirement, Requirements
from harness.model.values.resources import parse_resource_list
from harness.model.labels.semantics import Semantics
from harness.model.crd.validation import validate_requirement


@dataclass
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    @staticmethod
    def from_dict(d: dict) -> "Taint":
        return Taint(str(d["key"]), str(d.get("value") or ""), str(d.get("effect") or "NoSchedule"))

    def to_dict(self) -> dict:
        d = {"key": self.key, "effect": self.effect}
        if self.value:
            d["value"] = self.value
        return d

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


# core v1.14.0 pkg/scheduling/taints.go KnownEphemeralTaints (matched on key and effect, as
# corev1 Taint.MatchTaint does) and KnownEphemeralTaintKeyPrefixes
EPHEMERAL_TAINTS = (("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute"),
                    ("node.kubernetes.io/unreachable", "NoSchedule"),
                    ("node.cloudprovider.kubernetes.io/uninitialized", "NoSchedule"),
                    ("karpenter.sh/unregistered", "NoExecute"))
EPHEMERAL_TAINT_PREFIXES = ("readiness.k8s.io/",)


def is_ephemeral(t: Taint, core=None) -> bool:
    """scheduling.IsKnownEphemeralTaint (core v1.14.0 pkg/scheduling/taints.go). `core` (a
    harness.model.upstream.corebehaviour.CoreBehaviour): not-ready:NoExecute is ephemeral only from core v1.7.0
    (#2265), the key prefixes only from v1.13.0 (#3025) (core-behaviour.yaml ephemeralNotReadyNoExecute,
    nodeReadinessTaints)."""
    if core is not None:
        if (t.key, t.effect) == ("node.kubernetes.io/not-ready", "NoExecute") and not core["ephemeralNotReadyNoExecute"]:
            return False
        if not core["nodeReadinessTaints"] and t.key.startswith(EPHEMERAL_TAINT_PREFIXES) and \
                (t.key, t.effect) not in EPHEMERAL_TAINTS:
            return False
    return (t.key, t.effect) in EPHEMERAL_TAINTS or t.key.startswith(EPHEMERAL_TAINT_PREFIXES)


def tolerates(tolerations: list[dict], taint: Taint) -> bool:
    """core/v1 Toleration.ToleratesTaint."""
    for t in tolerations:
        effect = t.get("effect") or ""
        if effect and effect != taint.effect:
            continue
        key = t.get("key") or ""
        op = t.get("operator") or "Equal"
        if not key:
            if op == "Exists":
                return True
            continue
        if key != taint.key:
            continue
        if op == "Exists" or (t.get("value") or "") == taint.value:
            return True
    return False


def karpenter_untolerated(tolerations: list[dict], taints: list[Taint]) -> list[Taint]:
    """The taints Karpenter's scheduler finds untolerated: every effect, PreferNoSchedule included
    (core v1.14.0 pkg/scheduling/taints.go Taints.Tolerates; a pod tolerates PreferNoSchedule only
    after relaxation adds that toleration, scheduling/preferences.go toleratePreferNoScheduleTaints)."""
    return [t for t in taints if not tolerates(tolerations, t)]


def untolerated(tolerations: list[dict], taints: list[Taint]) -> list[Taint]:
    """The taints that block: PreferNoSchedule never does."""
    return [t for t in taints if t.effect != "PreferNoSchedule" and not tolerates(tolerations, t)]


def seeded_claim_requests(pods: list[dict], allocatable: dict[str, int]) -> dict[str, int]:
    """What a seeded (given.existingNodes) NodeClaim asks for: its pods' requests, as core's template asks
    for the pods it was made for (nodeclaimtemplate.go NewNodeClaimTemplate), each resource held to what
    the instance type has. Core's tests bind pods past a node's size (a 150-CPU pod on a 32-CPU node), which
    no round would have planned, and the provider launches only an instance type whose allocatable fits
    the NodeClaim's requests (cloudprovider Create filters by resources.Fits): the real engine's NodeClaim
    never launched. A resource the type lacks is left out for the same reason."""
    total: dict[str, int] = {}
    for pod in pods:
        for k, v in pod_requests(pod.get("spec") or {}).items():
            total[k] = total.get(k, 0) + v
    return {k: min(v, allocatable[k]) for k, v in total.items() if k in allocatable}


def pod_requests(spec: dict, pod_level: bool = True) -> dict[str, int]:
    """Effective requests as kube-scheduler and Karpenter compute them (k8s.io/component-helpers
    v0.36.3 resource/helpers.go PodRequests): the containers' sum; each sidecar (an init container
    with restartPolicy Always) adds to it and to the running sidecar sum; a regular init container
    needs its own requests plus the sidecars started before it; the larger of the two wins. Pod-level
    `spec.resources` requests replace the cpu and memory computed from containers; overhead is added;
    plus pods=1. Limits stand in for missing requests (Kubernetes defaulting). `pod_level=False`: Karpenter core
    before v1.8.0 (#2383, core-behaviour.yaml podLevelResources; sigs.k8s.io/karpenter v1.7.1
    pkg/utils/resources/resources.go podRequests) reads the containers only."""
    def container_requests(c: dict) -> dict[str, int]:
        res = c.get("resources") or {}
        req = dict(res.get("limits") or {})
        req.update(res.get("requests") or {})
        return parse_resource_list(req)

    total: dict[str, int] = {}
    for c in spec.get("containers") or []:
        for k, v in container_requests(c).items():
            total[k] = total.get(k, 0) + v
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c in spec.get("initContainers") or []:
        reqs = container_requests(c)
        if (c or {}).get("restartPolicy") == "Always":
            for k, v in reqs.items():
                total[k] = total.get(k, 0) + v
                sidecars[k] = sidecars.get(k, 0) + v
            reqs = dict(sidecars)
        else:
            reqs = {k: reqs.get(k, 0) + sidecars.get(k, 0) for k in set(reqs) | set(sidecars)}
        for k, v in reqs.items():
            init_max[k] = max(init_max.get(k, 0), v)
    for k, v in init_max.items():
        total[k] = max(total.get(k, 0), v)
    level_spec = (spec.get("resources") or {}) if pod_level else {}
    if level_spec:
        level = dict(level_spec.get("limits") or {})
        level.update(level_spec.get("requests") or {})
        for k, v in parse_resource_list(level).items():
            if k in ("cpu", "memory"):        # the resources pod-level resources support
                total[k] = v
    for k, v in parse_resource_list(spec.get("overhead") or {}).items():
        total[k] = total.get(k, 0) + v
    total["pods"] = 1
    return total


_NO_REQUIREMENTS = Requirements()


@dataclass
class PodView:
    """A pod plus the scheduling-relevant views of it, with relaxation state."""

    obj: dict
    order: int                                   # creation order (queue tiebreak)
    owner_kind: str = ""
    owner_name: str = ""
    # core's scheduling queue tiebreak after CPU and memory (sigs.k8s.io/karpenter v1.14.0
    # pkg/controllers/provisioning/scheduling/queue.go byCPUAndMemoryDescending): creationTimestamp,
    # whole seconds as the API server stores it, then UID, random: (second, a seeded draw)
    queue_key: tuple = (0, 0.0)
    relaxed_required: int = 0                    # required OR-terms dropped from the front
    dropped_preferred: int = 0                   # heaviest preferred node-affinity terms dropped
    dropped_schedule_anyway: int = 0             # ScheduleAnyway topology spreads dropped
    dropped_pod_affinity: int = 0                # heaviest preferred pod-affinity terms dropped
    dropped_pod_anti_affinity: int = 0           # heaviest preferred pod-anti-affinity terms dropped
    tolerate_prefer_no_schedule: bool = False
    # VolumeTopology.GetRequirements alternatives (harness/loop/scheduling/volumes.py); None: no volume topology
    volume_requirements: list | None = None
    # core before v1.9.0 (#2780): the volume topology expressions VolumeTopology.Inject added to every
    # required node-affinity term of Karpenter's copy of the pod this pass (never seen by kube-scheduler)
    volume_affinity: tuple = ()
    _requests: dict[str, int] | None = field(default=None, repr=False)
    # Karpenter reads pod-level spec.resources (core v1.8.0+); kube-scheduler always does (scheduler_requests)
    pod_level_resources: bool = True
    _host_ports: list | None = field(default=None, repr=False)
    _reqs_cache: dict = field(default_factory=dict, repr=False)
    topology_cache: dict = field(default_factory=dict, repr=False)   # owned by harness.loop.scheduling.topology
    disruption_facts: tuple | None = field(default=None, repr=False)  # owned by podutil.disruption_facts
    non_zero: tuple[int, int] | None = field(default=None, repr=False)  # owned by kubescore.non_zero_requests
    _pod_affinity: tuple[bool, bool] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.obj["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.obj["metadata"].get("namespace") or "default"

    @property
    def uid(self) -> str:
        return self.obj["metadata"].get("uid") or f"{self.namespace}/{self.name}"

    @property
    def spec(self) -> dict:
        return self.obj.get("spec") or {}

    @property
    def pod_affinity(self) -> tuple[bool, bool]:
        """(any inter-pod affinity or anti-affinity, any required anti-affinity term), read once (a pod's spec
        does not change): passes over every bound pod ask it of each."""
        kinds = self._pod_affinity
        if kinds is None:
            affinity = self.spec.get("affinity") or {}
            anti = affinity.get("podAntiAffinity") or {}
            kinds = self._pod_affinity = (bool(affinity.get("podAffinity") or anti),
                                          bool(anti.get("requiredDuringSchedulingIgnoredDuringExecution")))
        return kinds

    @property
    def labels(self) -> dict[str, str]:
        return self.obj["metadata"].get("labels") or {}

    @property
    def requests(self) -> dict[str, int]:
        """The requests as Karpenter counts them."""
        if self._requests is None:
            self._requests = pod_requests(self.spec, self.pod_level_resources)
        return self._requests

    @property
    def scheduler_requests(self) -> dict[str, int]:
        """The requests as kube-scheduler counts them (pod-level resources always)."""
        return self.requests if self.pod_level_resources or not self.spec.get("resources") else pod_requests(self.spec)

    @property
    def host_ports(self) -> list:
        """The host ports its containers ask for (harness/loop/scheduling/hostports.py); computed once (a pod's
        spec does not change)."""
        hp = self._host_ports
        if hp is None:
            from harness.loop.scheduling.hostports import host_ports
            hp = self._host_ports = host_ports(self.spec)
        return hp

    @property
    def tolerations(self) -> list[dict]:
        tol = list(self.spec.get("tolerations") or [])
        if self.tolerate_prefer_no_schedule:
            tol.append({"operator": "Exists", "effect": "PreferNoSchedule"})
        return tol

    @property
    def node_selector(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in (self.spec.get("nodeSelector") or {}).items()}

    def _node_affinity(self) -> dict:
        return ((self.spec.get("affinity") or {}).get("nodeAffinity")) or {}

    def own_required_terms(self) -> list[dict]:
        """The pod's own required node-affinity terms (what Validate and kube-scheduler read)."""
        req = self._node_affinity().get("requiredDuringSchedulingIgnoredDuringExecution") or {}
        return list(req.get("nodeSelectorTerms") or [])

    def required_terms(self) -> list[dict]:
        """The required terms Karpenter schedules with: its own, each with `volume_affinity` appended (one
        term of them when it has none: sigs.k8s.io/karpenter v1.7.1 volumetopology.go VolumeTopology.Inject)."""
        terms = self.own_required_terms()
        if not self.volume_affinity:
            return terms
        return [{**t, "matchExpressions": [*(t.get("matchExpressions") or []), *self.volume_affinity]}
                for t in terms or [{}]]

    def has_required_terms(self) -> bool:
        """Karpenter's copy has a required node affinity (its own, or the one Inject made)."""
        return bool(self.volume_affinity) or \
            self._node_affinity().get("requiredDuringSchedulingIgnoredDuringExecution") is not None

    def inject_volume_affinity(self, exprs: tuple) -> None:
        """Set this pass's `volume_affinity`; the pod's cached requirements go when it changes."""
        if exprs != self.volume_affinity:
            self.volume_affinity = exprs
            self._reqs_cache.clear()
            self.topology_cache.clear()

    def preferred_terms(self) -> list[dict]:
        """Preferred node-affinity terms, heaviest first (ties keep manifest order; upstream's sort
        is not stable: sort.Slice in sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go
        newPodRequirements)."""
        prefs = list(self._node_affinity().get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        return sorted(prefs, key=lambda p: -int(p.get("weight") or 0))

    def requirements(self, sem: Semantics, strict: bool = False) -> Requirements:
        """NewPodRequirements (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go): nodeSelector, then the heaviest preferred
        term (unless strict), then the first remaining required term. Memoized per relaxation
        state; callers must not mutate the result."""
        key = (sem.profile, strict, self.relaxed_required, self.dropped_preferred)
        hit = self._reqs_cache.get(key)
        if hit is None:
            hit = self._reqs_cache[key] = self._requirements(sem, strict)
        return hit

    def _requirements(self, sem: Semantics, strict: bool) -> Requirements:
        spec = self.spec
        if not spec.get("nodeSelector") and not (spec.get("affinity") or {}).get("nodeAffinity") \
                and not self.volume_affinity:
            return _NO_REQUIREMENTS
        reqs = Requirements(Requirement.new(k, "In", [v], sem) for k, v in self.node_selector.items())
        if not strict:
            prefs = self.preferred_terms()[self.dropped_preferred:]
            if prefs:
                term = prefs[0].get("preference") or {}
                reqs.add(*(Requirement.new(e["key"], e["operator"], e.get("values") or (), sem)
                           for e in term.get("matchExpressions") or []))
        terms = self.required_terms()[self.relaxed_required:]
        if terms:
            reqs.add(*(Requirement.new(e["key"], e["operator"], e.get("values") or (), sem)
                       for e in terms[0].get("matchExpressions") or []))
        # most pods have none: they share one empty set (read-only, as every result here is)
        return reqs if reqs else _NO_REQUIREMENTS

    def relax(self, prefer_no_schedule_taints_exist: bool) -> bool:
        """One relaxation step, in upstream's order (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/preferences.go Preferences.Relax);
        False when nothing is
        left to relax."""
        if len(self.required_terms()) - self.relaxed_required > 1:
            self.relaxed_required += 1
            return True
        if self.dropped_pod_affinity < len(self.preferred_pod_terms("podAffinity")):
            self.dropped_pod_affinity += 1
            return True
        if self.dropped_pod_anti_affinity < len(self.preferred_pod_terms("podAntiAffinity")):
            self.dropped_pod_anti_affinity += 1
            return True
        if self.dropped_preferred < len(self.preferred_terms()):
            self.dropped_preferred += 1
            return True
        anyway = [t for t in self.spec.get("topologySpreadConstraints") or []
                  if t.get("whenUnsatisfiable") == "ScheduleAnyway"]
        if self.dropped_schedule_anyway < len(anyway):
            self.dropped_schedule_anyway += 1
            return True
        if prefer_no_schedule_taints_exist and not self.tolerate_prefer_no_schedule:
            self.tolerate_prefer_no_schedule = True
            return True
        return False

    def preferred_pod_terms(self, kind: str) -> list[dict]:
        """Preferred podAffinity/podAntiAffinity terms, heaviest first."""
        aff = ((self.spec.get("affinity") or {}).get(kind)) or {}
        prefs = list(aff.get("preferredDuringSchedulingIgnoredDuringExecution") or [])
        return sorted(prefs, key=lambda p: -int(p.get("weight") or 0))

    def reset_relaxation(self, ignore_preferences: bool = False) -> None:
        """Nothing relaxed; with `ignore_preferences` (Karpenter's PREFERENCE_POLICY=Ignore) every preference
        counts as dropped from the start: core then builds strict pod requirements and skips preferred
        affinity terms and ScheduleAnyway spreads (sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go
        updateCachedPodData, topology.go newForTopologies / newForAffinities)."""
        self.relaxed_required = self.dropped_preferred = self.dropped_schedule_anyway = 0
        self.dropped_pod_affinity = self.dropped_pod_anti_affinity = 0
        self.tolerate_prefer_no_schedule = False
        if ignore_preferences:
            self.dropped_preferred = len(self.preferred_terms())
            self.dropped_pod_affinity = len(self.preferred_pod_terms("podAffinity"))
            self.dropped_pod_anti_affinity = len(self.preferred_pod_terms("podAntiAffinity"))
            self.dropped_schedule_anyway = sum(1 for t in self.spec.get("topologySpreadConstraints") or []
                                               if t.get("whenUnsatisfiable") == "ScheduleAnyway")


def admission_error(pod: PodView, profile: Profile, sem: Semantics,
                    validate_preferred: bool = False) -> tuple[str, bool] | None:
    """Provisioner.Validate (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/provisioner.go;
    sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler): why the pod is
    ignored, and whether an event
    is emitted (case (a) emits none). None when the pod is provisionable. `validate_preferred`: core before
    v1.5.0 (#2182, core-behaviour.yaml validatesPreferredNodeAffinity; sigs.k8s.io/karpenter v1.4.0
    provisioner.go validateAffinity) validates the preferred node-affinity terms too, before the required ones."""
    # NewPodRequirements, not the strict ones: the nodeSelector, the heaviest preferred term and the
    # first required term (validateKarpenterManagedLabelCanExist), so a *preferred* DoesNotExist on
    # karpenter.sh/nodepool also makes Karpenter ignore the pod, silently
    key = ("admission", sem.profile)
    reqs = pod._reqs_cache.get(key)
    if reqs is None:
        reqs = Requirements(Requirement.new(k, "In", [v], sem) for k, v in pod.node_selector.items())
        prefs = pod.preferred_terms()
        if prefs:
            reqs.add(*(Requirement.new(e["key"], e["operator"], e.get("values") or (), sem)
                       for e in (prefs[0].get("preference") or {}).get("matchExpressions") or []))
        terms = pod.own_required_terms()
        if terms:
            reqs.add(*(Requirement.new(e["key"], e["operator"], e.get("values") or (), sem)
                       for e in terms[0].get("matchExpressions") or []))
        pod._reqs_cache[key] = reqs
    np = reqs.get("karpenter.sh/nodepool")
    if "karpenter.sh/nodepool" in reqs and np.operator == "DoesNotExist":
        return ("configured to not run on a Karpenter provisioned node "
                "(requirement=karpenter.sh/nodepool DoesNotExist)"), False
    exprs = [{"key": k, "operator": "In", "values": [v]} for k, v in pod.node_selector.items()]
    for term in (pod.preferred_terms() if validate_preferred else ()):
        pref = term.get("preference") or {}
        if pref.get("matchFields"):
            return "node selector term with matchFields is not supported", True
        exprs += list(pref.get("matchExpressions") or [])
    for term in pod.own_required_terms():
        if term.get("matchFields"):
            return "node selector term with matchFields is not supported", True
        exprs += list(term.get("matchExpressions") or [])
    for e in exprs:
        problems = validate_requirement(e, profile)
        if problems:
            return "; ".join(problems), True
    return None


def daemonset_pod_view(ds: dict) -> PodView:
    """The pod Karpenter simulates for a DaemonSet that has no pod yet: its template (core v1.14.0
    pkg/controllers/provisioning/provisioner.go getDaemonSetPods)."""
    name = ds["metadata"]["name"]
    return PodView(ds["spec"]["template"] | {"metadata": {"name": name}}, 0, "DaemonSet", name)
