"""given.existingNodes (harness/loop/seed.py): Nodes, NodeClaims and running pods that exist
before the first pass, counted by Karpenter's cluster state as core's tests count theirs (sigs.k8s.io/
karpenter v1.14.0 pkg/controllers/provisioning/scheduling/suite_test.go "In-Flight Nodes", "Existing
Nodes")."""
from __future__ import annotations

import pickle

import pytest

from harness.loop.seed import SeedError, seed_existing_nodes
from harness.model.kube.kubetime import rfc3339
from harness.model.kube.podtermination import STOPS_AT
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def test_managed_entry_is_a_launched_registered_initialized_nodeclaim_with_its_pods(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        (seeded,) = seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D4s_v3",
                                               "zone": "southcentralus-2", "capacityType": "on-demand",
                                               "labels": {"team": "a"}, "pods": [pod("running", cpu="1")]}])
        (claim,) = sim.claims
        assert claim.launched.instance_type.name == "Standard_D4s_v3" and claim.launched.zone == "southcentralus-2"
        assert claim.registered and claim.initialized and seeded.node == claim.node_name
        node = sim.cluster.get("Node", claim.node_name)
        assert node["metadata"]["labels"]["team"] == "a"
        assert node["metadata"]["labels"]["karpenter.sh/initialized"] == "true"
        assert sim.result.pods["default/running"].node == claim.node_name
        # the VM exists in the fake Azure (garbage collection and limits see it)
        assert claim.launched.vm_name.lower() in sim.provider.list_vm_names()
        # the NodeClaim asks for what its pods need (initialization waits for it to be registered)
        assert claim.obj["spec"]["resources"]["requests"]["cpu"] == "1"


def test_in_flight_entries_stop_before_registration_or_initialization(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3", "registered": False},
                                  {"nodePool": "default", "instanceType": "Standard_D2s_v3", "initialized": False}])
        unregistered, uninitialized = sim.claims
        assert unregistered.launched is not None and unregistered.node_name is None
        assert uninitialized.registered and not uninitialized.initialized
        existing = sim.provisioner.existing_nodes()
        # both count as in-flight capacity; initialized nodes would sort first (none here)
        assert {n.nodeclaim for n in existing} == {unregistered.result.name, uninitialized.result.name}
        assert not any(n.initialized for n in existing)


def test_unmanaged_node_counts_as_existing_capacity(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        (seeded,) = seed_existing_nodes(sim, [{"name": "system-1", "instanceType": "Standard_D4s_v3",
                                               "zone": "southcentralus-1", "labels": {"pool": "system"},
                                               "taints": [{"key": "CriticalAddonsOnly", "value": "true",
                                                           "effect": "NoSchedule"}],
                                               "pods": [pod("coredns", cpu="500m")]}])
        assert seeded.node == "system-1" and not sim.claims
        node = sim.cluster.get("Node", "system-1")
        assert node["metadata"]["labels"]["node.kubernetes.io/instance-type"] == "Standard_D4s_v3"
        assert not any(t["key"] == "node.kubernetes.io/not-ready" for t in node["spec"]["taints"])
        (existing,) = sim.provisioner.existing_nodes()
        assert existing.name == "system-1" and existing.nodeclaim is None and existing.initialized
        assert existing.requested["cpu"] == 500
        assert [t.key for t in existing.taints] == ["CriticalAddonsOnly"]
        assert sim.result.nodes[0].name == "system-1"


def test_owner_references_without_a_live_owner_are_dropped_the_workload_kept(embedded):
    """A dump's pod names a ReplicaSet the scenario does not have and no uid (the API server refuses
    a reference without one): the reference goes, the pod still counts as the Deployment's."""
    p = pod("api-5d8f7c9b6-2lqvx", cpu="1")
    p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "api-5d8f7c9b6",
                                         "controller": True, "blockOwnerDeletion": True}]
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"name": "system-1", "instanceType": "Standard_D4s_v3", "pods": [p]}])
        stored = sim.cluster.get("Pod", "api-5d8f7c9b6-2lqvx", "default")
        assert "ownerReferences" not in stored["metadata"]
        r = sim.result.pods["default/api-5d8f7c9b6-2lqvx"]
        assert (r.owner_kind, r.owner_name) == ("Deployment", "api-5d8f7c9b6".rsplit("-", 1)[0])


def test_deleting_entry_is_left_out_of_scheduling(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"name": "old", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "deleting": True}])
        node = sim.cluster.get("Node", "old")
        assert node["metadata"].get("deletionTimestamp")
        assert sim.provisioner.existing_nodes() == []


def test_a_deleting_unmanaged_nodes_pods_are_rescheduled(embedded):
    """StateNode.Deleted: a Node no NodeClaim owns is deleting once its own deletionTimestamp is set; its
    currently reschedulable pods join the provisioning pass."""
    from harness.loop.disruption.simulate import deleting_pods
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"name": "old", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "deleting": True, "pods": [pod("moving")]}])
        assert [pv.name for pv in deleting_pods(sim.state)] == ["moving"]


def test_a_deleted_managed_node_has_its_nodeclaim_deleted(embedded):
    """core node/termination finalize: a managed Node deleted from outside deletes its NodeClaim at once, which is
    then terminated as any deleted NodeClaim (no disruption reason)."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3", "deleting": True}])
        (claim,) = sim.claims
        assert claim.dis.deleting_since is not None and claim.dis.deleted_by == ""


def test_a_dumped_drain_has_one_deadline_from_its_deletion(embedded):
    """A deleting NodeClaim of a dump: its terminationGracePeriod counts from the dump's deletionTimestamp
    (core lifecycle controller.go ensureTerminationGracePeriodTerminationTimeAnnotation), and the annotation, the
    TerminationGracePeriodExpiring event and the decision all name that one deadline, not the run's start plus it."""
    from harness.model.kube.kubetime import parse_rfc3339
    from harness.loop.lifecycle.nodetermination import TERMINATION_ANNOTATION, rfc3339
    with simulation(embedded, [nodeclass(), nodepool(terminationGracePeriod="2h")]) as sim:
        deleted = sim.clock.now() - 1800
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3",
                                   "deleting": rfc3339(deleted), "pods": [pod("running")]}])
        (claim,) = sim.claims
        sim.node_termination.reconcile()
        deadline = rfc3339(deleted + 7200)
        assert claim.dis.termination_time == parse_rfc3339(deadline)
        assert claim.obj["metadata"]["annotations"][TERMINATION_ANNOTATION] == deadline
        said = [e["message"] for e in sim.result.events if e.get("reason") == "TerminationGracePeriodExpiring"]
        assert said and set(said) == {f"All pods will be deleted by {deadline}"}
        (decided,) = [d for d in sim.result.decisions if d.action == "nodeclaim-deleting"]
        assert deadline in decided.reason
        (step,) = [t for t in sim.result.timeline if t["action"] == "deleting"]
        assert step["t"] == deleted


def test_a_deleting_in_flight_node_is_never_initialized(embedded):
    """Its NodeClaim is deleted before its kubelet reports Ready, and core's lifecycle controller only finalizes
    a NodeClaim being deleted (nodeclaim/lifecycle/controller.go Reconcile)."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3", "initialized": False,
                                   "deleting": True}])
        (claim,) = sim.claims
        assert not sim._lifecycle_step(claim)
        assert not claim.initialized


def test_a_drain_waits_for_a_terminating_pod_until_it_is_stuck(embedded):
    """IsStuckTerminating (core pkg/utils/pod/scheduling.go): the drain waits on a terminating pod its finalizers
    hold until a minute past its deletionTimestamp, a short wait the settle steps to, then goes on without it."""
    held = pod("held")
    held["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["example.com/hold"])
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3", "deleting": True,
                                   "pods": [held]}])
        (claim,) = sim.claims
        t0 = sim.clock.now()
        sim.node_termination.reconcile()
        sim.clock.advance(10.0)            # past MinDrainTime: the stuck moment is what the drain waits for
        sim.node_termination.reconcile()
        assert sim.node_termination.next_deadline() == t0 + 60.0
        sim.converge()
        assert claim.done and sim.result.nodes[0].deleted
        assert sim.clock.now() >= t0 + 60.0


def test_a_pod_whose_containers_still_stop_is_seeded_terminating_until_then(embedded):
    """A dump's pod deleted before the start with a grace period, whose containers stop after it
    (podtermination.STOPS_AT): terminating until then, its deletion fields as the dump gave them."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        t0 = sim.clock.now()
        stopping = pod("stopping")
        stopping["metadata"].update(deletionTimestamp=rfc3339(t0 + 3600), deletionGracePeriodSeconds=7200,
                                    annotations={STOPS_AT: rfc3339(t0 + 600)})
        seed_existing_nodes(sim, [{"name": "n", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "pods": [stopping]}])
        assert sim.state.pod_views["default/stopping"].obj["metadata"]["deletionTimestamp"] == rfc3339(t0 + 3600)
        assert "default/stopping" in sim.state.terminating
        sim.clock.advance(601.0)
        sim.converge()
        assert sim.result.pods["default/stopping"].state == "deleted"


def test_a_stop_time_that_is_no_time_is_a_seeding_error(embedded):
    bad = pod("bad")
    bad["metadata"]["annotations"] = {STOPS_AT: "soon"}
    with simulation(embedded, [nodeclass(), nodepool()]) as sim, pytest.raises(SeedError) as e:
        seed_existing_nodes(sim, [{"name": "n", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "pods": [bad]}])
    assert "'soon' is not an RFC 3339 time" in str(e.value)


def test_a_daemonset_releases_a_pod_its_selector_does_not_match(embedded):
    """controller_ref_manager.go ClaimObject: a pod owned by the DaemonSet that does not match its selector is
    released (kube-controller-manager does so on the real engine's cluster): no owner, counted as a bare pod."""
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
          "spec": {"selector": {"matchLabels": {"app": "ds"}},
                   "template": {"metadata": {"labels": {"app": "ds"}}, "spec": {"containers": [{"name": "c", "image": "pause"}]}}}}
    ref = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "controller": True}]
    other, own = pod("other"), pod("own")
    other["metadata"]["ownerReferences"] = ref
    own["metadata"].update(ownerReferences=ref, labels={"app": "ds"})
    with simulation(embedded, [nodeclass(), nodepool(), ds]) as sim:
        seed_existing_nodes(sim, [{"name": "n", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "pods": [other, own]}])
        assert sim.result.pods["default/other"].owner_kind == ""
        assert not sim.cluster.get("Pod", "other", "default")["metadata"].get("ownerReferences")
        assert (sim.result.pods["default/own"].owner_kind, sim.result.pods["default/own"].owner_name) == ("DaemonSet", "ds")


def test_a_terminating_pod_is_held_by_its_finalizers_or_gone(embedded):
    held = pod("held")
    held["metadata"].update(deletionTimestamp="2026-01-01T00:00:00Z", finalizers=["example.com/hold"])
    gone = pod("gone")
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"name": "n", "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                                   "pods": [held, gone]}])
        assert sim.cluster.get("Pod", "held", "default")["metadata"].get("deletionTimestamp")
        assert sim.state.pod_views["default/held"].obj["metadata"]["deletionTimestamp"]
        assert sim.cluster.get("Pod", "gone", "default") is None
        assert sim.result.pods["default/gone"].state == "deleted"


@pytest.mark.parametrize("entry, field, message", [
    ({"nodePool": "nope", "instanceType": "Standard_D2s_v3"}, ".nodePool", "no Ready NodePool 'nope'"),
    ({"nodePool": "default", "instanceType": "Standard_X1"}, ".instanceType",
     "is not an instance type of the NodePool"),
    ({"nodePool": "default", "instanceType": "Standard_D2s_v3", "zone": "elsewhere-9"}, "",
     "has no available offering"),
])
def test_entries_the_run_cannot_create_are_seed_errors(embedded, entry, field, message):
    """The error names its field as data (the runner finds the scenario line from it) and in its words."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        with pytest.raises(SeedError, match=message) as caught:
            seed_existing_nodes(sim, [entry])
    assert caught.value.field == "given.existingNodes[0]" + field
    assert str(caught.value).startswith(caught.value.field + ": ")
    assert str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)


def test_seeding_pins_only_what_the_entry_names_as_the_real_engine_does(embedded):
    """A zone-less entry is not pinned to a zone: the provider picks one as for any launch (zonal before
    regional at equal price: provider v1.14.0 allocationstrategy/stages/offering_rank.go), and the kubelet
    gets no zone label (the real engine's seeded NodeClaim pins only the entry's instance type, zone and
    capacity type: runner/engines/real/cluster/existing.py managed_nodeclaim)."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3"}])
        (claim,) = sim.claims
        assert claim.launched.zone not in ("", "0")
        assert "topology.kubernetes.io/zone" not in sim.result.nodes[0].kubelet_node_labels


def test_seeded_nodes_carry_what_the_real_clusters_controllers_give_them(embedded):
    """An unmanaged Node without an instance type is labelled linux (and the beta key kube-controller-manager
    mirrors); a managed Node whose kubelet reports does not keep a NoSchedule `unreachable` taint
    (the node lifecycle controller's doNoScheduleTaintingPass), the `not-ready` one it keeps."""
    taints = [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
              {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}]
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"name": "bare"},
                                  {"nodePool": "default", "instanceType": "Standard_D2s_v3", "initialized": False,
                                   "taints": taints}])
        labels = sim.cluster.get("Node", "bare")["metadata"]["labels"]
        assert (labels["kubernetes.io/os"], labels["beta.kubernetes.io/os"]) == ("linux", "linux")
        (claim,) = sim.claims
        keys = {t["key"] for t in sim.cluster.get("Node", claim.node_name)["spec"]["taints"]}
        assert "node.kubernetes.io/not-ready" in keys and "node.kubernetes.io/unreachable" not in keys


def test_a_deleted_nodes_mirror_pod_is_collected_and_a_held_notready_node_has_the_noexecute_taint(embedded):
    """Once a Node is gone kube-controller-manager's garbage collector deletes what it owns (a mirror pod,
    which no drain evicts); a node whose kubelet stays NotReady (uninitialized, with the not-ready taint) gets
    the node lifecycle controller's NoExecute not-ready taint too."""
    mirror = pod("mirror")
    mirror["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u", "controller": True}]
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "deleting": True, "pods": [mirror]},
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "initialized": False,
             "taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}])
        held = sim.claims[1]
        taints = {(t["key"], t.get("effect")) for t in sim.cluster.get("Node", held.node_name)["spec"].get("taints") or []}
        assert {("node.kubernetes.io/not-ready", "NoSchedule"), ("node.kubernetes.io/not-ready", "NoExecute")} <= taints
        sim.converge()
        assert sim.result.pods["default/mirror"].state == "deleted"


def test_a_dumps_history_is_kept(embedded):
    """createdAt, initializedAt, lastPodEventTime, a deletionTimestamp and a drifted hash from a dump: the
    NodeClaim's age and disruption clocks continue from them (the simulation starts at EPOCH here)."""
    from harness.loop.clock import EPOCH
    from harness.loop.lifecycle.hashes import NODECLASS_HASH, NODEPOOL_HASH
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "createdAt": "2025-12-31T00:00:00Z",
             "initializedAt": "2025-12-31T00:01:00Z", "lastPodEventTime": "2025-12-31T06:00:00Z",
             "drifted": "NodeClassDrifted", "annotations": {NODECLASS_HASH: "123", NODEPOOL_HASH: "456"},
             "pods": [pod("running")]},
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "deleting": "2025-12-31T23:00:00Z"}])
        drifted, deleting = sim.claims
        assert drifted.created_at == EPOCH - 86400 and drifted.obj["metadata"]["creationTimestamp"] == "2025-12-31T00:00:00Z"
        assert drifted.dis.initialized_at == EPOCH - 86400 + 60 and drifted.dis.last_pod_event == EPOCH - 18 * 3600
        ann = drifted.obj["metadata"]["annotations"]
        assert ann[NODECLASS_HASH] == "123" and ann[NODEPOOL_HASH] != "456"     # only the drifted hash is the dump's
        assert sim.state.disruption.pod_started["default/running"] == EPOCH          # no startTime: the start
        assert deleting.dis.deleting_since == EPOCH - 3600


def test_a_creation_after_the_start_is_refused(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        with pytest.raises(SeedError, match=r"given.existingNodes\[0\].createdAt: 2026-02-01T00:00:00Z is after"):
            seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D2s_v3",
                                       "createdAt": "2026-02-01T00:00:00Z"}])


def test_a_dumped_nodeclaims_requests_win_over_the_estimate(embedded):
    """`requests` (a dump's NodeClaim spec.resources.requests) is what the seeded NodeClaim asks for; without
    it, its pods' requests (plus the DaemonSets' overhead: harness/loop/provisioning/nodeclaimobject.py seeded_nodeclaim)."""
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D4s_v3",
                                   "requests": {"cpu": "2500m", "pods": "7"}, "pods": [pod("running", cpu="1")]}])
        (claim,) = sim.claims
        assert claim.obj["spec"]["resources"]["requests"] == {"cpu": "2500m", "pods": "7"}


@pytest.mark.parametrize("ready, key, condition", [
    (False, "node.kubernetes.io/not-ready", ("False", "KubeletNotReady")),
    ("Unknown", "node.kubernetes.io/unreachable", ("Unknown", "NodeStatusUnknown")),
])
def test_a_managed_node_seeded_not_ready_counts_as_disrupting(embedded, ready, key, condition):
    """`ready` false or Unknown: the Node's Ready condition and the node lifecycle controller's taints of both
    effects (the dump's own not-ready/unreachable taints replaced by them), after its initialization; its
    NodePool's budget counts it as disrupting (core BuildDisruptionBudgetMapping: Ready not True), and no pod is
    planned onto it."""
    from harness.loop.disruption.candidates import state_nodes
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        seed_existing_nodes(sim, [{"nodePool": "default", "instanceType": "Standard_D4s_v3", "ready": ready,
                                   "taints": [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
                                              {"key": "team", "value": "a", "effect": "NoSchedule"}]},
                                  {"nodePool": "default", "instanceType": "Standard_D4s_v3"}])
        down, up = sim.claims
        assert down.initialized and up.initialized
        node = sim.cluster.get("Node", down.node_name)
        (cond,) = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert (cond["status"], cond["reason"]) == condition
        assert {(t["key"], t["effect"]) for t in node["spec"]["taints"]} == {
            ("team", "NoSchedule"), (key, "NoSchedule"), (key, "NoExecute")}
        assert [sn.ready for sn in state_nodes(sim.state) if sn.claim is down] == [False]
        existing = {n.nodeclaim: n for n in sim.provisioner.existing_nodes()}
        assert key in {t.key for t in existing[down.result.name].taints}


def test_a_nodeclaim_of_another_hash_version_is_restamped_unless_its_nodepool_is_at_the_releases(embedded):
    """Core's NodePool hash controller (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodepool/hash/controller.go
    updateNodeClaimHash): a NodePool without the release's hash-version annotation gets its NodeClaims of another
    version re-stamped, the current hash too unless Drifted; a NodePool already at it re-stamps nothing."""
    from harness.loop.lifecycle.hashes import NODEPOOL_HASH, NODEPOOL_HASH_VERSION, nodepool_hash
    old = {NODEPOOL_HASH_VERSION: "v2", NODEPOOL_HASH: "123"}
    stamped = nodepool()
    stamped["metadata"]["name"] = "stamped"
    stamped["metadata"]["annotations"] = {NODEPOOL_HASH_VERSION: "v3"}
    with simulation(embedded, [nodeclass(), nodepool(), stamped]) as sim:
        seed_existing_nodes(sim, [
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "annotations": old},
            {"nodePool": "default", "instanceType": "Standard_D2s_v3", "annotations": old, "drifted": "NodePoolDrifted"},
            {"nodePool": "stamped", "instanceType": "Standard_D2s_v3", "annotations": old}])
        current, drifted, kept = (c.obj["metadata"]["annotations"] for c in sim.claims)
        np = sim.cluster.get("NodePool", "default")
        assert current[NODEPOOL_HASH_VERSION] == "v3" and current[NODEPOOL_HASH] == nodepool_hash(np, sim.state.profile)
        assert drifted[NODEPOOL_HASH_VERSION] == "v3" and drifted[NODEPOOL_HASH] == "123"
        assert kept[NODEPOOL_HASH_VERSION] == "v2"
        sim.converge()
        assert [c.dis.drifted for c in sim.claims[:3]] == [None, "NodePoolDrifted", None]


def test_a_refused_nodepool_is_named_as_the_reason_a_node_cannot_be_seeded():
    """A NodePool the release's CRD refuses (Balanced before core v1.14.0) leaves its seeded nodes nothing to come
    from: the error says the API server's words, on both engines (runner/engines/real/cluster/existing.py too)."""
    from harness.loop.provisioning.nodeclaimobject import refused_because
    from harness.loop.result import NodePoolResult
    assert refused_because(None) == "" and refused_because(NodePoolResult("default")) == ""
    refused = NodePoolResult("default", accepted=False, stage="admission", message='Unsupported value: "Balanced"')
    assert refused_because(refused) == ': the API server refused it at admission: Unsupported value: "Balanced"'
