"""Times a dump implies (harness/dump/times.py): which object set the clock, and a NodeClaim's
lastPodEventTime taken from the newest pod event of its node when the dump lacks it."""
from __future__ import annotations

import yaml

from harness.dump.new import TIME_FIELDS, read_objects
from harness.dump.times import last_pod_event, newest_source, pod_events
from harness.scenario.load import load_scenarios, load_scenarios_text
from tests.dump.test_dump_roundtrip import DUMPS, new, run, with_steps


def test_the_clock_note_names_the_object_and_field(tmp_path, capsys):
    (sc,) = load_scenarios(new(tmp_path, "clock-from-a-pod.yaml"))
    assert sc.given["startTime"] == "2026-11-22T18:30:01Z"
    err = capsys.readouterr().err
    assert ("the clock starts at 2026-11-22T18:30:01Z (the newest timestamp in the input: Pod web-6c9d8f7b5-t4k2m's "
            f"status.startTime, {DUMPS / 'clock-from-a-pod.yaml'}:138; no Node heartbeat or Event is newer, so if the "
            "dump was taken later give its time with --at)") in err
    outcome = run(sc)
    assert outcome.error is None and outcome.passed


def test_a_heartbeat_clock_needs_no_hint(tmp_path, capsys):
    new(tmp_path, "pod-event-without-time.yaml")
    err = capsys.readouterr().err
    assert "(the newest timestamp in the input: Node aks-web-z8x7c's status.conditions[Ready].lastHeartbeatTime, " in err
    assert "--at)" not in err


def test_newest_source_walks_conditions_by_type():
    src = newest_source(read_objects([str(DUMPS / "drain-behind-pdb.yaml")]), TIME_FIELDS)
    assert (src.value, src.kind, src.path, src.is_heartbeat) == (
        "2026-11-20T14:04:30Z", "Node", "status.conditions[Ready].lastHeartbeatTime", True)


def test_a_pods_deletion_counts_as_its_delete_not_its_grace_periods_end():
    """metadata.deletionTimestamp is the delete plus the grace period: a week ahead for a 7-day grace period. The
    dump saw the delete, so that sets the clock, and the note says the field less the grace period."""
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "deletionTimestamp": "2026-12-01T08:12:41Z", "deletionGracePeriodSeconds": 604800},
           "status": {"startTime": "2026-11-17T08:15:02Z"}}
    src = newest_source([(pod, "d.yaml", 1)], TIME_FIELDS)
    assert (src.value, src.path) == ("2026-11-24T08:12:41Z",
                                     "metadata.deletionTimestamp less metadata.deletionGracePeriodSeconds (the delete)")
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"},
            "status": {"conditions": [{"type": "Ready", "lastHeartbeatTime": "2026-11-24T11:29:40Z"}]}}
    assert newest_source([(pod, "d.yaml", 1), (node, "d.yaml", 9)], TIME_FIELDS).kind == "Node"


def test_pod_events_are_the_moments_core_stamps():
    pod = {"metadata": {"name": "p", "deletionTimestamp": "2026-11-20T10:00:30Z", "deletionGracePeriodSeconds": 30},
           "spec": {"nodeName": "n"},
           "status": {"startTime": "2026-11-20T09:00:02Z", "phase": "Running",
                      "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-11-20T09:00:00Z"}]}}
    # bound when kube-scheduler set PodScheduled, deleted 30s before its deletionTimestamp
    assert pod_events(pod) == [("2026-11-20T09:00:00Z", "PodScheduled condition"), ("2026-11-20T10:00:00Z", "deletion")]
    done = {"metadata": {"name": "j"}, "spec": {"nodeName": "n"},
            "status": {"phase": "Succeeded", "startTime": "2026-11-20T08:00:00Z", "containerStatuses": [
                {"state": {"terminated": {"finishedAt": "2026-11-20T11:00:00Z"}}}]}}
    assert last_pod_event("n", [pod, done]) == ("2026-11-20T11:00:00Z", "Pod j's Succeeded (containers finished)")
    daemon = {"metadata": {"name": "d", "ownerReferences": [{"kind": "DaemonSet", "name": "ds", "controller": True}]},
              "spec": {"nodeName": "n"}, "status": {"startTime": "2026-11-20T12:00:00Z"}}
    assert last_pod_event("n", [daemon]) is None             # core's podevents skips DaemonSet pods


def test_a_missing_last_pod_event_time_is_the_newest_pod_start(tmp_path, capsys):
    out = new(tmp_path, "pod-event-without-time.yaml")
    assert ("NodeClaim web-z8x7c: no status.lastPodEventTime; taken as 2026-11-20T11:49:59Z, Pod "
            "web-6c9d8f7b5-t4k2m's PodScheduled condition on its node aks-web-z8x7c") in capsys.readouterr().err
    (sc,) = load_scenarios(out)
    (entry,) = sc.given["existingNodes"]
    assert entry["lastPodEventTime"] == "2026-11-20T11:49:59Z" and entry["initializedAt"] == "2026-11-19T12:01:31Z"
    outcome = run(sc)
    assert outcome.error is None and outcome.passed
    # consolidateAfter 30m counts from the pod's bind ten minutes before the dump: still there 15 minutes on
    assert run(with_steps(out, [{"advance": "15m", "expect": {"nodes": sc.expect["nodes"]}}])).passed
    later = run(with_steps(out, [{"advance": "25m"}])).result
    assert [t["detail"] for t in later.timeline if t["action"] == "deleting"] == ["Underutilized"]
    # without it the day-old initialization counts, and the node is replaced at once
    doc = yaml.safe_load(out.read_text())
    del doc["given"]["existingNodes"][0]["lastPodEventTime"]
    (bare,) = load_scenarios_text(yaml.safe_dump(doc, sort_keys=False), out.name, out.parent)
    assert not run(bare).passed
