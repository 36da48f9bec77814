"""harness/loop/kube/workloads.py: manifests into the cluster, Deployment pods."""
from __future__ import annotations

import copy

from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation


def test_apply_orders_by_kind_and_copies_the_manifests(embedded):
    manifests = [pod("web"), nodepool(), nodeclass()]           # pod first, NodeClass last
    before = copy.deepcopy(manifests)
    with simulation(embedded, manifests) as sim:
        assert manifests == before
        assert sim.cluster.get("AKSNodeClass", "default") is not None
        assert sim.result.nodepools["default"].accepted
        assert list(sim.pod_views) == ["default/web"]
        assert sim.result.nodepools["default"].ready        # the NodeClass existed when validated


def test_deployment_pods_are_named_from_the_seeded_stream(embedded):
    with simulation(embedded, [deployment("web", replicas=3)], seed=3) as sim:
        names = [pr.name for pr in sim.result.pods.values()]
        assert len(names) == 3 and all(n.startswith("web-") and len(n) == len("web-") + 5 for n in names)
        assert {(pr.owner_kind, pr.owner_name) for pr in sim.result.pods.values()} == {("Deployment", "web")}
        assert sim.pod_views[f"default/{names[0]}"].labels == {"app": "web"}
    with simulation(embedded, [deployment("web", replicas=3)], seed=3) as again:
        assert [pr.name for pr in again.result.pods.values()] == names


def test_daemonset_is_remembered_not_created(embedded):
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
          "spec": {"template": {"spec": pod("x")["spec"]}}}
    with simulation(embedded, [ds]) as sim:
        ((obj, view),) = sim.state.daemonsets
        assert obj["metadata"]["name"] == "agent" and view.owner_kind == "DaemonSet"
        assert sim.result.pods == {}


def test_storage_class_goes_to_the_volume_model_only(embedded):
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "disk"},
          "provisioner": "disk.csi.azure.com", "volumeBindingMode": "WaitForFirstConsumer"}
    with simulation(embedded, [sc]) as sim:
        assert "disk" in sim.state.volumes.classes


def test_a_rejected_nodepool_is_recorded_with_its_admission_message(embedded):
    bad = nodepool()
    bad["spec"]["template"]["spec"]["requirements"].append({"key": "karpenter.sh/nodepool", "operator": "In",
                                                            "values": ["x"]})
    with simulation(embedded, [nodeclass(), bad]) as sim:
        res = sim.result.nodepools["default"]
        assert (res.accepted, res.stage) == (False, "admission")
        assert res.message
        assert any("NodePool default rejected" in line for line in sim.result.trace)


def _runtime_class(cpu: str) -> dict:
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "kata"},
            "handler": "kata", "overhead": {"podFixed": {"cpu": cpu}}}


def test_runtime_class_overhead_reaches_the_pods_requests_and_an_update_the_next_pods(embedded):
    """RuntimeClass admission writes overhead.podFixed into each new pod (k8s.io/kubernetes v1.36.3
    plugin/pkg/admission/runtimeclass/admission.go setOverhead); the loop counts it in the requests."""
    with simulation(embedded, [_runtime_class("1"), pod("a", runtimeClassName="kata"),
                               deployment("web", replicas=1)]) as sim:
        assert sim.result.pods["default/a"].requests["cpu"] == 1100
        sim.apply([_runtime_class("2"), pod("b", runtimeClassName="kata")])
        assert sim.cluster.get("RuntimeClass", "kata")["overhead"] == {"podFixed": {"cpu": "2"}}
        assert sim.result.pods["default/b"].requests["cpu"] == 2100
        assert sim.result.pods["default/a"].requests["cpu"] == 1100       # admission ran at its create only


def test_a_refused_bare_pod_is_a_rejected_result_and_a_deployments_pod_is_not_made(embedded):
    bad = deployment("web", replicas=2)
    bad["spec"]["template"]["spec"]["runtimeClassName"] = "missing"
    with simulation(embedded, [pod("a", overhead={"cpu": "1"}), bad]) as sim:
        assert sim.result.pods == {} and sim.pod_views == {}
        (pr,) = sim.result.rejected_pods.values()
        assert (pr.name, pr.state) == ("a", "rejected")
        assert pr.reason == 'pods "a" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'
        assert sim.result.pods_of("a") == [pr]


def _arrival(embedded, seed: int) -> tuple[tuple[str, ...], int]:
    """podsArrive: staggered - (the pods created at the apply, how many creations were held back)."""
    with simulation(embedded, [nodeclass(), nodepool()], seed=seed) as sim:
        sim.cfg.pods_arrive = "staggered"
        sim.apply([pod("a"), deployment("b", replicas=2), pod("c")])
        return tuple(sorted(pr.owner_name or pr.name for pr in sim.result.pods.values())), len(sim.workloads.late)


def test_staggered_arrival_holds_back_later_workloads_in_order(embedded):
    """The first workload of an apply always arrives; a later one may not, and then none after it does
    (kubectl creates in order); a Deployment's pods arrive together. Seeded: a seed replays its choice."""
    seen = {_arrival(embedded, seed) for seed in range(1, 13)}
    # in apply order (harness/backends/kinds.py): the Deployment first, then the Pods as listed
    assert seen <= {(("a", "b", "b", "c"), 0), (("a", "b", "b"), 1), (("b", "b"), 2)}
    assert len(seen) > 1
    assert all(_arrival(embedded, seed) == _arrival(embedded, seed) for seed in (1, 2))


def test_a_late_pod_is_planned_onto_the_nodeclaim_in_flight_and_nominates_it(embedded):
    """Released after the first round's launch, planned by the next before that NodeClaim's Node registers:
    onto it (core's Results.Record nominates it), not onto a new one."""
    seed = next(s for s in range(1, 40) if _arrival(embedded, s)[1] == 2)
    with simulation(embedded, [nodeclass(), nodepool()], seed=seed) as sim:
        sim.cfg.pods_arrive = "staggered"
        sim.apply([pod("a"), deployment("b", replicas=2), pod("c")])
        sim.converge()
        assert len(sim.claims) == 1
        claim = sim.claims[0].result.name
        assert any("2 pod(s) arrived after the first provisioning round" in t for t in sim.result.trace)
        late = [k for k, pr in sim.result.pods.items() if pr.owner_name != "b"]
        assert len(late) == 2
        assert {sim.state.nominated.get(k) for k in late} == {claim}
        assert all(pr.node == sim.claims[0].node_name for pr in sim.result.pods.values())


def _creation(embedded, seed: int, controller_pods: str) -> tuple[str, ...]:
    """The owners of an apply's pods in the order they were created (a Deployment's by its name)."""
    with simulation(embedded, [nodeclass(), nodepool()], seed=seed) as sim:
        sim.cfg.controller_pods = controller_pods
        sim.apply([pod("a"), deployment("b", replicas=2), pod("c"), deployment("d", replicas=1)])
        views = sorted(sim.pod_views.values(), key=lambda pv: pv.order)
        return tuple(pv.owner_name or pv.name for pv in views)


def test_controller_pods_first_by_default_raced_after_bare_pods_in_a_seeded_choice(embedded):
    """controllerPods: first (default) - the Deployments' pods, then the bare Pods; raced - each Deployment's
    pods before or after the apply's bare Pods (in apply order either way). Seeded: a seed replays its choice."""
    assert {_creation(embedded, seed, "first") for seed in (1, 2, 3)} == {("b", "b", "d", "a", "c")}
    seen = {_creation(embedded, seed, "raced") for seed in range(1, 13)}
    assert seen <= {("b", "b", "d", "a", "c"), ("b", "b", "a", "c", "d"), ("d", "a", "c", "b", "b"),
                    ("a", "c", "b", "b", "d")}
    assert ("a", "c", "b", "b", "d") in seen and ("b", "b", "d", "a", "c") in seen
    assert all(_creation(embedded, seed, "raced") == _creation(embedded, seed, "raced") for seed in (1, 2))


def test_the_checks_index_of_pods_answers_as_pods_of():
    """RunResult.pods_index: by name, else a refused pod's name, else the owner (or CronJob) of pods not deleted."""
    from harness.loop.result import PodResult, RunResult
    r = RunResult("s", "upstream", "embedded", 1)
    r.pods = {"d/a-1": PodResult("a-1", "d", "Deployment", "a"), "d/a-2": PodResult("a-2", "d", "Deployment", "a",
                                                                                     state="deleted"),
              "d/j-1": PodResult("j-1", "d", "Job", "j-7", cronjob="j"), "d/x": PodResult("x", "d")}
    r.rejected_pods = {"d/r": PodResult("r", "d", state="rejected")}
    index = r.pods_index()
    for name in ("a", "a-2", "j", "j-7", "x", "r", "nothing"):
        assert index(name) == r.pods_of(name), name


def _replicaset(name: str, replicas: int) -> dict:
    dep = deployment(name, replicas=replicas)
    return {**dep, "kind": "ReplicaSet", "spec": {**dep["spec"], "selector": {"matchLabels": {"app": name}}}}


def test_a_bare_replicaset_makes_its_pods_and_scales(embedded):
    with simulation(embedded, [_replicaset("workers", 2)]) as sim:
        pods = sim.result.pods.values()
        assert {(p.owner_kind, p.owner_name) for p in pods} == {("ReplicaSet", "workers")} and len(pods) == 2
        assert all(p.name.startswith("workers-") and len(p.name) == len("workers-") + 5 for p in pods)
        sim.apply([_replicaset("workers", 1)])
        assert [p.state for p in sim.result.pods.values()].count("deleted") == 1


def test_a_refused_deployment_pod_is_retried_once_admission_would_take_it(embedded):
    """No PriorityClass `high`: both pods are refused and the ReplicaSet records one FailedCreate; once the class
    exists the ReplicaSet controller's retry makes them (Workloads.reconcile)."""
    dep = deployment("web", replicas=2)
    dep["spec"]["template"]["spec"]["priorityClassName"] = "high"
    with simulation(embedded, [dep]) as sim:
        assert sim.result.pods == {}
        (event,) = [e for e in sim.result.events if e["reason"] == "FailedCreate"]
        assert event["kind"] == "ReplicaSet" and event["owner"] == "Deployment/web"
        assert event["message"].endswith("is forbidden: no PriorityClass with name high was found")
        assert not sim.workloads.reconcile()                 # nothing admission reads changed: no retry
        sim.apply([{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 10}])
        assert sim.workloads.reconcile()
        assert len(sim.result.pods) == 2 and sim.workloads.unmade() == {}
