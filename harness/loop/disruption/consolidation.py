"""Consolidation: the Emptiness, multi-node and single-node methods of the disruption controller.

sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/:
- consolidation.go: ShouldDisrupt (with its Unconsolidatable events), sortCandidates (savings ratio =
  price / reschedule disruption cost, highest first), computeConsolidation (delete when every pod
  fits elsewhere; replace with exactly one cheaper NodeClaim; an OD->[OD, spot] replacement pinned to
  spot), computeSpotToSpotConsolidation (SpotToSpotConsolidation feature gate, at least 15 cheaper
  options, truncated to 15 or the minValues need), IsConsolidated/markConsolidated.
- emptiness.go: empty candidates (no pod with a positive eviction cost) within the Empty budgets.
- singlenodeconsolidation.go: candidates by ratio, interleaved across NodePools (in a seeded order: Go
  map order upstream), the first that consolidates (Underutilized budgets).
- multinodeconsolidation.go: the longest prefix of the candidates within budgets that consolidates, by
  binary search over at most 101 of them (maxParallel 100), filterOutSameInstanceType.
- the 1- and 3-minute timeouts of the two methods, against a modelled time per scheduling simulation
  (harness/loop/disruption/bounds.py; docs/architecture/consolidation-bounds.md).
- validation.go: after commandValidationDelay (15 s) the candidates and the command are checked
  again (churn, nominations, budgets, a different scheduling result), else the command is dropped
  (ConsolidationRejected events for single/multi).
- types.go Command.String/StringForNode/EstimatedSavings and events/events.go for the messages.
- balanced.go: the moves of a Balanced NodePool scored against its totals (harness/loop/disruption/balanced.py),
  in single-node (CanPassThreshold, ApproveCommand) and multi-node consolidation (each binary search step).
"""
from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field

from harness.loop.disruption import record as disruptionwhy, reasonwords
from harness.loop.disruption.budgets import WHEN_EMPTY, disruption_spec
from harness.loop.disruption import balanced
from harness.loop.disruption.candidates import GRACEFUL, ZONE, Candidate, Cluster, unpriced
from harness.loop.lifecycle.conditions import consolidatable_at
from harness.loop.disruption.simulate import CandidateDeleting, SimResult
from harness.loop.disruption.bounds import (MULTI_NODE_MAX_PARALLEL, MULTI_NODE_TIMEOUT, SINGLE_NODE_TIMEOUT, Stopwatch,
                                           multi_node_window)
from harness.loop.scheduling.scheduler import PlannedClaim, offering_compatible
from harness.model.labels.requirements import IN, Requirement, Requirements
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE

VALIDATION_DELAY = 15.0                       # consolidation.go commandValidationDelay
MIN_SPOT_TO_SPOT = 15                         # MinInstanceTypesForSpotToSpotConsolidation
CONSOLIDATION_STATE_TTL = 300.0               # state/cluster.go ConsolidationState: 5 minutes


@dataclass
class Proposal:
    """A disruption Command before the queue starts it (types.go Command)."""

    method: str                               # empty | single | multi | drift
    reason: str                               # Empty | Underutilized | Drifted
    candidates: list[Candidate]
    replacements: list[PlannedClaim] = field(default_factory=list)
    sim: SimResult | None = None
    budget: str = ""            # the decision record: the budgets it was computed under (disruptionwhy.command_budgets)

    @property
    def decision(self) -> str:
        if self.candidates and self.replacements:
            return "replace"
        return "delete" if self.candidates else "no-op"

    def source_cost(self) -> float:
        return sum(c.price for c in self.candidates)

    def savings(self) -> float:
        """Command.EstimatedSavings: all of the source price for a delete; for a replace, less the
        cheapest available offering of each new NodeClaim's first option."""
        src = self.source_cost()
        if not self.replacements:
            return src
        dest = 0.0
        for r in self.replacements:
            if r.instance_types:
                avail = [o.price for o in r.instance_types[0].offerings if o.available]
                if avail:
                    dest += min(avail)
        return src - dest

    def string(self) -> str:
        """Command.String as the consolidation events print it (Method not yet set: the short form)."""
        sources = ", ".join(c.name for c in self.candidates)
        if self.replacements:
            n = len(self.replacements)
            return f"{self.decision}: [{sources}] -> [{n} {'replacement' if n == 1 else 'replacements'}]"
        return f"{self.decision}: [{sources}]"

    def string_for_node(self, c: Candidate) -> str:
        if len(self.candidates) == 1:
            return self.string()
        return f"{self.decision}: [{c.name}] (part of {len(self.candidates)}-node consolidation)"


# -- prices (pkg/cloudprovider/types.go) ---------------------------------------------------------
def _cheapest(it, reqs: Requirements, wk) -> float:
    prices = [o.price for o in it.offerings if o.available and reqs.is_compatible(o.requirements, wk)]
    return min(prices) if prices else float("inf")


def order_by_price(its: list, reqs: Requirements, wk) -> list:
    """InstanceTypes.OrderByPrice (upstream's sort is not stable; ties by name here)."""
    return sorted(its, key=lambda it: (_cheapest(it, reqs, wk), it.name))


def worst_launch_price(it, reqs: Requirements, wk) -> float:
    """Offerings.WorstLaunchPrice: the dearest compatible available offering of the first capacity
    type (reserved, spot, on-demand) that has one."""
    offers = [o for o in it.offerings if o.available and reqs.is_compatible(o.requirements, wk)]
    for ct in ("reserved", "spot", "on-demand"):
        group = [o.price for o in offers if o.capacity_type == ct]
        if group:
            return max(group)
    return float("inf")


def min_values_need(its: list, reqs: Requirements) -> tuple[int, str | None]:
    """InstanceTypes.SatisfiesMinValues: (instance types needed, error)."""
    needs = {k: r.min_values for k, r in reqs.items() if r.min_values is not None}
    if not needs:
        return 0, None
    seen: dict[str, set] = {k: set() for k in needs}
    for i, it in enumerate(its):
        for k in needs:
            r = it.requirements.get(k) if k in it.requirements else None
            if r is not None and not r.complement:
                seen[k] |= set(r.values)
        if all(len(seen[k]) >= n for k, n in needs.items()):
            return i + 1, None
    bad = sorted(k for k, n in needs.items() if len(seen[k]) < n)
    return len(its), f"minValues requirement is not met for label(s) (label(s)=[{' '.join(bad)}])"


def remove_by_price(claim: PlannedClaim, max_price: float, wk) -> tuple[PlannedClaim | None, str | None]:
    """NodeClaim.RemoveInstanceTypeOptionsByPriceAndMinValues."""
    kept = [it for it in claim.instance_types if worst_launch_price(it, claim.requirements, wk) < max_price]
    _, err = min_values_need(kept, claim.requirements)
    if err is not None:
        return None, err
    return dataclasses.replace(claim, instance_types=kept), None


def ties_in_map_order(cands: list[Candidate], key, rng: random.Random) -> list[Candidate]:
    """The candidates in the order GetCandidates lists them (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/disruption/helpers.go GetCandidatesWithTotals over state/cluster.go DeepCopyNodes,
    lo.Values of a Go map: a random order each call) as far as the sort by `key` can show it: drawn from
    `rng` only when two candidates tie, else the list as it is. sortCandidates' sort.Slice keeps ties in
    that order below 13 candidates (insertion sort, harness/loop/scheduling/gosort.py) and permutes them further
    above; a shuffle before a stable sort reaches every order of the ties either way."""
    keys = [key(c) for c in cands]
    if len(set(keys)) == len(keys):
        return list(cands)
    listed = list(cands)
    rng.shuffle(listed)
    return listed


# -- the methods ------------------------------------------------------------------------------------
class PassEnded(Exception):
    """A method's ComputeCommand returned an error: the disruption controller's Reconcile returns it, and no later
    method runs that pass."""


class Consolidation:
    """consolidation.go: shared by the three methods (each keeps its own consolidated state)."""

    def __init__(self, controller, method: str):
        self.ctl = controller
        self.method = method
        self.last_state: tuple | None = None
        # the pass's Balanced NodePool totals (controller.go disrupt: SetNodePoolTotals before ComputeCommands)
        self.totals: dict[str, balanced.NodePoolTotals] = {}

    @property
    def reason(self) -> str:
        return "Empty" if self.method == "empty" else "Underutilized"

    disruption_class = GRACEFUL

    def is_consolidated(self) -> bool:
        return self.last_state is not None and self.last_state == self.ctl.consolidation_state()

    def mark_consolidated(self) -> None:
        self.last_state = self.ctl.consolidation_state()

    def held_by_budget(self, view: Cluster, budgets: dict[str, int], c: Candidate) -> bool:
        """Whether the candidate's NodePool has no disruption left for this reason (the method skips
        it, and does not mark itself consolidated: core emptiness.go, singlenodeconsolidation.go,
        multinodeconsolidation.go `constrainedByBudgets`); recorded as a budget protection."""
        if budgets.get(c.nodepool_name, 0) != 0:
            return False
        view.protect(c.sn, "budget", f"no allowed disruptions for reason {self.reason} in NodePool {c.nodepool_name}",
                     self.method)
        held_by_budget_record(view, c, self.method, self.reason)
        return True

    def consolidate_after_running(self, view: Cluster, c: Candidate) -> None:
        """The decision record: the NodeClaim is not Consolidatable yet (consolidateAfter since its last pod
        event or its initialization: nodeclaim/disruption/consolidation.go)."""
        if not view.s.decisions.enabled:
            return
        at = consolidatable_at(c.claim, c.nodepool)
        if at is None:
            return
        since = "its last pod event" if c.claim.dis.last_pod_event is not None else "its initialization"
        after = ((c.nodepool.get("spec") or {}).get("disruption") or {}).get("consolidateAfter", "0s")
        state = "still running until" if at > view.now else "passed at"
        view.kept(c.claim, self.method, ("consolidateAfter", at),
                  lambda: f"{disruptionwhy.METHODS[self.method]}: not Consolidatable: consolidateAfter "
                          f"({after}) since {since} {state} {disruptionwhy.when(view.s, at)}", by="consolidateAfter")

    # ShouldDisrupt for single/multi (consolidation.go)
    def should_disrupt(self, view: Cluster, c: Candidate) -> bool:
        spec = disruption_spec(c.nodepool)
        m = self.method
        if c.instance_type is None:
            view.unconsolidatable(c, f'Instance Type "{c.sn.labels.get(INSTANCE_TYPE, "")}" not found', m)
            return False
        if CAPACITY_TYPE not in c.sn.labels:
            view.unconsolidatable(c, f'Node does not have label "{CAPACITY_TYPE}"', m)
            return False
        if ZONE not in c.sn.labels:
            view.unconsolidatable(c, f'Node does not have label "{ZONE}"', m)
            return False
        if spec.consolidate_after is None:
            view.unconsolidatable(c, f'NodePool "{c.nodepool_name}" has consolidation disabled', m,
                                  "consolidateAfter: Never")
            return False
        if c.is_empty():
            return False
        if spec.consolidation_policy == WHEN_EMPTY:
            view.unconsolidatable(c, reasonwords.when_empty_not_empty(view.s.core, c.nodepool_name), m,
                                  "consolidationPolicy: WhenEmpty")
            return False
        if c.claim.dis.consolidatable_since is None:
            self.consolidate_after_running(view, c)
            return False
        return True

    def sort(self, cands: list[Candidate]) -> list[Candidate]:
        """sortCandidates: the highest savings ratio first (core v1.14.0, #2962), or before the lowest disruption
        cost first (sigs.k8s.io/karpenter v1.13.0 pkg/controllers/disruption/consolidation.go sortCandidates;
        core-behaviour.yaml consolidationCandidateOrder). Candidates that tie keep the order GetCandidates
        listed them in (ties_in_map_order)."""
        return sorted(ties_in_map_order(cands, self._sort_key, self.ctl.state.candidate_order_rng), key=self._sort_key)

    def _sort_key(self, c: Candidate) -> float:
        if self.ctl.state.core["consolidationCandidateOrder"] == "disruptionCost":
            return c.disruption_cost
        return -c.savings_ratio()

    def sim_seconds(self, view: Cluster, cands: list[Candidate]) -> float:
        """The modelled controller time of one SimulateScheduling of `cands`: their pods placed over the
        other state nodes (disruptionbounds.SchedulingCost)."""
        pods = sum(len(c.reschedulable) for c in cands)
        return self.ctl.scheduling_cost.seconds(pods, max(len(view.nodes) - len(cands), 0))

    def compute(self, view: Cluster, cands: list[Candidate]) -> Proposal | None:
        """computeConsolidation."""
        wk = self.ctl.state.profile.well_known_labels
        single = len(cands) == 1
        try:
            res = self.ctl.simulator.simulate(view, cands, consolidation=True)
        except CandidateDeleting:
            return None
        if not res.all_non_pending_scheduled():
            if single:
                view.unconsolidatable(cands[0], reasonwords.scheduling_errors(view.s.core, res.non_pending_errors()),
                                      self.method)
            return None
        if not res.new_claims:
            return Proposal(self.method, self.reason, cands, [], res)
        if len(res.new_claims) != 1:
            if single:
                view.unconsolidatable(cands[0], f"Can't remove without creating {len(res.new_claims)} candidates",
                                      self.method)
            return None
        if any(unpriced(c) for c in cands):
            self.ctl.state.touch_scope("unpricedCandidate")
            if self.ctl.state.core["unpricedCandidate"] == "error":     # core-behaviour.yaml unpricedCandidate
                return self._unpriced(view, cands)
        price = sum(c.price for c in cands)
        new = res.new_claims[0]
        new = dataclasses.replace(new, instance_types=order_by_price(new.instance_types, new.requirements, wk))
        all_spot = all(c.capacity_type == "spot" for c in cands)
        ct = new.requirements.get(CAPACITY_TYPE) if CAPACITY_TYPE in new.requirements else None
        if all_spot and (ct is None or ct.has("spot")):
            return self._spot_to_spot(view, cands, new, res, price)
        new = self._cheaper(view, cands, new, price)
        if new is None:
            return None
        ct = new.requirements.get(CAPACITY_TYPE) if CAPACITY_TYPE in new.requirements else None
        if ct is None or (ct.has("spot") and ct.has("on-demand")):
            reqs = new.requirements.copy().add(Requirement.new(CAPACITY_TYPE, IN, ["spot"], self.ctl.state.sem))
            new = dataclasses.replace(new, requirements=reqs)
        p = Proposal(self.method, self.reason, cands, [new], res)
        self._candidate_events(view, p)
        return p

    def _unpriced(self, view: Cluster, cands: list[Candidate]) -> None:
        """Before core v1.9.0 (#2812; sigs.k8s.io/karpenter v1.8.0 pkg/controllers/disruption/consolidation.go
        getCandidatePrices), a candidate whose instance type has no offering for its zone and capacity type fails
        computeConsolidation: single-node consolidation logs it and goes on to the next candidate (no event);
        multi-node consolidation returns it, and the disruption pass ends there (controller.go Reconcile: no later
        method runs). From v1.9.0 the candidate is priced 0 (no replacement is cheaper)."""
        c = next(c for c in cands if unpriced(c))
        it = c.instance_type.name if c.instance_type is not None else c.claim.result.instance_type
        if view.s.core["blockedReasonFormat"] == "keyValue":      # fmt.Errorf before v1.5.0, serrors.Wrap from it
            why = f"unable to determine offering (capacity-type={c.capacity_type}, instance-type={it}, zone={c.zone})"
        else:
            why = f"unable to determine offering for {it}/{c.capacity_type}/{c.zone}"
        error = f"getting offering price from candidate node, {why}"
        s = view.s
        s.trace(f"{self.method} consolidation: {error}")
        if s.decisions.enabled:
            s.decide("disruption", "consolidation-failed", disruptionwhy.subject(c.claim),
                     f"{disruptionwhy.METHODS[self.method]} fails on it: {error}; "
                     + ("the candidate is skipped" if len(cands) == 1 else "the disruption pass ends"),
                     (), {"method": self.method, "error": error})
        if len(cands) > 1:
            raise PassEnded(error)
        return None

    def _cheaper(self, view: Cluster, cands, new: PlannedClaim, price: float) -> PlannedClaim | None:
        """The replacement with only instance types cheaper than the candidates (core v1.14.0
        pkg/controllers/disruption/consolidation.go computeConsolidation / computeSpotToSpotConsolidation:
        filterByPrice), or None when none is, said on a single candidate as core words it."""
        wk = self.ctl.state.profile.well_known_labels
        options = new
        new, err = remove_by_price(new, price, wk)
        why = f"Filtering by price: {err}" if err is not None else \
            None if new.instance_types else "Can't replace with a cheaper node"
        if why is None:
            return new
        if len(cands) == 1:
            view.unconsolidatable(cands[0], why, self.method, lambda: no_cheaper_text(options, price, wk))
        return None

    def _spot_to_spot(self, view: Cluster, cands, new: PlannedClaim, res: SimResult, price: float):
        s = self.ctl.state
        wk = s.profile.well_known_labels
        single = len(cands) == 1
        if not self.ctl.feature_gate("SpotToSpotConsolidation"):
            if single:
                view.unconsolidatable(cands[0], "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
                                      self.method)
            return None
        reqs = new.requirements.copy().add(Requirement.new(CAPACITY_TYPE, IN, ["spot"], s.sem))
        its = [it for it in new.instance_types if any(offering_compatible(o, reqs, wk) for o in it.offerings)]
        new = dataclasses.replace(new, requirements=reqs, instance_types=its)
        new = self._cheaper(view, cands, new, price)
        if new is None:
            return None
        if not single:
            p = Proposal(self.method, self.reason, cands, [new], res)
            self._candidate_events(view, p)
            return p
        if len(new.instance_types) < MIN_SPOT_TO_SPOT:
            view.unconsolidatable(cands[0], f"SpotToSpotConsolidation requires {MIN_SPOT_TO_SPOT} cheaper instance type "
                                            f"options than the current candidate to consolidate, got {len(new.instance_types)}",
                                  self.method)
            return None
        keep = MIN_SPOT_TO_SPOT
        if new.requirements.has_min_values():
            need, _ = min_values_need(new.instance_types, new.requirements)
            keep = max(MIN_SPOT_TO_SPOT, need)
        new = dataclasses.replace(new, instance_types=new.instance_types[:keep])
        p = Proposal(self.method, self.reason, cands, [new], res)
        self._candidate_events(view, p)
        return p

    def set_totals(self, view: Cluster) -> None:
        """SetNodePoolTotals: the Balanced NodePools' totals over every candidate of the class, before the
        method's own filter (helpers.go GetCandidatesWithTotals)."""
        self.totals = balanced.nodepool_totals(view, view.candidates(lambda c: True, self.disruption_class,
                                                                     self.ctl.queue_has, self.method))

    def below_threshold(self, view: Cluster, c: Candidate) -> bool:
        """CanPassThreshold failed: not even deleting the candidate scores enough for its Balanced NodePool."""
        if not self.totals:                  # no Balanced NodePool this pass: nothing is scored
            return False
        s = balanced.can_pass_threshold(c, self.totals)
        if s is None:
            return False
        self._balanced_kept(view, [c], c.nodepool_name, s, "deleting it")
        return True

    def approve(self, view: Cluster, p: Proposal) -> tuple[bool, dict[str, balanced.Score]]:
        """ApproveCommand: the move's score in each Balanced NodePool it takes from; a single candidate's
        approval is a ConsolidationApproved event on its Node and NodeClaim."""
        if not self.totals:
            return True, {}
        ok, scores = balanced.evaluate(p.candidates, p.savings(), self.totals)
        if not ok:
            for pool, s in scores.items():
                if not s.approved():
                    self._balanced_kept(view, [c for c in p.candidates if c.nodepool_name == pool], pool, s,
                                        disruptionwhy.command_text(p))
        elif len(p.candidates) == 1 and p.candidates[0].nodepool_name in scores:
            c = p.candidates[0]
            msg = scores[c.nodepool_name].text()
            if c.sn.node is not None:
                view.publish("Node", c.name, "ConsolidationApproved", msg, ("node", c.name))
            view.publish("NodeClaim", c.claim.result.name, "ConsolidationApproved", msg,
                         ("nodeclaim", c.claim.result.name))
        return ok, scores

    def approved_multi_events(self, view: Cluster, p: Proposal, scores: dict[str, balanced.Score]) -> None:
        """EmitMultiNodeEvents for a command found: ConsolidationApproved on each Balanced NodePool it scored."""
        for pool in dict.fromkeys(c.nodepool_name for c in p.candidates):
            s = scores.get(pool)
            if s is not None and s.approved():
                view.publish("NodePool", pool, "ConsolidationApproved", s.text(), ("nodepool", pool))

    def _balanced_kept(self, view: Cluster, cands: list[Candidate], pool: str, s: balanced.Score, move: str) -> None:
        """The decision record: a Balanced NodePool's score refused the move (core says it in metrics only)."""
        if not view.s.decisions.enabled:
            return
        t = self.totals.get(pool)
        against = (f"; the NodePool costs ${t.total_cost:.4f}/h with a disruption cost of {t.total_disruption_cost:g}"
                   if t is not None else "; the NodePool has no totals to score against")
        for c in cands:
            view.kept(c.claim, self.method, ("balanced", move, round(s.score(), 4)),
                      lambda: (f"{disruptionwhy.METHODS[self.method]}: NodePool {pool} is Balanced and {move} "
                               f"scores too little: {s.text()}{against}"), by="balanced")

    def _candidate_events(self, view: Cluster, p: Proposal) -> None:
        """Command.EmitCandidateEvents (ConsolidationCandidate on Node and NodeClaim)."""
        savings = p.savings()
        for c in p.candidates:
            msg = f"Consolidation candidate: {p.string_for_node(c)} (savings: ${savings:.2f})"
            if c.sn.node is not None:
                view.publish("Node", c.name, "ConsolidationCandidate", msg, ("node", c.name, p.string_for_node(c)))
            view.publish("NodeClaim", c.claim.result.name, "ConsolidationCandidate", msg,
                         ("nodeclaim", c.claim.result.name, p.string_for_node(c)))

    def rejected_events(self, view: Cluster, p: Proposal, why: str) -> None:
        """Command.EmitRejectedEvents."""
        savings = p.savings()
        for c in p.candidates:
            msg = f"Consolidation rejected: {p.string_for_node(c)}, reason: {why} (savings: ${savings:.2f})"
            if c.sn.node is not None:
                view.publish("Node", c.name, "ConsolidationRejected", msg, ("node", c.name, p.string_for_node(c), why))
            view.publish("NodeClaim", c.claim.result.name, "ConsolidationRejected", msg,
                         ("nodeclaim", c.claim.result.name, p.string_for_node(c), why))

    # -- validation (validation.go) -------------------------------------------------------------------
    def validate(self, view: Cluster, p: Proposal) -> tuple[Proposal | None, str | None]:
        """ConsolidationValidator.isValid: (the command, None) or (None, failure kind)."""
        fresh, why = self._validate_candidates(view, p.candidates)
        if fresh is None:
            return None, why
        try:
            res = self.ctl.simulator.simulate(view, fresh, consolidation=True)
        except CandidateDeleting:
            return None, "unknown"
        if not res.all_non_pending_scheduled():
            return None, "scheduling"
        if not res.new_claims:
            return (p, None) if not p.replacements else (None, "scheduling")
        if len(res.new_claims) > 1 or not p.replacements:
            return None, "scheduling"
        want = {it.name for it in p.replacements[0].instance_types}
        have = {it.name for it in res.new_claims[0].instance_types}
        if not want <= have:
            return None, "scheduling"
        fresh, why = self._validate_candidates(view, p.candidates)
        return (p, None) if fresh is not None else (None, why)

    def _validate_candidates(self, view: Cluster, cands: list[Candidate]) -> tuple[list[Candidate] | None, str | None]:
        """validateCandidates: every candidate is still one (GetCandidates + mapCandidates), none is
        nominated, the budgets still allow them all."""
        fresh = {c.name: c for c in view.candidates(lambda c: self.should_disrupt(view, c), GRACEFUL,
                                                    self.ctl.queue_has, self.method)}
        if any(c.name not in fresh for c in cands):
            return None, "churn"
        budgets = view.budget_mapping(self.reason)
        for c in cands:
            if c.claim.dis.nominated_until > view.now:
                return None, "budget"
            if budgets.get(c.nodepool_name, 0) == 0:
                return None, "budget"
            budgets[c.nodepool_name] -= 1
        return [fresh[c.name] for c in cands], None


def no_cheaper_text(options: PlannedClaim, price: float, wk) -> str:
    """The prices behind "Can't replace with a cheaper node": the candidates' price against the cheapest
    replacement option's worst launch price (RemoveInstanceTypeOptionsByPriceAndMinValues keeps an option only
    when that is lower)."""
    worst = sorted((worst_launch_price(it, options.requirements, wk), it.name) for it in options.instance_types)
    if not worst or worst[0][0] == float("inf"):
        return f"the candidate costs ${price:.4f}/h; no replacement option has an available offering"
    p, name = worst[0]
    return (f"the candidate costs ${price:.4f}/h; the cheapest of {len(worst)} replacement option(s), {name}, "
            f"costs ${p:.4f}/h")


def held_by_budget_record(view: Cluster, c: Candidate, method: str, reason: str) -> None:
    """The decision record: the method leaves the candidate because its NodePool's budget for `reason` has
    nothing left (with the arithmetic)."""
    if not view.s.decisions.enabled:
        return
    # keyed on the NodePool's allowance only: while a rolling disruption of a 1,000-node pool moves the nodes in use
    # one by one, the verdict for the other 900 candidates stays "held by the budget" (the text has the counts of
    # the pass that first held it)
    allowed = view.budget_allowed(c.nodepool_name, reason)
    view.kept(c.claim, method, ("budget", allowed),
              lambda: f"{disruptionwhy.METHODS[method]}: {disruptionwhy.budget_text(view, c.nodepool_name, reason)}",
              by="budget", extra=(f"NodePool/{c.nodepool_name}",))


class Emptiness(Consolidation):
    def __init__(self, controller):
        super().__init__(controller, "empty")

    def should_disrupt(self, view: Cluster, c: Candidate) -> bool:
        spec = disruption_spec(c.nodepool)
        if spec.consolidate_after is None:
            view.unconsolidatable(c, f'NodePool "{c.nodepool_name}" has consolidation disabled', self.method,
                                  "consolidateAfter: Never")
            return False
        if not c.is_empty():
            return False
        if c.claim.dis.consolidatable_since is None:
            self.consolidate_after_running(view, c)
            return False
        return True

    def compute_commands(self, view: Cluster, budgets: dict[str, int], cands: list[Candidate]) -> list[Proposal]:
        if self.is_consolidated():
            return []
        empty, constrained = [], False
        for c in self.sort(cands):
            if not c.is_empty():
                continue
            if self.held_by_budget(view, budgets, c):
                constrained = True
                continue
            empty.append(c)
            view.take(budgets, c, self.reason)
        if not empty:
            if not constrained:
                self.mark_consolidated()
            return []
        return [Proposal(self.method, self.reason, empty)]

    def validate(self, view: Cluster, p: Proposal) -> tuple[Proposal | None, str | None]:
        """EmptinessValidator.Validate: the candidates still empty, not nominated, within budget."""
        fresh = {c.name: c for c in view.candidates(lambda c: self.should_disrupt(view, c), GRACEFUL,
                                                    self.ctl.queue_has, self.method)}
        still = [fresh[c.name] for c in p.candidates if c.name in fresh]
        # core before v1.5.0 (#2206) abandons the command when any candidate changed
        # (core-behaviour.yaml emptinessValidation: Validation.ValidateCandidates)
        subset = self.ctl.state.core["emptinessValidation"] == "subset"
        if not still or (not subset and len(still) != len(p.candidates)):
            return None, "churn"
        budgets = view.budget_mapping(self.reason)
        valid = []
        for c in still:
            if c.claim.dis.nominated_until > view.now or budgets.get(c.nodepool_name, 0) == 0:
                if not subset:
                    return None, "budget"
                continue
            budgets[c.nodepool_name] -= 1
            valid.append(c)
        if not valid:
            return None, "budget"
        return Proposal(self.method, self.reason, valid), None


class SingleNode(Consolidation):
    def __init__(self, controller):
        super().__init__(controller, "single")
        self.unseen: set[str] = set()        # PreviouslyUnseenNodePools: left unseen by a timed-out pass

    def sort(self, cands: list[Candidate]) -> list[Candidate]:
        """SortCandidates: by ratio, then interleaved across NodePools in a seeded order (interleave). Before
        core v1.4.0 (#2035, core-behaviour.yaml candidateShuffleByNodePool; sigs.k8s.io/karpenter v1.0.6
        singlenodeconsolidation.go ComputeCommand) the sorted order as it is."""
        ordered = super().sort(cands)
        if not self.ctl.state.core["candidateShuffleByNodePool"]:
            return ordered
        return interleave(ordered, self.ctl.state.nodepool_order_rng, self.unseen)

    def compute_commands(self, view: Cluster, budgets: dict[str, int], cands: list[Candidate]) -> list[Proposal]:
        """ComputeCommands: the first candidate that consolidates, within SingleNodeConsolidationTimeoutDuration
        of modelled time; a pass that runs out abandons the rest and names the NodePools it did not reach,
        which the next pass takes first (PreviouslyUnseenNodePools)."""
        if self.is_consolidated():
            return []
        constrained = False
        ordered = self.sort(cands)
        unseen = dict.fromkeys(c.nodepool_name for c in ordered)
        watch = Stopwatch(SINGLE_NODE_TIMEOUT)
        for i, c in enumerate(ordered):
            if watch.expired():
                self.unseen = set(unseen)
                single_timed_out(view, ordered, i, watch.spent)
                return []
            unseen.pop(c.nodepool_name, None)
            if self.held_by_budget(view, budgets, c):
                constrained = True
                continue
            if self.below_threshold(view, c):
                continue
            watch.spend(self.sim_seconds(view, [c]))
            p = self.compute(view, [c])
            if p is None or p.decision == "no-op":
                continue
            if not self.approve(view, p)[0]:
                continue
            return [p]
        if not constrained:
            self.mark_consolidated()
        self.unseen = set(unseen)
        return []


def interleave(ordered: list[Candidate], rng: random.Random | None, unseen: set[str] = frozenset()) -> list[Candidate]:
    """shuffleCandidates (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/singlenodeconsolidation.go):
    the first candidate of each NodePool, then the second of each, and so on, each NodePool keeping its
    candidates' sorted order. The NodePools come in the order lo.Keys reads the lo.GroupBy map in: Go's, a
    random one each pass, which `rng` stands for, drawn only with two NodePools or more (one has one order);
    None keeps the order each NodePool is first met in. The NodePools a timed-out pass left `unseen` go
    first (PreviouslyUnseenNodePools, #2133; the timeout: harness/loop/disruption/bounds.py)."""
    groups: dict[str, list[Candidate]] = {}
    for c in ordered:
        groups.setdefault(c.nodepool_name, []).append(c)
    names = list(groups)
    if rng is not None and len(names) > 1:
        rng.shuffle(names)
    if unseen:
        names = [n for n in names if n in unseen] + [n for n in names if n not in unseen]
    out = []
    for i in range(max((len(g) for g in groups.values()), default=0)):
        for name in names:
            if i < len(groups[name]):
                out.append(groups[name][i])
    return out


class MultiNode(Consolidation):
    def __init__(self, controller):
        super().__init__(controller, "multi")
        self._scores: dict[str, balanced.Score] = {}         # the saved command's (lastSavedPerPool)

    def compute_commands(self, view: Cluster, budgets: dict[str, int], cands: list[Candidate]) -> list[Proposal]:
        if self.is_consolidated():
            return []
        ok, constrained = [], False
        for c in self.sort(cands):
            if self.held_by_budget(view, budgets, c):
                constrained = True
                continue
            ok.append(c)
            view.take(budgets, c, self.reason)
        if multi_node_window(len(ok)) < len(ok):
            multi_capped(view, ok)
        p = self._first_n(view, ok, min(len(ok), MULTI_NODE_MAX_PARALLEL))
        if p is None:
            if not constrained:
                self.mark_consolidated()
            return []
        if self._scores:
            self.approved_multi_events(view, p, self._scores)
        return [p]

    def _first_n(self, view: Cluster, cands: list[Candidate], hi: int) -> Proposal | None:
        """firstNConsolidationOption: binary search for the longest prefix that consolidates, within
        MultiNodeConsolidationTimeoutDuration of modelled time: the simulation that would end past it is
        cancelled (its context's deadline) and the search returns the last command found, if any."""
        if len(cands) < 2:
            return None
        lo = 1
        if len(cands) <= hi:
            hi = len(cands) - 1
        saved = None
        self._scores = {}
        watch = Stopwatch(MULTI_NODE_TIMEOUT)
        while lo <= hi:
            mid = (lo + hi) // 2
            batch = cands[:mid + 1]
            cost = self.sim_seconds(view, batch)
            if not watch.fits(cost):
                multi_timed_out(view, cands, saved, (lo + hi) // 2, watch.spent)
                return saved
            watch.spend(cost)
            p = self.compute(view, batch)
            valid = p is not None and p.decision == "delete"
            if p is not None and p.decision == "replace":
                r = filter_out_same_type(p.replacements[0], batch, self.ctl.state.profile.well_known_labels,
                                         self.ctl.state.sem)
                if r is not None and r.instance_types:
                    p.replacements[0] = r
                    valid = True
            if valid:
                valid, scores = self.approve(view, p)
                if valid and scores:
                    self._scores = scores
            if valid:
                saved, lo = p, mid + 1
            else:
                hi = mid - 1
        return saved


def filter_out_same_type(r: PlannedClaim, cands: list[Candidate], wk, sem) -> PlannedClaim | None:
    """filterOutSameInstanceType: when a replacement option is one of the candidates' types, only
    options cheaper than the cheapest such candidate (its offerings compatible with its labels) remain."""
    types: set[str] = set()
    prices: dict[str, float] = {}
    for c in cands:
        if c.instance_type is None:
            continue
        types.add(c.instance_type.name)
        reqs = Requirements.from_labels(c.sn.labels, sem)
        offers = [o.price for o in c.instance_type.offerings if reqs.is_compatible(o.requirements, wk)]
        if offers:
            prices[c.instance_type.name] = min(prices.get(c.instance_type.name, float("inf")), min(offers))
    max_price = float("inf")
    for it in r.instance_types:
        if it.name in types:
            max_price = min(max_price, prices.get(it.name, 0.0))     # a Go map's zero value
    new, err = remove_by_price(r, max_price, wk)
    return None if err is not None else new


# -- what a bound did (the decision record; the Karpenter log's lines are read from it) -----------------
def multi_capped(view: Cluster, cands: list[Candidate]) -> None:
    """Multi-node consolidation reaches only the first 101 of its candidates (maxParallel 100): the record
    says so once for the pass, and of each candidate left out (core says nothing of them)."""
    s = view.s
    window = multi_node_window(len(cands))
    left = cands[window:]
    s.trace(f"multi consolidation: the first {window} of {len(cands)} candidates (maxParallel {MULTI_NODE_MAX_PARALLEL})")
    if not s.decisions.enabled:
        return
    s.decide("disruption", "consolidation-capped", disruptionwhy.subject(left[0].claim),
             f"{disruptionwhy.METHODS['multi']} tries at most the first {window} of its {len(cands)} candidates "
             f"within budget (maxParallel {MULTI_NODE_MAX_PARALLEL}); {len(left)} are left to single-node "
             "consolidation this pass", (), {"method": "multi", "candidates": len(cands), "window": window,
                                             "left": [c.claim.result.name for c in left]})
    for c in left:
        view.kept(c.claim, "multi", ("cap", window),
                  f"{disruptionwhy.METHODS['multi']}: beyond the first {window} candidates it tries "
                  f"(maxParallel {MULTI_NODE_MAX_PARALLEL})", by="cap")


def multi_timed_out(view: Cluster, cands: list[Candidate], saved: Proposal | None, batch: int, spent: float) -> None:
    """MultiNodeConsolidationTimeoutDuration ran out: core logs it and returns the last command found, or none."""
    s = view.s
    s.trace(f"multi consolidation: timed out at a batch of {batch + 1} ({spent:.1f} s modelled); "
            f"{'returning the last valid command' if saved is not None else 'no command'}")
    if not s.decisions.enabled:
        return
    found = (f"returns the last valid command, {disruptionwhy.command_text(saved)}" if saved is not None
             else "found no command")
    log = None
    if saved is not None:                # Command.LogValues, for the Karpenter log's line
        log = {"decision": saved.decision, "disrupted-node-count": len(saved.candidates),
               "replacement-node-count": len(saved.replacements),
               "pod-count": sum(len(c.reschedulable) for c in saved.candidates),
               "disrupted-nodes": [{"Node": {"name": c.name}, "NodeClaim": {"name": c.claim.result.name},
                                    "instance-type": c.sn.labels.get(INSTANCE_TYPE, ""),
                                    "capacity-type": c.sn.labels.get(CAPACITY_TYPE, "")} for c in saved.candidates],
               "replacement-nodes": [{"capacity-type": "on-demand"} for _ in saved.replacements]}
    s.decide("disruption", "consolidation-timed-out", disruptionwhy.subject(cands[0].claim),
             f"{disruptionwhy.METHODS['multi']} ran out of its {MULTI_NODE_TIMEOUT:.0f} s "
             f"(MultiNodeConsolidationTimeoutDuration; {spent:.1f} s of modelled scheduling simulations) at a batch "
             f"of {batch + 1} of {len(cands)} candidates and {found}", (),
             {"method": "multi", "lastBatchSize": batch, "candidates": len(cands), "spent": round(spent, 3),
              "command": [c.claim.result.name for c in saved.candidates] if saved is not None else None,
              "logValues": log})


def single_timed_out(view: Cluster, ordered: list[Candidate], evaluated: int, spent: float) -> None:
    """SingleNodeConsolidationTimeoutDuration ran out: core logs it, abandons the pass (not marked consolidated:
    the next pass tries again) and takes the NodePools it did not reach first next time."""
    s = view.s
    s.trace(f"single consolidation: timed out after evaluating {evaluated} of {len(ordered)} candidates "
            f"({spent:.1f} s modelled)")
    if not s.decisions.enabled:
        return
    left = ordered[evaluated:]
    s.decide("disruption", "consolidation-timed-out", disruptionwhy.subject(left[0].claim),
             f"{disruptionwhy.METHODS['single']} ran out of its {SINGLE_NODE_TIMEOUT:.0f} s "
             f"(SingleNodeConsolidationTimeoutDuration; {spent:.1f} s of modelled scheduling simulations) after "
             f"evaluating {evaluated} of {len(ordered)} candidates; the pass is abandoned", (),
             {"method": "single", "candidatesEvaluated": evaluated, "candidates": len(ordered),
              "spent": round(spent, 3)})
    for c in left:
        view.kept(c.claim, "single", ("timeout",),
                  f"{disruptionwhy.METHODS['single']}: not reached before its {SINGLE_NODE_TIMEOUT:.0f} s timeout",
                  by="timeout")
