"""harness/loop/kube/kubelet.py and LoopState.terminate_pod: a graceful delete ends when the kubelet has
stopped the pod's containers (the end-to-end pin is scenarios/loop/prestop-sleep.scenario.yaml)."""
from __future__ import annotations

from tests.loop.loopkit import launched, pod


def _bound(sim, *pods):
    claim = launched(sim, *pods)
    for _ in range(6):
        sim._lifecycle()
        sim.kube_scheduler.reconcile()
    assert all(sim.state.result.pods[f"default/{p['metadata']['name']}"].node == claim.node_name for p in pods)
    return claim


def _sleepy(name, seconds, grace):
    p = pod(name, terminationGracePeriodSeconds=grace)
    p["spec"]["containers"][0]["lifecycle"] = {"preStop": {"sleep": {"seconds": seconds}}}
    return p


def test_a_pod_without_a_prestop_sleep_is_gone_at_once(embedded):
    from tests.loop.loopkit import simulation
    with simulation(embedded) as sim:
        _bound(sim, pod("quick"))
        sim.state.terminate_pod("default/quick", "deleted")
        assert sim.state.result.pods["default/quick"].state == "deleted"
        assert "default/quick" not in sim.state.pod_views and not sim.state.terminating


def test_a_prestop_sleep_holds_the_pod_until_the_kubelet_stops_it(embedded):
    from tests.loop.loopkit import simulation
    with simulation(embedded) as sim:
        s = sim.state
        _bound(sim, _sleepy("slow", 60, 120))
        start = s.clock.now()
        s.terminate_pod("default/slow", "deleted")
        pv = s.pod_views["default/slow"]
        assert pv.obj["metadata"]["deletionGracePeriodSeconds"] == 120
        assert sim.kubelet.next_stop() == int(start) + 60
        s.clock.advance(59)
        assert not sim.kubelet.reconcile() and "default/slow" in s.pod_views
        s.clock.advance(1)
        assert sim.kubelet.reconcile()
        pr = s.result.pods["default/slow"]
        assert (pr.state, pr.reason, pr.at["terminating"]) == ("deleted", "deleted", start)
        assert sim.kubelet.next_stop() is None


def test_a_second_delete_only_shortens_the_grace_period(embedded):
    from tests.loop.loopkit import simulation
    with simulation(embedded) as sim:
        s = sim.state
        _bound(sim, _sleepy("slow", 600, 600))
        start = int(s.clock.now())
        s.terminate_pod("default/slow", "deleted")
        s.terminate_pod("default/slow", "again", grace=900)          # longer: the API server keeps the first
        assert s.pod_views["default/slow"].obj["metadata"]["deletionGracePeriodSeconds"] == 600
        s.clock.advance(10)
        s.terminate_pod("default/slow", "deadline", grace=50)     # counted from the first delete
        assert s.pod_views["default/slow"].obj["metadata"]["deletionGracePeriodSeconds"] == 50
        assert sim.kubelet.next_stop() == start + 50
        s.clock.advance(40)
        assert sim.kubelet.reconcile() and s.result.pods["default/slow"].reason == "deleted"
