"""The real engine's customer-state helpers (harness/runner/real/existing.py) that need no live
controller: kubectl-apply updates of existing objects, and the NodeClaim a managed existing node
starts from. The live paths run in the real-engine scenarios (scenarios/upstream-core with
given.existingNodes, scenarios/loop/in-place-updates)."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines.real.existing import apply_object, managed_nodeclaim, vm_name_of


@pytest.fixture()
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _pod(labels=None, cpu="100m"):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default", "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}]}}


def test_apply_creates_then_updates_a_pod_label_only(cluster):
    apply_object(cluster, _pod())
    stored = apply_object(cluster, _pod(labels={"app": "db"}))
    assert stored["metadata"]["labels"] == {"app": "db"}
    assert stored["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"


def test_apply_updates_a_deployment_spec(cluster):
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}}
    apply_object(cluster, dep)
    dep["spec"]["replicas"] = 5
    assert apply_object(cluster, dep)["spec"]["replicas"] == 5


def test_managed_nodeclaim_pins_the_entry_and_keeps_the_nodepools_template():
    np = {"metadata": {"name": "default", "uid": "u1"},
          "spec": {"template": {"metadata": {"labels": {"team": "a"}},
                                "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                                         "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                                                          {"key": "karpenter.sh/capacity-type", "operator": "In",
                                                           "values": ["spot", "on-demand"]}],
                                         "startupTaints": [{"key": "s", "effect": "NoSchedule"}]}}}}
    nc = managed_nodeclaim({"nodePool": "default", "instanceType": "Standard_D2s_v3", "zone": "eastus-1",
                            "capacityType": "on-demand"}, 0, np)
    reqs = {r["key"]: r["values"] for r in nc["spec"]["requirements"]}
    assert reqs == {"kubernetes.io/arch": ["amd64"], "node.kubernetes.io/instance-type": ["Standard_D2s_v3"],
                    "topology.kubernetes.io/zone": ["eastus-1"], "karpenter.sh/capacity-type": ["on-demand"]}
    assert nc["metadata"]["labels"] == {"team": "a", "karpenter.sh/nodepool": "default"}
    assert nc["metadata"]["ownerReferences"][0]["uid"] == "u1" and nc["spec"]["startupTaints"]
    assert vm_name_of(nc["metadata"]["name"]) == "aks-default-existing-0"
