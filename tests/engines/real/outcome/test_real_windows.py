"""The disruption windows the real engine reads from the objects' own timestamps
(harness/runner/engines/real/outcome/windows.py), the settle's stop before the first one still open at a
step's instant, and the phase loop taking such a step as not applicable rather than a verdict."""
from __future__ import annotations

import datetime as dt

from harness.runner.engines.real.outcome import windows
from harness.runner.engines.real.engine import WINDOW_MARGIN, _cut_at

T0 = dt.datetime(2026, 11, 26, 12, 0, 0, tzinfo=dt.timezone.utc).timestamp()


def _ts(seconds: float) -> str:
    return dt.datetime.fromtimestamp(T0 + seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _claim(name, created=0, expire=None, initialized=None, pod_event=None, consolidatable=False, deleting=None,
           grace=None, node=None, pool="default"):
    conds = []
    if initialized is not None:
        conds.append({"type": "Initialized", "status": "True", "lastTransitionTime": _ts(initialized)})
    if consolidatable:
        conds.append({"type": "Consolidatable", "status": "True", "lastTransitionTime": _ts(initialized or 0)})
    meta = {"name": name, "creationTimestamp": _ts(created), "labels": {"karpenter.sh/nodepool": pool}}
    if deleting is not None:
        meta["deletionTimestamp"] = _ts(deleting)
    status = {"conditions": conds, **({"nodeName": node} if node else {}),
              **({"lastPodEventTime": _ts(pod_event)} if pod_event is not None else {})}
    spec = {**({"expireAfter": expire} if expire else {}), **({"terminationGracePeriod": grace} if grace else {})}
    return {"metadata": meta, "spec": spec, "status": status}


def _pool(consolidate_after):
    return {"metadata": {"name": "default"}, "spec": {"disruption": {"consolidateAfter": consolidate_after}}}


def _pod(name, node, dnd, started):
    return {"metadata": {"name": name, "annotations": {"karpenter.sh/do-not-disrupt": dnd}},
            "spec": {"nodeName": node}, "status": {"startTime": _ts(started)}}


def test_each_window_from_the_objects_own_timestamps():
    """expireAfter from creation; consolidateAfter from the last pod event, else the Initialized transition;
    a duration-valued do-not-disrupt from the pod's start; terminationGracePeriod from the deletion."""
    claims = [_claim("a", created=0, expire="200s", initialized=5, node="n-a"),
              _claim("b", created=0, initialized=5, pod_event=20, node="n-b"),
              _claim("c", created=0, deleting=30, grace="90s", expire="1s")]
    pods = [_pod("p", "n-a", "3m", 10), _pod("forever", "n-b", "true", 0), _pod("elsewhere", "gone", "1m", 0)]
    got = [(w.at - T0, w.what) for w in windows.windows(claims, [_pool("1m")], pods)]
    assert got == [(65.0, "NodeClaim a's consolidateAfter"), (80.0, "NodeClaim b's consolidateAfter"),
                   (120.0, "NodeClaim c's terminationGracePeriod"), (190.0, "pod p's do-not-disrupt: 3m"),
                   (200.0, "NodeClaim a's expireAfter")]


def test_a_draining_nodes_pods_are_deleted_ahead_of_its_termination_time():
    """The termination-timestamp annotation, when core has set it, is the node's deadline; each pod on it
    is deleted its terminationGracePeriodSeconds (30 s by default) before (DeleteExpiringPods)."""
    nc = _claim("c", deleting=30, grace="90s", node="n-c")
    nc["metadata"]["annotations"] = {"karpenter.sh/nodeclaim-termination-timestamp": _ts(125)}
    pods = [{"metadata": {"name": "slow"}, "spec": {"nodeName": "n-c", "terminationGracePeriodSeconds": 10}},
            {"metadata": {"name": "default"}, "spec": {"nodeName": "n-c"}}]
    got = [(w.at - T0, w.what) for w in windows.windows([nc], [], pods)]
    assert got == [(95.0, "pod default's deletion ahead of its node's terminationGracePeriod"),
                   (115.0, "pod slow's deletion ahead of its node's terminationGracePeriod"),
                   (125.0, "NodeClaim c's terminationGracePeriod")]


def test_a_terminating_pods_prestop_sleep_ends_a_window():
    """A terminating pod on a Node stops when its preStop sleep ends, at the latest at its deletionTimestamp
    (harness/model/kube/podtermination.py stops_at): the simulation's kubelet timer. Without a sleep it stopped at once."""
    def pod(name, sleep=None, node="n-a"):
        c = {"name": "c", **({"lifecycle": {"preStop": {"sleep": {"seconds": sleep}}}} if sleep else {})}
        return {"metadata": {"name": name, "deletionTimestamp": _ts(130), "deletionGracePeriodSeconds": 120},
                "spec": {"nodeName": node, "containers": [c]}}
    got = [(w.at - T0, w.what) for w in windows.windows([], [], [pod("slow", 60), pod("long", 600), pod("quick"),
                                                                pod("unbound", 60, node=None)])]
    assert got == [(70.0, "pod slow's preStop sleep"), (130.0, "pod long's preStop sleep")]


def test_no_window_where_none_is_open():
    """Never and unset durations, a NodeClaim already Consolidatable, an uninitialized one: no window."""
    claims = [_claim("a", expire="Never", initialized=5, consolidatable=True), _claim("b")]
    assert windows.windows(claims, [_pool("Never")], []) == []
    assert windows.windows(claims[:1], [_pool("30s")], []) == []


def test_the_first_window_still_open_at_the_instant():
    """`expireAfter: 200s`, steps `advance: 100s` then `advance: 99s`: at the second step's instant the
    expiration is still 1 s away, and the settle stops half a second before it."""
    ws = windows.windows([_claim("a", created=0, expire="200s")], [], [])
    assert windows.next_after(ws, T0 + 201) is None
    w = windows.next_after(ws, T0 + 199)
    assert w is not None and w.render(T0 + 199) == "NodeClaim a's expireAfter closes +1.0s from the step's instant"
    instant_monotonic = 1000.0
    assert _cut_at((instant_monotonic, T0 + 199, w)) == instant_monotonic + 1.0 - WINDOW_MARGIN


def test_an_unjudged_step_is_not_applicable_and_ends_the_run():
    """The phase loop takes a settle the engine stopped at a window as no verdict: the step's `expect` is
    not applicable (named), its state is not the run's last, and no later step builds on it."""
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines.base import execute
    from harness.scenario.load import load_scenarios_text

    class Engine:
        name = "stub"

        def skip_reason(self, *a, **k):
            return None

        def start(self, scenario, profile, cluster, outcome, **options):
            return Run()

    class Run:
        in_flight = ()
        unjudged = None

        def __init__(self):
            self.settles = 0

        def apply(self, manifests):
            pass

        def settle(self, until=None):
            from harness.loop.result import RunResult
            self.settles += 1
            self.unjudged = "a window closed" if self.settles == 2 else None
            return RunResult("s", "upstream", "embedded", 1)

        def play(self, step, manifests):
            return None

        def read_back(self, result, where, outcome):
            return []

        def applicable(self, expect, root):
            return {}, []

        def finish(self, outcome, why):
            pass

        def close(self, outcome):
            pass

    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
manifests: []
steps:
- advance: 100s
  expect: {nodeCount: 5}
- advance: 99s
  expect: {nodeCount: 7}
"""
    scenario = load_scenarios_text(text, "s.scenario.yaml")[0]
    cluster = EmbeddedBackend().start()
    try:
        out = execute(Engine(), scenario, "upstream", cluster)
    finally:
        cluster.close()
    assert out.mismatches == [] and out.step_results == []
    assert out.skipped_steps == ["steps[0]: a window closed"]
    assert [n.path for n in out.not_applicable] == ["steps[0].expect"]


def test_a_v1beta1_claim_expires_by_its_nodepool_and_consolidates_after_it_is_empty():
    """core v0.36 (karpenter.sh/v1beta1): expireAfter is the NodePool's spec.disruption one, and a WhenEmpty
    NodePool's consolidateAfter counts from the Empty condition's transition."""
    nc = _claim("a", created=0, initialized=5, node="n-a")
    nc["apiVersion"] = "karpenter.sh/v1beta1"
    pool = {"metadata": {"name": "default"}, "spec": {"disruption": {
        "consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s", "expireAfter": "300s"}}}
    assert [(w.at - T0, w.what) for w in windows.windows([nc], [pool], [])] == [(300.0, "NodeClaim a's expireAfter")]
    nc["status"]["conditions"].append({"type": "Empty", "status": "True", "lastTransitionTime": _ts(40)})
    assert [(w.at - T0, w.what) for w in windows.windows([nc], [pool], [])] == [
        (70.0, "NodeClaim a's consolidateAfter"), (300.0, "NodeClaim a's expireAfter")]


def test_an_advance_stops_where_a_budget_window_changes_an_allowance_or_a_do_not_disrupt_duration_ends():
    """clock_stops: the instants a jump of the run's clock stops at, a second past each (STOP_SLACK), as the
    simulation's advance fires its timers: disruption allowed from 04:00 to 04:10 (UTC of T0's day) over one
    initialized NodeClaim, and a pod protected for 10 minutes from its start."""
    day = T0 - T0 % 86400
    pool = {"metadata": {"name": "default"},
            "spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "10 4 * * *", "duration": "23h50m"}]}}}
    claim = _claim("a", initialized=0, node="n1")
    at = windows.clock_stops([claim], [pool], [], day + 3.5 * 3600, day + 4.5 * 3600)
    assert at == day + 4 * 3600 + windows.STOP_SLACK
    assert windows.clock_stops([claim], [pool], [], day + 4 * 3600 + 1, day + 4.5 * 3600) == day + 4 * 3600 + 601
    assert windows.clock_stops([_claim("b", node="n1")], [pool], [], day + 3.5 * 3600, day + 4.5 * 3600) is None
    pod = _pod("p", "n1", "10m", 100)
    assert windows.clock_stops([claim], [], [pod], T0, T0 + 3600) == T0 + 700 + windows.STOP_SLACK
    assert windows.clock_stops([claim], [], [_pod("q", "elsewhere", "10m", 100)], T0, T0 + 3600) is None
