"""harness/judge/zonesym.py: outcomes that differ only by which of the zones a scenario cannot tell apart
got which node are one outcome; a scenario that names one zone, or a catalog that offers a SKU in some zones
only, keeps its zones apart."""
from __future__ import annotations

import copy

from harness.scenario.load import load_scenarios_text
from harness.judge.zonesym import canonical_digest, symmetric_zones
from harness.judge.outcome import digest, outcome_view
from tests.judge.test_outcome import ZONE, _node, _run

SCENARIO = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: z}
given: {region: eastus, skus: [Standard_D2s_v5]}
manifests:
- apiVersion: karpenter.azure.com/v1beta1
  kind: AKSNodeClass
  metadata: {name: default}
  spec: {}
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {name: general}
  spec:
    template:
      spec:
        nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
        requirements:
        - {key: topology.kubernetes.io/zone, operator: In, values: %s}
"""
SKU = {"name": "Standard_D2s_v5", "locationInfo": [{"location": "eastus", "zones": ["1", "2", "3"]}], "restrictions": []}


def _scenario(zones: str):
    (sc,) = load_scenarios_text(SCENARIO % zones, "z.scenario.yaml")
    return sc


def test_a_scenario_that_names_every_zone_alike_cannot_tell_them_apart():
    assert symmetric_zones(_scenario("[eastus-1, eastus-2, eastus-3]"), [SKU]) == ["eastus-1", "eastus-2", "eastus-3"]


def test_naming_some_zones_or_offering_a_sku_in_some_tells_them_apart():
    assert symmetric_zones(_scenario("[eastus-1, eastus-2]"), [SKU]) == []
    partial = {**SKU, "locationInfo": [{"location": "eastus", "zones": ["1", "2"]}]}
    assert symmetric_zones(_scenario("[eastus-1, eastus-2, eastus-3]"), [SKU, partial]) == []
    restricted = {**SKU, "restrictions": [{"type": "Zone", "values": ["eastus"]}]}
    assert symmetric_zones(_scenario("[eastus-1, eastus-2, eastus-3]"), [restricted]) == []


def test_a_relabeling_of_symmetric_zones_is_the_same_outcome():
    zones = ["eastus-1", "eastus-2", "eastus-3"]
    a = _run(_node(0, "general", "Standard_D2s_v5", "eastus-1", ["default/web-a"]),
             _node(1, "spot", "Standard_D2s_v5", "eastus-2", ["default/web-b"]))
    b = copy.deepcopy(a)
    for n, z in zip(b.nodes, ["eastus-3", "eastus-1"]):
        n.zone, n.labels[ZONE] = z, z
        n.nodeclaim_requirements = [{"key": ZONE, "operator": "In", "values": [z]}]
    assert digest(outcome_view(a)) != digest(outcome_view(b))          # pinned zones: a field differs
    assert canonical_digest(a, zones) == canonical_digest(b, zones)
    b.nodes[1].capacity_type = "spot"                                   # anything else still tells them apart
    assert canonical_digest(a, zones) != canonical_digest(b, zones)
