"""harness/loop/lifecycle/inplaceupdate.py: an AKS machine's tags made current in place when its AKSNodeClass's
tags change (provider v1.14.0 pkg/controllers/nodeclaim/inplaceupdate), and nothing done otherwise."""
from __future__ import annotations

import copy

from harness.loop.azure.machinetags import INPLACE_UPDATE_HASH
from harness.loop.azure.provider import request_log
from tests.loop.loopkit import MACHINE_API, nodeclass, nodepool, pod, simulation


def _registered(sim):
    sim.apply([nodeclass(), nodepool(), pod("app")])
    sim.validate_nodepools()
    sim.provisioner.reconcile()
    sim.launch.reconcile()
    (c,) = sim.claims
    sim.registration.kubelet_register(c)
    sim.registration.register(c)
    return c


def _machine_updates(sim):
    return [q for q in request_log(sim.fake) if q["operation"] == "machine.update"]


def _retagged(tags):
    nc = copy.deepcopy(nodeclass())
    nc["spec"]["tags"] = tags
    return nc


def test_a_tags_change_puts_the_machine_back_once_and_moves_the_hash(embedded):
    with simulation(embedded, scenario=MACHINE_API) as sim:
        c = _registered(sim)
        first = c.obj["metadata"]["annotations"][INPLACE_UPDATE_HASH]
        assert not sim.inplace.reconcile() and not _machine_updates(sim)      # stamped at Create: current
        sim.apply([_retagged({"team": "b"})])
        assert sim.inplace.reconcile()
        (put,) = _machine_updates(sim)
        assert put["body"]["properties"]["tags"]["team"] == "b"
        assert c.obj["metadata"]["annotations"][INPLACE_UPDATE_HASH] != first
        assert not sim.inplace.reconcile() and len(_machine_updates(sim)) == 1


def test_a_vm_node_is_left_alone(embedded):
    with simulation(embedded) as sim:
        c = _registered(sim)
        assert INPLACE_UPDATE_HASH not in (c.obj["metadata"].get("annotations") or {})
        sim.apply([_retagged({"team": "b"})])
        assert not sim.inplace.reconcile()
