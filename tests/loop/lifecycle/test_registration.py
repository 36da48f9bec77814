"""harness/loop/lifecycle/registration.py: kubelet, CSI node, cloud node controller, then Karpenter's
registration."""
from __future__ import annotations

from harness.loop.lifecycle.registration import (CSI_ZONE, UNINITIALIZED, UNREGISTERED, claim_taints,
                                                   dedupe_taints)
from harness.loop.scheduling.pods import Taint
from harness.model.labels.writers import CLOUD_NODE_CONTROLLER, KARPENTER_CORE, KUBELET, KUBELET_NODE_LABELS
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

TAINT = {"key": "dedicated", "value": "web", "effect": "NoSchedule"}
STARTUP = {"key": "agent-not-ready", "effect": "NoSchedule"}


def _launched(sim, **spec):
    sim.apply([nodeclass(), nodepool(**spec), pod("web", tolerations=[{"operator": "Exists"}])])
    sim.validate_nodepools()
    sim.provisioner.reconcile()
    sim.launch.reconcile()
    (c,) = sim.claims
    return c


def _taints(node):
    return [(t["key"], t["effect"]) for t in node["spec"].get("taints") or []]


def test_kubelet_registers_then_csi_and_cloud_node_controller_write(embedded):
    with simulation(embedded) as sim:
        c = _launched(sim, taints=[TAINT], startupTaints=[STARTUP])
        assert sim.registration.kubelet_register(c)
        assert c.node_name == c.launched.vm_name and not c.registered
        node = sim.cluster.get("Node", c.node_name)
        labels = node["metadata"]["labels"]
        # kubelet self-labels and --node-labels from the VM's custom data
        assert labels["kubernetes.io/hostname"] == c.node_name
        nr = sim.nodes[c.node_name]
        assert nr.kubelet_node_labels and set(nr.kubelet_node_labels) <= set(labels)
        # CSI node: the zone of a zonal VM
        assert labels[CSI_ZONE] == ("" if c.launched.zone in ("0", "") else c.launched.zone)
        # cloud node controller: providerID, region label, uninitialized taint lifted
        assert node["spec"]["providerID"] == c.launched.provider_id
        assert labels["topology.kubernetes.io/region"] == "southcentralus"
        assert (UNINITIALIZED.key, UNINITIALIZED.effect) not in _taints(node)
        assert ("dedicated", "NoSchedule") in _taints(node) and ("agent-not-ready", "NoSchedule") in _taints(node)
        assert (UNREGISTERED.key, UNREGISTERED.effect) in _taints(node)
        writers = {w.writer for ws in nr.provenance.values() for w in ws}
        assert {KUBELET, KUBELET_NODE_LABELS, CLOUD_NODE_CONTROLLER} <= writers


def test_karpenter_registration_syncs_the_nodeclaim_onto_the_node(embedded):
    with simulation(embedded) as sim:
        c = _launched(sim, taints=[TAINT])
        sim.registration.kubelet_register(c)
        assert sim.registration.register(c)
        node = sim.cluster.get("Node", c.node_name)
        meta = node["metadata"]
        assert meta["labels"]["karpenter.sh/registered"] == "true"
        assert meta["labels"]["karpenter.sh/nodepool"] == "default"
        assert "karpenter.sh/termination" in meta["finalizers"]
        assert meta["ownerReferences"][0]["name"] == c.result.name
        assert meta["annotations"]["karpenter.sh/nodepool-hash-version"] == "v3"
        assert (UNREGISTERED.key, UNREGISTERED.effect) not in _taints(node)
        assert "node.kubernetes.io/not-ready" not in [k for k, _ in _taints(node)]
        assert _taints(node).count(("dedicated", "NoSchedule")) == 1       # merged, not doubled
        assert node["status"]["conditions"][0]["type"] == "Ready"
        nr = sim.nodes[c.node_name]
        assert c.registered and nr.registered
        assert nr.writers("karpenter.sh/registered") == [KARPENTER_CORE]     # labels are read at the end
        assert nr.nodeclaim_requirements == c.obj["spec"]["requirements"]


def test_registration_waits_for_the_node(embedded):
    with simulation(embedded) as sim:
        c = _launched(sim)
        c.node_name = c.launched.vm_name               # as if the kubelet had registered, but no Node
        assert not sim.registration.register(c)
        assert not c.registered


def test_a_kubelet_refusal_marks_the_claim_refused(embedded, monkeypatch):
    with simulation(embedded) as sim:
        c = _launched(sim)
        monkeypatch.setattr(sim.cluster, "register_kubelet", lambda *a: "unknown 'kubernetes.io' label")
        assert sim.registration.kubelet_register(c)
        assert c.refused and c.node_name is None
        assert sim.nodes[c.launched.vm_name].kubelet_refused == "unknown 'kubernetes.io' label"


def test_claim_taints_then_startup_taints_deduped_by_key_and_effect():
    nc = {"spec": {"taints": [TAINT], "startupTaints": [STARTUP, {**TAINT, "value": "other"}]}}
    taints = claim_taints(nc)
    assert [t.key for t in taints] == ["dedicated", "agent-not-ready", "dedicated"]
    assert dedupe_taints(taints) == [Taint("dedicated", "web", "NoSchedule"), Taint("agent-not-ready", "", "NoSchedule")]


def test_the_node_reports_the_machines_memory_not_karpenters_estimate(embedded):
    """The kubelet finds the SKU's MemoryGB; Karpenter's instance type subtracts the provider's
    VMMemoryOverheadPercent from it (instancetype.go CalculateMemoryWithoutOverhead), so the Node's
    allocatable is larger than the instance type's: the real engine's stand-in kubelet reports the same."""
    from fakeazure.catalog import capability
    from harness.model.values.resources import parse_resource
    with simulation(embedded) as sim:
        c = _launched(sim)
        sim.registration.kubelet_register(c)
        node = sim.cluster.get("Node", c.node_name)
        it = c.launched.instance_type
        machine = int(float(capability(it.sku, "MemoryGB", "0")) * 1024 ** 3)
        assert parse_resource("memory", node["status"]["capacity"]["memory"]) == machine
        reserved = it.overhead.total()["memory"]
        assert parse_resource("memory", node["status"]["allocatable"]["memory"]) == machine - reserved
        assert machine - reserved > it.allocatable()["memory"]
        assert node["status"]["allocatable"]["pods"] == str(it.capacity["pods"])
