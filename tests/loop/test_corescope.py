"""harness/loop/corescope.py: which core-behaviour scopes a run touched, and the run's coreNotices."""
from __future__ import annotations

from harness.loop.corescope import touched_scopes
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def test_a_plain_provisioning_run_touches_provisioning_and_consolidation_only(embedded):
    with simulation(embedded) as sim:
        sim.run([nodeclass(), nodepool(), pod("a")])
        touched = touched_scopes(sim.state)
    assert "provisioning" in touched
    assert not touched & {"drift", "termination", "pdb", "doNotDisruptDuration", "nodeLimits", "hostPorts"}


def test_annotations_limits_and_ports_are_scopes(embedded):
    np = nodepool()
    np["spec"]["limits"] = {"nodes": "3"}
    p = pod("a", containers=[{"name": "c", "image": "x", "ports": [{"containerPort": 80, "hostPort": 80}]}])
    p["metadata"]["annotations"] = {"karpenter.sh/do-not-disrupt": "3h"}
    with simulation(embedded) as sim:
        sim.run([nodeclass(), np, p])
        touched = touched_scopes(sim.state)
    assert {"nodeLimits", "doNotDisruptDuration", "hostPorts"} <= touched


ZONAL = [{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "zonal"},
          "provisioner": "disk.csi.azure.com", "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                            "values": ["eastus-1"]}]}]},
         {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
          "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "zonal",
                   "resources": {"requests": {"storage": "1Gi"}}}}]


def test_notices_name_the_release_core_and_only_what_was_touched(embedded):
    with_volume = pod("a", volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    with simulation(embedded, profile="v1.6.1") as sim:
        result = sim.run([nodeclass(), nodepool(), pod("a")])
    assert result.release["core"] == "v1.6.1"
    assert result.core_notices == []                 # nothing the run did differs at core v1.6.1
    with simulation(embedded, profile="v1.6.1") as sim:
        # every volume switch is modeled at core v1.6.1 (the zone is injected into the pod's affinity)
        assert sim.run([nodeclass(), nodepool(), *ZONAL, with_volume]).core_notices == []
    prefers = pod("b", affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "preference": {"matchExpressions": [{"key": "team", "operator": "In", "values": ["x"]}]}}]}})
    with simulation(embedded, profile="v0.7.5") as sim:
        plain = sim.run([nodeclass(), nodepool(), pod("a")]).core_notices
    with simulation(embedded, profile="v0.7.5") as sim:
        preferring = sim.run([nodeclass(), nodepool(), prefers]).core_notices
    # relaxPreferencesPerPod differs at core v1.0.6 and is implemented: touched or not, no notice
    assert not any("relaxPreferencesPerPod" in n for n in plain + preferring)
