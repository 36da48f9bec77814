"""When a real-engine run has settled (harness/runner/engines/real/outcome/settle.py): on cause, with a short
quiet window, and the long window only when the controller's metrics cannot be read."""
from harness.runner.engines.real.outcome.settle import (DISRUPTION_FALLBACK_SECONDS, DONE_QUIET_SECONDS, FALLBACK_SECONDS,
                                                NOMINATION_SECONDS, PASS_LAG_SECONDS, PASS_SEEN_SECONDS, QUIET_SECONDS,
                                                REPORTS_QUIET_SECONDS, ROUND_LAG_SECONDS, Disruption, Settler,
                                                disruption_passes, pass_counts, provisioning_rounds)

METRICS = """# HELP karpenter_scheduler_scheduling_duration_seconds Duration of scheduling simulations
# TYPE karpenter_scheduler_scheduling_duration_seconds histogram
karpenter_scheduler_scheduling_duration_seconds_bucket{controller="provisioner",le="0.005"} 2
karpenter_scheduler_scheduling_duration_seconds_sum{controller="provisioner"} 0.0123
karpenter_scheduler_scheduling_duration_seconds_count{controller="provisioner"} 3
karpenter_scheduler_scheduling_duration_seconds_count{controller="disruption"} 40
"""


def test_rounds_are_the_provisioners_count_only():
    assert provisioning_rounds(METRICS) == 3
    assert provisioning_rounds("# nothing observed yet\n") == 0


def test_quiet_with_nothing_pending_and_nothing_in_flight_settles_after_the_short_window():
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 0)
    assert not s.observe(DONE_QUIET_SECONDS - 0.1, "fp", frozenset(), [], 0)
    assert s.observe(DONE_QUIET_SECONDS, "fp", frozenset(), [], 0)
    assert "no pod pending" in s.reason


def test_a_claim_in_flight_holds_the_run_until_the_long_window():
    s = Settler(0.0)
    for t in (0.0, 3.0, 6.0, FALLBACK_SECONDS - 0.1):
        assert not s.observe(t, "fp", frozenset(), ["nc-1"], 0)
    assert s.observe(FALLBACK_SECONDS, "fp", frozenset(), ["nc-1"], 0)


def test_a_real_kubelets_boot_gets_the_clusters_window():
    """kind: a real kubelet's Node stays NotReady while its CNI comes up, with nothing else changing
    (RealCluster.node_ready_seconds); the long window is then the cluster's, for a claim in flight only."""
    s = Settler(0.0, in_flight_fallback=45.0)
    assert not s.observe(0.0, "fp", frozenset(), ["nc-1"], 0)
    assert not s.observe(FALLBACK_SECONDS + 10, "fp", frozenset(), ["nc-1"], 0)
    assert s.observe(45.0, "fp", frozenset(), ["nc-1"], 0)
    s = Settler(0.0, in_flight_fallback=45.0)
    assert not s.observe(0.0, "fp", frozenset(), [], None)          # metrics unreadable, nothing in flight
    assert s.observe(FALLBACK_SECONDS, "fp", frozenset(), [], None)


def test_pending_pods_wait_for_a_provisioning_round_after_they_changed():
    s = Settler(0.0)
    pending = frozenset({("default/web", "Unschedulable", "0/1 nodes are available")})
    assert not s.observe(0.0, "fp", pending, [], 5)
    assert not s.observe(3.0, "fp", pending, [], 5)          # quiet, but Karpenter has not looked yet
    assert not s.observe(3.5, "fp", pending, [], 6)          # a round saw them: what it created may be on its way
    assert s.observe(3.5 + ROUND_LAG_SECONDS, "fp", pending, [], 6)     # ... and is in the poll by now: settled
    assert "provisioning round" in s.reason


def test_a_change_restarts_the_quiet_window():
    s = Settler(0.0)
    pending = frozenset({("default/web", "Unschedulable", "x")})
    assert not s.observe(1.9, "a", pending, [], 0)
    assert not s.observe(2.5, "b", pending, [], 1)
    assert not s.observe(2.6, "b", pending, [], 2)
    assert not s.observe(2.5 + QUIET_SECONDS - 0.1, "b", pending, [], 2)
    assert s.observe(2.5 + QUIET_SECONDS, "b", pending, [], 2)


def test_any_change_needs_a_round_after_it_while_pods_are_pending():
    """A NodeClaim deleted after a failed launch changes no pod, yet Karpenter launches again."""
    s = Settler(0.0)
    pending = frozenset({("default/web", "Unschedulable", "x")})
    assert not s.observe(0.0, ("claim-1",), pending, [], 1)
    assert not s.observe(1.0, (), pending, [], 1)            # the claim is gone: a change
    assert not s.observe(1.0 + QUIET_SECONDS, (), pending, [], 1)
    assert not s.observe(1.2 + QUIET_SECONDS, (), pending, [], 2)
    assert s.observe(1.2 + QUIET_SECONDS + ROUND_LAG_SECONDS, (), pending, [], 2)


def test_unreadable_metrics_fall_back_to_the_long_window():
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], None)
    assert not s.observe(5.0, "fp", frozenset(), [], None)
    assert s.observe(FALLBACK_SECONDS, "fp", frozenset(), [], None)
    assert "nothing changed" in s.reason


def test_what_an_unsettled_run_waited_on():
    s = Settler(0.0)
    pending = frozenset({("default/web", "Unschedulable", "x")})
    s.observe(1.0, "fp", pending, ["nc-1"], 2)
    text = s.waiting(9.0, ["nc-1"], pending)
    assert "NodeClaims in flight: nc-1" in text and "pending pods: default/web" in text and "8.0s ago" in text


DISRUPTION_METRICS = """# TYPE karpenter_voluntary_disruption_decision_evaluation_duration_seconds histogram
karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count{consolidation_type="empty",reason="empty"} 9
karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count{consolidation_type="single",reason="underutilized"} 7
karpenter_voluntary_disruption_decision_evaluation_duration_seconds_count{consolidation_type="multi",reason="underutilized"} 7
"""


def test_passes_are_the_single_node_consolidation_count():
    """A pass that decides nothing ends with single-node consolidation (core v1.14.0
    pkg/controllers/disruption/controller.go NewMethods order); one that acts stops earlier."""
    assert disruption_passes(DISRUPTION_METRICS) == 7
    assert disruption_passes(METRICS) == 0
    # core v0.36's names (v0.36.1 disruption/metrics.go, provisioning/scheduling/metrics.go)
    v036 = ('karpenter_disruption_evaluation_duration_seconds_count{consolidation_type="single",method="consolidation"} 4\n'
            'karpenter_provisioner_scheduling_simulation_duration_seconds_count{controller="disruption"} 9\n'
            'karpenter_provisioner_scheduling_simulation_duration_seconds_count{controller="provisioner"} 3\n')
    assert (disruption_passes(v036), provisioning_rounds(v036)) == (4, 3)


def test_a_disruption_candidate_holds_the_run_until_a_pass_after_the_last_change():
    s = Settler(0.0)
    cand = Disruption(passes=3, candidates=("nc-1",))
    assert not s.observe(0.0, "fp", frozenset(), [], 1, cand)
    assert not s.observe(PASS_LAG_SECONDS, "fp", frozenset(), [], 1, cand)
    assert not s.observe(DONE_QUIET_SECONDS + 1, "fp", frozenset(), [], 1, cand)      # quiet, but no pass yet
    assert s.observe(DONE_QUIET_SECONDS + 2, "fp", frozenset(), [], 1, Disruption(4, ("nc-1",)))
    assert "disruption pass" in s.reason


def test_a_pass_that_ends_right_after_a_change_does_not_count():
    """It may have read the cluster before the change reached the controller's informers (a
    PodDisruptionBudget a step relaxed: the real engine settled before the replacement)."""
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(3, ("nc-1",)))
    assert not s.observe(0.3, "fp", frozenset(), [], 1, Disruption(4, ("nc-1",)))      # within the lag
    assert not s.observe(PASS_LAG_SECONDS, "fp", frozenset(), [], 1, Disruption(4, ("nc-1",)))
    assert not s.observe(5.0, "fp", frozenset(), [], 1, Disruption(4, ("nc-1",)))
    assert s.observe(10.0, "fp", frozenset(), [], 1, Disruption(5, ("nc-1",)))


def test_an_evicted_vms_claim_holds_the_run_past_every_window():
    """core's garbage collector runs every 2 minutes: quiet is no answer until it has run."""
    s = Settler(0.0)
    held = Disruption(passes=1, held=("spot-a (its VM was evicted)",))
    assert not s.observe(0.0, "fp", frozenset(), [], 1, held)
    assert not s.observe(DISRUPTION_FALLBACK_SECONDS * 4, "fp", frozenset(), [], 1, held)
    assert "held by: spot-a" in s.waiting(1.0, [], frozenset(), held)
    assert s.observe(DISRUPTION_FALLBACK_SECONDS * 4 + DONE_QUIET_SECONDS, "fp", frozenset(), [], 1, Disruption(1))


def test_a_disruption_under_way_holds_the_run_and_the_fallback_grows():
    """The 15 s consolidation validation shows nothing: a candidate's run may be quiet that long."""
    s = Settler(0.0)
    busy = Disruption(passes=None, busy=("Node/aks-a",))
    assert not s.observe(0.0, "fp", frozenset(), [], 1, busy)
    assert not s.observe(FALLBACK_SECONDS + 1, "fp", frozenset(), [], 1, busy)
    assert s.observe(DISRUPTION_FALLBACK_SECONDS, "fp", frozenset(), [], 1, busy)
    assert "being disrupted: Node/aks-a" in s.waiting(1.0, [], frozenset(), busy)


def test_no_candidate_no_disruption_wait():
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(passes=None))
    assert s.observe(DONE_QUIET_SECONDS, "fp", frozenset(), [], 1, Disruption(passes=None))


def test_windows_start_when_a_hold_is_released():
    """A NodeClaim in flight behind a throttled request: the SDK sleeps out the Retry-After, so quiet
    during the hold is no answer, and the long window counts from its release."""
    s = Settler(0.0)
    held = Disruption(passes=1, held=("an Azure request the fake refused with Retry-After, retried in 9.0s",))
    assert not s.observe(FALLBACK_SECONDS + 5, "fp", frozenset(), ["nc-1"], 1, held)
    assert not s.observe(FALLBACK_SECONDS + 6, "fp", frozenset(), ["nc-1"], 1, Disruption(1))
    assert s.observe(2 * FALLBACK_SECONDS + 5, "fp", frozenset(), ["nc-1"], 1, Disruption(1))


def test_a_refusal_with_retry_after_is_remembered_by_the_wire_tap():
    import time

    from harness.runner.engines.real.controller.fakeside import WireTap

    class Fake:
        def handle(self, method, url, headers=None, body=None):
            return 429, {"retry-after": "10"}, b"{}"
    tap = WireTap(Fake())
    before = time.monotonic()
    tap.handle("GET", "https://management.azure.com/x", {"Host": "management.azure.com"})
    assert before + 10 <= tap.retry_until <= time.monotonic() + 10

    class Failing:           # a retryable status without Retry-After: the SDK's own backoff
        def handle(self, method, url, headers=None, body=None):
            return 500, {}, b"{}"
    from harness.runner.engines.real.controller.fakeside import SDK_BACKOFF
    tap = WireTap(Failing())
    before = time.monotonic()
    tap.handle("GET", "https://management.azure.com/x", {})
    assert before + SDK_BACKOFF <= tap.retry_until <= time.monotonic() + SDK_BACKOFF


def test_a_pod_whose_binding_cycle_failed_holds_the_run_for_kube_schedulers_retry():
    s = Settler(0.0)
    failed = frozenset({("default/app", "SchedulerError", 'running PreBind plugin "VolumeBinding": ...')})
    assert not s.observe(0.0, "fp", failed, [], 1)
    assert not s.observe(QUIET_SECONDS + 1, "fp", failed, [], 2)       # a round ran, but the retry is still due
    assert s.observe(FALLBACK_SECONDS, "fp", failed, [], 2)


def test_a_passs_own_report_restarts_a_short_window_but_asks_for_no_further_pass():
    """The first pass after a node initializes publishes Unconsolidatable on it (core v1.14.0
    disruption/events/events.go): Karpenter reads no events, so that pass has seen the cluster; the
    run waits REPORTS_QUIET_SECONDS after the last report (its NodeClaim twin follows it)."""
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",)), reports=0)
    assert not s.observe(PASS_LAG_SECONDS, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",)), reports=0)
    assert not s.observe(4.0, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=1)   # the pass and its report
    assert not s.observe(4.2, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=2)   # its twin
    assert not s.observe(4.2 + REPORTS_QUIET_SECONDS - 0.1, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=2)
    assert s.observe(4.2 + REPORTS_QUIET_SECONDS + 1e-9, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=2)


def test_the_pass_is_asked_for_once_it_would_count_not_after_the_quiet_window():
    """A fast build numbers its passes: the mark is read PASS_SEEN_SECONDS after the change, and the pass
    asked for then; the run still settles only once the state has been quiet for the window."""
    s = Settler(0.0, pass_lag=PASS_SEEN_SECONDS)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",), pass_mark=1)) and not s.wants_pass
    assert not s.observe(PASS_SEEN_SECONDS, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",), pass_mark=1))
    assert s.wants_pass and PASS_SEEN_SECONDS < DONE_QUIET_SECONDS
    # a pass that started before the mark was read decides nothing: it does not count
    assert PASS_SEEN_SECONDS + 0.2 < DONE_QUIET_SECONDS
    assert not s.observe(PASS_SEEN_SECONDS + 0.1, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",), pass_mark=2)) and s.wants_pass
    assert not s.observe(PASS_SEEN_SECONDS + 0.2, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",), pass_mark=2)) and not s.wants_pass
    assert not s.observe(DONE_QUIET_SECONDS - 0.1, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",), pass_mark=2))
    assert s.observe(DONE_QUIET_SECONDS, "fp", frozenset(), [], 1, Disruption(2, ("nc-1",), pass_mark=2))


def test_a_fast_builds_pass_numbers_are_read_beside_the_histogram():
    fast = DISRUPTION_METRICS + ("karpenter_harness_disruption_passes_started_total 9\n"
                                 "karpenter_harness_disruption_pass_decided_nothing 8\n")
    assert pass_counts(fast) == (8, 9)
    assert pass_counts(DISRUPTION_METRICS) == (7, 7)      # an upstream build: the histogram's count, twice


def test_a_state_change_still_asks_for_a_pass_that_saw_it():
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",)), reports=0)
    assert not s.observe(PASS_LAG_SECONDS, "fp", frozenset(), [], 1, Disruption(1, ("nc-1",)), reports=0)
    assert not s.observe(4.0, "fp2", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=1)  # a change with it
    assert not s.observe(8.0, "fp2", frozenset(), [], 1, Disruption(2, ("nc-1",)), reports=1)
    assert s.observe(14.0, "fp2", frozenset(), [], 1, Disruption(3, ("nc-1",)), reports=1)


def test_a_pass_during_a_candidates_nomination_says_nothing():
    """A node nominated for a pending pod is no candidate for core's nomination window (statenode.go
    Nominate): the run waits for a pass after the window ends."""
    s = Settler(0.0)
    cand = ("nc-1",)
    until = 12.0
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(1, cand, nominated_until=until))
    assert not s.observe(3.0, "fp", frozenset(), [], 1, Disruption(2, cand, nominated_until=until))   # a pass, nominated
    assert not s.observe(12.5, "fp", frozenset(), [], 1, Disruption(3, cand, nominated_until=until))  # within the lag
    assert not s.observe(13.5, "fp", frozenset(), [], 1, Disruption(3, cand, nominated_until=until))
    assert s.wants_pass
    assert s.observe(14.0, "fp", frozenset(), [], 1, Disruption(4, cand, nominated_until=until))


def test_the_fallback_window_of_a_nominated_candidate_starts_when_its_nomination_ends():
    """fuzz-c3c76bc446: a candidate nominated for 20 s and no pass deciding anything (the controller's
    passes unreadable here): a 15 s window from the last change ended the run before any pass could act on
    it (nothing disrupted where core consolidates); the window counts from the nomination's end."""
    s = Settler(0.0, disruption_fallback=15.0)
    nominated = Disruption(None, ("nc-1",), nominated_until=20.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, nominated)
    assert not s.observe(16.0, "fp", frozenset(), [], 1, nominated)
    assert not s.observe(34.0, "fp", frozenset(), [], 1, nominated)
    assert s.observe(35.5, "fp", frozenset(), [], 1, nominated)
    assert "since a candidate's nomination ended" in s.reason
    # a nomination renewed round after round (a pod that stays pending) is the steady state: the window
    # starts at most NOMINATION_SECONDS after the last change
    s = Settler(0.0, disruption_fallback=15.0)
    assert not s.observe(0.0, "fp", frozenset(), [], 1, Disruption(None, ("nc-1",), nominated_until=20.0))
    renewed = Disruption(None, ("nc-1",), nominated_until=1000.0)
    assert not s.observe(NOMINATION_SECONDS + 14.0, "fp", frozenset(), [], 1, renewed)
    assert s.observe(NOMINATION_SECONDS + 15.0, "fp", frozenset(), [], 1, renewed)


def test_nominations_last_from_the_last_round_that_saw_the_pod_pending_after_its_event():
    from harness.runner.engines.real.outcome.settle import NOMINATION_SECONDS, Nominations
    n = Nominations()
    pending = frozenset({("default/p", "Unschedulable", "x")})
    claims = {"default/p": {"nc-1"}}
    n.observe(1.0, 3, pending)
    n.observe(2.0, 4, pending, claims)         # the round that made the pod's NodeClaim (its event: 2.0)
    n.observe(2.1, 4, pending, claims)
    assert n.until(claims, ("nc-1",)) == 0.0     # a new claim: no nomination
    assert n.until(claims, ("nc-1",), {"default/p"}) == 2.0 + NOMINATION_SECONDS
    n.observe(3.0, 5, pending, claims)         # a round while p is still pending: planned onto the in-flight claim
    n.observe(4.0, 5, frozenset(), claims)     # bound
    n.observe(5.0, 6, frozenset(), claims)     # a round after it bound
    assert n.until(claims, ("nc-1",)) == 3.0 + NOMINATION_SECONDS
    assert n.until({"default/p": {"nc-2"}}, ("nc-1",)) == 0.0


def test_the_round_that_made_the_claim_is_no_nomination_when_its_count_is_read_after_its_event():
    """The metrics are read before each poll: the poll that first shows the claim's Nominated event can come
    with the count from before the round that wrote it, and the next read shows that same round. Counted as
    a round after the event, every such run waited out the 20 s window for a nomination core never made
    (binpacking/should-schedule-a-small-pod-on-the-smallest-possible-instance-type: 3.0 s or 22.9 s)."""
    from harness.runner.engines.real.outcome.settle import NOMINATION_SECONDS, Nominations
    n = Nominations()
    pending = frozenset({("default/p", "Unschedulable", "x")})
    claims = {"default/p": {"nc-1"}}
    n.observe(1.0, 0, pending)
    n.observe(2.0, 0, pending, claims)         # the claim and its event, the count read just before the round
    n.observe(2.1, 2, pending, claims)         # ... and that round's count, one poll later
    n.observe(3.0, 2, frozenset(), claims)     # bound
    assert n.until(claims, ("nc-1",)) == 0.0
    n.observe(4.0, 3, pending, claims)         # a later round while pending (the pod pending again) nominates
    assert n.until(claims, ("nc-1",)) == 4.0 + NOMINATION_SECONDS


def test_a_round_read_as_its_pod_binds_may_have_nominated_the_claim():
    """The round that plans a new claim's pod onto it (once the claim is in flight) comes as kube-scheduler
    binds the pod: the poll that first reads its count may already show the pod bound. It ran since the last
    read, while the pod may still have been pending: counted, the run waits out that nomination (a real
    v0.7.5 run of core-empty-nodepool-budget-events settled inside it: "state node is nominated for a
    pending pod", nothing disrupted)."""
    from harness.runner.engines.real.outcome.settle import NOMINATION_SECONDS, Nominations
    n = Nominations()
    pending = frozenset({("default/p", "Unschedulable", "x")})
    claims = {"default/p": {"nc-1"}}
    n.observe(1.0, 3, pending, claims)         # the claim's event
    n.observe(1.1, 3, pending, claims)         # its baseline
    n.observe(2.0, 4, frozenset(), claims)     # a round read as the pod is first seen bound
    assert n.until(claims, ("nc-1",)) == 2.0 + NOMINATION_SECONDS


def test_a_fast_build_says_when_each_nomination_ends():
    """The fast timing's nominations.go exposes StateNode.nominatedUntil per node (Unix seconds): the run
    waits for exactly that, not for a window dated from rounds counted between polls (fuzz-c3c76bc446
    settled inside a nomination it had not dated, 1 run in 16)."""
    from harness.runner.engines.real.outcome.settle import Nominations, nomination_ends
    text = METRICS + """# TYPE karpenter_harness_nominated_until_seconds gauge
karpenter_harness_nominated_until_seconds{provider_id="azure:///subscriptions/s/vm/a"} 1.7645e+09
karpenter_harness_nominated_until_seconds{provider_id="azure:///subscriptions/s/vm/b"} 1764500010.5
"""
    ends = nomination_ends(text)
    assert ends == {"azure:///subscriptions/s/vm/a": 1.7645e9, "azure:///subscriptions/s/vm/b": 1764500010.5}
    assert nomination_ends(METRICS) == {}
    # read at Unix 1764500000.0, monotonic 100.0: b's nomination ends 10.5 s later
    assert Nominations.ends(ends, ["azure:///subscriptions/s/vm/b", "azure:///x"], 1764500000.0, 100.0) == 110.5
    assert Nominations.ends(ends, ["azure:///x"], 1764500000.0, 100.0) == 0.0


def test_with_a_pod_pending_the_pass_waits_for_the_quiet_window():
    """kube-scheduler may still bind the pending pod to the candidate: asking at once would meet the empty
    node far more often than upstream's poll (daemonsets/should-ignore-daemonsets-when-no-instance-types-
    meet-the-daemon lost its node so)."""
    pending = frozenset({("default/p", "Unschedulable")})
    s = Settler(0.0, pass_lag=PASS_SEEN_SECONDS)
    assert not s.observe(0.0, "fp", pending, [], 1, Disruption(1, ("nc-1",), pass_mark=1))
    assert not s.observe(0.5, "fp", pending, [], 2, Disruption(1, ("nc-1",), pass_mark=1)) and not s.wants_pass
    assert not s.observe(QUIET_SECONDS, "fp", pending, [], 2, Disruption(1, ("nc-1",), pass_mark=1)) and s.wants_pass



def test_a_pod_tried_before_any_node_existed_holds_the_run_once_a_node_does():
    """kube-scheduler retries such a pod on its backoff alone, no Node event requeues it: with the quiet
    window over and a round since, the run still waits for that try (labels-taints-nodeclaims/should-create-
    a-nodeclaim-with-resource-requests settled under `-n 2` with its pod pending beside a Ready Node)."""
    from harness.runner.engines.real.outcome.settle import NO_NODES
    untried = frozenset({("default/p", "Unschedulable", NO_NODES)})
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", untried, [], 1)
    assert not s.observe(1.0, "fp", untried, [], 2)
    assert s.observe(QUIET_SECONDS, "fp", untried, [], 2)                 # no Node: nothing will change
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", untried, [], 1, nodes=1)
    assert not s.observe(1.0, "fp", untried, [], 2, nodes=1)
    assert not s.observe(QUIET_SECONDS, "fp", untried, [], 2, nodes=1)    # a Node it has not been tried on
    assert s.observe(FALLBACK_SECONDS, "fp", untried, [], 2, nodes=1)     # ... bounded by the fallback
    tried = frozenset({("default/p", "Unschedulable", "0/1 nodes are available: 1 Insufficient cpu.")})
    s = Settler(0.0)
    assert not s.observe(0.0, "fp", tried, [], 1, nodes=1)
    assert not s.observe(1.0, "fp", tried, [], 2, nodes=1)
    assert s.observe(QUIET_SECONDS, "fp", tried, [], 2, nodes=1)


def test_no_pass_is_asked_for_while_a_pending_pod_is_planned_onto_a_candidate():
    """kube-scheduler may still bind it there: a pass asked for then finds the new node empty (`Empty`, the
    pod evicted) far more often than upstream's 10 s poll would; the run waits for that poll instead."""
    pending = frozenset({("default/p", "Unschedulable", "0/2 nodes are available")})
    planned = Disruption(1, ("nc-1",), pass_mark=1, planned=("default/p",))
    s = Settler(0.0, pass_lag=PASS_SEEN_SECONDS)
    assert not s.observe(0.0, "fp", pending, [], 1, planned)
    assert not s.observe(1.0, "fp", pending, [], 2, planned)
    assert not s.observe(QUIET_SECONDS, "fp", pending, [], 2, planned) and not s.wants_pass
    assert not s.observe(QUIET_SECONDS + 5, "fp", pending, [], 2, planned) and not s.wants_pass
    assert s.observe(QUIET_SECONDS + 6, "fp", pending, [], 2, Disruption(2, ("nc-1",), pass_mark=2, planned=("default/p",)))
    s = Settler(0.0, pass_lag=PASS_SEEN_SECONDS)            # a pod no candidate was planned for: asked at once
    assert not s.observe(0.0, "fp", pending, [], 1, Disruption(1, ("nc-1",), pass_mark=1))
    assert not s.observe(1.0, "fp", pending, [], 2, Disruption(1, ("nc-1",), pass_mark=1))
    assert not s.observe(QUIET_SECONDS, "fp", pending, [], 2, Disruption(1, ("nc-1",), pass_mark=1)) and s.wants_pass


def test_a_draining_nodes_terminating_pod_holds_the_run_until_it_is_stuck():
    """core's drain waits on a terminating pod a minute past its deletionTimestamp (IsStuckTerminating), then
    requeues within a second and goes on: the run is held that long, for pods of draining Nodes only, not for a
    mirror pod or one that tolerates the disrupted taint (IsDrainable)."""
    from harness.loop.lifecycle.nodetermination import rfc3339
    from harness.runner.engines.real.outcome.settle import drain_waits
    now = 1_800_000_000.0
    nodes = [{"metadata": {"name": "draining", "deletionTimestamp": rfc3339(now - 5)}}, {"metadata": {"name": "up"}}]

    def p(name, node, deleted, **extra):
        meta = {"name": name, **({"deletionTimestamp": rfc3339(deleted)} if deleted is not None else {})}
        meta.update(extra.pop("meta", {}))
        return {"metadata": meta, "spec": {"nodeName": node, **extra}}
    pods = [p("held", "draining", now - 10), p("stuck", "draining", now - 100), p("running", "draining", None),
            p("elsewhere", "up", now - 10),
            p("mirror", "draining", now - 10, meta={"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "draining"}]}),
            p("tolerant", "draining", now - 10, tolerations=[{"key": "karpenter.sh/disrupted", "operator": "Exists"}])]
    (wait,) = drain_waits(nodes, pods, now)
    assert wait[:2] == ("held", "draining") and abs(wait[2] - 51.0) < 1e-6
    # a pod whose preStop sleep still runs is the kubelet stand-in's to end: a step's `advance` reaches it
    sleeping = p("sleeping", "draining", now + 110, containers=[{"name": "c", "lifecycle": {"preStop": {"sleep": {"seconds": 60}}}}],
                 meta={"deletionGracePeriodSeconds": 120})
    assert [w[0] for w in drain_waits(nodes, pods + [sleeping], now)] == ["held"]


def test_a_run_waiting_on_a_timer_polls_idle():
    """Nothing shown for IDLE_SECONDS, nothing in flight, no pass asked for: the poll waits for a watched
    change instead of ticking (Settler.idle); a change, a NodeClaim in flight or a pass asked keeps it close."""
    from harness.runner.engines.real.outcome.settle import IDLE_SECONDS
    s = Settler(0.0)
    s.observe(0.1, "a", frozenset(), [], 1)
    assert not s.idle(1.0, [], float("-inf"))
    assert s.idle(0.1 + IDLE_SECONDS, [], float("-inf"))
    assert not s.idle(0.1 + IDLE_SECONDS, ["np-x"], float("-inf"))
    assert not s.idle(0.1 + IDLE_SECONDS, [], 1.0)
    s.observe(5.0, "b", frozenset(), [], 1)
    assert not s.idle(5.5, [], float("-inf"))
