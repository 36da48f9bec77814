"""The Drift method of the disruption controller (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/disruption/drift.go): candidates whose NodeClaim is Drifted, oldest drift first, empty
ones before the rest; within the Drifted budgets, the first whose pods all fit elsewhere (plus any
number of new NodeClaims) becomes a command (no validation delay). A candidate whose pods would not
fit gets DisruptionBlocked with the scheduling errors. Drift is an eventual disruption: with a
terminationGracePeriod, blocking pods (do-not-disrupt, PDBs) do not keep a node from being a candidate.
A static NodePool's candidates are left out (ShouldDisrupt: !OwnedByStaticNodePool); its StaticDrift
(staticdrift.go) is not simulated, and a run where one drifted says so (staticcapacity.py static_drift_notice).
"""
from __future__ import annotations

from harness.loop.disruption.budgets import disruption_spec
from harness.loop.disruption.candidates import EVENTUAL, Candidate, Cluster
from harness.loop.disruption.consolidation import Proposal, held_by_budget_record
from harness.loop.provisioning.nodepool import is_static
from harness.loop.disruption.simulate import CandidateDeleting


class Drift:
    method = "drift"
    reason = "Drifted"
    disruption_class = EVENTUAL

    def __init__(self, controller):
        self.ctl = controller

    def should_disrupt(self, view: Cluster, c: Candidate) -> bool:
        return c.claim.dis.drifted is not None and not is_static(c.nodepool)

    def compute_commands(self, view: Cluster, budgets: dict[str, int], cands: list[Candidate]) -> list[Proposal]:
        # oldest Drifted condition first (drift.go ComputeCommands, sort.Slice over lastTransitionTime, which the
        # API keeps in whole seconds); candidates drifted in the same second keep the order cluster state listed
        # them in, a map's (state/cluster.go), which the seeded stream stands for
        listed = list(cands)
        self.ctl.state.drift_rng.shuffle(listed)
        ordered = sorted(listed, key=lambda c: int(c.claim.dis.drifted_since or 0.0))
        empty = [c for c in ordered if not c.reschedulable]
        rest = [c for c in ordered if c.reschedulable]
        handling = self.ctl.state.core["driftEmptyCandidates"]     # core-behaviour.yaml driftEmptyCandidates
        if handling == "batch":
            # core v1.0-v1.4: every empty candidate the Drifted budget allows, in one command, unsimulated
            batch = []
            for c in empty:
                if budgets.get(c.nodepool_name, 0) > 0:
                    view.take(budgets, c, self.reason)
                    batch.append(c)
                else:
                    held_by_budget_record(view, c, self.method, self.reason)
            if batch:
                return [Proposal(self.method, self.reason, batch)]
            order = ordered
        elif handling == "skip":
            order = rest        # core v1.5.0-v1.6.1: empty candidates are left to Emptiness (#2180)
            if empty and view.s.decisions.enabled:
                for c in empty:
                    self._skipped_empty(view, c)
        else:
            order = empty + rest
        for c in order:
            if budgets.get(c.nodepool_name, 0) == 0:
                view.protect(c.sn, "budget", f"no allowed disruptions for reason Drifted in NodePool {c.nodepool_name}",
                             self.method)
                held_by_budget_record(view, c, self.method, self.reason)
                continue
            try:
                res = self.ctl.simulator.simulate(view, [c], consolidation=False)
            except CandidateDeleting:
                continue
            if not res.all_non_pending_scheduled():
                errors = res.non_pending_errors()
                view.blocked(c.sn, errors)
                view.kept(c.claim, self.method, ("scheduling", errors),
                          f"Drift: its pods would not schedule elsewhere: {errors}", by="scheduling")
                continue
            return [Proposal(self.method, self.reason, [c], list(res.new_claims), res)]
        return []

    def _skipped_empty(self, view: Cluster, c: Candidate) -> None:
        """The decision record: this core's Drift leaves an empty candidate to Emptiness (core v1.5.0 #2180,
        sigs.k8s.io/karpenter v1.6.1 pkg/controllers/disruption/drift.go ComputeCommand: `if
        len(candidate.reschedulablePods) == 0 { continue }`), and what Emptiness does with it."""
        spec = disruption_spec(c.nodepool)
        if spec.consolidate_after is None:
            then = (f"which refuses NodePool {c.nodepool_name}: it has consolidation disabled (consolidateAfter: "
                    "Never), so no method removes the node")
        elif c.claim.dis.consolidatable_since is None:
            then = "which takes it once it is Consolidatable (consolidateAfter)"
        else:
            then = "which takes it within its Empty budget"
        view.kept(c.claim, self.method, ("empty", spec.consolidate_after is None),
                  f"Drift skips it: the candidate is empty (no reschedulable pods) and this core leaves empty drifted "
                  f"nodes to Emptiness (driftEmptyCandidates: skip), {then}", by="drift-empty",
                  extra=(f"NodePool/{c.nodepool_name}",))
