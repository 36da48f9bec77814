"""harness/loop/history.py: a run's NodeClaims, pods, events and disruption steps on one time axis, as
offsets from the start and UTC."""
from __future__ import annotations

from harness.loop.history import Moment, history, human_trace, offset_text, timeline_lines
from harness.loop.result import NodeClaimResult, NodeResult, PodResult, RunResult

START = 1767225600.0         # 2026-01-01T00:00:00Z


def _run() -> RunResult:
    r = RunResult("s", "upstream", "embedded", 1, started=START)
    r.nodeclaims = [NodeClaimResult("default-a", "default", ["default/web"], [], {}, launched=True, node="aks-a",
                                    deleted="Drifted", at={"created": START, "launched": START + 5,
                                                           "registered": START + 5, "initialized": START + 10,
                                                           "deleted": START + 90}),
                    NodeClaimResult("default-b", "default", [], [], {}, launched=True, node="aks-b",
                                    at={"created": START + 30, "launched": START + 40})]
    r.nodes = [NodeResult("aks-a", 0, "default-a", "default", "Standard_D2s_v3", "southcentralus-1", "on-demand", "aks-a"),
               NodeResult("aks-b", 1, "default-b", "default", "Standard_D4s_v3", "southcentralus-2", "spot", "aks-b")]
    r.disruptions = [{"nodeClaim": "default-a", "reason": "Drifted", "method": "drift",
                      "replacements": [{"nodeClaim": "default-b"}], "at": START + 30}]
    r.timeline = [{"t": START + 30, "node": "aks-a", "nodeClaim": "default-a", "action": "tainted", "detail": "Drifted"},
                  {"t": START + 90, "node": "aks-a", "nodeClaim": "default-a", "action": "terminated", "detail": "Drifted"}]
    r.events = [{"kind": "NodeClaim", "name": "default-a", "reason": "DisruptionTerminating",
                 "message": "Disrupting NodeClaim: Drifted", "t": START + 60}]
    r.pods = {"default/web": PodResult("web", "default", "Deployment", "web", node="aks-b", state="scheduled",
                                       at={"created": START, "bound": START + 45})}
    return r


def test_offsets_read_as_a_person_reads_them():
    assert [offset_text(s) for s in (0, 45, 125, 600, 3720, 97200, 2592000)] == [
        "+0s", "+45s", "+2m05s", "+10m", "+1h02m", "+1d03h", "+30d"]
    assert Moment.of(START + 90, START).text == "+1m30s (2026-01-01T00:01:30Z)"


def test_claims_carry_their_phases_what_they_are_and_why_they_went():
    h = history(_run())
    a, b = h.claims
    assert h.start == "2026-01-01T00:00:00Z" and h.end.offset == 90
    assert list(a.phases) == ["created", "launched", "registered", "initialized", "disrupting", "deleted"]
    assert a.phases["disrupting"].offset == 30 and a.phases["deleted"].utc == "2026-01-01T00:01:30Z"
    assert (a.instance_type, a.zone, a.capacity_type) == ("Standard_D2s_v3", "southcentralus-1", "on-demand")
    assert (a.went, a.reason, a.replaced_by) == ("drift", "Drifted", ["default-b"])
    assert b.went is None and "deleted" not in b.phases and b.capacity_type == "spot"
    pod, = h.pods
    assert (pod.created.offset, pod.bound.offset, pod.node) == (0, 45, "aks-b")


def test_a_consolidation_reads_as_one_and_keeps_its_method():
    r = _run()
    r.disruptions[0].update(method="single", reason="Underutilized")
    a = history(r).claims[0]
    assert (a.went, a.method, a.reason) == ("consolidation", "single", "Underutilized")


def test_json_is_camel_case_with_offsets_and_utc():
    j = history(_run()).to_json()
    claim = j["nodeClaims"][0]
    assert claim["instanceType"] == "Standard_D2s_v3" and claim["replacedBy"] == ["default-b"]
    assert claim["phases"]["deleted"] == {"offset": 90.0, "offsetText": "+1m30s", "utc": "2026-01-01T00:01:30Z"}
    assert j["events"][0]["at"]["offsetText"] == "+1m"


def test_steps_and_events_merge_in_time_order():
    lines = timeline_lines(history(_run()))
    assert [line.split("  ")[1].split(" ")[0] for line in lines] == ["tainted", "event", "terminated"]
    assert lines[1].startswith("+1m (2026-01-01T00:01:00Z)  event NodeClaim/default-a DisruptionTerminating")


def test_trace_times_become_offsets_and_utc():
    assert human_trace(f"[t={START + 10:.0f}s] launched x", START) == "[+10s 2026-01-01T00:00:10Z] launched x"
    folded = human_trace(f"[t={START:.0f}s..{START + 20:.0f}s] x  (x3)", START)
    assert folded == "[+0s 2026-01-01T00:00:00Z..+20s 2026-01-01T00:00:20Z] x  (x3)"
    assert human_trace("no time here", START) == "no time here"


def test_a_run_without_times_has_spans_without_moments():
    r = RunResult("s", "upstream", "local", 1)
    r.nodeclaims = [NodeClaimResult("c", "default", [], [], {})]
    h = history(r)
    assert h.claims[0].phases == {} and h.end.offset == 0
