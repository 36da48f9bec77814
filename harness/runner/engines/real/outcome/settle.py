"""When a real-engine run has settled: on cause, with a short quiet window, not on a long one.

A run has settled once nothing it observes changed for a quiet window, no NodeClaim is in flight, a
provisioning round ran after the last change while a pod is pending (core's
`karpenter_scheduler_scheduling_duration_seconds` count), and, while a disruption candidate exists, a
disruption pass that decided nothing ran after it. Events are reports, not changes; a nominated candidate
waits out core's nomination window; a `fast` build is asked for the pass at once. Mirrors
sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/provisioner.go Provisioner.Reconcile and
pkg/controllers/disruption/controller.go (the 10 s poll).

Why it is built this way, rule by rule: docs/architecture/settle.md."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

QUIET_SECONDS = 2.0           # > BATCH_IDLE_DURATION (1 s, core's default, which the harness keeps)
# with no pod pending and no NodeClaim in flight no provisioning round is coming; the window only
# lets late writes land (the label and condition updates that follow initialization: Karpenter's
# `Consolidatable` lands ~0.1-0.2 s after `Initialized`, core v1.14.0 nodeclaim/disruption)
DONE_QUIET_SECONDS = 0.6
# reports land one after the other (a pass's Node event and its NodeClaim twin, milliseconds apart from
# the controller's event broadcaster): a run settles this long after the last one
REPORTS_QUIET_SECONDS = 0.3
# a provisioning round is counted as it ends (core v1.14.0 scheduling/scheduler.go Solve observes
# scheduling_duration_seconds on return), before the provisioner creates the NodeClaims it decided
# (provisioning/provisioner.go Schedule, then CreateNodeClaims): a round counts once its count has stood
# this long, so its writes are in the poll that ends the run. (Read from a watch cache a poll follows the
# metrics within milliseconds: a round that launched was taken for one that decided nothing, and the
# controller, stopped with its create under way, made that NodeClaim in the next run's cluster.)
ROUND_LAG_SECONDS = 0.5
# a pending pod's provisioning round comes at the latest with the pod controller's requeue (10 s,
# core v1.14.0 pkg/controllers/provisioning/controller.go PodController.Reconcile RequeueAfter) plus
# the batch idle window: no round that long after a change means none is coming; also the window
# when the metrics cannot be read (> BATCH_MAX_DURATION, 10 s)
FALLBACK_SECONDS = 15.0
# a pass that finds a candidate: up to the 10 s poll, then the 15 s validation, before anything shows
DISRUPTION_FALLBACK_SECONDS = 30.0
# ... in a `fast` build, whose validation waits 1.5 s (controller-timing.yaml commandValidationDelay): the
# 10 s poll, the validation and a pass's own seconds under load. (A candidate's nomination, 20 s, is waited
# out on its own: the window starts when it ends.)
FAST_DISRUPTION_FALLBACK_SECONDS = 20.0
SCHEDULER_ERROR = "SchedulerError"     # PodScheduled reason of a failed binding cycle (k8s.io/api PodReasonSchedulerError)
# kube-scheduler's verdict on a pod it tried while the cluster had no Node (k8s.io/kubernetes v1.36.3
# pkg/scheduler/scheduler.go ErrNoNodesAvailable)
NO_NODES = "no nodes available to schedule pods"
# core's nominationWindow at the default BATCH_MAX_DURATION (10 s), plus the poll and event-clock slack
NOMINATION_SECONDS = 20.0 + 1.0
# a run that has shown nothing new for this long (longer than every quiet window) polls at most every
# IDLE_POLL_SECONDS, and at once when a watched object changes (Settler.idle)
IDLE_SECONDS = 2.5
IDLE_POLL_SECONDS = 0.5
PASS_LAG_SECONDS = 1.0        # a pass must end this long after a change to count as having seen it
# ... or, with the fast timing's pass numbers, start this long after the harness saw the change: the
# change reached the API server before that poll, and the controller's informers within it
PASS_SEEN_SECONDS = 0.3
ROUNDS_METRIC = "karpenter_scheduler_scheduling_duration_seconds_count"
# core v0.36's name for the same histogram (sigs.k8s.io/karpenter v0.36.1 pkg/controllers/provisioning/
# scheduling/metrics.go SimulationDurationSeconds, labeled by controller as later cores)
ROUNDS_METRIC_V036 = "karpenter_provisioner_scheduling_simulation_duration_seconds_count"
_ROUNDS = re.compile(rf'^(?:{ROUNDS_METRIC}|{ROUNDS_METRIC_V036}){{[^}}]*controller="provisioner"[^}}]*}}\s+(\S+)\s*$',
                     re.M)
PASSES_METRIC = "karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count"
# ... and v0.36's (v0.36.1 pkg/controllers/disruption/metrics.go EvaluationDurationHistogram, labeled by
# method and consolidation_type; single-node consolidation is a pass's last method then too)
PASSES_METRIC_V036 = "karpenter_disruption_evaluation_duration_seconds_count"
_PASSES = re.compile(rf'^(?:{PASSES_METRIC}|{PASSES_METRIC_V036}){{[^}}]*consolidation_type="single"[^}}]*}}\s+(\S+)\s*$',
                     re.M)
# the fast timing's pass numbers (harness/data/controller-timing/pass_trigger.go)
STARTED_METRIC = "karpenter_harness_disruption_passes_started_total"
DECIDED_NOTHING_METRIC = "karpenter_harness_disruption_pass_decided_nothing"
# the fast timing's nominations (harness/data/controller-timing/nominations.go)
NOMINATED_METRIC = "karpenter_harness_nominated_until_seconds"
_NOMINATED = re.compile(rf'^{NOMINATED_METRIC}{{provider_id="([^"]*)"}}\s+(\S+)\s*$', re.M)


def provisioning_rounds(metrics_text: str) -> int:
    """How many provisioning rounds the controller has run, from its Prometheus text (0 before the
    first: the series appears with its first observation)."""
    m = _ROUNDS.search(metrics_text)
    return int(float(m.group(1))) if m else 0


def disruption_passes(metrics_text: str) -> int:
    """How many disruption passes ran every method without acting (0 before the first)."""
    m = _PASSES.search(metrics_text)
    return int(float(m.group(1))) if m else 0


def _sample(metrics_text: str, name: str) -> int | None:
    m = re.search(rf"^{name}\s+(\S+)\s*$", metrics_text, re.M)
    return int(float(m.group(1))) if m else None


def pass_counts(metrics_text: str) -> tuple[int, int]:
    """(passes, mark): a pass that decided nothing has been seen since a change once `passes` exceeds the
    `mark` read `pass_lag` after it. A fast build's: the number of the last pass that decided nothing
    and the number of passes started; else the count of passes that decided nothing, twice."""
    started, nothing = _sample(metrics_text, STARTED_METRIC), _sample(metrics_text, DECIDED_NOTHING_METRIC)
    if started is None or nothing is None:
        n = disruption_passes(metrics_text)
        return n, n
    return nothing, started


def nomination_ends(metrics_text: str) -> dict[str, float]:
    """A fast build's nominations: provider ID -> when that node's latest nomination ends, Unix seconds
    (Karpenter's own StateNode.nominatedUntil; empty before the first)."""
    return {m.group(1): float(m.group(2)) for m in _NOMINATED.finditer(metrics_text)}


DRAIN_REQUEUE_SECONDS = 1.0   # core v1.14.0 node/termination/controller.go awaitDrain: a drain error requeues after 1 s


def drain_waits(nodes: list[dict], pods: list[dict], now: float) -> list[tuple[str, str, float]]:
    """(pod, Node, seconds left) for each terminating pod a draining Node's drain still waits on: core's
    drain waits on a terminating pod (its finalizers hold it) until it is stuck, a minute past its
    deletionTimestamp, then goes on without it (pkg/utils/pod/scheduling.go IsDrainable; the rule is
    harness/loop/scheduling/podutil.py's, as the simulation's drain uses it). `now`: the run's instant, the API
    server's clock (runclock.py)."""
    from harness.loop.scheduling import podutil
    from harness.loop.scheduling.pods import PodView
    from harness.model.kube import podtermination
    draining = {n["metadata"]["name"] for n in nodes if n["metadata"].get("deletionTimestamp")}
    out = []
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        if node not in draining:
            continue
        pv = PodView(p, 0)
        at = podutil.stuck_at(pv)
        if at is None or podutil.tolerates_disrupted_taint(pv) or podutil.owned_by_node(pv):
            continue
        # a pod whose containers still run (a preStop sleep) ends when the kubelet stand-in confirms it: a
        # step's `advance` reaches that, as in the simulation (harness/loop/kube/kubelet.py)
        if (stop := podtermination.stops_at(p)) is not None and stop > now:
            continue
        left = at + DRAIN_REQUEUE_SECONDS - now
        if left > 0:
            out.append((pv.name, node, left))
    return out


@dataclass(frozen=True)
class Disruption:
    """The disruption side of one poll: `passes` and `pass_mark` (pass_counts, None when unreadable;
    the mark is `passes` when not given), the NodeClaims a pass may act on, and what is being disrupted
    now."""
    passes: int | None = None
    candidates: tuple[str, ...] = ()
    busy: tuple[str, ...] = ()
    held: tuple[str, ...] = ()      # what holds the run past the fallback (an evicted VM's NodeClaim)
    nominated_until: float = 0.0    # monotonic time a candidate's nomination ends (Nominations)
    pass_mark: int | None = None
    # pending pods a provisioning round planned onto a candidate (their Nominated event names it):
    # kube-scheduler may still bind them there, so no pass is asked for - the controller's own poll
    # lands when upstream's would
    planned: tuple[str, ...] = ()


@dataclass
class Settler:
    """Fed one observation per poll; says when the run has settled and why."""
    start: float
    quiet: float = QUIET_SECONDS
    done_quiet: float = DONE_QUIET_SECONDS
    fallback: float = FALLBACK_SECONDS
    disruption_fallback: float = DISRUPTION_FALLBACK_SECONDS
    in_flight_fallback: float = 0.0   # the least fallback while a NodeClaim is in flight (a real kubelet's boot)
    pass_lag: float = PASS_LAG_SECONDS
    reports_quiet: float = REPORTS_QUIET_SECONDS
    last_fingerprint: object = None
    last_reports: object = None
    last_change: float = 0.0
    last_state_change: float = 0.0           # last_change, reports aside: what a pass must see
    last_seen: float = 0.0                   # the last poll that showed a change or a report (held or not)
    pending: frozenset = field(default_factory=frozenset)
    pending_rounds: int | None = None        # the round count when anything observed last changed
    rounds_seen: int | None = None           # the round count read last, and when it was first read
    rounds_at: float = 0.0
    passes_at_change: int | None = None      # the disruption pass count `pass_lag` after it
    wants_pass: bool = False                 # all that the run waits for is a disruption pass (this poll)
    reason: str = ""

    def __post_init__(self) -> None:
        self.last_change = self.last_state_change = self.last_seen = self.start

    def observe(self, now: float, fingerprint, pending: frozenset, in_flight: list[str],
                rounds: int | None, disruption: Disruption = Disruption(), reports: object = None,
                nodes: int = 0) -> bool:
        """`fingerprint`: everything observed but `reports` (the events on Nodes and NodeClaims);
        `pending`: the pending workload pods with their scheduling state; `in_flight`: NodeClaims
        neither initialized nor failed; `rounds`: the provisioning round count, None when unreadable;
        `disruption`: the disruption side; `nodes`: how many Nodes the cluster has."""
        self.wants_pass = False
        if rounds != self.rounds_seen:
            self.rounds_seen, self.rounds_at = rounds, now
        if (fingerprint, pending) != (self.last_fingerprint, self.pending):
            self.last_fingerprint, self.last_change, self.last_state_change = fingerprint, now, now
            self.pending, self.pending_rounds = pending, rounds
            self.passes_at_change = None
            self.last_seen = now
        elif self.pending_rounds is None:
            self.pending_rounds = rounds       # the metrics answered only now
        if reports != self.last_reports:
            self.last_reports, self.last_change, self.last_seen = reports, now, now
        if disruption.candidates and self.last_state_change < disruption.nominated_until <= now:
            # a pass during a candidate's nomination could not act on it: one after it ends must be seen
            self.last_state_change, self.passes_at_change = disruption.nominated_until, None
        quiet_for, state_quiet = now - self.last_change, now - self.last_state_change
        if self.passes_at_change is None and now - self.last_state_change >= self.pass_lag:
            self.passes_at_change = disruption.passes if disruption.pass_mark is None else disruption.pass_mark
        if disruption.held:
            # what holds the run acts later (a garbage collector, a client's retry): every quiet
            # window starts once it is released
            self.last_change = now
            return False
        fallback = self.disruption_fallback if disruption.candidates or disruption.busy else self.fallback
        if in_flight:
            fallback = max(fallback, self.in_flight_fallback)
        # no pass can act on a candidate while its nomination lasts: the window starts when that ends - the
        # nomination of the last change's round, at most NOMINATION_SECONDS later; one that rounds renew for a
        # pod that stays pending with nothing else changing is the steady state (volume-topology's pod whose
        # claim is never provisioned renews its node's every 10 s)
        since = (max(self.last_change, min(disruption.nominated_until, now, self.last_change + NOMINATION_SECONDS))
                 if disruption.candidates else self.last_change)
        if now - since >= fallback:
            self.reason = f"nothing changed for {quiet_for:.1f}s" + (
                f" ({now - since:.1f}s since a candidate's nomination ended)" if since > self.last_change else "")
            return True
        if rounds is None or in_flight or disruption.busy:
            return False
        if disruption.candidates and now < disruption.nominated_until:
            return False
        if any(reason == SCHEDULER_ERROR for _, reason, *_ in pending):
            # a pod whose binding cycle failed (e.g. PreBind: its Node was deleted) is tried again after
            # kube-scheduler's backoff, at most 10 s (kubernetes v1.36.3 pkg/scheduler/schedule_one.go
            # handleSchedulingFailure, podMaxBackoffSeconds), and only then says Unschedulable, which is what
            # Karpenter provisions for (core v1.14.0 pkg/utils/pod/scheduling.go FailedToSchedule): the
            # fallback window covers that retry
            return False
        if nodes and any(NO_NODES in (p[2] or "") for p in pending if len(p) > 2):
            # kube-scheduler last tried the pod before any Node existed: such a failure is an error to its
            # queue, retried on its backoff alone, no Node event requeues it (schedule_one.go
            # handleSchedulingFailure, backend/queue/scheduling_queue.go: no unschedulable plugins). Its
            # verdict on the Nodes there are now is still to come; the fallback window covers that retry
            return False
        if pending and not (self.pending_rounds is not None and rounds > self.pending_rounds
                            and now - self.rounds_at >= ROUND_LAG_SECONDS):
            return False
        if disruption.candidates and not (disruption.passes is not None and self.passes_at_change is not None
                                          and disruption.passes > self.passes_at_change):
            # asked for as soon as it would count when no pod is pending: the window below is then for
            # late writes, and a pass that missed one is followed by another that sees it. A pending pod
            # may still be bound by kube-scheduler (to a new, empty candidate it is planned on): a pass
            # asked for before the quiet window would meet that moment far more often than upstream's
            # 10 s poll does (an empty node, about to get its pod, deleted). Nor is it asked for while a pending
            # pod is planned onto a candidate: under load kube-scheduler's bind came later than the quiet
            # window, and the pass asked for then found the new node empty every time (custom-constraints/
            # should-schedule-incompatible-pods-to-the-different-node: `Empty`, its pod evicted); upstream's
            # poll meets that moment only when it happens to land in it
            self.wants_pass = self.passes_at_change is not None and (
                not pending or (state_quiet >= self.quiet and not disruption.planned))
            return False
        if state_quiet < (self.quiet if pending else self.done_quiet) or quiet_for < self.reports_quiet:
            return False
        self.reason = (f"quiet for {state_quiet:.1f}s, no NodeClaim in flight, "
                       + ("a provisioning round saw the pending pods since" if pending else "no pod pending")
                       + (", a disruption pass decided nothing since" if disruption.candidates else ""))
        return True

    def idle(self, now: float, in_flight: list[str], asked: float) -> bool:
        """Nothing to watch closely: nothing changed for IDLE_SECONDS (beyond every quiet window), no
        NodeClaim in flight (a stand-in boots on a timer), no pass asked for lately (its end shows in the
        metrics alone). The run then waits on a timer of the cluster's (an expiry, a grace period, a garbage
        collector), whose end shows as a change in the watched objects: the poll waits for one, or
        IDLE_POLL_SECONDS."""
        return (now - self.last_seen >= IDLE_SECONDS and not in_flight and not self.wants_pass
                and now - asked >= IDLE_SECONDS)

    def waiting(self, now: float, in_flight: list[str], pending: frozenset,
                disruption: Disruption = Disruption()) -> str:
        """What the run was still waiting on (for a run that never settled)."""
        parts = [f"last change {now - self.last_change:.1f}s ago"]
        if in_flight:
            parts.append(f"NodeClaims in flight: {', '.join(in_flight[:5])}")
        if disruption.held:
            parts.append(f"held by: {', '.join(disruption.held[:5])}")
        if disruption.busy:
            parts.append(f"being disrupted: {', '.join(disruption.busy[:5])}")
        elif disruption.candidates:
            parts.append(f"disruption candidates awaiting a pass: {', '.join(disruption.candidates[:5])}")
        if pending:
            parts.append(f"pending pods: {', '.join(sorted(k for k, *_ in pending)[:5])}"
                         + ("" if self.pending_rounds is None else " (no provisioning round since the last change)"))
        return "; ".join(parts)


@dataclass
class Nominations:
    """When the nominations of candidates end. Karpenter nominates an existing or in-flight node in its
    state each provisioning round that plans a pending pod onto it (core v1.14.0 scheduling/scheduler.go),
    and says so once per pod in two minutes (a `Nominated` event deduped by pod UID,
    pkg/events/recorder.go) - the same event a new NodeClaim's pods get (provisioner.go, no Node named).
    So a pod's event names the NodeClaim it is planned onto, and its nomination is dated from the last
    round that ran while it was still pending after that event (the claim existed by then), or from the
    event itself when it names a Node (an existing node from the start).

    "After that event" is counted in rounds, not in time: the round that created the claim counts its
    round (Provisioner.Schedule's duration metric) before it writes the event, yet the harness reads the
    metrics before each poll, so the poll that first shows the event may come with the count from just
    before that round. A pod's baseline is the count read after its event was first seen; only a round
    above it planned the pod onto the claim (a second round needs a new trigger and the batch window,
    longer than a poll).

    A fast build says when each nomination ends (`nomination_ends`), and `ends` reads that instead."""
    rounds: int | None = None
    last_round: dict = field(default_factory=dict)       # pod key -> (monotonic time, count) of a round while pending
    seen: dict = field(default_factory=dict)             # pod key -> when its Nominated event was first seen
    baseline: dict = field(default_factory=dict)         # pod key -> the round count read after that
    awaiting: set = field(default_factory=set)           # pods seen whose baseline is the next count read
    was_pending: frozenset = frozenset()                 # the pods the last poll showed pending

    def observe(self, now: float, rounds: int | None, pending: frozenset, nominated=()) -> None:
        """One poll: `rounds` read before it, the `pending` pods and the pods with a `nominated` event
        it showed. A round first counted here ran since the last read, so it may have seen pending a pod
        that the last poll showed pending and this one bound: with a new claim's pod the round that plans
        it onto the claim comes as kube-scheduler binds it, and a real v0.7.5 run settled inside that
        nomination, unseen (the pod bound by the poll that read its round)."""
        now_pending = frozenset(key for key, *_ in pending)
        if rounds is not None:
            for key in self.awaiting:
                self.baseline[key] = rounds
            self.awaiting.clear()
            if self.rounds is not None and rounds > self.rounds:
                for key in now_pending | self.was_pending:
                    self.last_round[key] = (now, rounds)
            self.rounds = rounds
        self.was_pending = now_pending
        for key in nominated:
            if key not in self.seen:
                self.seen[key] = now
                self.awaiting.add(key)

    @staticmethod
    def planned(nominated: dict[str, set[str]], candidates: tuple[str, ...], pending: frozenset) -> tuple[str, ...]:
        """The pending pods whose Nominated event names a candidate (Disruption.planned)."""
        waiting, cands = {key for key, *_ in pending}, set(candidates)
        return tuple(sorted(pod for pod, claims in nominated.items() if pod in waiting and claims & cands))

    @staticmethod
    def ends(nominations: dict[str, float], provider_ids: list[str], wall: float, now: float) -> float:
        """From a fast build's `nomination_ends`: the monotonic time the last nomination of the candidates'
        nodes (`provider_ids`) ends, given the Unix (`wall`) and monotonic (`now`) time of the reading
        (0.0 for none)."""
        ends = [nominations[p] - wall + now for p in provider_ids if p in nominations]
        return max(ends, default=0.0)

    def until(self, nominated: dict[str, set[str]], candidates: tuple[str, ...],
              on_node: set[str] = frozenset()) -> float:
        """`nominated`: pod key -> NodeClaims its event names; `on_node`: pods whose event names a Node.
        The time the last candidate's nomination ends (0.0 for none)."""
        ends = []
        for pod, claims in nominated.items():
            if not claims & set(candidates) or pod not in self.seen:
                continue
            at, count = self.last_round.get(pod, (None, None))
            since = [at] if at is not None and pod in self.baseline and count > self.baseline[pod] else []
            since += [self.seen[pod]] if pod in on_node else []
            if since:
                ends.append(max(since) + NOMINATION_SECONDS)
        return max(ends, default=0.0)
