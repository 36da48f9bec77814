"""harness/loop/kube/statefulsets.py: kube-controller-manager's StatefulSet controller in the loop -
ordinal names and claims, OrderedReady and Parallel, scale-down from the highest ordinal, the update strategies,
the claims' retention, adoption. scenarios/workloads/statefulsets.scenario.yaml and statefulset-updates pin the
end-to-end cases (a pod made again in its disk's zone)."""
from __future__ import annotations

import copy

import pytest

from harness.loop.kube.statefulsets import (POD_INDEX_LABEL, POD_NAME_LABEL, REVISION_LABEL, defaulted,
                                                   parent_and_ordinal)
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

ZONAL = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": {"name": "managed-csi", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
         "provisioner": "disk.csi.azure.com", "volumeBindingMode": "WaitForFirstConsumer"}


def statefulset(name="web", replicas=3, cpu="100m", claims=("data",), **spec) -> dict:
    tmpl = pod(name, cpu)
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name, "namespace": "default"},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": tmpl["spec"]},
                     "volumeClaimTemplates": [{"metadata": {"name": c}, "spec": {
                         "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
                         for c in claims], **spec}}


def live(sim, owner="web") -> dict[str, object]:
    return {pr.name: pr for k, pr in sim.result.pods.items() if pr.owner_name == owner and k in sim.pod_views}


def created(sim, owner="web") -> list[str]:
    """The set's SuccessfulCreate pod events, in order."""
    return [e["message"].split()[2] for e in sim.result.events
            if e["kind"] == "StatefulSet" and e["name"] == owner and e["message"].startswith("Create Pod")]


@pytest.mark.parametrize("name, want", [("web-0", ("web", 0)), ("my-db-12", ("my-db", 12)), ("web", ("", -1)),
                                        ("web-x", ("", -1)), ("web-1-2", ("web-1", 2))])
def test_parent_and_ordinal_is_the_controllers_regex(name, want):
    assert parent_and_ordinal(name) == want


def test_defaults_are_the_api_servers_and_max_unavailable_is_dropped():
    st = defaulted(statefulset(updateStrategy={"rollingUpdate": {"maxUnavailable": 2}}))["spec"]
    assert st["podManagementPolicy"] == "OrderedReady"
    assert st["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert st["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    # a RollingUpdate type given without rollingUpdate keeps none (SetDefaults_StatefulSet fills it only for "")
    assert defaulted(statefulset(updateStrategy={"type": "RollingUpdate"}))["spec"]["updateStrategy"] == \
        {"type": "RollingUpdate"}
    assert defaulted(statefulset(updateStrategy={"type": "OnDelete"}))["spec"]["updateStrategy"] == {"type": "OnDelete"}


def test_ordered_ready_makes_the_next_ordinal_once_the_one_before_runs(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, statefulset()]) as sim:
        assert list(live(sim)) == ["web-0"]          # the apply: ordinal 0 only
        sim.converge()
        pods = live(sim)
        assert sorted(pods) == ["web-0", "web-1", "web-2"] and all(p.node for p in pods.values())
        assert created(sim) == ["web-0", "web-1", "web-2"]
        assert pods["web-0"].at["bound"] <= pods["web-1"].at["created"] <= pods["web-1"].at["bound"] \
            <= pods["web-2"].at["created"]
        obj = sim.pod_views["default/web-1"].obj
        assert obj["metadata"]["labels"][POD_NAME_LABEL] == "web-1" and obj["metadata"]["labels"][POD_INDEX_LABEL] == "1"
        assert obj["spec"]["hostname"] == "web-1" and obj["spec"]["subdomain"] == "web"
        assert obj["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-1"}}
        assert obj["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
        # each claim got the default class and a volume in its pod's zone
        pvc = sim.state.volumes.pvcs[("default", "data-web-1")]
        assert pvc["spec"]["storageClassName"] == "managed-csi" and pvc["spec"]["volumeName"]
        assert pvc["metadata"]["labels"] == {"app": "web"}


def test_parallel_makes_every_ordinal_at_once(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, statefulset(podManagementPolicy="Parallel")]) as sim:
        assert sorted(live(sim)) == ["web-0", "web-1", "web-2"]


def test_an_evicted_pod_comes_back_with_its_name_and_claim_in_its_volumes_zone(embedded):
    from harness.loop.lifecycle.nodetermination import evict_pod
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, statefulset()]) as sim:
        sim.converge()
        volume = sim.state.volumes.pvcs[("default", "data-web-1")]["spec"]["volumeName"]
        zone = sim.state.volumes.pvs[volume]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
            "matchExpressions"][0]["values"][0]
        evict_pod(sim.state, "default/web-1", "evicted")
        assert "default/web-1" not in sim.pod_views          # gone; its controller makes it at its next sync
        sim.converge()
        pr = sim.result.pods["default/web-1"]
        assert pr.node and sim.state.volumes.pvcs[("default", "data-web-1")]["spec"]["volumeName"] == volume
        assert next(n for n in sim.result.nodes if n.name == pr.node).zone == zone
        assert created(sim).count("web-1") == 2


def test_scale_down_removes_the_highest_ordinal_first_and_retains_its_claim(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, statefulset()]) as sim:
        sim.converge()
        sim.kubectl.scale("web", 1, kind="StatefulSet")
        deleted = [e["message"].split()[2] for e in sim.result.events if e["reason"] == "SuccessfulDelete"]
        assert deleted == ["web-2"]                       # OrderedReady: one at a time
        sim.converge()
        deleted = [e["message"].split()[2] for e in sim.result.events if e["reason"] == "SuccessfulDelete"]
        assert deleted == ["web-2", "web-1"] and list(live(sim)) == ["web-0"]
        assert ("default", "data-web-2") in sim.state.volumes.pvcs       # whenScaled: Retain


def test_when_scaled_delete_gives_the_claim_to_the_pod_and_the_collector_deletes_both(embedded):
    st = statefulset(persistentVolumeClaimRetentionPolicy={"whenScaled": "Delete"})
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, st]) as sim:
        sim.converge()
        volume = sim.state.volumes.pvcs[("default", "data-web-2")]["spec"]["volumeName"]
        sim.kubectl.scale("web", 2, kind="StatefulSet")
        sim.converge()
        assert ("default", "data-web-2") not in sim.state.volumes.pvcs
        assert volume not in sim.state.volumes.pvs                   # reclaimPolicy Delete (the default)
        assert ("default", "data-web-1") in sim.state.volumes.pvcs   # in range: kept


@pytest.mark.parametrize("when_deleted, kept", [("Retain", True), ("Delete", False)])
def test_deleting_the_set_deletes_its_pods_and_the_claims_it_owns(embedded, when_deleted, kept):
    st = statefulset(persistentVolumeClaimRetentionPolicy={"whenDeleted": when_deleted})
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, st]) as sim:
        sim.converge()
        sim.workloads.delete("StatefulSet", "web", "default")
        sim.converge()
        assert live(sim) == {}
        assert (("default", "data-web-0") in sim.state.volumes.pvcs) is kept
        assert embedded.get("StatefulSet", "web", "default") is None


def test_rolling_update_replaces_from_the_highest_ordinal_down_to_the_partition(embedded):
    st = statefulset(updateStrategy={"rollingUpdate": {"partition": 1}})
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, st]) as sim:
        sim.converge()
        old = {n: p.labels[REVISION_LABEL] for n, p in live(sim).items()}
        new = copy.deepcopy(st)
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
        sim.workloads.update(new)
        sim.converge()
        deleted = [e["message"].split()[2] for e in sim.result.events if e["reason"] == "SuccessfulDelete"]
        assert deleted == ["web-2", "web-1"]
        now = {n: p.labels[REVISION_LABEL] for n, p in live(sim).items()}
        assert now["web-0"] == old["web-0"] and now["web-1"] == now["web-2"] != old["web-2"]


def test_on_delete_replaces_nothing_until_a_pod_is_deleted(embedded):
    st = statefulset(updateStrategy={"type": "OnDelete"})
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, st]) as sim:
        sim.converge()
        old = {n: p.labels[REVISION_LABEL] for n, p in live(sim).items()}
        new = copy.deepcopy(st)
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
        sim.workloads.update(new)
        sim.converge()
        assert {n: p.labels[REVISION_LABEL] for n, p in live(sim).items()} == old
        sim.workloads.delete("Pod", "web-1", "default")
        sim.converge()
        now = {n: p.labels[REVISION_LABEL] for n, p in live(sim).items()}
        assert now["web-1"] != old["web-1"] and now["web-0"] == old["web-0"] and now["web-2"] == old["web-2"]


def test_a_seeded_pod_is_adopted_with_its_controller_reference(embedded):
    seeded = pod("web-0")
    seeded["metadata"]["labels"] = {"app": "web"}
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL]) as sim:
        sim.state.create_pod(seeded, "", "")
        sim.apply([statefulset(replicas=2)])
        pv = sim.pod_views["default/web-0"]
        assert pv.owner_kind == "StatefulSet" and sim.result.pods["default/web-0"].owner_name == "web"
        assert pv.obj["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
        sim.converge()
        assert sorted(live(sim)) == ["web-0", "web-1"] and created(sim) == ["web-1"]


def test_a_terminating_statefulset_pod_is_reschedulable_for_core(embedded):
    from harness.loop.scheduling import podutil
    with simulation(embedded, [nodeclass(), nodepool(), ZONAL, statefulset(replicas=1)]) as sim:
        sim.converge()
        pv = sim.pod_views["default/web-0"]
        pv.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        assert podutil.is_reschedulable(pv)        # core IsReschedulable: IsOwnedByStatefulSet && IsTerminating
