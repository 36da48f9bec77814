"""harness/loop/provisioning/provisioner.py: core's provisioner, pending pods -> NodeClaims."""
from __future__ import annotations

from harness.loop.provisioning.provisioner import NO_DYNAMIC_NODEPOOLS
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation


def test_a_pending_pod_gets_one_nodeclaim_and_a_nomination(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        assert sim.provisioner.reconcile()
        (c,) = sim.claims
        assert c.result.pods == ["default/web"] and c.template.name == "default"
        assert sim.state.nominated == {"default/web": c.result.name}
        assert sim.state.launches_for == {"default/web": 1}
        obj = sim.cluster.get("NodeClaim", c.result.name)
        reqs = {r["key"]: r for r in obj["spec"]["requirements"]}
        assert reqs["node.kubernetes.io/instance-type"]["values"] == ["Standard_D2s_v3", "Standard_D4s_v3"]
        assert reqs["karpenter.sh/capacity-type"]["values"] == ["on-demand"]
        assert "kubernetes.io/hostname" not in reqs
        assert obj["metadata"]["ownerReferences"][0]["name"] == "default"
        assert obj["spec"]["resources"]["requests"]["cpu"] == "100m"
        # a NodeClaim without a provider id holds every pass (cluster state not synced): nothing more
        assert not sim.provisioner.reconcile()
        assert len(sim.claims) == 1


def test_no_ready_nodepool_is_no_dynamic_nodepools_found(embedded):
    with simulation(embedded, [nodepool(), pod("web")]) as sim:       # no AKSNodeClass: not Ready
        assert not sim.provisioner.reconcile()
        pr = sim.result.pods["default/web"]
        assert pr.karpenter_error == pr.reason == NO_DYNAMIC_NODEPOOLS
        # no pod event: core v1.14.0 pkg/controllers/provisioning/provisioner.go Schedule only marks the
        # decision in cluster state for ErrNodePoolsNotFound
        assert pr.events == []
        assert sim.claims == []


def test_a_pod_no_template_fits_gets_the_schedulers_error_and_no_claim(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("huge", "64")]) as sim:
        assert not sim.provisioner.reconcile()
        pr = sim.result.pods["default/huge"]
        assert pr.karpenter_error and pr.events == [f"Failed to schedule pod, {pr.karpenter_error}"]
        assert sim.claims == []


def test_templates_record_instance_types_unless_asked_not_to(embedded):
    with simulation(embedded, [nodeclass(), nodepool()]) as sim:
        (t,) = sim.templates(record=False)
        assert t.name == "default" and {it.name for it in t.instance_types} == {"Standard_D2s_v3", "Standard_D4s_v3"}
        assert sim.result.instance_types == {}
        sim.templates()
        assert set(sim.result.instance_types) == {"Standard_D2s_v3", "Standard_D4s_v3"}


def test_existing_nodes_show_in_flight_claims_by_their_labels(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web", "250m")]) as sim:
        sim.provisioner.reconcile()
        assert sim.provisioner.existing_nodes() == []          # not launched: not in cluster state
        sim.launch.reconcile()
        (c,) = sim.claims
        (n,) = sim.provisioner.existing_nodes()
        assert (n.name, n.nodeclaim) == (c.launched.vm_name, c.result.name)
        # the pod planned onto it is pending, not counted: each pass plans it again (StateNode counts
        # bound pods alone)
        assert n.requested == {}
        assert n.labels["karpenter.sh/nodepool"] == "default"


def test_remaining_resources_subtract_launched_capacity(embedded):
    limited = nodepool()
    limited["spec"]["limits"] = {"cpu": "4"}
    with simulation(embedded, [nodeclass(), limited, pod("web")]) as sim:
        sim.provisioner.reconcile()
        sim.launch.reconcile()
        (c,) = sim.claims
        cpu = c.launched.instance_type.capacity["cpu"]
        assert sim.provisioner.remaining_resources().remaining["default"]["cpu"] == 4000 - cpu


def test_a_pod_placed_on_an_in_flight_node_is_nominated_by_namespace_and_name(embedded):
    """The second pass plans the new pod and the one already planned onto the in-flight NodeClaim there
    again (core plans every pending pod each pass, existing and in-flight nodes first): both
    nominations are keyed like every pod map (namespace/name; a uid key made existing_nodes raise
    KeyError), and no second NodeClaim is made."""
    from tests.loop.loopkit import launched
    with simulation(embedded) as sim:
        claim = launched(sim, pod("first", cpu="100m"))
        sim.apply([pod("second", cpu="200m")])
        assert [pv.name for pv in sim.provisioner.pending_pods()] == ["first", "second"]
        assert not sim.provisioner.reconcile()                  # no new NodeClaim
        assert sim.state.nominated["default/first"] == sim.state.nominated["default/second"] == claim.result.name
        (node,) = sim.provisioner.existing_nodes()
        assert node.nodeclaim == claim.result.name and len(sim.claims) == 1


def test_a_larger_pod_arriving_takes_the_in_flight_node_and_the_planned_pod_gets_a_new_claim(embedded):
    """Every pass plans every pending pod, the largest first, existing and in-flight nodes before new
    ones (core v1.14.0 pkg/controllers/provisioning/provisioner.go Schedule, scheduling/scheduler.go
    Solve): a 1.5-CPU pod arriving while the 2-vCPU NodeClaim launched for a 1-CPU pod is in flight takes
    that node in the plan, and the 1-CPU pod gets the new NodeClaim. (Counting the first pod's requests
    on its in-flight node, as a reservation, gave the new NodeClaim to the larger pod instead.)"""
    from tests.loop.loopkit import launched
    with simulation(embedded) as sim:
        claim = launched(sim, pod("small", cpu="1"))
        assert claim.launched.instance_type.name == "Standard_D2s_v3"
        sim.apply([pod("large", cpu="1500m")])
        assert sim.provisioner.reconcile()
        _, new = sim.claims
        assert new.result.pods == ["default/small"]
        assert sim.state.nominated["default/large"] == claim.result.name
        assert sim.state.nominated["default/small"] == new.result.name


def test_best_effort_lowers_min_values_to_what_the_instance_types_meet(embedded):
    """MIN_VALUES_POLICY=BestEffort (core v1.14.0 scheduling/nodeclaim.go CanAdd): instance-type Exists
    minValues 3 over two types becomes In [both] minValues 2, which the NodeClaim CRD admits, and the NodeClaim
    says it was relaxed (scheduler.go addToNewNodeClaim)."""
    np = nodepool(requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 3}])
    with simulation(embedded, [nodeclass(), np, pod("web")], min_values_policy="BestEffort") as sim:
        assert sim.provisioner.reconcile()
        (c,) = sim.claims
        obj = sim.cluster.get("NodeClaim", c.result.name)
        (it,) = [r for r in obj["spec"]["requirements"] if r["key"] == "node.kubernetes.io/instance-type"]
        assert it == {"key": "node.kubernetes.io/instance-type", "operator": "In",
                      "values": ["Standard_D2s_v3", "Standard_D4s_v3"], "minValues": 2}
        assert obj["metadata"]["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"] == "true"


def test_a_nodeclaim_not_relaxed_says_false(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        assert sim.provisioner.reconcile()
        obj = sim.cluster.get("NodeClaim", sim.claims[0].result.name)
        assert obj["metadata"]["annotations"]["karpenter.sh/nodeclaim-min-values-relaxed"] == "false"


def test_core_v1_0_and_v0_36_nodeclaims_carry_no_nodeclass_key(embedded):
    """Core v1.0.6 / v0.36.1 NewNodeClaimTemplate adds only the NodePool label (probe core.nodeClassLabel):
    the NodeClaim passes provider v0.7.5's / v0.5.4's CRD, which restricts karpenter.azure.com keys; core
    v0.36 writes it as karpenter.sh/v1beta1 (the only version v0.5's CRDs serve), with no relaxed annotation
    (MIN_VALUES_POLICY is core v1.6.0+)."""
    v1beta1 = nodepool(nodeClassRef={"name": "default"})
    v1beta1["apiVersion"] = "karpenter.sh/v1beta1"          # provider v0.5 serves no karpenter.sh/v1
    for profile, api in (("v0.7.5", "karpenter.sh/v1"), ("v0.5.4", "karpenter.sh/v1beta1")):
        nc = {**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}
        with simulation(embedded, [nc, v1beta1, pod("web")], profile=profile) as sim:
            assert sim.provisioner.reconcile()
            (c,) = sim.claims
            obj = sim.cluster.get("NodeClaim", c.result.name)
            assert obj["apiVersion"] == api
            keys = {r["key"] for r in obj["spec"]["requirements"]}
            assert "karpenter.azure.com/aksnodeclass" not in keys | set(obj["metadata"]["labels"])
            assert "karpenter.sh/nodeclaim-min-values-relaxed" not in obj["metadata"]["annotations"]
            assert obj["spec"]["nodeClassRef"]["name"] == "default"


def _agent_on_d4s() -> dict:
    """A DaemonSet asking for 1500m that runs only on Standard_D4s_v3: two daemon overhead groups, one empty."""
    term = {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                  "values": ["Standard_D4s_v3"]}]}
    spec = pod("agent", "1500m")["spec"]
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "agent"}},
                     "template": {"metadata": {"labels": {"app": "agent"}}, "spec": spec}}}


def _requested_cpu(cluster, profile: str, seed: int) -> tuple[str, int]:
    with simulation(cluster, [nodeclass(), nodepool(), _agent_on_d4s(), pod("p", "1")], profile=profile, seed=seed) as sim:
        before = sim.state.daemon_order_rng.getstate()
        assert sim.provisioner.reconcile()
        (c,) = sim.claims
        draws = int(sim.state.daemon_order_rng.getstate() != before)
        return sim.cluster.get("NodeClaim", c.result.name)["spec"]["resources"]["requests"]["cpu"], draws


def test_daemon_requests_follow_a_seeded_order_of_the_groups(embedded):
    """Core v1.14.0 reads a template's daemon overhead groups in a Go map's order (scheduler.go
    buildDaemonOverheadGroups, lo.Values): the NodeClaim asks for the DaemonSet's 1500m when the empty
    group comes first, for nothing more when it comes last. Each seed replays its order; some seed
    reaches each."""
    got = {seed: _requested_cpu(embedded, "v1.14.2", seed) for seed in range(1, 7)}
    assert {cpu for cpu, _ in got.values()} == {"2500m", "1"}
    assert all(draws == 1 for _, draws in got.values())
    assert _requested_cpu(embedded, "v1.14.2", 1) == got[1]


def test_one_daemon_overhead_per_template_draws_nothing(embedded):
    """Before core v1.14.0 the template has one overhead (scheduler.go getDaemonOverhead), so one group:
    no draw, and the DaemonSet counts on every type."""
    assert _requested_cpu(embedded, "v1.13.1", 1) == ("2500m", 0)
