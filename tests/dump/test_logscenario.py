"""harness/dump/logscenario.py: `harness new --log` where no dump gives the nodes. Done when a log-only
ticket yields a scenario with the log's nodes and pods, on its region, without --region, that reproduces or
fails for the log's reason: the hand-made ticket logs under tests/runner/karpenterlogs/tickets/ (a PDB-blocked
drain; provider ~v1.10.2 said, core v1.5.0's words in the log; and the same drain in core v1.10.0's words with
its events and NodePool)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.dump.new import NewOptions, new_scenario
from harness.scenario.yamlsource import SourceError

HERE = Path(__file__).resolve().parent
TICKETS = HERE.parent / "runner" / "karpenterlogs" / "tickets"
BROKEN = HERE.parent / "runner" / "karpenterlogs" / "broken"
V15 = str(TICKETS / "pdb-drain-core-v1.5.log")
V110 = str(TICKETS / "pdb-drain-core-v1.10.log")


def made(tmp_path, paths: list[str], log: str, name: str = "ticket", **kw) -> tuple[Path, dict, list[str]]:
    out = tmp_path / f"{name}.scenario.yaml"
    path, text, notes = new_scenario(NewOptions(paths, name, output=str(out), log=log, **kw))
    out.write_text(text)
    return path, yaml.safe_load(text.split("\n", 1)[1]), notes


def runs(path: Path) -> dict:
    """Each profile's Outcome of the scenario (simulated, embedded)."""
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run as run_scenario
    from harness.scenario.load import load_all
    (sc,) = load_all([str(path)])
    cluster = EmbeddedBackend().start()
    try:
        return {p: run_scenario(sc, p, cluster) for p in sc.profiles}
    finally:
        cluster.close()


def test_a_log_only_ticket_reproduces_for_the_logs_reason(tmp_path):
    """The log alone, the customer's word `~v1.10.2`: region westeurope from its provider IDs (no --region),
    its sizes synthesized (no bundled catalog), its three NodeClaims' two running at the start seeded under
    their names with the pods its rounds and failed evictions name, the two PDBs the multiple-PDB refusal
    implies. The log's words are core v1.3-v1.5's: profile v1.5.5 joins, and there the run reproduces the
    log (drift replaces the node, its drain never ends); at v1.10.2 and upstream it does not, for the log's
    reason: core v1.7.0+ keeps a node whose pod two PDBs select (multiplePdbsEviction)."""
    from harness.report.console import shown_verdict
    path, doc, notes = made(tmp_path, [], V15, provider_version="1.10.2")
    given = doc["given"]
    assert given["region"] == "westeurope" and given["profiles"] == ["v1.10.2", "v1.5.5", "upstream"]
    assert given["skus"] == ["Standard_D4s_v5", "Standard_D8s_v5"] and given["zones"] == ["1", "2", "3"]
    assert given["startTime"] == "2026-03-09T10:13:05Z" and given["loop"] == {"nodeBoot": "1m14s"}
    entries = {e["nodeClaim"]: e for e in given["existingNodes"]}
    assert sorted(entries) == ["general-m4q9z", "general-x7k2p"]
    assert entries["general-x7k2p"]["drifted"] == "NodePoolDrifted"
    assert [p["metadata"]["name"] for p in entries["general-x7k2p"]["pods"]] == ["checkout-6f9c7d8b5-2kq8w",
                                                                                 "checkout-6f9c7d8b5-m7xzt"]
    assert {m["metadata"]["name"] for m in doc["manifests"] if m["kind"] == "PodDisruptionBudget"} == {
        "checkout-assumed-1", "checkout-assumed-2"}
    check = doc["steps"][-1]
    assert check["description"].startswith("the log's end (2026-03-09T10:25:24Z)")
    assert check["expect"]["nodeCount"] == 3 and check["expect"]["nodes"][0]["deleting"] is True
    assert any(n.startswith("WARNING: ") and "is worded as core v1.3.0 to v1.5.x writes it, not as core v1.10.0"
               in n for n in notes)
    assert sum(n.startswith("assumed ") for n in notes) >= 6        # NodePool, AKSNodeClass, 4 pods, PDBs, drift
    outcomes = runs(path)
    assert shown_verdict(outcomes["v1.5.5"]) == "reproduced"
    for profile in ("v1.10.2", "upstream"):
        o = outcomes[profile]
        assert shown_verdict(o) == "not reproduced", profile
        assert {m.path for m in o.mismatches} == {"steps[0].expect.nodeCount", "steps[0].expect.nodes[0].deleting"}


def test_log_events_and_nodepool_reproduce_at_the_customers_release(tmp_path):
    """Core v1.10.0 logs no refused eviction: the events' FailedDraining name the pods and the PDB refusal;
    the NodePool's expireAfter explains the drain (no step plays it). The run reproduces at v1.10.2."""
    from harness.report.console import shown_verdict
    path, doc, notes = made(tmp_path, [str(TICKETS / "pdb-drain-nodepool.yaml"),
                                       str(TICKETS / "pdb-drain-core-v1.10.events.txt")], V110, provider_version="1.10.2")
    assert doc["given"]["profiles"] == ["v1.10.2", "upstream"]
    assert [s.get("delete") for s in doc["steps"]] == [None]
    assert any("is its expiry (created 2026-03-02T08:01:11Z, NodePool general expireAfter 168h)" in n for n in notes)
    assert {m["metadata"]["name"]: m["spec"] for m in doc["manifests"] if m["kind"] == "PodDisruptionBudget"} == {
        "checkout-assumed": {"selector": {"matchLabels": {"harness.karpenter.azure.com/workload": "checkout"}},
                             "maxUnavailable": 0}}
    assert doc["steps"][-1]["expect"]["events"] == [{"kind": "Node", "name": "aks-general-x7k2p",
                                                     "reason": "FailedDraining"}]
    assert any("its words are core v1.0.0 and later's, as profile v1.10.2 (core v1.10.0) writes them" in n
               for n in notes)
    outcomes = runs(path)
    assert shown_verdict(outcomes["v1.10.2"]) == "reproduced"


def test_a_drain_nothing_explains_is_said_and_not_reproduced(tmp_path):
    """The core v1.10.0 log alone: the drain that began and did not end is a delete step, and a WARNING says
    nothing in the input holds it; the run drains it and fails the log's end."""
    from harness.report.console import shown_verdict
    path, doc, notes = made(tmp_path, [], V110, provider_version="1.10.2")
    assert doc["steps"][0]["delete"] == [{"kind": "NodeClaim", "name": "general-x7k2p"}]
    assert any(n.startswith("WARNING: Node aks-general-x7k2p's drain began at 2026-03-09T08:01:52Z") for n in notes)
    assert any(n.startswith("assumed NodePool general: the log names it") for n in notes)
    o = runs(path)["v1.10.2"]
    assert shown_verdict(o) == "not reproduced"
    assert "steps[1].expect.nodes[0].deleted" in {m.path for m in o.mismatches}


def test_a_log_that_names_nothing_running_makes_no_scenario(tmp_path):
    log = BROKEN / "nothing-running.log"
    with pytest.raises(SourceError) as e:
        made(tmp_path, [], str(log), region="eastus")
    assert e.value.render().startswith(f"{log}: the log names no NodeClaim running at 2026-03-09T07:59:01Z and no "
                                       "pod on one (2 Karpenter line(s), 0 NodeClaim(s), 1 pod(s))")
    assert not (tmp_path / "ticket.scenario.yaml").exists()


def test_a_log_without_a_region_asks_for_one(tmp_path):
    with pytest.raises(SourceError) as e:
        made(tmp_path, [], str(BROKEN / "nothing-running.log"))
    assert e.value.render().startswith("--region: no region in the input")


@pytest.mark.parametrize("name,workload", [("checkout-6f9c7d8b5-2kq8w", "checkout"), ("ledger-1", "ledger"),
                                           ("batch-runner", "batch-runner")])
def test_workload_of_a_pod_name(name, workload):
    from harness.dump.logscenario import workload as of
    assert of(name) == workload


UNPRICED = str(TICKETS / "unpriced-candidate-core-v1.0.log")


def test_a_candidate_with_no_offering_is_a_zone_restriction_and_every_run_says_its_assumptions(tmp_path):
    """Core v1.0.6's `unable to determine offering for Standard_D8s_v5/on-demand/eastus-2` ERROR lines (the
    disruption pass ends in them before single-node consolidation): the size is gone from that zone, so the
    scenario restricts it there from the start; without it the run priced the node, and both releases kept three
    full nodes for no reason of the log's. The pods the log placed are assumed still there, which the error says
    they were not (core prices only when the candidates' pods fit one new node): a given.assumed line, which every
    run says beside its verdict. At v0.7.5 the nodes stay (reproduced, assumed); upstream drifts the eastus-2 node
    (instanceTypeDrift) and does not."""
    from harness.report.console import assumed, assumed_tag, shown_verdict
    path, doc, notes = made(tmp_path, [], UNPRICED, provider_version="0.7.5")
    assert doc["given"]["restrict"] == [{"size": "Standard_D8s_v5", "zones": ["eastus-2"]}]
    assert any(n.startswith("assumed Standard_D8s_v5 is no longer offered in zone eastus-2 (given.restrict)")
               for n in notes)
    assert any("-> given.restrict Standard_D8s_v5 in zone eastus-2" in n for n in notes)
    lines = doc["given"]["assumed"]
    assert [ln.split(":", 1)[0] for ln in lines][:2] == ["AKSNodeClass default", "NodePool general"]
    assert any(ln.startswith("the 12 pod(s) the log's provisioning rounds placed") for ln in lines)
    assert lines[-1].startswith("12 pod(s) (shop/web-7c9f8d6b54-2mrxq")
    out = runs(path)
    assert shown_verdict(out["v0.7.5"]) == "reproduced" and shown_verdict(out["upstream"]) == "not reproduced"
    assert all(assumed_tag(o) == ", assumed" and "the 12 pod(s)" in assumed(o) for o in out.values())
