"""harness/loop/provisioning/staticcapacity.py: core's static provisioning and deprovisioning."""
from __future__ import annotations

from harness.loop.provisioning.staticcapacity import StaticCapacity, static_drift_notice
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def _static(replicas, **spec):
    np = nodepool("static")
    np["spec"]["replicas"] = replicas
    np["spec"].update(spec)
    return np


def _gate(sim, on=True):
    sim.state.cfg.feature_gates = {"StaticCapacity": on}


def _live(sim):
    return [c for c in sim.claims if not c.done and c.dis.deleting_since is None]


def test_replicas_make_nodeclaims_without_pods_and_no_instance_type_list(embedded):
    with simulation(embedded, [nodeclass(), _static(2)]) as sim:
        _gate(sim)
        assert sim.static.reconcile()
        assert len(sim.claims) == 2 and all(c.template.name == "static" for c in sim.claims)
        reqs = {r["key"] for r in sim.claims[0].obj["spec"]["requirements"]}
        assert "node.kubernetes.io/instance-type" not in reqs     # IsStaticNodeClaim: the provider picks
        assert not sim.static.reconcile()                          # two active: nothing more
        assert sim.launch.reconcile() and all(c.launched for c in sim.claims)


def test_the_gate_off_or_a_core_without_the_controllers_makes_nothing(embedded):
    with simulation(embedded, [nodeclass(), _static(2)]) as sim:
        _gate(sim, on=False)
        assert not sim.static.reconcile() and sim.claims == []
    with simulation(embedded, [nodeclass(), _static(2)], profile="v1.7.2") as sim:
        _gate(sim)
        # core v1.7.1's NodePool CRD has no replicas: the API server pruned it, the NodePool is dynamic
        assert "replicas" not in sim.cluster.get("NodePool", "static")["spec"]
        assert not sim.static.reconcile() and sim.claims == []


def test_limits_nodes_caps_the_count_against_every_nodeclaim_of_the_pool(embedded):
    with simulation(embedded, [nodeclass(), _static(3, limits={"nodes": "2"})]) as sim:
        _gate(sim)
        assert sim.static.reconcile()
        assert len(sim.claims) == 2
        assert not sim.static.reconcile()                          # nodepool node limit reached


def test_lower_replicas_delete_the_unlaunched_then_the_empty_node(embedded):
    with simulation(embedded, [nodeclass(), _static(2), pod("a")]) as sim:
        _gate(sim)
        sim.converge()
        busy = next(c for c in sim.claims if sim.state.pods_on(c.node_name))
        sim.apply([_static(1)])
        sim.converge()
        assert [c.result.name for c in _live(sim)] == [busy.result.name]
        assert sim.result.pods["default/a"].node == busy.node_name


def test_static_nodes_are_never_consolidatable(embedded):
    with simulation(embedded, [nodeclass(), _static(1)]) as sim:
        _gate(sim)
        sim.converge()
        sim.clock.advance(3600)
        sim.converge()
        (c,) = _live(sim)
        assert c.dis.consolidatable_since is None


def test_a_drifted_static_node_is_said_not_simulated(embedded):
    with simulation(embedded, [nodeclass(), _static(1)]) as sim:
        _gate(sim)
        sim.converge()
        (c,) = _live(sim)
        assert static_drift_notice(sim.state) == []
        c.dis.drifted = "NodePoolDrifted"
        (text,) = static_drift_notice(sim.state)
        assert text.startswith(f"static drift is not simulated: {c.result.name} of a static NodePool drifted")


def test_the_controller_is_one_per_simulation(embedded):
    with simulation(embedded, [nodeclass()]) as sim:
        assert isinstance(sim.static, StaticCapacity) and not sim.static.enabled()


def test_the_record_says_why_each_static_nodeclaim_came_and_went(embedded):
    with simulation(embedded) as sim:
        _gate(sim)
        result = sim.run([nodeclass(), _static(2)])
        made = [d for d in result.decisions if d.action == "static-nodeclaim-created"]
        assert len(made) == 2 and all(d.controller == "provisioner" for d in made)
        assert made[0].reason.startswith("static NodePool static: 0 of 2 replicas (\"provisioning nodeclaims to "
                                         "satisfy replica count\")")
        sim.apply([_static(1)])
        result = sim.converge()
        (gone,) = [d for d in result.decisions if d.action == "nodeclaim-deleting"]
        assert "static NodePool static has 2 NodeClaims for 1 replicas" in gone.reason
