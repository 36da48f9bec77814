"""Cluster state as the disruption controller reads it, its candidates and its budgets.

sigs.k8s.io/karpenter v1.14.0:
- pkg/controllers/state/statenode.go: a state node is a NodeClaim and/or a Node; ValidateNodeDisruptable
  and ValidatePodsDisruptable with their exact errors; MarkedForDeletion, Nominated.
- pkg/controllers/disruption/types.go NewCandidate: queue, node and pod checks (DisruptionBlocked
  events, `pretty.Sentence` of the error), the NodePool and instance type, DisruptionCost
  (ReschedulingCost x LifetimeRemaining), Price (the node's offering), RescheduleDisruptionCost
  (1 + positive eviction costs of reschedulable pods), IsEmpty, SavingsRatio.
- pkg/controllers/disruption/helpers.go GetCandidates, BuildDisruptionBudgetMapping (with the
  NodePool's DisruptionBlocked event when a budget allows nothing).
Unmanaged Nodes (no NodeClaim) take part in scheduling simulations and never become candidates.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.loop.disruption import record as disruptionwhy, reasonwords
from harness.loop.scheduling import podutil
from harness.loop.disruption.budgets import (DISRUPTION_REASONS, disruption_spec, lifetime_remaining, must_allowed_disruptions,
                                  termination_grace_period)
from harness.loop.state import Claim, LoopState
from harness.loop.kube.pdb import Limits
from harness.loop.scheduling.pods import PodView
from harness.loop.disruption.reasonwords import sentence
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL

ZONE = "topology.kubernetes.io/zone"
GRACEFUL, EVENTUAL = "graceful", "eventual"        # types.go disruption classes


@dataclass
class StateNode:
    name: str
    claim: Claim | None
    node: dict | None
    pods: list[str] = field(default_factory=list)      # keys of the pods bound to it

    @property
    def labels(self) -> dict[str, str]:
        if self.node is not None and (self.claim is None or self.claim.registered):
            return self.node["metadata"].get("labels") or {}
        return (self.claim.obj["metadata"].get("labels") or {}) if self.claim else {}

    @property
    def annotations(self) -> dict[str, str]:
        if self.node is not None and (self.claim is None or self.claim.registered):
            return self.node["metadata"].get("annotations") or {}
        return (self.claim.obj["metadata"].get("annotations") or {}) if self.claim else {}

    @property
    def managed(self) -> bool:
        return self.claim is not None

    @property
    def initialized(self) -> bool:
        if self.claim is not None:
            return self.claim.initialized
        conds = (self.node or {}).get("status", {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)

    @property
    def deleting(self) -> bool:
        if self.claim is not None:
            return self.claim.dis.deleting_since is not None or self.claim.dis.instance_terminating
        return bool((self.node or {}).get("metadata", {}).get("deletionTimestamp"))

    @property
    def marked_for_deletion(self) -> bool:
        return (self.claim is not None and self.claim.dis.marked_for_deletion) or self.deleting

    @property
    def ready(self) -> bool:
        conds = (self.node or {}).get("status", {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)


def state_nodes(s: LoopState, marked_only: bool = False) -> list[StateNode]:
    """Every live NodeClaim (launched) with its Node, then the Nodes no NodeClaim owns (`marked_only`: of
    those, the ones marked for deletion, with their pods: what a provisioning pass reschedules)."""
    out: dict[str, StateNode] = {}
    if marked_only:
        # a provisioning round asks this while nodes drain: the marked NodeClaims' Nodes read alone, every Node
        # listed only for the ones no NodeClaim owns
        owned = set()
        for c in s.claims:
            if c.done or c.refused or c.launched is None:
                continue
            name = c.node_name or c.launched.vm_name
            owned.add(name)
            if c.dis.marked_for_deletion or c.dis.deleting_since is not None or c.dis.instance_terminating:
                out[name] = StateNode(name, c, s.cluster.get("Node", c.node_name, shared=True) if c.node_name else None)
        for node in s.cluster.list("Node", shared=True):     # read only
            name = node["metadata"]["name"]
            if name not in owned and node["metadata"].get("deletionTimestamp"):
                out[name] = StateNode(name, None, node)
    else:
        nodes = {n["metadata"]["name"]: n for n in s.cluster.list("Node", shared=True)}     # read only
        for c in s.claims:
            if c.done or c.refused or c.launched is None:
                continue
            name = c.node_name or c.launched.vm_name
            out[name] = StateNode(name, c, nodes.get(c.node_name) if c.node_name else None)
        for name, node in nodes.items():
            if name not in out:
                out[name] = StateNode(name, None, node)
    for name, sn in out.items():
        sn.pods.extend(s.pods_on(name))
    return list(out.values())


@dataclass
class Candidate:
    sn: StateNode
    nodepool: dict
    instance_type: object | None
    zone: str
    capacity_type: str
    disruption_cost: float
    reschedulable: list[str]
    price: float
    reschedule_cost: float
    # core v1.14.0 (#2962; core-behaviour.yaml emptinessByEvictionCost): empty when no pod adds a positive
    # eviction cost; before, when it has no reschedulable pod. The run's CoreBehaviour in place of a bool: the
    # switch is read only where the two answers differ (reschedulable pods none of which adds a positive cost)
    empty_by_cost: object = True

    @property
    def name(self) -> str:
        return self.sn.name

    @property
    def claim(self) -> Claim:
        return self.sn.claim

    @property
    def nodepool_name(self) -> str:
        return self.nodepool["metadata"]["name"]

    def is_empty(self) -> bool:
        by_pods = not self.reschedulable            # sigs.k8s.io/karpenter v1.13.0 emptiness.go ShouldDisrupt
        by_cost = self.reschedule_cost <= 1.0       # PerNodeBaseDisruptionCost
        if by_pods == by_cost:
            return by_pods
        core = self.empty_by_cost
        return by_cost if (core if isinstance(core, bool) else core["emptinessByEvictionCost"]) else by_pods

    def savings_ratio(self) -> float:
        return self.price / self.reschedule_cost


class CandidateError(Exception):
    def __init__(self, message: str, protection: str | None = None, event: bool = True, pod_block: bool = False,
                 pod: str | None = None):
        super().__init__(message)
        self.message, self.protection, self.event, self.pod_block = message, protection, event, pod_block
        self.pod = pod                                # the pod key that blocks (do-not-disrupt, PDB)


class Cluster:
    """One disruption pass's view: state nodes, NodePools, instance types, PDB limits."""

    def __init__(self, s: LoopState, nodepools: list[dict] | None = None, nodes: list[StateNode] | None = None):
        self.s = s
        self.now = s.clock.now()
        self.started = s.disruption.pod_started
        self.nodes = state_nodes(s) if nodes is None else nodes
        self.names = frozenset(sn.name for sn in self.nodes)
        self.nodepools = {np["metadata"]["name"]: np for np in (nodepools if nodepools is not None
                                                                  else s.cluster.list("NodePool"))}
        self._its: dict[str, dict | None] = {}
        self.pdbs = Limits(list(s.disruption.pdb_status.values()))
        self._built: dict[str, list[Candidate]] = {}
        # per state node, ValidatePodsDisruptable's verdict (None: disruptable): the same for both classes' sweeps
        self._pods_verdict: dict[str, CandidateError | None] = {}
        self._kept: dict | None = None               # _kept_verdicts's
        # per state node, NewCandidate's costs, prices and reschedulable pods (candidate): the same for every class
        self._tails: dict[str, tuple] = {}
        # the decision record's budget arithmetic (disruptionwhy.budget_text): (NodePool, reason) -> (nodes
        # counted, the disrupting ones with why they count), the NodePool's allowance (computed when asked), and
        # the candidates this pass reserved from it
        self.budget_facts: dict[tuple[str, str], tuple[int, tuple[tuple[str, str], ...]]] = {}
        self._allowed: dict[tuple[str, str], int] = {}
        self.taken: dict[tuple[str, str], list[str]] = {}

    def instance_types(self, np_name: str) -> dict | None:
        """BuildNodePoolMap: the NodePool's instance types by name (None: not resolvable)."""
        if np_name not in self._its:
            from harness.loop.provisioning.nodepool import nodeclass_params
            np = self.nodepools.get(np_name)
            ref = (((np or {}).get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
            params = nodeclass_params(self.s, ref.get("name", "")) if np is not None else None
            its = [] if params is None else \
                self.s.overlays.instance_types(self.s, np_name, self.s.provider.instance_types(params)).instance_types
            self._its[np_name] = {it.name: it for it in its} or None
        return self._its[np_name]

    def publish(self, kind: str, name: str, reason: str, message: str, dedupe: tuple = (), timeout: float = 120.0,
                namespace: str | None = None) -> None:
        self.s.disruption.recorder.publish(kind, name, reason, message, dedupe, timeout, namespace)

    def blocked(self, sn: StateNode, reason: str) -> None:
        """disruptionevents.Blocked: on the Node (if any) and the NodeClaim, worded per core release
        (core-behaviour.yaml disruptionBlockedMessage)."""
        if sn.node is not None:
            message = reasonwords.blocked_event(self.s.core, "Node", reason)
            self.publish("Node", sn.node["metadata"]["name"], "DisruptionBlocked", message, ("node", sn.name))
        if sn.claim is not None:
            message = reasonwords.blocked_event(self.s.core, "NodeClaim", reason)
            self.publish("NodeClaim", sn.claim.result.name, "DisruptionBlocked", message, ("nodeclaim", sn.claim.result.name))

    def unconsolidatable(self, c: Candidate, message: str, method: str | None = None, detail=None) -> None:
        """disruptionevents.Unconsolidatable (15 minute dedupe per object); with `method`, the decision record
        says it too (with `detail`: a string or a callable adding the arithmetic the event leaves out)."""
        if c.sn.node is not None:
            self.publish("Node", c.sn.node["metadata"]["name"], "Unconsolidatable", message, ("node", c.name), 900.0)
        self.publish("NodeClaim", c.claim.result.name, "Unconsolidatable", message, ("nodeclaim", c.claim.result.name), 900.0)
        if method is not None:
            self.kept(c.claim, method, message, lambda: f"{disruptionwhy.METHODS[method]}: {message}" + (
                f" ({detail() if callable(detail) else detail})" if detail else ""), by="unconsolidatable")

    def kept(self, claim: Claim, scope: str, key, reason, by: str, extra=()) -> None:
        """The decision record: the method (or disruption class) `scope` leaves the candidate, for `reason`
        (recorded when it differs from the last pass's for this candidate and scope)."""
        disruptionwhy.note(self.s, claim, scope, key, "candidate-kept", reason, extra, {"method": scope, "by": by})

    def protect(self, sn: StateNode, by: str, message: str, method: str) -> None:
        """The run's record of a candidate a protection kept (one entry per node, protection and method)."""
        rec = {"node": sn.name, "nodeClaim": sn.claim.result.name if sn.claim else None, "by": by,
               "message": message, "method": method}
        hit = self.s.protected_entry(sn.name, by, method)
        if hit is not None:
            hit["last"] = self.now
            return
        rec["first"] = rec["last"] = self.now
        self.s.result.protected.append(rec)

    # -- pods ---------------------------------------------------------------------------------------
    def pod(self, key: str) -> PodView:
        return self.s.pod_views[key]

    def do_not_disrupt(self, key: str) -> bool:
        pv = self.pod(key)
        return podutil.do_not_disrupt(pv, self.started.get(key), self.now, self.publish,
                                      self.s.core["doNotDisruptDurations"])

    def evictable(self, key: str) -> bool:
        """pod.IsEvictable (active, no disrupted-taint toleration, not mirror, no active do-not-disrupt)."""
        pv = self.pod(key)
        f = podutil.disruption_facts(pv)
        return podutil.is_active(pv) and not f.never_evictable and \
            (f.do_not_disrupt is None or not self.do_not_disrupt(key))

    def moves(self, key: str) -> bool:
        """Whether a simulation schedules this pod of a candidate or deleting node: IsCurrentlyReschedulable
        from core v1.4.0 (#2033); before it, every reschedulable pod, even one a fully blocking PDB or a
        do-not-disrupt annotation keeps where it is (harness/data/core-behaviour.yaml deletingNodePods)."""
        if self.s.core["deletingNodePods"] == "currentlyReschedulable":
            return self.currently_reschedulable(key)
        return podutil.is_reschedulable(self.pod(key))

    def currently_reschedulable(self, key: str) -> bool:
        """pdb.Limits.IsCurrentlyReschedulable."""
        pv = self.pod(key)
        if not podutil.is_reschedulable(pv) or self.do_not_disrupt(key):
            return False
        if self.evictable(key) and not self.pdbs.is_evictable(pv.namespace, pv.labels, fully=True,
                                                              multiple_block=self.s.core["multiplePdbsEviction"])[1]:
            return False
        return True

    # -- candidates -----------------------------------------------------------------------------------
    def validate_node(self, sn: StateNode) -> None:
        """StateNode.ValidateNodeDisruptable (the words per core release: reasonwords, and beside the branch below)."""
        core = self.s.core
        if sn.claim is None or sn.node is None:
            # core-behaviour.yaml unmanagedNodeBlockedEvent: sigs.k8s.io/karpenter v1.0.6
            # pkg/controllers/state/statenode.go ValidateNodeDisruptable gives both halves one reason, and
            # disruption/types.go NewCandidate publishes it on whichever object there is; from v1.1.0 (#1644,
            # #1766; v1.14.0 the same functions) the reasons differ and a Node without a NodeClaim gets no event
            if core["unmanagedNodeBlockedEvent"] == "everyNode":
                raise CandidateError("state node doesn't contain both a node and a nodeclaim")
            if sn.claim is None:
                raise CandidateError("node isn't managed by karpenter", event=False)
            raise CandidateError("nodeclaim does not have an associated node")
        if not sn.initialized:
            raise CandidateError(reasonwords.node_reason(core, "initialized"))
        if sn.marked_for_deletion:
            raise CandidateError(reasonwords.node_reason(core, "deleting"))
        if sn.claim.dis.nominated_until > self.now:
            raise CandidateError(reasonwords.node_reason(core, "nominated"), "nominated")
        if sn.annotations.get(podutil.DO_NOT_DISRUPT) == "true":
            raise CandidateError(f'disruption is blocked through the "{podutil.DO_NOT_DISRUPT}" annotation',
                                 "do-not-disrupt")
        if NODEPOOL not in sn.labels:
            raise CandidateError(reasonwords.missing_label(core, NODEPOOL))

    def validate_pods(self, sn: StateNode) -> None:
        """StateNode.ValidatePodsDisruptable: do-not-disrupt pods, then PDBs (CanEvictPods). Judged once per
        node a pass: nothing it reads changes between the two classes' sweeps (a do-not-disrupt duration's
        clock is the pass's `now`; an invalid value's event is deduplicated upstream too). A node none of whose
        pods has a do-not-disrupt annotation keeps its verdict between passes while its pods
        (LoopState.on_node_changed) and the PDBs with their allowances are the same: a pass asks it of every
        node, and between two passes a command changes a hundred of thousands."""
        if sn.name in self._pods_verdict:
            error = self._pods_verdict[sn.name]
        else:
            kept = self._kept_verdicts()
            judged = self._pods_as_judged(sn)
            hit = kept.get(sn.name)
            if hit is not None and hit[0] == judged:
                error = hit[1]
            else:
                error, timeless = self._validate_pods(sn)
                if timeless:
                    kept[sn.name] = (judged, error)
                else:
                    kept.pop(sn.name, None)
            self._pods_verdict[sn.name] = error
        if error is not None:
            raise error.with_traceback(None)      # kept between passes: not holding the frames of the last raise

    def _pods_as_judged(self, sn: StateNode) -> tuple:
        """What a verdict or cost kept of a state node's pods holds while: the last change to them
        (LoopState.on_node_changed: a pod bound, gone, terminating or relabelled) and the pods the view lists."""
        return self.s.on_node_changed.get(sn.name), tuple(sn.pods)

    def _kept_verdicts(self) -> dict:
        """The verdicts kept from earlier passes (DisruptionRun.pods_verdicts), emptied when the PDBs' selectors
        or allowances are not those they were judged with; read once a pass."""
        if self._kept is None:
            judged = tuple((p.key, repr(p.selector), p.disruptions_allowed) for p in self.pdbs.pdbs)
            if self.s.disruption.pods_verdicts[0] != judged:
                self.s.disruption.pods_verdicts = (judged, {})
            self._kept = self.s.disruption.pods_verdicts[1]
        return self._kept

    def _validate_pods(self, sn: StateNode) -> tuple[CandidateError | None, bool]:
        """ValidatePodsDisruptable's verdict (None: disruptable), and whether no pod has a do-not-disrupt
        annotation (the verdict then holds while the pods and the PDBs do)."""
        # asked of every pod of every node each pass: the pod's fixed facts read once per object (disruption_facts)
        views = self.s.pod_views
        pods = [(key, views[key], podutil.disruption_facts(views[key])) for key in sn.pods]
        timeless = True
        for key, pv, f in pods:
            if f.do_not_disrupt is not None:
                timeless = False
                if self.do_not_disrupt(key):
                    return CandidateError(reasonwords.do_not_disrupt_pod(self.s.core, pv.namespace, pv.name),
                                          "do-not-disrupt", pod_block=True, pod=key), False
        if not self.pdbs.pdbs:
            # no PDB blocks an eviction (the loop below would only repeat the do-not-disrupt reads, whose
            # events the recorder has just deduplicated)
            return None, timeless
        multiple = self.s.core["multiplePdbsEviction"]
        positions, pdbs = self.pdbs.positions, self.pdbs.pdbs
        for key, pv, f in pods:
            # evictable(key), inline
            if f.never_evictable or not podutil.is_active(pv) or f.do_not_disrupt is not None and self.do_not_disrupt(key):
                continue
            # Limits.is_evictable's verdict read off the matching PDBs' places; its words only when it blocks
            found = positions(pv.namespace, pv.labels, f.pdb_key)
            if not found or len(found) == 1 and pdbs[found[0]].disruptions_allowed != 0:
                continue
            keys, ok = self.pdbs.is_evictable(pv.namespace, pv.labels, multiple_block=multiple, key=f.pdb_key)
            if not ok:
                if len(keys) > 1:
                    return CandidateError(f"eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{' '.join(keys)}])",
                                          "pdb", pod_block=True, pod=key), timeless
                # one key, in brackets from core v1.7.0 (#2379; sigs.k8s.io/karpenter v1.6.2 pkg/utils/pdb/pdb.go
                # CanEvictPods returns a single client.ObjectKey)
                named = f"[{keys[0]}]" if self.s.core["multiplePdbsEviction"] else keys[0]
                return CandidateError(reasonwords.pdb_blocks(self.s.core, named), "pdb", pod_block=True, pod=key), timeless
        return None, timeless

    def candidate(self, sn: StateNode, disruption_class: str, queue_has, method: str) -> Candidate | None:
        """NewCandidate; None when the node is not a candidate (with upstream's events)."""
        if sn.claim is not None and queue_has(sn.claim.result.name):
            return None
        try:
            self.validate_node(sn)
        except CandidateError as e:
            if e.event:
                self.blocked(sn, e.message)
            if e.protection is not None:
                self.protect(sn, e.protection, sentence(e.message), method)
            # a NodeClaim being deleted: termination's record says why it is still here (nodetermination.py)
            if sn.claim is not None and sn.claim.dis.deleting_since is None:
                self._refused(sn, disruption_class, e)
            return None
        np_name = sn.labels[NODEPOOL]
        np = self.nodepools.get(np_name)
        its = self.instance_types(np_name) if np is not None else None
        if np is None or its is None:
            message = reasonwords.nodepool_not_found(self.s.core, np_name)
            self.blocked(sn, message)
            self._refused(sn, disruption_class, CandidateError(message))
            return None
        it = its.get(sn.labels.get(INSTANCE_TYPE, ""))
        if it is None and self.s.core["instanceTypeDrift"] == "none":
            # before core v1.1.0 (#1787) a node whose instance type is no longer offered is no candidate for any
            # method (sigs.k8s.io/karpenter v1.0.6 pkg/controllers/disruption/types.go NewCandidate); later,
            # only consolidation refuses it (consolidation.go ShouldDisrupt, here consolidation.py)
            message = f'Instance Type "{sn.labels.get(INSTANCE_TYPE, "")}" not found'
            self.blocked(sn, message)
            self._refused(sn, disruption_class, CandidateError(message))
            return None
        try:
            self.validate_pods(sn)
        except CandidateError as e:
            eventual = termination_grace_period(sn.claim.obj["spec"]) is not None and disruption_class == EVENTUAL
            if not (eventual and e.pod_block):
                self.blocked(sn, e.message)
                if e.protection is not None:
                    self.protect(sn, e.protection, sentence(e.message), method)
                self._refused(sn, disruption_class, e)
                return None
            if sn.claim.dis.drifted is not None:
                self._refused(sn, disruption_class, e, eventual=True)
        else:
            if self.s.decisions.enabled:
                disruptionwhy.forget(self.s, sn.claim, disruption_class)
        tail = self._tails.get(sn.name)
        if tail is None:
            # what follows reads the view alone, never the disruption class: built once per view for the
            # classes' two sweeps (Drift's and consolidation's)
            reschedulable, cost, reschedule_cost = self._pod_costs(sn)
            lifetime = lifetime_remaining(sn.claim.obj["spec"], sn.claim.created_at, self.now)
            zone, ct = sn.labels.get(ZONE, ""), sn.labels.get(CAPACITY_TYPE, "")
            tail = self._tails[sn.name] = (zone, ct, cost * lifetime, reschedulable, node_price(it, zone, ct),
                                           reschedule_cost)
        zone, ct, disruption_cost, reschedulable, price, reschedule_cost = tail
        return Candidate(sn, np, it, zone, ct, disruption_cost, list(reschedulable), price, reschedule_cost,
                         self.s.core)

    def _pod_costs(self, sn: StateNode) -> tuple[tuple[str, ...], float, float]:
        """NewCandidate's reads of the node's pods: the reschedulable ones, the summed eviction cost and the
        reschedule cost. Kept between passes while the pods are the same (LoopState.on_node_changed: a pod
        terminating or relabelled changes it too; DisruptionRun.pods_costs)."""
        judged = self._pods_as_judged(sn)
        kept = self.s.disruption.pods_costs
        hit = kept.get(sn.name)
        if hit is None or hit[0] != judged:
            reschedulable = tuple(k for k in sn.pods if podutil.is_reschedulable(self.pod(k)))
            costs = {k: podutil.eviction_cost(self.pod(k)) for k in sn.pods}
            hit = kept[sn.name] = (judged, reschedulable, sum(costs[k] for k in sn.pods),
                                   1.0 + sum(max(0.0, costs[k]) for k in reschedulable))
        return hit[1], hit[2], hit[3]

    def _refused(self, sn: StateNode, disruption_class: str, e: CandidateError, eventual: bool = False) -> None:
        """The decision record: NewCandidate refused the node for every method of `disruption_class`
        (`eventual`: it did not - the blocking pod is deleted at the terminationGracePeriod deadline)."""
        s = self.s
        if not s.decisions.enabled:
            return

        def reason() -> str:
            detail = sentence(e.message)
            if e.protection == "nominated":
                detail += ": " + disruptionwhy.nomination_text(s, sn.claim)
            elif e.protection == "do-not-disrupt" and e.pod is not None and e.pod in s.pod_views:
                detail += f" ({disruptionwhy.do_not_disrupt_hold(s.pod_views[e.pod], self.started.get(e.pod), s)})"
            elif e.protection == "pdb" and e.pod is not None:
                detail += f" (pod {e.pod})"
            elif e.message == reasonwords.node_reason(s.core, "deleting") and sn.claim.dis.disruption_reason:
                detail += f" (a disruption command holds it: {sn.claim.dis.disruption_reason})"
            if eventual:
                tgp = sn.claim.obj["spec"].get("terminationGracePeriod")
                return (f"still a candidate for {disruptionwhy.CLASSES[disruption_class]} although {detail}: "
                        f"Drift is eventual and the NodeClaim's terminationGracePeriod ({tgp}) deletes the pod at "
                        "its deadline")
            return f"not a candidate for {disruptionwhy.CLASSES[disruption_class]}: {detail}"
        key = (e.message, e.pod, eventual)
        disruptionwhy.note(s, sn.claim, disruption_class, key, "candidate-eventual" if eventual else "candidate-kept",
                           reason, (f"Pod/{e.pod}",) if e.pod else (),
                           {"method": disruption_class, "by": e.protection or "not-a-candidate"})

    def candidates(self, should_disrupt, disruption_class: str, queue_has, method: str) -> list[Candidate]:
        """GetCandidates. NewCandidate's verdict depends only on the state and the disruption class,
        so a pass builds each node's candidate once per class and the methods filter it (the
        events it publishes are deduplicated upstream too)."""
        built = self._built.get(disruption_class)
        if built is None:
            built = self._built[disruption_class] = [
                c for c in (self.candidate(sn, disruption_class, queue_has, method) for sn in self.nodes) if c is not None]
        return [c for c in built if not queue_has(c.claim.result.name) and should_disrupt(c)]

    def budget_allowed(self, nodepool_name: str, reason: str) -> int:
        """The NodePool's own allowance for `reason` (before the disrupting nodes), for the decision record."""
        key = (nodepool_name, reason)
        if key not in self._allowed:
            np = self.nodepools.get(nodepool_name)
            num = self.budget_facts.get(key, (0, ()))[0]
            self._allowed[key] = must_allowed_disruptions(np, self.now, num, reason) if np is not None else 0
        return self._allowed[key]

    def take(self, budgets: dict[str, int], c: Candidate, reason: str) -> None:
        """A method takes one of the candidate's NodePool's disruptions for this pass's command."""
        budgets[c.nodepool_name] -= 1
        if self.s.decisions.enabled:
            self.taken.setdefault((c.nodepool_name, reason), []).append(c.claim.result.name)

    def forget(self) -> None:
        """The state changed within the pass (a validation re-reads it)."""
        self._built.clear()
        self._tails.clear()

    # -- budgets ------------------------------------------------------------------------------------
    def budget_mapping(self, reason: str) -> dict[str, int]:
        """BuildDisruptionBudgetMapping."""
        num: dict[str, int] = {}
        disrupting: dict[str, int] = {}
        record = self.s.decisions.enabled
        busy: dict[str, list[str]] = {}
        for sn in self.nodes:
            if not sn.managed or not sn.initialized:
                continue
            if sn.claim.dis.instance_terminating:          # counted before core v1.0.4 / v1.1.0 (#1735)
                self.s.touch_scope("instanceTerminatingBudget")
                continue
            np = sn.labels.get(NODEPOOL, "")
            num[np] = num.get(np, 0) + 1
            if not sn.ready or sn.marked_for_deletion:
                disrupting[np] = disrupting.get(np, 0) + 1
                if record:
                    busy.setdefault(np, []).append(disruptionwhy.busy_text(sn))
        out = {}
        for name, np in self.nodepools.items():
            uid = np["metadata"].get("uid", name)
            if not self.s.core["emptyBudgetEvents"]:
                out[name] = self._budgets_all_reasons(np, name, uid, num.get(name, 0), disrupting.get(name, 0), reason)
            else:
                allowed = must_allowed_disruptions(np, self.now, num.get(name, 0), reason)
                out[name] = max(allowed - disrupting.get(name, 0), 0)
            if record:
                self.budget_facts[(name, reason)] = (num.get(name, 0), tuple(busy.get(name, ())))
                self._allowed.pop((name, reason), None)
                self.taken.pop((name, reason), None)
            if not self.s.core["emptyBudgetEvents"]:
                continue
            if num.get(name, 0) != 0 and allowed == 0:
                self.publish("NodePool", name, "DisruptionBlocked",
                             f"No allowed disruptions for disruption reason {reason} due to blocking budget",
                             (uid, reason), 60.0)
        return out

    def _budgets_all_reasons(self, np: dict, name: str, uid: str, num: int, disrupting: int, reason: str) -> int:
        """Core before v1.1.0 (#1854; sigs.k8s.io/karpenter v1.0.6 pkg/controllers/disruption/helpers.go
        BuildDisruptionBudgets): every pass builds all reasons' budgets and publishes an event for each reason
        left with none (after subtracting the disrupting nodes, a NodePool without nodes too), plus a
        NodePool-wide one when no reason has any (core-behaviour.yaml emptyBudgetEvents)."""
        total, mine = 0, 0
        for r in DISRUPTION_REASONS:
            allowed = max(must_allowed_disruptions(np, self.now, num, r) - disrupting, 0)
            total += allowed
            if r == reason:
                mine = allowed
            if allowed == 0:
                self.publish("NodePool", name, "DisruptionBlocked",
                             f"No allowed disruptions for disruption reason {r} due to blocking budget", (uid, r), 60.0)
        if total == 0:
            self.publish("NodePool", name, "DisruptionBlocked", "No allowed disruptions due to blocking budget",
                         (uid,), 60.0)
        return mine


def node_price(it, zone: str, capacity_type: str) -> float:
    """resolveNodePrice: the price of the offering matching the node's zone and capacity type, else 0."""
    if it is None:
        return 0.0
    for o in it.offerings:
        if o.zone == zone and o.capacity_type == capacity_type:
            return o.price
    return 0.0


def unpriced(c: "Candidate") -> bool:
    """No offering of the candidate's instance type matches its zone and capacity type (its size or zone gone
    from the provider's list): priced 0 by node_price, an error before core v1.9.0 (core-behaviour.yaml
    unpricedCandidate)."""
    return c.instance_type is None or not any(o.zone == c.zone and o.capacity_type == c.capacity_type
                                              for o in c.instance_type.offerings)


def policy(np: dict) -> str:
    return disruption_spec(np).consolidation_policy
