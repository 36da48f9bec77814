"""kube-scheduler's preemption for the loop's stand-in: a pending pod that fits on no Node may delete
lower-priority pods on one where that makes it fit, and waits for that Node (status.nominatedNodeName).

The default profile's PostFilter plugin of k8s.io/kubernetes v1.36.3: pkg/scheduler/framework/plugins/
defaultpreemption/default_preemption.go (PodEligibleToPreemptOthers, SelectVictimsOnNode,
filterPodsWithPDBViolation, calculateNumCandidates) and pkg/scheduler/framework/preemption/ preemption.go
(Preempt, DryRunPreemption, pickOneNodeForPreemption) and executor.go (PreemptPod,
getLowerPriorityNominatedPods); where upstream picks among equals (the dry run's offset) the draw is
seeded. The rules, and what Karpenter does meanwhile: docs/architecture/loop.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from harness.loop.kube.kubescheduler import (ANTI_AFFINITY, EXISTING_ANTI_AFFINITY, NODE_PORTS, SPREAD, TOO_MANY_PODS,
                                        Cycle, Snapshot)
from harness.loop.scheduling.pods import PodView
from harness.loop.scheduling.topology import selector_matches

# DefaultPreemptionArgs defaults (pkg/scheduler/apis/config/v1/defaults.go SetDefaults_DefaultPreemptionArgs)
MIN_CANDIDATE_NODES_PERCENTAGE = 10
MIN_CANDIDATE_NODES_ABSOLUTE = 100
NEVER = "Never"
# the reasons removing pods can resolve (the plugins' Unschedulable, not UnschedulableAndUnresolvable, statuses)
RESOLVABLE = frozenset({TOO_MANY_PODS, NODE_PORTS, SPREAD, ANTI_AFFINITY, EXISTING_ANTI_AFFINITY})
# executor.go PreemptPod: the victim's event and DisruptionTarget condition
PREEMPTED_REASON = "Preempted"
PREEMPTED_MESSAGE = "Preempted by pod {uid} on node {node}"
# the PostFilter's words when preemption cannot help (default_preemption.go, preemption.go)
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."


def priority(pv: PodView) -> int:
    """corev1helpers.PodPriority: spec.priority, 0 when unset."""
    return int(pv.spec.get("priority") or 0)


@dataclass
class Candidate:
    node: str
    victims: list[str]                 # pod keys, most important first
    pdb_violations: int


@dataclass
class Outcome:
    """What PostFilter decided for one pod: the Node it is nominated to (and its victims), or why not."""
    node: str | None = None
    victims: list[str] = field(default_factory=list)
    why: str | None = None


def resolvable(reasons: list[str], pv: PodView, allocatable: Mapping[str, int]) -> bool:
    """Whether a Node's filter status is Unschedulable rather than UnschedulableAndUnresolvable: every reason
    is one removing pods can change, and no resource the pod requests exceeds the Node's allocatable
    (noderesources fit.go insufficientResources Unresolvable)."""
    for r in reasons:
        if r.startswith("Insufficient "):
            name = r[len("Insufficient "):]
            if pv.scheduler_requests.get(name, 0) > allocatable.get(name, 0):
                return False
        elif r not in RESOLVABLE:
            return False
    return bool(reasons)


class Preemption:
    """DefaultPreemption over the loop's pods. `victims`: pod key -> the preemptor that deleted it (its
    DisruptionTarget condition, reason PreemptionByScheduler)."""

    def __init__(self, state, rng):
        self.state = state
        self.rng = rng
        self.victims: dict[str, str] = {}
        self.nodes: list[dict] = []           # the Nodes of the pass that runs the PostFilter
        # the pod's filters read its Node alone (no spread constraint, inter-pod term or host port of its own, no
        # bound pod's required anti-affinity): a trial snapshot holds that Node only
        self.local = False

    # -- PodEligibleToPreemptOthers -----------------------------------------------------------------
    def eligible(self, key: str, pv: PodView) -> str | None:
        """None when the pod may preempt; else the reason it may not (preemptionPolicy Never, or a pod of lower
        priority still terminating by preemption on the Node it is nominated to)."""
        s = self.state
        if pv.spec.get("preemptionPolicy") == NEVER:
            return NOT_ELIGIBLE_NEVER
        node = s.preempting.get(key)
        if node:
            mine = priority(pv)
            for k in s.pods_on(node):
                other = s.pod_views.get(k)
                if other is not None and k in self.victims and k in s.terminating and priority(other) < mine:
                    return NOT_ELIGIBLE_TERMINATING
        return None

    # -- SelectVictimsOnNode ------------------------------------------------------------------------
    def _fits(self, pv: PodView, node: dict, kept: list[PodView], base: dict, namespaces,
              extra: Mapping[str, int]) -> bool:
        """RunFilterPluginsWithNominatedPods on `node` holding only `kept` (the other Nodes as they are), the
        nominated pods of at least the pod's priority counted there (`extra`)."""
        name = node["metadata"]["name"]
        if self.local:              # nothing the pod's filters read lies on another Node: that Node alone
            snap = Snapshot.of_nodes([node], {name: Snapshot.group(kept)}, namespaces)
        else:
            groups = dict(base)
            groups[name] = Snapshot.group(kept)
            snap = Snapshot.of_nodes(self.nodes, groups, namespaces)
        requested: dict[str, int] = dict(extra)
        for p in kept:
            for k, v in p.scheduler_requests.items():
                requested[k] = requested.get(k, 0) + v
        return not Cycle(pv, snap).filter(node, requested)

    def _pdbs(self) -> list[tuple[str, dict | None, int, frozenset]]:
        """The PodDisruptionBudgets as kube-scheduler's lister has them: (namespace, selector, disruptionsAllowed,
        disruptedPods)."""
        out = []
        for obj in self.state.cluster.list("PodDisruptionBudget", shared=True):
            status = obj.get("status") or {}
            out.append((obj["metadata"].get("namespace") or "default", (obj.get("spec") or {}).get("selector"),
                        int(status.get("disruptionsAllowed") or 0), frozenset(status.get("disruptedPods") or {})))
        return out

    @staticmethod
    def _split_by_pdb(pods: list[PodView], pdbs) -> tuple[list[PodView], list[PodView]]:
        """filterPodsWithPDBViolation: the pods whose eviction would take a matching PDB below 0 (counted in
        order), and the others. A PDB with an empty selector matches nothing here."""
        allowed = [p[2] for p in pdbs]
        violating, other = [], []
        for pv in pods:
            hit = False
            if pv.labels:
                for i, (ns, selector, _, disrupted) in enumerate(pdbs):
                    if ns != pv.namespace or not selector or not (selector.get("matchLabels") or
                                                                  selector.get("matchExpressions")):
                        continue
                    if not selector_matches(selector, pv.labels) or pv.name in disrupted:
                        continue
                    allowed[i] -= 1
                    if allowed[i] < 0:
                        hit = True
            (violating if hit else other).append(pv)
        return violating, other

    def _start(self, key: str) -> float:
        """GetPodStartTime: when the pod started running (bound, in the loop), else its creation."""
        at = self.state.result.pods[key].at
        return at.get("bound", at.get("created", 0.0))

    def _more_important(self, key: str) -> tuple:
        """util.MoreImportantPod as a sort key: higher priority first, then the earlier start."""
        pv = self.state.pod_views[key]
        return (-priority(pv), self._start(key), pv.order)

    def select_victims(self, key: str, pv: PodView, node: dict, base: dict, namespaces, pdbs,
                       extra: Mapping[str, int]) -> Candidate | None:
        """SelectVictimsOnNode: None when no lower-priority pod is there or the pod does not fit without them."""
        s = self.state
        name = node["metadata"]["name"]
        mine = priority(pv)
        keys = s.pods_on(name)
        potential = [k for k in keys if priority(s.pod_views[k]) < mine]
        if not potential:
            return None
        kept = [s.pod_views[k] for k in keys if k not in potential]
        if not self._fits(pv, node, kept, base, namespaces, extra):
            return None
        potential.sort(key=self._more_important)
        by_view = {id(s.pod_views[k]): k for k in potential}
        violating, other = self._split_by_pdb([s.pod_views[k] for k in potential], pdbs)
        victims: list[str] = []
        violations = 0
        for group, counts in ((violating, True), (other, False)):
            for victim in group:
                if self._fits(pv, node, kept + [victim], base, namespaces, extra):
                    kept.append(victim)
                    continue
                victims.append(by_view[id(victim)])
                violations += counts
        if violating and other:
            victims.sort(key=self._more_important)
        return Candidate(name, victims, violations) if victims else None

    # -- pickOneNodeForPreemption -------------------------------------------------------------------
    def pick(self, candidates: list[Candidate]) -> Candidate:
        s = self.state

        def highest(c: Candidate) -> int:
            return priority(s.pod_views[c.victims[0]])

        def earliest_of_highest(c: Candidate) -> float:
            top = highest(c)
            return min(self._start(k) for k in c.victims if priority(s.pod_views[k]) == top)

        scores: list[Callable[[Candidate], float]] = [
            lambda c: -c.pdb_violations,
            lambda c: -highest(c),
            lambda c: -sum(priority(s.pod_views[k]) + 2**31 for k in c.victims),
            lambda c: -len(c.victims),
            earliest_of_highest,
        ]
        left = candidates
        for f in scores:
            best = max(f(c) for c in left)
            left = [c for c in left if f(c) == best]
            if len(left) == 1:
                break
        return left[0]

    # -- Preempt -------------------------------------------------------------------------------------
    def preempt(self, key: str, pv: PodView, nodes: list[dict], failed: Mapping[str, list[str]],
                groups: dict, namespaces, allocatable: Callable[[dict], Mapping[str, int]],
                nominated: Callable[[str, PodView], Mapping[str, int]], local: bool = False) -> Outcome:
        """Evaluator.Preempt for a pod that fit nowhere: `failed` each Node's filter reasons, `groups` every
        Node's pods as Snapshot.group holds them, `nominated(node, pod)` the requests of the pods nominated there
        whose priority is at least the pod's. The Node and victims chosen, or why none (nothing is deleted
        here: actuate). `local`: see Preemption.local."""
        why = self.eligible(key, pv)
        if why is not None:
            return Outcome(why=why)
        self.nodes, self.local = nodes, local
        potential = [n for n in nodes if resolvable(failed.get(n["metadata"]["name"]) or [], pv, allocatable(n))]
        if not potential:
            return Outcome(why="Preemption is not helpful for scheduling")
        pdbs = self._pdbs()
        count = len(potential)
        wanted = candidate_count(count)
        offset = self.rng.randrange(count) if count > 1 else 0
        clean: list[Candidate] = []
        violating: list[Candidate] = []
        for i in range(count):
            node = potential[(offset + i) % count]
            c = self.select_victims(key, pv, node, groups, namespaces, pdbs, nominated(node["metadata"]["name"], pv))
            if c is None:
                continue
            (violating if c.pdb_violations else clean).append(c)
            if clean and len(clean) + len(violating) >= wanted:
                break
        candidates = clean + violating
        if not candidates:
            return Outcome(why="No preemption victims found for incoming pod")
        best = self.pick(candidates) if len(candidates) > 1 else candidates[0]
        return Outcome(node=best.node, victims=best.victims)

    def lower_nominated(self, node: str, pv: PodView, key: str) -> list[str]:
        """getLowerPriorityNominatedPods: the other pods nominated to `node` with a lower priority."""
        s = self.state
        mine = priority(pv)
        return [k for k, n in s.preempting.items() if n == node and k != key and k in s.pod_views
                and priority(s.pod_views[k]) < mine]


def preempted_message(uid: str, node: str) -> str:
    return PREEMPTED_MESSAGE.format(uid=uid, node=node)


def candidate_count(nodes: int) -> int:
    """calculateNumCandidates: 10% of the potential Nodes, at least 100, at most all."""
    return min(max(nodes * MIN_CANDIDATE_NODES_PERCENTAGE // 100, MIN_CANDIDATE_NODES_ABSOLUTE), nodes)

