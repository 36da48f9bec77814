"""harness/loop/lifecycle/initialization.py: startup taints lifted, initialized label, DaemonSet pods."""
from __future__ import annotations

from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

STARTUP = {"key": "agent-not-ready", "effect": "NoSchedule"}


def daemonset(name, **spec):
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": {"metadata": {"labels": {"ds": name}}, "spec": {**pod("x")["spec"], **spec}}}}


def _registered(sim, *extra, **spec):
    sim.apply([nodeclass(), nodepool(**spec), pod("web", tolerations=[{"operator": "Exists"}]), *extra])
    sim.validate_nodepools()
    sim.provisioner.reconcile()
    sim.launch.reconcile()
    (c,) = sim.claims
    sim.registration.kubelet_register(c)
    sim.registration.register(c)
    return c


def test_initialization_lifts_startup_taints_and_labels_the_node(embedded):
    with simulation(embedded) as sim:
        c = _registered(sim, taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}],
                        startupTaints=[STARTUP])
        assert sim.initialization.initialize(c)
        node = sim.cluster.get("Node", c.node_name)
        keys = [t["key"] for t in node["spec"].get("taints") or []]
        assert "agent-not-ready" not in keys and "dedicated" in keys
        assert node["metadata"]["labels"]["karpenter.sh/initialized"] == "true"
        assert c.initialized and sim.nodes[c.node_name].initialized


def test_daemonset_pods_go_to_nodes_they_tolerate_and_match(embedded):
    tolerant = daemonset("tolerant", tolerations=[{"operator": "Exists"}])
    intolerant = daemonset("intolerant")
    elsewhere = daemonset("elsewhere", tolerations=[{"operator": "Exists"}],
                          nodeSelector={"kubernetes.io/arch": "arm64"})
    with simulation(embedded) as sim:
        c = _registered(sim, tolerant, intolerant, elsewhere,
                        taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}])
        sim.initialization.initialize(c)
        ds_pods = {k: pr for k, pr in sim.result.pods.items() if pr.owner_kind == "DaemonSet"}
        (key,) = ds_pods
        assert key == f"default/tolerant-{c.node_name[-5:]}"
        assert (ds_pods[key].node, ds_pods[key].state) == (c.node_name, "scheduled")
        assert sim.nodes[c.node_name].pods == [key]


def test_a_daemonset_pod_that_waited_for_the_node_to_be_schedulable_queues_behind_its_pending_pods(embedded):
    """A DaemonSet pod that tolerates every taint the Node registered with is made as it registers and bound
    first; one that does not is made once the Node is schedulable to it, behind the pods already pending in
    kube-scheduler's queue: it is left pending, pinned to the Node, for the loop's kube-scheduler."""
    tolerant = daemonset("tolerant", tolerations=[{"operator": "Exists"}])
    plain = daemonset("plain")
    with simulation(embedded) as sim:
        c = _registered(sim, tolerant, plain)
        sim.initialization.initialize(c)
        ds_pods = {k: pr for k, pr in sim.result.pods.items() if pr.owner_kind == "DaemonSet"}
        early, late = f"default/tolerant-{c.node_name[-5:]}", f"default/plain-{c.node_name[-5:]}"
        assert (ds_pods[early].node, ds_pods[early].state) == (c.node_name, "scheduled")
        assert ds_pods[late].node is None
        assert sim.nodes[c.node_name].pods == [early]
        pinned = sim.cluster.get("Pod", late.split("/")[1], "default")["spec"]["affinity"]["nodeAffinity"]
        assert pinned["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchFields"][0][
            "values"] == [c.node_name]
