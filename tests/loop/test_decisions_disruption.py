"""The disruption side's decision record (harness/loop/disruption/record.py and the disruption, orchestration and
termination controllers): why a node is still here and why it was disrupted, in the record's words."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.scenario.load import load_scenarios, load_scenarios_text
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

ROOT = Path(__file__).resolve().parents[2]

# two drifting NodePools' nodes: `{extra}` adds to the NodePool template's spec, `{annotations}` to the pods
SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: decisions}}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3, Standard_D4s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {{name: default}}
    spec: {{imageFamily: Ubuntu2204}}
  - &np
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: default}}
    spec:
      disruption: {{consolidateAfter: Never, budgets: [{{nodes: "1"}}]}}
      template:
        spec:
          nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
          {extra}
          requirements:
            - {{key: node.kubernetes.io/instance-type, operator: In, values: [Standard_D2s_v3]}}
            - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: web}}
    spec:
      replicas: {replicas}
      template:
        metadata: {{labels: {{app: web}}, annotations: {{{annotations}}}}}
        spec:
          containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: 1500m}}}}}}]
  {pdb}
expect: {{}}
steps:
  - description: a label on the NodePool's template drifts the nodes
    apply:
      - <<: *np
        spec:
          disruption: {{consolidateAfter: Never, budgets: [{{nodes: "1"}}]}}
          template:
            metadata: {{labels: {{team: blue}}}}
            spec:
              nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
              {extra}
              requirements:
                - {{key: node.kubernetes.io/instance-type, operator: In, values: [Standard_D2s_v3]}}
                - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
"""

PDB = """- apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata: {name: web}
    spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}"""


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _run(cluster, replicas=1, extra="", annotations="", pdb=""):
    text = SCENARIO.format(replicas=replicas, extra=extra, annotations=annotations, pdb=pdb)
    sc = load_scenarios_text(text, "decisions.scenario.yaml", ROOT / "scenarios")[0]
    out = run(sc, "upstream", cluster)
    assert out.error is None, out.error
    return out.final


def _about(result, subject: str, action: str | None = None) -> list[str]:
    return [d.reason for d in result.decisions if d.subject == subject and (action is None or d.action == action)]


def test_a_node_kept_by_its_pdb_says_which(cluster):
    r = _run(cluster, pdb=PDB)
    assert r.disruptions == []
    (claim,) = [n.name for n in r.nodeclaims]
    pod_key = next(k for k in r.pods if k.startswith("default/web-"))
    why = f"Pdb prevents pod evictions (PodDisruptionBudget=[default/web]) (pod {pod_key})"
    # once for each disruption class (NewCandidate's verdict is per class), not once per pass
    assert _about(r, f"NodeClaim/{claim}", "candidate-kept") == [
        f"not a candidate for Emptiness and consolidation: {why}", f"not a candidate for Drift: {why}"]
    d = next(d for d in r.decisions if d.action == "candidate-kept" and d.data["method"] == "eventual")
    assert d.data == {"method": "eventual", "by": "pdb"} and f"Pod/{pod_key}" in d.related


def test_a_node_kept_by_a_nomination_names_the_pod_and_until_when(embedded):
    """A pod the provisioner put on an existing node nominates it for 20 s (statenode.go Nominate)."""
    from harness.loop.disruption.candidates import GRACEFUL, Cluster
    with simulation(embedded, [nodeclass(), nodepool(), pod("a", "500m")]) as sim:
        sim.converge()
        (c,) = sim.claims
        sim.apply([pod("b", "100m", nodeSelector={"not-there": "x"})])
        sim.state.nominated["default/b"] = c.result.name                   # as Results.Record would
        sim.podevents.reconcile()
        until = sim.clock.now() + 20 - sim.clock.start
        view = Cluster(sim.state)
        assert view.candidates(lambda x: True, GRACEFUL, lambda n: False, "empty") == []
        view.candidates(lambda x: True, GRACEFUL, lambda n: False, "empty")          # the same status: said once
        kept = [t for t in _about(sim.result, f"NodeClaim/{c.result.name}", "candidate-kept") if "nominated" in t]
        assert kept == [(f"not a candidate for Emptiness and consolidation: Node is nominated for a pending pod: "
                         f"nominated for pod(s) default/b (provisioning planned them on it) until +{until:.0f}s "
                         "(a nomination holds 20 s after each provisioning pass that renews it)")]


def test_a_budget_used_up_by_a_draining_node_names_it_and_the_count(cluster):
    """Two drifted nodes, a budget of one: the first is replaced and its drain waits on a do-not-disrupt pod
    until terminationGracePeriod; the second is held by the budget that the deleting one uses."""
    r = _run(cluster, replicas=2, extra="terminationGracePeriod: 1h",
             annotations='karpenter.sh/do-not-disrupt: "true"')
    (first,) = [d["nodeClaim"] for d in r.disruptions]
    (second,) = [c.name for c in r.nodeclaims if c.name != first and not c.deleted
                 and any(d.subject == f"NodeClaim/{c.name}" and d.action == "drifted" for d in r.decisions)]
    assert (f"Drift: budget for Drifted on NodePool default: 1 allowed (nodes 1, active always), 1 in use by NodeClaim {first} "
            "being deleted") in _about(r, f"NodeClaim/{second}", "candidate-kept")
    # the drifting node stays a candidate despite its do-not-disrupt pod: Drift is eventual
    assert any("still a candidate for Drift although Pod has \"karpenter.sh/do-not-disrupt\" annotation" in t and
               "terminationGracePeriod (1h)" in t for t in _about(r, f"NodeClaim/{second}", "candidate-eventual"))
    started = _about(r, f"NodeClaim/{first}", "command-started")
    # its do-not-disrupt pod is not currently reschedulable (core v1.4.0 #2033): nothing to replace
    assert started == [(f"disrupting via Drift: Drifted/delete [{first}] (savings $0.1100/h); the candidates are "
                        "deleted now; within budget for Drifted on NodePool default: 1 allowed (nodes 1, active "
                        "always), 0 in use")]
    blocked = [d.reason for d in r.decisions if d.action == "drain-blocked" and f"NodeClaim/{first}" in d.related]
    assert blocked == ['the drain of Node aks-' + first + ' cannot evict it: karpenter.sh/do-not-disrupt "true": '
                       'no end; terminationGracePeriod deletes it by +1h']


@pytest.mark.parametrize("profile,kept", [("v1.6.1", True), ("v1.6.8", False)])
def test_drift_of_an_empty_node_with_consolidation_disabled(cluster, profile, kept):
    """Core v1.5.0-v1.6.1's Drift skips an empty candidate (driftEmptyCandidates: skip, #2180) and Emptiness
    refuses a NodePool with consolidation disabled: the record says both. Core v1.6.2 deletes it."""
    (sc,) = load_scenarios(ROOT / "scenarios/releases/core/drift-empty-node.scenario.yaml")
    out = run(sc, profile, cluster)
    assert not out.mismatches
    r = out.final
    (claim,) = [c.name for c in r.nodeclaims]
    drift = [d for d in r.decisions if d.subject == f"NodeClaim/{claim}" and d.action == "candidate-kept"
             and d.data.get("method") == "drift"]
    started = _about(r, f"NodeClaim/{claim}", "command-started")
    if kept:
        (d,) = drift
        assert d.reason == ("Drift skips it: the candidate is empty (no reschedulable pods) and this core leaves "
                            "empty drifted nodes to Emptiness (driftEmptyCandidates: skip), which refuses NodePool "
                            "default: it has consolidation disabled (consolidateAfter: Never), so no method removes "
                            "the node")
        assert "driftEmptyCandidates" in d.switches
        assert started == []
        assert 'Emptiness: NodePool "default" has consolidation disabled (consolidateAfter: Never)' in \
            _about(r, f"NodeClaim/{claim}", "candidate-kept")
    else:
        assert drift == []
        # the budget it went under is named, one that allows it included (10% of 1 node rounds up to 1)
        assert started == [(f"disrupting via Drift: Drifted/delete [{claim}] (savings $0.1100/h); the candidates "
                            "are deleted now; within budget for Drifted on NodePool default: 1 allowed (nodes 10% "
                            "of 1 = 1, active always), 0 in use")]
        assert _about(r, f"NodeClaim/{claim}", "nodeclaim-deleted")


def test_nothing_is_recorded_when_the_record_is_off(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("a", "500m")]) as sim:
        sim.state.decisions.enabled = False
        sim.converge()
        (c,) = sim.claims
        sim.state.nominated["default/a"] = c.result.name
        sim.podevents.reconcile()
        from harness.loop.disruption.candidates import GRACEFUL, Cluster
        Cluster(sim.state).candidates(lambda x: True, GRACEFUL, lambda n: False, "empty")
        assert sim.result.decisions == [] and sim.state.disruption.said == {}


def test_a_do_not_disrupt_duration_says_until_when(cluster):
    (sc,) = [s for s in load_scenarios(ROOT / "scenarios/disruption/protection.scenario.yaml")
             if s.name == "do-not-disrupt-duration-expires"]
    r = run(sc, "upstream", cluster).final
    first = next(d.subject for d in r.decisions if d.action == "candidate-kept")
    kept = [d for d in r.decisions if d.subject == first and d.action == "candidate-kept"]
    assert len(kept) == 2 and all(d.data["by"] == "do-not-disrupt" and d.reason.endswith('("10m": until +10m)')
                                  for d in kept)
    (pod_ref,) = {ref for d in kept for ref in d.related if ref.startswith("Pod/")}
    # after the ten minutes, single-node consolidation replaces the node: the command names its reason and savings
    (started,) = [d for d in r.decisions if d.action == "command-started"]
    assert started.subject == kept[0].subject and started.reason.startswith(
        "disrupting via single-node consolidation: Underutilized/replace [")
    assert started.data["decision"] == "replace" and started.data["savings"] > 0
    assert any(d.action == "pod-evicted" and d.subject == pod_ref for d in r.decisions)
