"""The real engine's customer-state helpers (harness/runner/real/existing.py) that need no live
controller: kubectl-apply updates of existing objects, and the NodeClaim a managed existing node
starts from. The live paths run in the real-engine scenarios (scenarios/upstream-core with
given.existingNodes, scenarios/loop/in-place-updates)."""
from __future__ import annotations

import copy

import pytest

import fakeazure
from harness.backends.embedded import EmbeddedBackend
from harness.loop.result import NodeClassResult
from harness.model.upstream.profile import load_profile
from harness.runner.engines.real.cluster.existing import (_await_group, _instance_type, _Launch, apply_object, hold_disruption,
                                                  managed_nodeclaim, restore_disruption, seed_groups, unready_nodepool,
                                                  vm_name_of)

UPSTREAM = load_profile("upstream")


@pytest.fixture()
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


@pytest.fixture(scope="module")
def embedded():
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


def _types(name="Standard_D2s_v3", region="eastus", profile=UPSTREAM):
    """The entry's instance type as the real engine builds it from the scenario's SKU."""
    fake = fakeazure.FakeAzure(region=region, seed=0)
    skus = {s["name"].lower(): s for s in fake.skus()}
    return [_instance_type(skus, name, region, profile, fake.region_prices(region))]


def test_managed_nodeclaim_pins_the_entry_and_keeps_the_nodepools_template():
    np = {"metadata": {"name": "default", "uid": "u1", "annotations": {
              "karpenter.sh/nodepool-hash": "123", "karpenter.sh/nodepool-hash-version": "v3", "other": "x"}},
          "spec": {"template": {"metadata": {"labels": {"team": "a"}},
                                "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                                         "requirements": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
                                                          {"key": "karpenter.sh/capacity-type", "operator": "In",
                                                           "values": ["spot", "on-demand"]}],
                                         "startupTaints": [{"key": "s", "effect": "NoSchedule"}],
                                         "terminationGracePeriod": "300s", "expireAfter": "Never"}}}}
    gpu = {"metadata": {"name": "g"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "10m", "nvidia.com/gpu": "1"}}}]}}
    nc = managed_nodeclaim({"nodePool": "default", "instanceType": "Standard_NC6s_v3", "zone": "0",
                            "capacityType": "on-demand", "pods": [gpu]}, 0, np, UPSTREAM, _types("Standard_NC6s_v3"))
    # what its pods request, as the template asks (initialization waits for each to be registered)
    assert nc["spec"]["resources"]["requests"] == {"cpu": "10m", "nvidia.com/gpu": "1", "pods": "1"}
    # ... held to the instance type's size: core's tests bind pods past it, no round would plan that, and the
    # provider launches only a type that fits the requests (drift: a 150-CPU pod on a 16-vCPU node)
    big = {"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "150"}}}]}}
    held = managed_nodeclaim({"nodePool": "default", "instanceType": "Standard_D2s_v3", "pods": [big]}, 0, np,
                             UPSTREAM, _types())
    assert held["spec"]["resources"]["requests"] == {"cpu": "1900m", "pods": "1"}
    reqs = {r["key"]: r["values"] for r in nc["spec"]["requirements"]}
    # the template's labels are requirements too (core NewNodeClaimTemplate), as on every NodeClaim Karpenter makes
    assert reqs == {"kubernetes.io/arch": ["amd64"], "node.kubernetes.io/instance-type": ["Standard_NC6s_v3"],
                    "topology.kubernetes.io/zone": ["0"], "karpenter.sh/capacity-type": ["on-demand"],
                    "team": ["a"], "karpenter.sh/nodepool": ["default"], "karpenter.azure.com/aksnodeclass": ["default"]}
    # the NodePool's and the NodeClass's labels, as core's template puts them (the kubelet of a node Karpenter
    # launched got both; left to core's hydration controller, the second raced the launch)
    assert nc["metadata"]["labels"] == {"team": "a", "karpenter.sh/nodepool": "default",
                                        "karpenter.azure.com/aksnodeclass": "default"}
    # the NodePool's drift hash, as the live controller stamped it (else the NodeClaim never drifts), and
    # whether minValues were relaxed, as core v1.6+ says on every NodeClaim it makes
    assert nc["metadata"]["annotations"] == {"karpenter.sh/nodepool-hash": "123", "karpenter.sh/nodepool-hash-version": "v3",
                                             "karpenter.sh/nodeclaim-min-values-relaxed": "false"}
    assert nc["metadata"]["ownerReferences"][0]["uid"] == "u1" and nc["spec"]["startupTaints"]
    assert (nc["spec"]["terminationGracePeriod"], nc["spec"]["expireAfter"]) == ("300s", "Never")
    assert vm_name_of(nc["metadata"]["name"]) == "aks-default-existing-0"


def test_managed_nodeclaim_keeps_the_nodepools_requirement_on_a_key_the_entry_leaves_open():
    """An on-demand-only NodePool's seeded node stays on-demand when the entry names no capacity type (the
    provider takes spot whenever the NodeClaim allows it, and core then drifted the node away); the same for
    the NodePool's zones. The simulation's seeding is the same function (loop/provisioning/nodeclaimobject.py)."""
    np = {"metadata": {"name": "default", "annotations": {}},
          "spec": {"template": {"spec": {"requirements": [
              {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
              {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-1", "eastus-2"]},
              {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3", "Standard_D4s_v3"]}]}}}}
    nc = managed_nodeclaim({"nodePool": "default", "instanceType": "Standard_D2s_v3"}, 0, np, UPSTREAM, _types())
    reqs = {r["key"]: r["values"] for r in nc["spec"]["requirements"]}
    assert reqs == {"karpenter.sh/capacity-type": ["on-demand"], "topology.kubernetes.io/zone": ["eastus-1", "eastus-2"],
                    "node.kubernetes.io/instance-type": ["Standard_D2s_v3"], "karpenter.sh/nodepool": ["default"]}


def test_managed_nodeclaim_asks_for_the_daemonsets_overhead_and_the_entrys_own_requests():
    """A NodeClaim Karpenter made asks for its pods plus the DaemonSets that run on its type (core v1.14.0
    scheduling/nodeclaim.go FinalizeScheduling, addDaemonRequests); a dump's NodeClaim says what it asked
    for (`requests`), which wins."""
    np = {"metadata": {"name": "default", "annotations": {}}, "spec": {"template": {"spec": {"requirements": []}}}}
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "kube-system"},
          "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
              "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}}}]}}}}
    entry = {"nodePool": "default", "instanceType": "Standard_D2s_v3", "pods": [_pod(cpu="500m")]}
    nc = managed_nodeclaim(entry, 0, np, UPSTREAM, _types(), [ds])
    assert nc["spec"]["resources"]["requests"] == {"cpu": "700m", "memory": "100Mi", "pods": "2"}
    dumped = managed_nodeclaim({**entry, "requests": {"cpu": "1", "pods": "3"}}, 0, np, UPSTREAM, _types(), [ds])
    assert dumped["spec"]["resources"]["requests"] == {"cpu": "1", "pods": "3"}


def test_a_v1beta1_nodepools_seeded_nodeclaim_is_v1beta1():
    """Provider v0.5-v0.6 (core v0.36) serve karpenter.sh/v1beta1 only: the NodeClaim is written in it, its
    nodeClassRef as written and the template's kubelet block (core v0.36 ToNodeClaim copies the template's spec)."""
    np = {"apiVersion": "karpenter.sh/v1beta1", "kind": "NodePool", "metadata": {"name": "default", "uid": "u1", "annotations": {}},
          "spec": {"template": {"spec": {"nodeClassRef": {"name": "default"}, "kubelet": {"maxPods": 30},
                                         "taints": [{"key": "t", "effect": "NoSchedule"}],
                                         "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                           "values": ["on-demand"]}]}}}}
    v054 = load_profile("v0.5.4")
    nc = managed_nodeclaim({"nodePool": "default", "instanceType": "Standard_D2s_v3"}, 0, np, v054,
                           _types(profile=v054))
    assert nc["apiVersion"] == "karpenter.sh/v1beta1" and nc["metadata"]["ownerReferences"][0]["apiVersion"] == "karpenter.sh/v1beta1"
    assert nc["spec"]["nodeClassRef"] == {"name": "default"}
    assert nc["metadata"]["labels"] == {"karpenter.sh/nodepool": "default"}     # no NodeClass label before core v1.1
    assert nc["spec"]["kubelet"] == {"maxPods": 30} and nc["spec"]["taints"]


def test_both_engines_seed_the_same_nodeclaim(embedded):
    """One entry seeded by the simulation (loop/seed.py) and built by the real engine's seeding
    from the NodePool as the API server stores it: the same object, but for the drift hash (the live
    controller's, whose digits the simulation does not reproduce)."""
    from harness.loop.seed import seed_existing_nodes
    from tests.loop.loopkit import nodeclass, nodepool, pod, simulation
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
              "tolerations": [{"operator": "Exists"}],
              "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}]}}}}
    pool = nodepool(taints=[{"key": "t", "value": "v", "effect": "NoSchedule"}], terminationGracePeriod="1h")
    pool["spec"]["template"]["metadata"] = {"labels": {"team": "a"}, "annotations": {"note": "n"}}
    entry = {"nodePool": "default", "nodeClaim": "default-abcde", "instanceType": "Standard_D4s_v3",
             "zone": "southcentralus-2", "pods": [pod("running", cpu="1")]}
    with simulation(embedded, [nodeclass(), pool, ds]) as sim:
        written = []
        write = sim.provisioner.write_nodeclaim
        sim.provisioner.write_nodeclaim = lambda obj, *rest: written.append(copy.deepcopy(obj)) or write(obj, *rest)
        seed_existing_nodes(sim, [entry])
        (simulated,) = written                  # as the seeding wrote it, before the launch added the provider's
        stored = sim.cluster.get("NodePool", "default")
        stored["metadata"].setdefault("annotations", {}).update(
            {"karpenter.sh/nodepool-hash": "live", "karpenter.sh/nodepool-hash-version": "v3"})
        skus = {s["name"].lower(): s for s in sim.fake.skus()}
        it = _instance_type(skus, "Standard_D4s_v3", "southcentralus", sim.state.profile,
                            sim.fake.region_prices("southcentralus"))
        real = managed_nodeclaim(entry, 0, stored, sim.state.profile, [it], [ds])
    hashes = ("karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version")
    assert real["metadata"]["annotations"]["karpenter.sh/nodepool-hash"] == "live"
    for obj in (real, simulated):
        obj["metadata"]["annotations"] = {k: v for k, v in obj["metadata"]["annotations"].items() if k not in hashes}
    assert real == simulated
    assert real["metadata"]["labels"] == {"team": "a", "karpenter.sh/nodepool": "default",
                                          "karpenter.azure.com/aksnodeclass": "default"}
    assert real["metadata"]["annotations"] == {"note": "n", "karpenter.sh/nodeclaim-min-values-relaxed": "false"}
    # its pod's 1 CPU and the DaemonSet's 200m, which tolerates the NodePool's taint (core FinalizeScheduling)
    assert real["spec"]["resources"]["requests"] == {"cpu": "1200m", "pods": "2"}


class _Pools:
    """NodePools stored as given, patched with merge patches (a None deletes the field)."""

    def __init__(self, pools):
        self.pools = pools

    def get(self, kind, name, namespace=None):
        return self.pools.get(name)

    def client(self, identity):
        return self

    def patch(self, kind, name, body, namespace=None, sub=None):
        disruption = self.pools[name]["spec"].setdefault("disruption", {})
        for k, v in body["spec"]["disruption"].items():
            if v is None:
                disruption.pop(k, None)
            else:
                disruption[k] = v


def test_a_v1beta1_nodepool_is_held_with_a_policy_its_crd_takes_and_restored():
    """The hold is a year's consolidateAfter and no budget; the v1beta1 CRD refuses a consolidateAfter with
    WhenUnderutilized, so a v1beta1 pool is held WhenEmpty, and given back as it was."""
    was = {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h", "budgets": [{"nodes": "10%"}]}
    cluster = _Pools({"old": {"apiVersion": "karpenter.sh/v1beta1", "spec": {"disruption": dict(was)}},
                      "new": {"apiVersion": "karpenter.sh/v1", "spec": {"disruption": {"consolidateAfter": "0s"}}}})
    held = hold_disruption(cluster, ["old", "new"])
    assert cluster.pools["old"]["spec"]["disruption"] == {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "8760h",
                                                          "expireAfter": "720h", "budgets": [{"nodes": "0"}]}
    assert cluster.pools["new"]["spec"]["disruption"] == {"consolidateAfter": "8760h", "budgets": [{"nodes": "0"}]}
    restore_disruption(cluster, held)
    assert cluster.pools["old"]["spec"]["disruption"] == was
    assert cluster.pools["new"]["spec"]["disruption"] == {"consolidateAfter": "0s"}


def test_unmanaged_node_has_its_instance_types_capacity_in_the_scenarios_region(tmp_path):
    import time

    from harness.runner.engines import azureside
    from harness.runner.engines.real.cluster.existing import unmanaged_node
    from harness.scenario.load import load_scenarios
    doc = tmp_path / "x.scenario.yaml"
    doc.write_text("apiVersion: harness.karpenter.azure.com/v1alpha1\nkind: Scenario\nmetadata: {name: x}\n"
                   "given: {region: eastus, skus: [Standard_F16s_v2]}\nmanifests: []\n")
    fake = azureside.fake_azure(load_scenarios(str(doc))[0], time)
    skus = {s["name"].lower(): s for s in fake.skus()}
    node, status = unmanaged_node({"name": "other", "instanceType": "Standard_F16s_v2", "zone": "eastus-1"}, 0, skus, "eastus")
    labels = node["metadata"]["labels"]
    assert labels["node.kubernetes.io/instance-type"] == "Standard_F16s_v2"
    # the kubelet's and the cloud node controller's labels, as the simulation's seeding writes them
    assert (labels["beta.kubernetes.io/instance-type"], labels["topology.kubernetes.io/region"],
            labels["failure-domain.beta.kubernetes.io/region"], labels["topology.kubernetes.io/zone"],
            labels["beta.kubernetes.io/arch"]) == ("Standard_F16s_v2", "eastus", "eastus", "eastus-1", "amd64")
    assert status["allocatable"]["cpu"] == "16"


def test_seeded_pods_keep_owners_that_can_own_them(cluster):
    """A mirror pod is owned by its Node; a pod naming a DaemonSet the scenario does not create gets
    one that adopts it, runs on its node only and never replaces it."""
    from harness.runner.engines.real.cluster.existing import adopt_orphans, bind_pods
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}}})
    entry = {"pods": [
        {"metadata": {"name": "mirror", "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node", "uid": "x", "controller": True}]},
         "spec": {"containers": [{"name": "c", "image": "pause"}]}},
        {"metadata": {"name": "ds-pod", "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": "y", "controller": True}]},
         "spec": {"containers": [{"name": "c", "image": "pause"}]}}]}
    bind_pods(cluster, "n1", entry)
    mirror = cluster.get("Pod", "mirror", "default")
    assert mirror["metadata"]["ownerReferences"][0]["name"] == "n1"
    assert mirror["metadata"]["ownerReferences"][0]["uid"] == cluster.get("Node", "n1")["metadata"]["uid"]
    orphan = cluster.get("Pod", "ds-pod", "default")
    assert "ownerReferences" not in orphan["metadata"]
    adopt_orphans(cluster, [(entry, "n1")])
    ds = cluster.get("DaemonSet", "ds", "default")
    assert ds["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert ds["spec"]["selector"]["matchLabels"] == orphan["metadata"]["labels"]
    terms = ds["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["n1"]


def test_a_volume_write_that_lost_the_race_with_the_pv_controller_is_retried(cluster):
    """The PV controller writes a volume as soon as it sees it; the harness's uid completion of the
    volume's claimRef read it before that and got 409 Conflict ("the object has been modified"): it
    reads the volume again and retries (found on scenarios/bugs r07 and r30 under -n 2)."""
    from harness.backends.base import ADMIN, APIRejected
    from harness.runner.engines.real.cluster.existing import complete_volume_ref
    pv = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-a"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "csi": {"driver": "d", "volumeHandle": "h"},
                   "claimRef": {"name": "data", "namespace": "default"}}}
    cluster.create(pv, ADMIN)
    claim = cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
                            "spec": {"volumeName": "pv-a", "accessModes": ["ReadWriteOnce"],
                                     "resources": {"requests": {"storage": "1Gi"}}}}, ADMIN)
    real_update, calls = cluster.update, []

    def racing_update(obj, who):
        calls.append(obj["metadata"]["name"])
        if len(calls) == 1:          # the PV controller wrote the volume first
            raise APIRejected(409, "Conflict", 'Operation cannot be fulfilled on persistentvolumes "pv-a": '
                              "the object has been modified; please apply your changes to the latest version and try again")
        return real_update(obj, who)
    cluster.update = racing_update
    complete_volume_ref(cluster, claim)
    assert calls == ["pv-a", "pv-a"]
    assert cluster.get("PersistentVolume", "pv-a")["spec"]["claimRef"]["uid"] == claim["metadata"]["uid"]


def test_the_kubelet_stand_in_ends_a_terminating_pod_once_its_containers_stopped():
    """finish_terminating_pods confirms (grace-period-0 delete) a bound terminating pod at
    harness/model/kube/podtermination.py stops_at: at once without a preStop sleep, after it with one; re-checked each
    poll. An unbound pod is the API server's own to delete."""
    from harness.model.kube.kubetime import rfc3339 as timestamp
    from harness.runner.engines.real.cluster.existing import finish_terminating_pods
    now = 1_800_000_000.0
    deleted = []
    cluster = type("C", (), {"delete": lambda self, kind, name, ns=None: deleted.append(name)})()

    def p(name, sleep=None, node="n"):
        c = {"name": "c", **({"lifecycle": {"preStop": {"sleep": {"seconds": sleep}}}} if sleep else {})}
        return {"metadata": {"name": name, "namespace": "default", "deletionTimestamp": timestamp(now + 120),
                             "deletionGracePeriodSeconds": 120}, "spec": {"nodeName": node, "containers": [c]}}
    pods = [p("quick"), p("slow", 60), p("unbound", node=None)]
    finish_terminating_pods(cluster, pods, now)
    assert deleted == ["quick"]
    finish_terminating_pods(cluster, pods[1:], now + 59)
    assert deleted == ["quick"]
    finish_terminating_pods(cluster, pods[1:], now + 60)
    assert deleted == ["quick", "slow"]


def _pool(conditions, api="karpenter.sh/v1"):
    return {"apiVersion": api, "kind": "NodePool", "metadata": {"name": "default"},
            "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                             "name": "default"}}}},
            "status": {"conditions": conditions}}


def test_a_nodepool_whose_class_was_refused_fails_the_seeding_naming_the_release():
    """Provider v0.7.5 serves AKSNodeClass v1alpha2 only: a v1beta1 one is refused, core v1.0.6's readiness
    controller says NodeClassNotFound, and a seeded NodeClaim's launch deletes it - said at once, not
    after the seeding's 90 s timeout."""
    pool = _pool([{"type": "Ready", "status": "False", "reason": "UnhealthyDependents"},
                  {"type": "NodeClassReady", "status": "False", "reason": "NodeClassNotFound",
                   "message": "NodeClass not found on cluster"},
                  {"type": "ValidationSucceeded", "status": "True"}])
    refused = {"default": NodeClassResult("default", accepted=False, message='no matches for kind "AKSNodeClass" '
                                          'in version "karpenter.azure.com/v1beta1"')}
    assert unready_nodepool(pool, refused, "v0.7.5") == (
        "NodePool 'default' is not Ready at v0.7.5 (NodeClassReady NodeClassNotFound: NodeClass not found on "
        "cluster): its AKSNodeClass 'default' was refused: no matches for kind \"AKSNodeClass\" in version "
        "\"karpenter.azure.com/v1beta1\"; a NodeClaim of it cannot launch, so none exists to seed")


def test_a_ready_nodepool_and_a_v1beta1_one_without_conditions_seed():
    assert unready_nodepool(_pool([{"type": "Ready", "status": "True"}]), {}, "v1.14.2") is None
    assert unready_nodepool(_pool([], api="karpenter.sh/v1beta1"), {}, "v0.5.1") is None


def _web(image="nginx:1.27"):
    from harness.runner.engines.real.cluster.existing import default_selector
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
               "containers": [{"name": "app", "image": image, "resources": {"requests": {"cpu": "1"}}}]}}}}
    default_selector(dep)
    return dep


def _dumped(name, image="nginx:1.27", labels=None, rs="web-5d8f7c9b4"):
    return {"metadata": {"name": name, "labels": labels or {"app": "web"},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "controller": True}]},
            "spec": {"containers": [{"name": "app", "image": image, "resources": {"requests": {"cpu": "1"}}}]}}


def test_a_dumped_replicaset_is_its_deployments_new_one():
    """Made as the Deployment controller made it: the Deployment's template (FindNewReplicaSet finds it),
    selected and labelled by the pod-template-hash its name ends with, the pods' count, no owner yet."""
    from harness.runner.engines.real.cluster.existing import deployment_of, deployment_replicaset
    dep, pods = _web(), [_dumped("web-5d8f7c9b4-a"), _dumped("web-5d8f7c9b4-b")]
    assert deployment_of("ReplicaSet", "web-5d8f7c9b4", {"labels": {"app": "web"}}, [dep]) is dep
    rs = deployment_replicaset(dep, "web-5d8f7c9b4", pods)
    assert rs["metadata"] == {"name": "web-5d8f7c9b4", "namespace": "default",
                              "labels": {"app": "web", "pod-template-hash": "5d8f7c9b4"}}
    assert rs["spec"]["replicas"] == 2
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web", "pod-template-hash": "5d8f7c9b4"}}
    assert rs["spec"]["template"]["spec"] == dep["spec"]["template"]["spec"]
    assert rs["spec"]["template"]["metadata"]["labels"] == rs["metadata"]["labels"]


def test_an_old_revisions_replicaset_keeps_the_pods_template_so_the_deployment_rolls():
    from harness.runner.engines.real.cluster.existing import deployment_replicaset
    rs = deployment_replicaset(_web(image="nginx:1.27"), "web-5d8f7c9b4", [_dumped("web-5d8f7c9b4-a", image="nginx:1.26")])
    assert rs["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert rs["spec"]["selector"]["matchLabels"]["pod-template-hash"] == "5d8f7c9b4"


@pytest.mark.parametrize("kind, name, labels, why", [
    ("ReplicaSet", "api-5d8f7c9b4", {"app": "web"}, "another Deployment's name"),
    ("ReplicaSet", "web-5d8f7c9b4", {"app": "api"}, "its selector does not match the pod"),
    ("DaemonSet", "web-5d8f7c9b4", {"app": "web"}, "not a ReplicaSet"),
])
def test_a_replicaset_is_no_deployments_unless_named_and_selected_by_it(kind, name, labels, why):
    from harness.runner.engines.real.cluster.existing import deployment_of
    assert deployment_of(kind, name, {"labels": labels}, [_web()]) is None, why


def test_a_seeded_pod_of_a_deployments_replicaset_carries_its_pod_template_hash(cluster):
    """Selected by the hash, not the harness's owner label: the Deployment's ReplicaSet adopts it."""
    from harness.runner.engines.real.cluster.existing import OWNER_LABEL, bind_pods
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    bind_pods(cluster, "n1", {"pods": [_dumped("web-5d8f7c9b4-a"), _dumped("api-6c8d9f7b5-a", rs="api-6c8d9f7b5")]},
              [_web()])
    web = cluster.get("Pod", "web-5d8f7c9b4-a", "default")
    assert web["metadata"]["labels"] == {"app": "web", "pod-template-hash": "5d8f7c9b4"}
    assert "ownerReferences" not in web["metadata"]
    assert cluster.get("Pod", "api-6c8d9f7b5-a", "default")["metadata"]["labels"][OWNER_LABEL] == "api-6c8d9f7b5"


def test_a_deployment_without_selector_gets_its_template_labels():
    from harness.runner.engines.real.cluster.existing import default_selector
    dep = {"metadata": {"name": "web"}, "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    default_selector(dep)
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    bare = {"metadata": {"name": "x"}, "spec": {"template": {"spec": {}}}}
    default_selector(bare)
    assert bare["spec"]["selector"]["matchLabels"] == bare["spec"]["template"]["metadata"]["labels"]
    kept = {"metadata": {"name": "y"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
                                               "template": {"metadata": {"labels": {"a": "b", "c": "d"}}}}}
    default_selector(kept)
    assert kept["spec"]["selector"] == {"matchLabels": {"a": "b"}}


def test_a_seeded_job_pod_waits_for_its_job_to_adopt_it(cluster):
    """Its Job is created after the seeding and selects it by the seeding's label (jobruns.as_created); the
    tracking finalizer comes with the adoption, so the Job controller's orphan worker has none to take off."""
    from harness.runner.engines.real.cluster.existing import bind_pods
    from harness.runner.engines.real.cluster.jobruns import JOB_TRACKING, SEEDED_BY
    cluster.create({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    bind_pods(cluster, "n1", {"pods": [{"metadata": {
        "name": "reindex-x7k2p", "labels": {"batch.kubernetes.io/job-name": "reindex"}, "finalizers": [JOB_TRACKING],
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "reindex", "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "x"}]}}]})
    pod = cluster.get("Pod", "reindex-x7k2p", "default")
    assert pod["metadata"]["labels"] == {"batch.kubernetes.io/job-name": "reindex", SEEDED_BY: "reindex"}
    assert "ownerReferences" not in pod["metadata"] and not pod["metadata"].get("finalizers")


def _dated(day: int, **more) -> dict:
    return {"nodePool": "web", "instanceType": "Standard_D4s_v5", "createdAt": f"2026-11-{day:02d}T10:00:00Z", **more}


def test_seeding_groups_the_plain_entries_newest_first_and_seeds_the_rest_alone():
    """On a moved clock the newest createdAt first, so the clock only goes back while a group's NodeClaims
    wait to register (core's liveness counts 15 minutes from the Registered condition's transition); an entry
    in flight or deleting is a group of its own; an unmanaged entry is in none."""
    entries = [_dated(1), _dated(3), _dated(2), _dated(5, registered=False), _dated(3), _dated(4, deleting=True),
               _dated(6, initialized=False), {"name": "vmss-0"}, _dated(2)]
    start = 2e9
    assert seed_groups(entries, start, clocked=True, size=3) == [[6], [3], [5], [1, 4, 2], [8, 0]]
    # two entries of one createdAt keep the entries' order
    assert seed_groups([_dated(1), _dated(1)], start, clocked=True) == [[0, 1]]
    # on the wall clock: the entries' order
    assert seed_groups(entries, start, clocked=False, size=3) == [[0, 1, 2], [3], [4], [5], [6], [8]]


def test_a_group_entry_has_reached_its_state_by_its_nodeclaims_conditions():
    def nc(**conds):
        return {"status": {"nodeName": "n", "conditions": [{"type": t, "status": v} for t, v in conds.items()]}}
    launch = _Launch(0, {}, None, {"metadata": {"name": "web-0"}}, unregistered=False, uninitialized=False)
    assert not launch.reached(nc(Launched="True", Registered="True", Initialized="Unknown"))
    assert launch.reached(nc(Launched="True", Registered="True", Initialized="True"))
    assert not launch.reached(None)
    in_flight = _Launch(0, {}, None, {"metadata": {"name": "web-0"}}, unregistered=True, uninitialized=False)
    assert in_flight.reached(nc(Launched="True", Registered="Unknown"))
    not_ready = _Launch(0, {}, None, {"metadata": {"name": "web-0"}}, unregistered=False, uninitialized=True)
    assert not_ready.reached(nc(Launched="True", Registered="True", Initialized="Unknown"))


def test_a_group_waits_for_its_nodeclaims_and_returns_those_the_controller_deleted():
    """The provider's instance garbage collection may delete a seeded VM before its NodeClaim shows the
    providerID (the fake's VMs are months old): the group is not held up by it, and the seeding launches it
    again (existing._relaunch)."""
    done = {"status": {"nodeName": "n", "conditions": [{"type": t, "status": "True"}
                                                       for t in ("Launched", "Registered", "Initialized")]}}
    stored = {"web-0": done, "web-1": {**done, "metadata": {"deletionTimestamp": "2026-11-26T10:00:00Z"}}}

    # launched, its VM collected before it registered
    stored["web-3"] = {"metadata": {"name": "web-3"}, "status": {"conditions": [{"type": "Launched", "status": "True"}]}}

    class Run:
        reads = type("R", (), {"get": staticmethod(lambda kind, name: stored.get(name))})()
        kubelets = type("K", (), {"step": staticmethod(lambda: False), "rg": "rg"})()
        fake = type("F", (), {"vm_names": staticmethod(lambda rg: {"aks-web-0", "aks-web-1", "aks-web-2"})})()

        def tend(self):
            self.kubelets.step()
    group = [_Launch(i, {}, None, {"metadata": {"name": f"web-{i}"}}, False, False) for i in range(4)]
    assert [launch.name for launch in _await_group(Run(), group)] == ["web-1", "web-2", "web-3"]


def test_side_by_side_keeps_the_items_order_and_raises_the_first_error():
    """existing.side_by_side: the seeding's independent writes made WRITERS at a time."""
    from harness.runner.engines.real.cluster.existing import side_by_side
    assert side_by_side(lambda i: i * i, range(20)) == [i * i for i in range(20)]
    assert side_by_side(lambda i: i, []) == []

    def fails(i):
        if i == 3:
            raise RuntimeError("NodeClaim 3")
        return i
    with pytest.raises(RuntimeError, match="NodeClaim 3"):
        side_by_side(fails, range(10))


def test_the_budgets_come_back_last():
    """existing.seed gives consolidateAfter back when the groups are seeded, so core marks the NodeClaims
    Consolidatable while the workloads are applied; the budgets come back after them (RealRun)."""
    from harness.runner.engines.real.cluster.existing import restore_budgets
    was = {"consolidateAfter": "30s", "budgets": [{"nodes": "10%"}]}
    cluster = _Pools({"p": {"apiVersion": "karpenter.sh/v1", "spec": {"disruption": dict(was)}}})
    held = hold_disruption(cluster, ["p"])
    restore_disruption(cluster, held, budgets=False)
    assert cluster.pools["p"]["spec"]["disruption"] == {"consolidateAfter": "30s", "budgets": [{"nodes": "0"}]}
    restore_budgets(cluster, held)
    assert cluster.pools["p"]["spec"]["disruption"] == was


def test_a_seeded_nodeclaim_past_its_consolidate_after_is_awaited_until_core_marks_it():
    from harness.model.kube.kubetime import parse_rfc3339
    from harness.runner.engines.real.cluster.existing import unmarked

    def claim(name, conds, last=None, api="karpenter.sh/v1"):
        return {"apiVersion": api, "metadata": {"name": name, "labels": {"karpenter.sh/nodepool": "p"}},
                "status": {"conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}
                                          for t in conds], **({"lastPodEventTime": last} if last else {})}}
    objs = {("NodePool", "p"): {"spec": {"disruption": {"consolidateAfter": "1h"}}},
            ("NodeClaim", "due"): claim("due", ["Initialized"]),
            ("NodeClaim", "marked"): claim("marked", ["Initialized", "Consolidatable"]),
            ("NodeClaim", "recent"): claim("recent", ["Initialized"], last="2026-01-01T00:30:00Z"),
            ("NodeClaim", "launching"): claim("launching", []),
            ("NodeClaim", "old-core"): claim("old-core", ["Initialized"], api="karpenter.sh/v1beta1")}

    class Reads:
        def get(self, kind, name, namespace=None):
            return objs.get((kind, name))
    names = ["due", "marked", "recent", "launching", "old-core", "gone"]
    assert unmarked(Reads(), names, parse_rfc3339("2026-01-01T01:10:00Z")) == ["due"]
    assert unmarked(Reads(), names, parse_rfc3339("2026-01-01T01:30:00Z")) == ["due", "recent"]
    objs[("NodePool", "p")]["spec"]["disruption"]["consolidateAfter"] = "Never"
    assert unmarked(Reads(), names, parse_rfc3339("2026-01-01T01:30:00Z")) == []


def test_a_node_not_ready_after_its_initialization_is_held_so():
    """Ready False: its kubelet posts it and keeps it (never released); Unknown: the node lifecycle controller's,
    and the kubelet renews no Lease."""
    from harness.runner.engines.real.cluster import existing
    patches = []

    class Client:
        def __init__(self, who):
            self.who = who

        def patch(self, kind, name, body, sub=None):
            patches.append((self.who.username, kind, name, body["status"]["conditions"][0], sub))

    kubelets = type("K", (), {})()
    kubelets.not_ready, kubelets.never_ready, kubelets.silent = set(), set(), set()
    run = type("R", (), {"kubelets": kubelets, "cluster": type("C", (), {"client": staticmethod(Client)})()})()
    existing.not_ready(run, "web-0", "aks-web-0", "False")
    existing.not_ready(run, "web-1", "aks-web-1", "Unknown")
    assert kubelets.not_ready == kubelets.never_ready == {"aks-web-0", "aks-web-1"}
    assert kubelets.silent == {"aks-web-1"}
    (who0, _, _, cond0, sub0), (who1, _, _, cond1, _) = patches
    assert (who0, cond0["status"], cond0["reason"], sub0) == ("system:node:aks-web-0", "False", "KubeletNotReady", "status")
    assert (cond1["status"], cond1["reason"]) == ("Unknown", "NodeStatusUnknown") and "node-lifecycle" in who1
    assert cond0["lastTransitionTime"] == cond0["lastHeartbeatTime"]


def test_a_machine_modes_nodeclaim_has_the_vm_aks_makes():
    """In an AKS Machine API mode the seeded NodeClaim's VM is its machine's, as fakeazure's AKS names it: the
    seeding waits on, holds and releases that VM (the provider's aks-<name> would be taken for a lost VM)."""
    from types import SimpleNamespace

    from harness.model.upstream.profile import load_profile
    from harness.runner.engines.azureside import machine_vm_name
    cfg = {"provisionMode": "aksmachineapi", "clusterName": "harness-cluster", "nodeResourceGroup": "MC_x"}
    run = SimpleNamespace(cfg=cfg, profile=load_profile("upstream"))
    got = vm_name_of("default-b7k2q", run)
    assert got == machine_vm_name(cfg, run.profile, "default-b7k2q") and got.startswith("aks-testmpool-default-b7k2q-")
    assert got.endswith("-vm") and vm_name_of("default-b7k2q", SimpleNamespace(cfg={})) == "aks-default-b7k2q"
