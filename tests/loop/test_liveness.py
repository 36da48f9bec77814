"""harness/loop/controllers/liveness.py: the registration timeout and the next deadline."""
from __future__ import annotations

from harness.loop.controllers.launch import LAUNCH_TIMEOUT
from harness.loop.controllers.liveness import REGISTRATION_TIMEOUT
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
