"""Karpenter core's disruption controller (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/disruption/controller.go Reconcile, disrupt).

Each pass: taints left by a command that is no longer in the queue are removed (with the NodeClaim's
DisruptionReason); then the methods run in order - Emptiness, Drift, multi-node consolidation,
single-node consolidation (NewMethods; static drift is not simulated) - and the first that produces a
command wins the pass: GetCandidates with the method's filter and disruption class,
BuildDisruptionBudgetMapping for its reason, ComputeCommands, Queue.StartCommand
(orchestration.py). The consolidation methods validate their command after commandValidationDelay
(15 s), during which the controller waits (upstream blocks on the clock); the loop's clock jumps
to that deadline when nothing else is happening.

Upstream polls every 10 s and re-runs immediately after a command; the loop runs one pass per
iteration. ConsolidationState: the consolidation methods skip a pass when nothing relevant changed
since they last found nothing to do, and look again at least every 5 minutes
(pkg/controllers/state/cluster.go ConsolidationState).
"""
from __future__ import annotations

from harness.loop.disruption import record as disruptionwhy
from harness.loop.scheduling import podutil
from harness.loop.disruption.budgets import budget_active, disruption_spec, next_allowance_change
from harness.loop.disruption.candidates import Cluster
from harness.loop.disruption.consolidation import (CONSOLIDATION_STATE_TTL, VALIDATION_DELAY, Emptiness, MultiNode,
                                                    PassEnded, Proposal, SingleNode)
from harness.loop.disruption.drift import Drift
from harness.loop.disruption.orchestration import Orchestration, remove_disrupted_taint
from harness.loop.disruption.simulate import Simulator, synced
from harness.loop.state import LoopState
from harness.loop.disruption.bounds import SCHEDULING_COST
from harness.model.values.cron import CronError


class DisruptionController:
    def __init__(self, state: LoopState, provisioner, queue: Orchestration):
        self.state = state
        self.queue = queue
        self.simulator = Simulator(state, provisioner)
        self.scheduling_cost = SCHEDULING_COST      # the modelled time the methods' timeouts count
        # core before v1.5.0 (#2180) tries Drift before Emptiness (core-behaviour.yaml disruptionMethodOrder)
        drift_first = state.core["disruptionMethodOrder"] == "driftFirst"
        first = [Drift(self), Emptiness(self)] if drift_first else [Emptiness(self), Drift(self)]
        self.methods = first + [MultiNode(self), SingleNode(self)]
        self.pending: tuple[object, Proposal, float] | None = None      # (method, proposal, validate at)
        self._fp = None                       # the last pass's fingerprint
        self._evaluated = float("-inf")       # when a pass last ran
        self._state_time = state.clock.now()
        self._state_gen = 0

    def forget(self) -> None:
        """The controller restarted: a command waiting out its validation is gone with the goroutine that waited
        (validation.go), and ConsolidationState starts anew (state/cluster.go), so every method looks again."""
        self.pending = None
        self._fp = None
        self._mark_unconsolidated()

    # -- what the methods ask ------------------------------------------------------------------------
    def feature_gate(self, name: str) -> bool:
        return bool((getattr(self.state.cfg, "feature_gates", None) or {}).get(name, False))

    def queue_has(self, claim_name: str) -> bool:
        return self.queue.has(claim_name)

    def consolidation_state(self) -> tuple[int, float]:
        """Cluster.ConsolidationState: a token of the last relevant change (the pass's fingerprint
        changed), renewed every 5 minutes."""
        now = self.state.clock.now()
        if now - self._state_time >= CONSOLIDATION_STATE_TTL:
            self._mark_unconsolidated()
        return (self._state_gen, self._state_time)

    def _mark_unconsolidated(self) -> None:
        """Cluster.MarkUnconsolidated."""
        self._state_gen += 1
        self._state_time = self.state.clock.now()

    def _fingerprint(self, nodepools: list[dict]) -> tuple:
        """What a pass's outcome depends on: the NodeClaims' conditions and marks, where pods are,
        the NodePools, PDB allowances, and the clock-driven facts (nominations, budget windows,
        duration-valued do-not-disrupt annotations)."""
        s = self.state
        now = s.clock.now()
        claims = tuple((c.result.name, c.initialized, c.registered, c.dis.consolidatable_since is not None,
                        c.dis.drifted, c.dis.marked_for_deletion, c.dis.deleting_since is not None, c.done,
                        c.dis.nominated_until > now, c.dis.disruption_reason) for c in s.claims)
        # the run's pods in their insertion order (a pod's entry is only added or replaced in place, so two reads of
        # the same pods list them alike): no sort of every pod each pass
        pods = tuple((k, pr.node or "", pr.state) for k, pr in s.result.pods.items())
        nps = tuple((np["metadata"]["name"], np["metadata"].get("resourceVersion")) for np in nodepools)
        windows = []
        for np in nodepools:
            for b in disruption_spec(np).budgets:
                if b.get("schedule") is not None:
                    try:
                        windows.append(budget_active(b, now))
                    except (CronError, ValueError):
                        windows.append(None)
        dnd = []
        for k, pv in s.pod_views.items():
            value = (pv.obj["metadata"].get("annotations") or {}).get(podutil.DO_NOT_DISRUPT)
            if value not in (None, "true"):
                dnd.append(podutil.do_not_disrupt(pv, s.disruption.pod_started.get(k), now,
                                                  durations=s.core["doNotDisruptDurations"]))
        pdbs = tuple(sorted((k, p.disruptions_allowed) for k, p in s.disruption.pdb_status.items()))
        return claims, pods, nps, tuple(windows), tuple(dnd), pdbs, tuple(c.id for c in s.disruption.active())

    # -- the pass -------------------------------------------------------------------------------------
    def reconcile(self, nodepools: list[dict] | None = None) -> bool:
        s = self.state
        now = s.clock.now()
        if s.decisions.enabled:           # when budgets were last read, for `--why` (RunResult.why_facts)
            s.result.why_facts["lastPass"] = now
        if self.pending is not None:
            method, proposal, due = self.pending
            if now < due:
                return False
            self.pending = None
            self._fp = None
            view = Cluster(s)
            valid, why = method.validate(view, proposal)
            if valid is None:
                s.trace(f"{method.method} consolidation command is no longer valid ({why}): abandoned")
                if method.method != "empty":
                    method.rejected_events(view, proposal, why or "unknown")
                self._validated(proposal, None, why)
                return False
            valid.budget = valid.budget or proposal.budget
            for c in valid.candidates:
                self.queue.timeline(c.claim, "validated", method.method)
            self._validated(proposal, valid, None)
            return self.queue.start(valid)
        if not any(not c.done and c.initialized for c in s.claims):
            return False
        if not synced(s):
            return False          # controller.go Reconcile: wait for cluster state to sync
        if nodepools is None:
            nodepools = s.cluster.list("NodePool")
        fp = self._fingerprint(nodepools)
        if fp == self._fp and now - self._evaluated < CONSOLIDATION_STATE_TTL:
            return False          # nothing a pass reads has changed since the last one found nothing
        if fp != self._fp and (self._fp is None or s.cfg.next_command != "raced"
                               or unnominated(fp) != unnominated(self._fp)):
            self._mark_unconsolidated()
        self._fp, self._evaluated = fp, now
        self._remove_outdated_taints()
        view = Cluster(s, nodepools)
        for m in self.methods:
            cands = view.candidates(lambda c, m=m: m.should_disrupt(view, c), m.disruption_class, self.queue_has,
                                    m.method)
            if not cands:
                continue
            if m.method in ("single", "multi"):
                m.set_totals(view)
            budgets = view.budget_mapping(m.reason)
            try:
                proposals = [p for p in m.compute_commands(view, budgets, cands) if p.decision != "no-op"]
            except PassEnded:
                return False
            if not proposals:
                continue
            if s.decisions.enabled:
                for p in proposals:
                    p.budget = disruptionwhy.command_budgets(view, p)
            if m.method in ("empty", "single", "multi"):
                self.pending = (m, proposals[0], now + VALIDATION_DELAY)
                self._fp = None
                for c in proposals[0].candidates:   # the command waits consolidationTTL (validation.go)
                    self.queue.timeline(c.claim, "validating", m.method)
                s.trace(f"{m.method} consolidation: validating [{', '.join(c.name for c in proposals[0].candidates)}] "
                        f"in {VALIDATION_DELAY:.0f}s")
                if s.decisions.enabled:
                    p = proposals[0]
                    s.decide("disruption", "command-proposed", disruptionwhy.subject(p.candidates[0].claim),
                             f"{disruptionwhy.METHODS[m.method]} proposes {disruptionwhy.command_text(p)}; validated again at "
                             f"{disruptionwhy.when(s, now + VALIDATION_DELAY)} (commandValidationDelay 15 s)",
                             disruptionwhy.command_related(p), disruptionwhy.command_data(p))
                return False
            started = False
            for p in proposals:
                started |= self.queue.start(p)
            if started:
                self._fp = None                   # run again on the next pass (RequeueImmediately)
            return started
        return False

    def next_deadline(self) -> float | None:
        return self.pending[2] if self.pending is not None else None

    def next_clock_change(self, end: float) -> float | None:
        """The first instant before `end` at which a fact a pass reads changes with the clock alone: a NodePool's
        budget allowance at a schedule window's edge (budgets.next_allowance_change), or the duration-valued
        do-not-disrupt annotation of a pod on a live node ending (podutil.do_not_disrupt_until). Both are in the
        pass's fingerprint; a step's `advance` fires a pass at it (Simulation._timer_before), which stands for
        core's next poll, within 10 s of it."""
        s = self.state
        now = s.clock.now()
        live: dict[str, int] = {}           # NodePool -> its initialized nodes the budget counts
        nodes = set()
        for c in s.claims:
            if not c.done and c.launched is not None:
                if c.node_name:
                    nodes.add(c.node_name)
                if c.initialized and not c.dis.instance_terminating and c.template is not None:
                    live[c.template.name] = live.get(c.template.name, 0) + 1
        times = []
        for np in s.cluster.list("NodePool"):
            name = np["metadata"]["name"]
            if name in live and (at := next_allowance_change(np, now, end, live[name])) is not None:
                times.append(at)
        durations = s.core["doNotDisruptDurations"]
        for k, pv in s.pod_views.items():
            pr = s.result.pods.get(k)
            if pr is None or pr.node not in nodes or podutil.DO_NOT_DISRUPT not in (pv.obj["metadata"].get("annotations") or {}):
                continue
            at = podutil.do_not_disrupt_until(pv, s.disruption.pod_started.get(k), durations)
            if at is not None and now < at < end:
                times.append(at)
        return min(times, default=None)

    def _validated(self, proposal: Proposal, valid: Proposal | None, why: str | None) -> None:
        """The decision record: the command after its validation delay, kept (perhaps with fewer candidates)
        or abandoned, and why (validation.go: churn, budget, scheduling)."""
        s = self.state
        if not s.decisions.enabled:
            return
        subject = disruptionwhy.subject(proposal.candidates[0].claim)
        method = disruptionwhy.METHODS[proposal.method]
        if valid is None:
            s.decide("disruption", "command-abandoned", subject,
                     f"{method} command {disruptionwhy.command_text(proposal)} abandoned at validation: "
                     f"{VALIDATION_WHY.get(why or '', why or 'unknown')}", disruptionwhy.command_related(proposal),
                     {**disruptionwhy.command_data(proposal), "why": why})
            return
        dropped = [c.claim.result.name for c in proposal.candidates if all(v.claim is not c.claim for v in valid.candidates)]
        s.decide("disruption", "command-validated", subject,
                 f"{method} command {disruptionwhy.command_text(valid)} still valid after 15 s" +
                 (f"; dropped {', '.join(dropped)} (no longer a candidate or over budget)" if dropped else ""),
                 disruptionwhy.command_related(valid), disruptionwhy.command_data(valid))

    def _remove_outdated_taints(self) -> None:
        """Nodes tainted by a command that is gone (and not being deleted) lose the taint and the
        DisruptionReason condition."""
        s = self.state
        for c in s.claims:
            if c.done or c.dis.disruption_reason is None or c.dis.marked_for_deletion or c.dis.deleting_since is not None:
                continue
            if self.queue.has(c.result.name):
                continue
            c.dis.disruption_reason = None
            if c.node_name:
                remove_disrupted_taint(s, c.node_name)
        # controller.go Reconcile: every state node neither queued nor marked for deletion loses the
        # karpenter.sh/disrupted taint (state.RequireNoScheduleTaint(false)), managed or not
        names = [c.node_name for c in s.claims
                 if not c.done and c.node_name and not c.dis.marked_for_deletion and c.dis.deleting_since is None
                 and not self.queue.has(c.result.name)]
        for name in names + list(s.unmanaged_nodes):
            node = s.cluster.get("Node", name, shared=True)       # read only
            if node is not None and not node["metadata"].get("deletionTimestamp"):
                remove_disrupted_taint(s, name)


# where a NodeClaim's entry of the pass's fingerprint (DisruptionController._fingerprint) holds its nomination
NOMINATED_AT = 8


def unnominated(fp: tuple) -> tuple:
    """The pass's fingerprint without the NodeClaims' nominations. Cluster state marks itself unconsolidated when
    a pod binds or goes, or a node is added, initialized, marked for deletion or removed (sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/state/cluster.go MarkUnconsolidated and its callers); a nomination starting or ending
    (NominateNodeForPod, statenode.go Nominated) is none of those. So a method that marked itself consolidated
    while a node was nominated does not look again when the nomination ends (consolidation.go IsConsolidated), and
    one that found no candidate at all (every node nominated) never marked itself (controller.go disrupt) and does.
    Under `given.loop.nextCommand: raced` only: the calm order looks again once a nomination ends, as core does
    once ConsolidationState renews itself 5 minutes on (docs/races.md)."""
    return (tuple(c[:NOMINATED_AT] + c[NOMINATED_AT + 1:] for c in fp[0]),) + fp[1:]


# validation.go's failure kinds, as the record words them
VALIDATION_WHY = {"churn": "a candidate is no longer a candidate (its pods, nomination or state changed)",
                  "budget": "a candidate is nominated for a pending pod or its NodePool's budget has nothing left",
                  "scheduling": "the pods now schedule differently than the command planned"}


def record_garbage_collected(s: LoopState) -> None:
    """A NodeClaim the garbage collector deleted because its VM vanished (core
    nodeclaim/garbagecollection/controller.go; metric reason `garbage_collected`) goes on the
    disruption record. The Azure provider v1.14.0 has no interruption controller (no
    pkg/controllers/interruption): a spot eviction is only seen this way, and the harness names its
    reason Interrupted; any other vanished VM is InstanceTerminated."""
    from harness.loop.disruption.orchestration import disruption_record
    if not any(c.done and c.result.deleted == "instance terminated" for c in s.claims):
        return
    seen = {d["nodeClaim"] for d in s.result.disruptions}
    for c in s.claims:
        if c.done and c.result.deleted == "instance terminated" and c.result.name not in seen and c.registered:
            reason = "Interrupted" if c.launched is not None and c.launched.capacity_type == "spot" else "InstanceTerminated"
            s.result.disruptions.append(disruption_record(s, c, None, None, reason, "garbage-collection"))
            if c.node_name and c.node_name in s.nodes:
                s.nodes[c.node_name].deleted = reason
