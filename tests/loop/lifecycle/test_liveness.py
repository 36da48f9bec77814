"""harness/loop/lifecycle/liveness.py: the launch and registration timeouts and the next deadline."""
from __future__ import annotations

from harness.loop.azure.provider import LaunchFailure
from harness.loop.lifecycle.liveness import LAUNCH_TIMEOUT, REGISTRATION_TIMEOUT
from tests.loop.loopkit import launched, nodeclass, nodepool, pod, simulation


def test_an_unregistered_claim_is_deleted_at_the_registration_timeout(embedded):
    with simulation(embedded) as sim:
        c = launched(sim, pod("web"))
        assert sim.liveness.next_deadline() == c.launched_at + REGISTRATION_TIMEOUT
        sim.clock.advance(REGISTRATION_TIMEOUT - 1)
        assert not sim.liveness.reconcile() and not c.done
        sim.clock.advance(1)
        assert sim.liveness.reconcile()
        assert (c.done, c.result.deleted) == (True, "registration_timeout")
        assert sim.liveness.next_deadline() is None


def test_a_registered_claim_has_no_deadline(embedded):
    with simulation(embedded) as sim:
        c = launched(sim, pod("web"))
        sim.registration.kubelet_register(c)
        sim.registration.register(c)
        sim.clock.advance(REGISTRATION_TIMEOUT * 2)
        assert not sim.liveness.reconcile() and not c.done
        assert sim.liveness.next_deadline() is None


def test_an_unlaunched_claims_deadline_is_the_launch_timeout(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        sim.provisioner.reconcile()
        (c,) = sim.claims
        assert sim.liveness.next_deadline() == c.created_at + LAUNCH_TIMEOUT
        assert not sim.liveness.reconcile()                 # liveness leaves unlaunched claims to launch


def test_before_core_v1_7_an_unlaunched_claim_waits_for_the_registration_ttl(embedded):
    """core-behaviour.yaml launchTimeout false (provider v1.6.8, core v1.6.2): no launch timeout; the 15-minute
    registration TTL counts from creation, and both deletions are counted as `liveness`."""
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")], profile="v1.6.8") as sim:
        sim.provisioner.reconcile()
        (c,) = sim.claims
        assert sim.liveness.next_deadline() == c.created_at + REGISTRATION_TIMEOUT
        sim.clock.advance(LAUNCH_TIMEOUT + 1)
        sim.provider.create = lambda *a, **kw: LaunchFailure("Unhandled", "CreateInstanceFailed", "denied")
        assert sim.launch.reconcile() and not c.done                 # retried, not timed out
        sim.clock.advance(REGISTRATION_TIMEOUT - LAUNCH_TIMEOUT)
        assert sim.launch.reconcile()
        assert (c.done, c.result.deleted) == (True, "liveness")


def test_before_core_v1_7_a_registration_timeout_is_counted_as_liveness(embedded):
    with simulation(embedded, profile="v1.6.8") as sim:
        c = launched(sim, pod("web"))
        sim.clock.advance(REGISTRATION_TIMEOUT)
        assert sim.liveness.reconcile()
        assert (c.done, c.result.deleted) == (True, "liveness")
