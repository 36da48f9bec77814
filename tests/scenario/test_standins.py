"""Stand-in pods for what a dump's pods do not explain of its NodeClaims' requests (harness/scenario/standins.py):
a dump of one namespace's pods, or of NodePools and NodeClaims only, keeps its busy nodes as busy as their
NodeClaims say, says which namespaces are evidently missing and what it assumed; `--complete` says the input
holds every pod."""
from __future__ import annotations

import json

import yaml

from harness.cli import main as cli
from harness.scenario import standins
from harness.scenario.load import load_scenarios
from tests.dump.test_dump_roundtrip import SCENARIO_DUMPS, new, run, with_steps

ONE_NAMESPACE = SCENARIO_DUMPS / "one-namespace.yaml"


def _held(sc) -> dict[str, dict]:
    return {e["nodeClaim"]: next(p["spec"]["containers"][0]["resources"]["requests"] for p in e.get("pods") or []
                                 if standins.STANDIN in p["metadata"]["labels"])
            for e in sc.given["existingNodes"] if any(standins.STANDIN in (p["metadata"].get("labels") or {})
                                                      for p in e.get("pods") or [])}


def test_one_namespaces_pods_keep_the_busy_nodes_busy(tmp_path, capsys):
    out = new(tmp_path, ONE_NAMESPACE, "--profile", "upstream")
    err = capsys.readouterr().err
    assert ("the input is incomplete: 3 NodeClaim(s) ask for more than its pods on them and its DaemonSets explain "
            "(its pods are of namespace(s) shop only; it names namespace(s) batch, kube-system but holds none of "
            "their pods; it holds no kube-system pod") in err
    assert standins.ASSUMED in err and "Pass --complete if the input holds every pod" in err
    (sc,) = load_scenarios(out)
    # 6450m and 18Gi each; the storefront pod (1 CPU, 2Gi) explains part of the first
    assert _held(sc) == {"general-k2v8q": {"cpu": "5450m", "memory": "16Gi"},
                         "general-m7x4d": {"cpu": "6450m", "memory": "18Gi"},
                         "general-p9c3n": {"cpu": "6450m", "memory": "18Gi"}}
    assert sc.expect["pods"]["stand-in-general-m7x4d"] == {"scheduled": True}
    assert any(n.kind == "assumed" and "3 stand-in pod(s)" in n.message for n in sc.warnings)
    # reproduced, and not Empty half an hour on (consolidateAfter 1m)
    later = with_steps(out, [{"advance": "30m", "expect": {"nodes": sc.expect["nodes"]}}])
    outcome = run(later)
    assert outcome.passed, [m.render() for m in outcome.mismatches]


def test_complete_takes_the_dump_as_it_is(tmp_path, capsys):
    out = new(tmp_path, ONE_NAMESPACE, "--profile", "upstream", "--complete")
    assert "--complete: the input holds every pod, so the rest is taken as pods gone since" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert not _held(sc) and not standins.in_scenario(sc.given, sc.manifests)
    outcome = run(sc)
    assert not outcome.passed          # the two nodes without the customer's pods are Empty at once
    assert sorted(n.deleted for n in outcome.result.nodes if n.deleted) == ["Empty", "Empty"]


def test_nodepools_and_nodeclaims_only(tmp_path, capsys):
    doc = yaml.safe_load(ONE_NAMESPACE.read_text())
    doc["items"] = [i for i in doc["items"] if i["kind"] in ("NodePool", "AKSNodeClass", "NodeClaim")]
    dump = tmp_path / "claims-only.yaml"
    dump.write_text(yaml.safe_dump(doc))
    out = new(tmp_path, dump, "--profile", "upstream")
    assert "(the input holds no Pod)" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert list(_held(sc).values()) == [{"cpu": "6450m", "memory": "18Gi"}] * 3
    assert run(sc).passed


def test_a_round_whose_pods_are_all_there_is_explained():
    """As many pods as the NodeClaim was made for: what is left came from pods replaced by smaller ones."""
    entry = {"nodePool": "general", "nodeClaim": "n", "requests": {"cpu": "2", "pods": "2"},
             "pods": [{"spec": {"containers": [{"resources": {"requests": {"cpu": "500m"}}}]}}] * 2}
    assert standins.unexplained([entry], [], {}, {}) == []
    entry["requests"]["pods"] = "3"
    ((_, found),) = standins.unexplained([entry], [], {}, {})
    assert found.held == {"cpu": 1000}
    # in flight, deleting: their pods are still to come, or already gone
    for state in ({"initialized": False}, {"registered": False}, {"deleting": True}):
        assert standins.unexplained([{**entry, **state}], [], {}, {}) == []


def test_the_run_says_what_it_assumed(tmp_path, capsys):
    out = new(tmp_path, ONE_NAMESPACE, "--profile", "upstream")
    capsys.readouterr()
    assert cli(["run", str(out), "--json"]) == 0
    (o,) = json.loads(capsys.readouterr().out)
    assert o["fromDump"] == "reproduced the dump" and o["assumed"][0].startswith("3 stand-in pod(s) (stand-in-general-k2v8q")
    assert cli(["run", str(out), "--why", "storefront"]) == 0
    text = capsys.readouterr().out
    assert "reproduced, stand-ins assumed" in text
    assert "reproduced the dump; 3 stand-in pod(s)" in text and "  assumed: 3 stand-in pod(s)" in text
