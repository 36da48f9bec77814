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


# -- scopes the controllers touch where the situation arises (LoopState.touch_scope) --------------------------
def _notices_naming(profile: str, switch: str, touched: set[str]) -> list[str]:
    from harness.model.upstream.corebehaviour import CoreBehaviour
    from harness.model.upstream.profile import load_profile
    return [n for n in CoreBehaviour.of(load_profile(profile)).notices(touched) if f": {switch} is modeled" in n]


def test_a_budget_over_a_node_whose_instance_is_deleting_touches_its_scope(embedded):
    """BuildDisruptionBudgetMapping over a NodeClaim with InstanceTerminating: the scope of
    instanceTerminatingInBudget (#1735), said at core v0.36.1 (provider v0.6.3), not from core v1.0.4 on."""
    from harness.loop.disruption.candidates import Cluster
    with simulation(embedded) as sim:
        sim.run([nodeclass(), nodepool(), pod("a")])
        (claim,) = [c for c in sim.state.claims if c.initialized]
        Cluster(sim.state).budget_mapping("Empty")
        assert "instanceTerminatingBudget" not in touched_scopes(sim.state)
        claim.dis.instance_terminating = True
        Cluster(sim.state).budget_mapping("Empty")
        assert "instanceTerminatingBudget" in touched_scopes(sim.state)
    (said,) = _notices_naming("v0.6.3", "instanceTerminatingInBudget", {"instanceTerminatingBudget"})
    assert said == ("core v0.36.1: instanceTerminatingInBudget is modeled as v1.14.0 (a node whose instance is being "
                    "deleted leaves its NodePool's disruption budget, so another disruption may start while its VM is "
                    "still deleting; changed in v1.1.0, kubernetes-sigs/karpenter#1735); answer with --engine real")
    for profile in ("v0.7.0", "upstream"):          # core v1.0.4 has the backport (#1736)
        assert _notices_naming(profile, "instanceTerminatingInBudget", {"instanceTerminatingBudget"}) == []


SPREAD_WITHOUT_SELECTOR = {"topologySpreadConstraints": [
    {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}]}


def test_a_term_without_label_selector_touches_its_scope(embedded):
    """A pod Karpenter schedules with a spread (or pod affinity term) that has no labelSelector: the scope of
    nilLabelSelectorTopology (#2511); one with a selector does not touch it."""
    with simulation(embedded) as sim:
        selected = {"topologySpreadConstraints": [{**SPREAD_WITHOUT_SELECTOR["topologySpreadConstraints"][0],
                                                   "labelSelector": {"matchLabels": {"app": "a"}}}]}
        labelled = pod("a", **selected)
        labelled["metadata"]["labels"] = {"app": "a"}
        sim.run([nodeclass(), nodepool(), labelled])
        assert "nilLabelSelector" not in touched_scopes(sim.state)
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), nodepool(), pod("a", **SPREAD_WITHOUT_SELECTOR)])
        assert "nilLabelSelector" in touched_scopes(sim.state)
    assert result.pods["default/a"].node                 # scheduled, as every core but v1.7.0 does
    assert result.core_notices == []


def test_only_core_v170_panics_on_a_term_without_label_selector():
    """Core v1.7.0 alone panics (#2479 brought it, #2515/#2511 fixed it), and no provider release pins it: no
    release profile says it; a profile at core v1.7.0 would."""
    from harness.model.upstream.corebehaviour import CoreBehaviour, SwitchValues, newest_values
    from harness.model.upstream.releaseindex import release_profiles
    for profile in [*release_profiles(), "upstream"]:
        assert _notices_naming(profile, "nilLabelSelectorTopology", {"nilLabelSelector"}) == [], profile
    newest = newest_values()
    at_170 = CoreBehaviour("v1.7.0", SwitchValues({**newest, "nilLabelSelectorTopology": "panics"}, newest))
    assert at_170.notices({"nilLabelSelector"}) == [
        "core v1.7.0: nilLabelSelectorTopology is modeled as v1.14.0 (a term without a labelSelector selects no pods "
        "and the pod is scheduled; changed in v1.8.0, kubernetes-sigs/karpenter#2511); answer with --engine real"]
    assert at_170.notices({"provisioning"}) == []


def test_an_unpriced_candidate_is_decided_not_said(embedded):
    """scenarios/releases/core/unpriced-candidate: consolidation prices a candidate whose zone is no longer
    offered; the switch is implemented, so the run touches its scope and says nothing: at provider v1.7.2 (core
    v1.7.1, an error there) the decision that skipped the candidate names unpricedCandidate, at v1.10.2 none."""
    from harness.runner.engines import get_engine
    from harness.runner.engines.base import execute
    from harness.scenario.load import load_scenarios
    from tests.loop.loopkit import ROOT
    sc = next(sc for sc in load_scenarios(ROOT / "scenarios/releases/core/unpriced-candidate.scenario.yaml")
              if sc.name == "core-unpriced-candidate-from-the-start")
    engine = get_engine("simulated")
    for profile, failed in (("v1.7.2", 1), ("v1.10.2", 0)):
        o = execute(engine, sc, profile, embedded)
        assert o.error is None and not o.mismatches, profile
        assert not [n for n in o.final.core_notices if "unpricedCandidate" in n], profile
        skipped = [d for d in o.final.decisions if d.action == "consolidation-failed"]
        assert len(skipped) == failed and all("unpricedCandidate" in d.switches for d in skipped), profile
    assert _notices_naming("v1.7.2", "unpricedCandidate", {"unpricedCandidate"}) == []
