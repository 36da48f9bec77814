"""Where `given.existingNodes` disagree with the catalog, the nodes win (harness/scenario/catalogamend.py): a
dump whose nodes sit in zones of a region its bundled catalog has without zones runs as sent, with one
notice per disagreement at `harness new` time, in the scenario and at run time; a hand-written scenario
gets the same; a typo stays an error at its line."""
from __future__ import annotations

import pytest
import yaml

from harness.scenario.catalogs import catalog, scenario_catalog
from harness.scenario.catalogamend import CAPACITY, REGION_ZONES, SIZE, SUBSET, ZONE, amend, find
from harness.scenario.load import load_scenarios, load_scenarios_text
from harness.scenario.yamlsource import SourceError
from tests.dump.test_dump_roundtrip import new, run

WCU = "catalog westcentralus (a snapshot) offers no zones in westcentralus"


def test_a_dump_in_zones_of_a_zoneless_catalog_runs_as_sent(tmp_path, capsys):
    out = new(tmp_path, "zones-against-catalog.yaml")
    err = capsys.readouterr().err
    text = out.read_text()
    (sc,) = load_scenarios(out)
    assert sc.region == "westcentralus" and sc.given["zones"] == ["1", "2"]
    # said at `harness new` time, as a comment above the field, and at run time
    said = f"{WCU}, but given.zones names zones 1, 2: the run offers every size of westcentralus in them"
    assert f"the cluster wins over the catalog: {said}" in err
    assert f"  # the cluster wins over the catalog: {said}\n  zones:" in text
    assert [w.message for w in sc.warnings if w.kind == "cluster"] == [said]
    assert any(w.kind == "synthesized" and w.message.startswith("Standard_D8s_v5 is synthesized") and "zones 1,2"
               in w.message for w in sc.warnings)
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.error is None and outcome.passed, (profile, outcome.error, [m.render() for m in outcome.mismatches])
        assert [(n.instance_type, n.zone, n.capacity_type) for n in outcome.result.nodes] == [
            ("Standard_D8s_v5", "westcentralus-1", "on-demand"), ("Standard_D2s_v3", "westcentralus-2", "spot")]


SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: hand}}
given:
  profiles: [upstream]
  region: {region}
{given}  existingNodes:
{entries}
manifests:
- apiVersion: karpenter.azure.com/v1beta1
  kind: AKSNodeClass
  metadata: {{name: default}}
  spec: {{}}
- apiVersion: karpenter.sh/v1
  kind: NodePool
  metadata: {{name: default}}
  spec:
    template:
      spec:
        nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
        requirements:
        - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand, spot]}}
"""


def hand(tmp_path, region: str, entries: list[dict], given: str = ""):
    """A hand-written scenario with these existingNodes (the first entry: line 8, its instanceType line 9)."""
    nodes = "\n".join("  " + line for line in yaml.safe_dump(entries, sort_keys=False).splitlines()) if entries else ""
    text = SCENARIO.format(region=region, given=given, entries=nodes)
    if not entries:
        text = text.replace("  existingNodes:\n\n", "")
    (sc,) = load_scenarios_text(text, "hand.scenario.yaml", tmp_path)
    return sc


def test_a_hand_written_scenario_gets_the_same_notice_not_a_seed_error(tmp_path):
    sc = hand(tmp_path, "westcentralus", [
        {"nodePool": "default", "instanceType": "Standard_D4s_v3", "zone": "westcentralus-3", "capacityType": "on-demand"}])
    (notice,) = [w for w in sc.warnings if w.kind == "cluster"]
    assert notice.message == (f"{WCU}, but the nodes of given.existingNodes run in zones 3: the run offers every "
                              "size of westcentralus in them")
    assert notice.line == 10                                  # given.existingNodes[0].zone
    outcome = run(sc)
    assert outcome.error is None and outcome.passed
    assert outcome.result.nodes[0].zone == "westcentralus-3"


@pytest.mark.parametrize("entry,kind,words", [
    # a zone the catalog restricts that size in (eastus's Standard_D8s_v3: NotAvailableForSubscription)
    ({"instanceType": "Standard_D8s_v3", "zone": "eastus-2", "capacityType": "on-demand"}, ZONE,
     "catalog eastus does not offer Standard_D8s_v3 in zone eastus-2, but given.existingNodes[0] runs there"),
    # spot on a size without LowPriorityCapable
    ({"instanceType": "Standard_B2s", "zone": "eastus-1", "capacityType": "spot"}, CAPACITY,
     "catalog eastus says Standard_B2s is not LowPriorityCapable (no spot), but given.existingNodes[0] is spot"),
    # a size no catalog holds
    ({"instanceType": "Standard_D6s_v5", "zone": "eastus-1", "capacityType": "on-demand"}, SIZE,
     "Standard_D6s_v5 is not in catalog eastus (a snapshot), but given.existingNodes[0] runs it: Standard_D6s_v5 is "
     "synthesized from its name"),
])
def test_each_disagreement_is_one_notice_and_the_node_runs(tmp_path, entry, kind, words):
    sc = hand(tmp_path, "eastus", [{"nodePool": "default", **entry}, {"nodePool": "default", **entry}])
    (notice,) = [w for w in sc.warnings if w.kind == "cluster"]     # two nodes, one disagreement
    assert notice.message.startswith(words), notice.message
    outcome = run(sc)
    assert outcome.error is None and outcome.passed
    assert {(n.instance_type, n.zone, n.capacity_type) for n in outcome.result.nodes} == {
        (entry["instanceType"], entry["zone"], entry["capacityType"])}


def test_a_size_given_skus_leaves_out_is_offered_too(tmp_path):
    sc = hand(tmp_path, "eastus", [{"nodePool": "default", "instanceType": "Standard_D4s_v5", "zone": "eastus-1"}],
              given="  skus: [Standard_D2s_v5]\n")
    (notice,) = [w for w in sc.warnings if w.kind == "cluster"]
    assert notice.message == "given.skus does not name Standard_D4s_v5, but given.existingNodes[0] runs it: the run offers it too"
    outcome = run(sc)
    assert outcome.error is None and outcome.result.nodes[0].instance_type == "Standard_D4s_v5"


@pytest.mark.parametrize("name,reason", [
    ("Standard_d4sv5", "unknown SKU 'Standard_d4sv5' in catalog 'eastus' (did you mean 'Standard_D4s_v5'?)"),
    ("Standard_Foo", "unknown SKU 'Standard_Foo' in catalog 'eastus': 'Standard_Foo' is not a VM size the size grammar "
                     "can read"),
])
def test_a_typo_stays_an_error_at_its_line(tmp_path, name, reason):
    with pytest.raises(SourceError) as e:
        hand(tmp_path, "eastus", [{"nodePool": "default", "instanceType": name, "zone": "eastus-1"}])
    assert e.value.line == 9 and str(e.value.reason).startswith(reason), str(e.value)


def test_find_and_amend_leave_what_agrees_alone():
    skus = list(catalog("eastus")[0])
    entries = [{"instanceType": "Standard_D4s_v5", "zone": "eastus-1", "capacityType": "spot"}]
    assert find(entries, skus, "eastus", "eastus", ["1", "2", "3"]) == ([], [])
    assert amend(skus, "eastus", []) == skus


def test_amend_lifts_a_zone_restriction_only_for_that_size():
    from harness.model.azure.skus import availability_zones
    skus = list(catalog("eastus")[0])
    _, found = find([{"instanceType": "Standard_D8s_v3", "zone": "eastus-2"}], skus, "eastus", "eastus", ["1", "2", "3"])
    amended = {s["name"]: s for s in amend(skus, "eastus", found)}
    assert availability_zones(amended["Standard_D8s_v3"], "eastus") == ["2"]
    assert availability_zones({s["name"]: s for s in skus}["Standard_D8s_v3"], "eastus") == []   # the shared copy
    assert amended["Standard_A0"] is {s["name"]: s for s in skus}["Standard_A0"]


def test_the_region_zones_leave_a_restricted_size_restricted():
    from harness.model.azure.skus import availability_zones
    skus = list(catalog("westcentralus")[0])
    _, found = find([{"instanceType": "Standard_D2s_v3", "zone": "westcentralus-1"}], skus, "westcentralus",
                    "westcentralus", [])
    assert [d.kind for d in found] == [REGION_ZONES]
    amended = {s["name"]: s for s in amend(skus, "westcentralus", found)}
    assert availability_zones(amended["Standard_D2s_v3"], "westcentralus") == ["1"]
    assert availability_zones(amended["Standard_A0"], "westcentralus") == []      # Location-restricted still


def test_scenario_catalog_without_existing_nodes_is_the_cached_one(tmp_path):
    sc = hand(tmp_path, "eastus", [])
    assert scenario_catalog(sc) is scenario_catalog(sc)
    assert SUBSET not in [w.kind for w in sc.warnings]


def test_say_writes_each_notice_above_its_line():
    """Notices on one line keep the order splitting the text into lines gave them (the last inserted on top;
    line 0 is the first line's); a notice of another kind is not said."""
    from types import SimpleNamespace as N

    from harness.scenario.catalogamend import say
    notices = [N(kind="synthesized", line=3, message="m1"), N(kind="cluster", line=3, message="m2"),
               N(kind="unmodeled", line=2, message="no"), N(kind="synthesized", line=1, message="m0"),
               N(kind="synthesized", line=0, message="mz")]
    notes: list[str] = []
    assert say("a: 1\nlist:\n- b: 2\n  c: 3\n", notices, notes) == (
        "# mz\n# m0\na: 1\nlist:\n  # the cluster wins over the catalog: m2\n  # m1\n- b: 2\n  c: 3\n")
    assert notes == ["m1", "the cluster wins over the catalog: m2", "m0", "mz"]
