"""A dump without Node objects (harness/dump/placement.py): its pods run where the dump says they
did, from NodeClaims' status.nodeName, pods' spec.nodeName and the Deployments' status, so the run starts
with six of twelve replicas running, not twelve pending."""
from __future__ import annotations

from harness.dump.placement import STANDIN, standin
from harness.scenario.load import load_scenarios
from tests.dump.test_dump_roundtrip import new, run


def test_ready_replicas_run_on_the_nodeclaims_and_the_rest_pend(tmp_path, capsys):
    (sc,) = load_scenarios(new(tmp_path, "deployment-status-without-nodes.yaml"))
    err = capsys.readouterr().err
    assert ("Deployment api: status.readyReplicas 6 of 12, 0 of them in the input: 6 pod(s) from its template seeded "
            "where they fit, first fit by status.allocatable (the input does not say where they ran): 6 on NodeClaim(s) "
            "web-a1s2d, web-f3g4h; the other 6 start pending") in err
    assert ("Node aks-system-q1w2e is not in the input, but pod(s) metrics run on it (spec.nodeName): seeded on a "
            "stand-in Node aks-system-q1w2e") in err
    entries = sc.given["existingNodes"]
    assert [e.get("nodeClaim") or e["name"] for e in entries] == ["web-a1s2d", "web-f3g4h", "aks-system-q1w2e"]
    assert [len(e["pods"]) for e in entries] == [3, 3, 1]
    assert sc.expect["pods"]["api"] == {"scheduled": True, "count": 6}
    assert not [m for m in sc.manifests if m.obj["kind"] == "Pod"]        # metrics moved to its stand-in
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.error is None and outcome.passed, (profile, [m.render() for m in outcome.mismatches])
        api = [p for p in outcome.result.pods.values() if p.owner_name == "api"]
        assert sorted(p.state for p in api).count("pending") == 6 and len(api) == 12
        # the NodePool's cpu limit is used up by the two seeded NodeClaims: no third node
        assert len([n for n in outcome.result.nodes if n.nodepool == "web"]) == 2


def test_a_stand_in_holds_exactly_its_pods():
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "250m"}}}]}}
    entry = standin("aks-gone-1", [pod, pod])
    assert entry["allocatable"] == {"cpu": "500m", "pods": "2"} == entry["capacity"]
    assert entry["taints"] == [{"key": STANDIN, "effect": "NoSchedule"}] and "nodePool" not in entry


def test_replay_still_starts_empty(tmp_path):
    (sc,) = load_scenarios(new(tmp_path, "deployment-status-without-nodes.yaml", "--replay"))
    assert "existingNodes" not in sc.given
