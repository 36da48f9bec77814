"""`harness new --at T` before the dump (harness/dump/moment.py): the cluster as it stood at T, what
came after as steps, and the dump's state checked at a step at its time; `--until` carries on past it."""
from __future__ import annotations

import copy
import json

import yaml

from harness.cli import main as cli
from harness.model.kube.kubetime import parse_rfc3339
from harness.dump import moment as dumpmoment
from harness.dump.new import (
    FINISHED_PHASES,
    MANIFEST_KINDS,
    NewOptions,
    new_scenario,
    read_objects,
    split,
    strip_server_fields,
)
from harness.scenario.load import load_scenarios
from tests.dump.test_dump_roundtrip import DUMPS, new, run

EXPIRED = "expired-node-replaced.yaml"       # expired at 08:14, replaced a minute later, dumped at 08:30
BEFORE = "2026-11-20T08:10:00Z"


def test_replay_from_before_the_expiry_reproduces_the_dump(tmp_path, capsys):
    """The old node seeded as it was at 08:10 (not deleting), the replacement left to Karpenter; the run
    expires the node at 08:14 itself, makes a new one, and at the dump's 08:30 matches the dump."""
    from harness.loop.history import history
    from harness.report.console import dump_verdict
    out = new(tmp_path, EXPIRED, "--at", BEFORE)
    err = capsys.readouterr().err
    assert "left out (created after the start): 4: NodeClaim web-q7n2d (created 2026-11-20T08:14:05Z)" in err
    assert "Pod api-6c8d9f7b5-k2p8w (created 2026-11-20T08:14:02Z): Deployment api makes it" in err
    assert ("undone (after the start): 2: NodeClaim web-x4m8q deleted at 2026-11-20T08:14:00Z: not deleting at the "
            "start; Node aks-web-x4m8q deleted at 2026-11-20T08:14:01Z") in err
    assert "steps: +20m (2026-11-20T08:30:00Z) the dump's time" in err
    (sc,) = load_scenarios(out)
    assert sc.given["startTime"] == BEFORE
    (entry,) = sc.given["existingNodes"]
    assert entry["nodeClaim"] == "web-x4m8q" and "deleting" not in entry
    assert [p["metadata"]["name"] for p in entry["pods"]] == ["batch-runner"]
    assert not [m for m in sc.manifests if m.obj["kind"] == "Pod"]
    assert sc.expect == {"nodePools": {"web": {"accepted": True}}}
    (step,) = sc.steps
    assert step["advance"] == "20m0s" and step["description"].startswith(dumpmoment.DUMP_STEP)
    assert step["expect"]["nodes"] == [
        {"index": 0, "nodePool": "web", "instanceType": "Standard_D4s_v5", "zone": "eastus-3", "deleted": False,
         "deleting": True, "drifted": False},
        {"index": 1, "nodePool": "web", "instanceType": "Standard_D4s_v5", "deleted": False, "deleting": False,
         "drifted": False}]
    assert step["expect"]["pods"] == {"api": {"scheduled": True}, "batch-runner": {"scheduled": True, "node": 0}}
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.error is None and outcome.passed, (profile, [m.render() for m in outcome.mismatches])
        assert dump_verdict(outcome) == "reproduced the dump"
    h = history(outcome.result)
    old, replacement = h.claims
    assert old.phases["disrupting"].utc == "2026-11-20T08:14:00Z"        # expireAfter 720h, from its creation
    assert parse_rfc3339(replacement.phases["created"].utc) >= parse_rfc3339("2026-11-20T08:14:00Z")


def test_the_dump_itself_still_starts_at_its_clock(tmp_path):
    """Without --at the same dump seeds both nodes as dumped, the old one deleting."""
    (sc,) = load_scenarios(new(tmp_path, EXPIRED))
    assert sc.given["startTime"] == "2026-11-20T08:30:00Z" and not sc.steps
    assert [e.get("deleting") for e in sc.given["existingNodes"]] == ["2026-11-20T08:14:00Z", None]
    outcome = run(sc)
    assert outcome.passed, [m.render() for m in outcome.mismatches]


def test_a_replay_that_departs_from_the_dump_moved_on(tmp_path):
    """Without the do-not-disrupt pod holding its drain, the expired node is gone by 08:30: the step at the
    dump's time names what differs, and the verdict reads moved on, not FAIL."""
    from harness.report.console import dump_verdict
    data = yaml.safe_load((DUMPS / EXPIRED).read_text())
    batch = next(o for o in data["items"] if o["metadata"]["name"] == "batch-runner")
    del batch["metadata"]["annotations"]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump(data))
    (sc,) = load_scenarios(new(tmp_path, dump, "--at", BEFORE))
    outcome = run(sc)
    assert not outcome.passed and outcome.error is None
    assert any(m.path == "steps[0].expect.nodes[0].deleted" for m in outcome.mismatches)
    assert dump_verdict(outcome).startswith("moved on from the dump: ")


def test_at_not_a_time_is_refused_and_after_the_dump_is_when_it_was_taken(tmp_path, capsys):
    out = tmp_path / "x.scenario.yaml"
    assert cli(["new", str(DUMPS / EXPIRED), "--name", "x", "-o", str(out), "--at", "yesterday"]) == 2
    err = capsys.readouterr().err
    assert "--at: 'yesterday' is not an RFC 3339 time (e.g. 2026-11-20T14:05:00Z)" in err
    assert "Traceback" not in err and not out.exists()
    assert cli(["new", str(DUMPS / EXPIRED), "--name", "x", "-o", str(out), "--at", "2026-11-20T09:00:00Z"]) == 0
    (sc,) = load_scenarios(out)
    assert sc.given["startTime"] == "2026-11-20T09:00:00Z" and not sc.steps


def test_until_carries_on_past_the_dump(tmp_path, capsys):
    """--until: an advance step after the dump's checks; here the aged node expires on the way."""
    out = new(tmp_path, "expiring-node.yaml", "--until", "2026-11-20T14:05:00Z")
    assert "steps: +35m (2026-11-20T14:05:00Z) --until" in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert sc.steps == [{"description": "--until", "advance": "35m0s"}]
    outcome = run(sc)
    assert [t["detail"] for t in outcome.result.timeline if t["action"] == "deleting"] == ["Expired"]
    assert cli(["new", str(DUMPS / EXPIRED), "--name", "x", "-o", str(tmp_path / "y.scenario.yaml"),
                "--until", "2026-11-20T08:00:00Z"]) == 2
    assert "--until: 2026-11-20T08:00:00Z is not after the dump's clock" in capsys.readouterr().err


def test_at_and_log_and_until_make_one_timeline(tmp_path):
    """--log with --at before the dump: the log's last decision after the dump is one more advance, after
    the dump's check; --until after that another."""
    log = tmp_path / "karpenter.log"
    line = {"level": "INFO", "logger": "controller", "NodeClaim": {"name": "web-q7n2d"}, "NodePool": {"name": "web"}}
    log.write_text(json.dumps(line | {"time": "2026-11-20T08:14:05Z", "message": "created nodeclaim"}) + "\n"
                   + json.dumps(line | {"time": "2026-11-20T08:40:00Z", "message": "created nodeclaim"}) + "\n")
    _, text, notes = new_scenario(NewOptions([str(DUMPS / EXPIRED)], "case-1", output=str(tmp_path / "a.scenario.yaml"),
                                             at=BEFORE, log=str(log), until="2026-11-20T09:00:00Z"))
    steps = yaml.safe_load(text.split("\n", 1)[1])["steps"]
    assert [(s["advance"], s["description"].split(" (")[0].split(":")[0]) for s in steps] == [
        ("20m0s", "the dump's time"), ("10m0s", f"the last decision in {log}"), ("20m0s", "--until")]
    assert "expect" in steps[0] and "expect" not in steps[1]
    assert any(n.startswith("log: NodeClaim web-q7n2d: created +4m05s") for n in notes)
    assert not any(n.startswith("steps: advance") for n in notes)     # the log's own step is the timeline's


def rewind(objects, at: str, clock: str):
    return dumpmoment.rewind(objects, at, clock, MANIFEST_KINDS, FINISHED_PHASES, strip_server_fields)


def _pod(name: str, created: str, node: str | None = None, owner: str | None = None, bound: str | None = None) -> dict:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "creationTimestamp": created},
           "spec": {"containers": [{"name": "c", "image": "x"}]}, "status": {"phase": "Running" if node else "Pending"}}
    if node:
        pod["spec"]["nodeName"] = node
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": bound or created}]
    if owner:
        pod["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner,
                                               "controller": True}]
    return pod


def _scaled(at: str, text: str) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "reason": "ScalingReplicaSet", "message": text, "lastTimestamp": at,
            "involvedObject": {"kind": "Deployment", "name": "web"}, "metadata": {"name": f"web.{at}"}}


def test_rewind_moves_later_pods_and_scales_to_steps():
    """A bare pod created after T arrives at its creation; one bound after T is pending at T; a Deployment
    the dump's events say scaled after T has its earlier replicas at T and a step at each scale."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "creationTimestamp": "2026-11-20T07:00:00Z"},
                  "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": []}}}}
    objects = [(o, "dump.yaml", i) for i, o in enumerate([
        deployment,
        _pod("web-5d4-aaaaa", "2026-11-20T07:00:01Z", "aks-a", owner="web-5d4"),
        _pod("web-5d4-bbbbb", "2026-11-20T08:20:00Z", "aks-a", owner="web-5d4"),
        _pod("web-5d4-ccccc", "2026-11-20T08:25:00Z", "aks-a", owner="web-5d4"),
        _pod("late", "2026-11-20T08:05:30Z"),
        _pod("bound-late", "2026-11-20T07:30:00Z", "aks-a", bound="2026-11-20T08:07:00Z"),
        _scaled("2026-11-20T08:20:00Z", "Scaled up replica set web-5d4 from 1 to 2"),
        _scaled("2026-11-20T08:25:00Z", "Scaled up replica set web-5d4 from 2 to 3"),
    ])]
    m = rewind(objects, "2026-11-20T08:00:00Z", "2026-11-20T08:30:00Z")
    at_start = {o["metadata"]["name"]: o for o, _, _ in m.objects}
    assert at_start["web"]["spec"]["replicas"] == 1 and deployment["spec"]["replicas"] == 3   # the input is kept
    assert "nodeName" not in at_start["bound-late"]["spec"] and "late" not in at_start
    assert [(a.what, a.at - m.start) for a in m.arrivals] == [
        ("Pod late", 330.0), ("Deployment web replicas 2", 1200.0), ("Deployment web replicas 3", 1500.0)]
    assert [n.split(" (")[0] for n in m.left_out] == ["Pod web-5d4-bbbbb", "Pod web-5d4-ccccc"]
    steps, _ = dumpmoment.steps(m.start, m.arrivals, (m.clock, {"pods": {}}), [])
    assert [(s["advance"], len(s.get("apply", [])), "expect" in s) for s in steps] == [
        ("5m30s", 1, False), ("14m30s", 1, False), ("5m0s", 1, False), ("5m0s", 0, True)]


def test_rewind_takes_back_what_a_nodeclaim_reached_after_t():
    """A NodeClaim launched before T and registered after it is in flight at T; Drifted after T is not
    drifted then; a lastPodEventTime after T is dropped."""
    objects = read_objects([str(DUMPS / EXPIRED)])
    claim = next(o for o, _, _ in objects if o["kind"] == "NodeClaim" and o["metadata"]["name"] == "web-q7n2d")
    drifted = copy.deepcopy(claim)
    drifted["status"]["conditions"].append({"type": "Drifted", "status": "True", "reason": "NodeClassDrift",
                                            "lastTransitionTime": "2026-11-20T08:20:00Z"})
    m = rewind([(drifted, "d.yaml", 1)], "2026-11-20T08:14:50Z", "2026-11-20T08:30:00Z")
    ((nc, _, _),) = m.objects
    assert [c["type"] for c in nc["status"]["conditions"]] == ["Launched"]
    assert nc["status"]["providerID"] and "lastPodEventTime" not in nc["status"]
    assert [u.split(" at ")[0] for u in m.undone] == [
        "NodeClaim web-q7n2d Registered", "NodeClaim web-q7n2d Initialized", "NodeClaim web-q7n2d Drifted"]
    m = rewind([(drifted, "d.yaml", 1)], "2026-11-20T08:14:30Z", "2026-11-20T08:30:00Z")
    ((nc, _, _),) = m.objects
    assert "providerID" not in nc["status"]           # not launched at T: the loop makes its own
    node = next(o for o, _, _ in objects if o["kind"] == "Node" and o["metadata"]["name"] == "aks-web-q7n2d")
    m = rewind([(drifted, "d.yaml", 1), (node, "d.yaml", 2)], "2026-11-20T08:15:06Z", "2026-11-20T08:30:00Z")
    (_, (at_start, _, _)) = m.objects
    assert "karpenter.sh/initialized" not in at_start["metadata"]["labels"]    # initialized at 08:15:09
    assert node["metadata"]["labels"]["karpenter.sh/initialized"] == "true"


def test_at_the_dumps_own_clock_is_the_dump():
    dump = split(read_objects([str(DUMPS / EXPIRED)]))
    assert rewind(read_objects([str(DUMPS / EXPIRED)]), dump.newest, dump.newest) is None



def test_a_users_delete_after_t_is_played_as_a_step(tmp_path, capsys):
    """The real drain-behind-pdb dump: NodeClaim web-a8f2k deleted at the dump's second with no
    DisruptionReason and long before its expiry (tools/make_dumps.py ran `kubectl delete nodeclaim`). From
    two seconds before, the replay deletes it by a step and reproduces the dump at both releases; from
    before its creation the delete cannot be named, and the notes say so."""
    from harness.report.console import dump_verdict
    out = new(tmp_path, DUMPS / "real" / "drain-behind-pdb.yaml", "--at", "2026-11-26T20:56:30Z")
    err = capsys.readouterr().err
    assert "moved to steps (after the start): 1: delete NodeClaim web-a8f2k at 2026-11-26T20:56:32Z" in err
    assert "a user's delete, played as a step" in err
    (sc,) = load_scenarios(out)
    assert sc.steps[-1]["delete"] == [{"kind": "NodeClaim", "name": "web-a8f2k"}]
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.error is None and outcome.passed, (profile, [m.render() for m in outcome.mismatches])
        assert dump_verdict(outcome) == "reproduced the dump"
    earlier = new(tmp_path, DUMPS / "real" / "drain-behind-pdb.yaml", "--at", "2026-11-26T20:50:00Z")
    assert "the replay cannot name the NodeClaim it makes instead" in capsys.readouterr().err
    (sc,) = load_scenarios(earlier)
    assert all("delete" not in step for step in sc.steps)
