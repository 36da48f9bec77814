"""What Karpenter's disruption did, read from a real-engine run (harness/runner/engines/real/outcome/disruptions.py):
the orchestration queue's log line, the events and what each poll shows, in the simulation's shapes."""
import json

from harness.runner.engines.real.outcome import disruptions
from harness.runner.engines.real.outcome.disruptions import DisruptionWatch, read_log


def _line(message: str, **fields) -> str:
    return json.dumps({"level": "INFO", "logger": "controller", "message": message, **fields})


def _claim(name: str, node: str | None = None, deleting: bool = False, pool: str = "default",
           conds: dict | None = None, capacity: str = "on-demand") -> dict:
    meta = {"name": name, "labels": {"karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": capacity,
                                     "node.kubernetes.io/instance-type": "Standard_D2s_v3"}}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-23T08:00:00Z"
    return {"metadata": meta, "status": {"nodeName": node, "conditions": [
        {"type": t, "status": "True", "reason": r} for t, r in (conds or {}).items()]}}


def _node(name: str, tainted: bool = False, deleting: bool = False) -> dict:
    meta = {"name": name}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-23T08:00:00Z"
    return {"metadata": meta, "spec": {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}] if tainted else []}}


def test_commands_expirations_and_garbage_collection_from_the_log(tmp_path):
    """core v1.14.0 disruption/queue.go StartCommand, nodeclaim/expiration and garbagecollection."""
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        "not json",
        _line("disrupting node(s)", command="Underutilized/1b2c: replace: nodepools=[default]: [aks-a] -> [1 replacement]",
              decision="replace", **{"replacement-node-count": 1,
                                     "disrupted-nodes": [{"Node": {"name": "aks-a"}, "NodeClaim": {"name": "a"}}]}),
        _line("disrupting node(s)", command="Underutilized/3d4e: delete: nodepools=[default]: [aks-b, aks-c]",
              decision="delete", **{"replacement-node-count": 0,
                                    "disrupted-nodes": [{"NodeClaim": {"name": "b"}}, {"NodeClaim": {"name": "c"}}]}),
        _line("deleting expired nodeclaim", NodeClaim={"name": "d"}),
        _line("garbage collecting nodeclaim with no cloudprovider representation", NodeClaim={"name": "e"}),
    ]))
    commands, others = read_log(log)
    assert [(c.index, c.reason, c.decision, c.claims, c.replacements, c.method) for c in commands] == [
        (1, "Underutilized", "replace", ["a"], 1, "single"), (2, "Underutilized", "delete", ["b", "c"], 0, "multi")]
    assert others == [("d", "expired"), ("e", "garbage-collected")]


def test_records_name_reason_method_and_replacements_of_what_was_deleted(tmp_path):
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        _line("disrupting node(s)", command="Drifted/1: replace: x", decision="replace",
              **{"replacement-node-count": 1, "disrupted-nodes": [{"NodeClaim": {"name": "a"}}]}),
        _line("disrupting node(s)", command="Empty/2: delete: x", decision="delete",
              **{"disrupted-nodes": [{"NodeClaim": {"name": "kept"}}]}),
        _line("garbage collecting nodeclaim with no cloudprovider representation", NodeClaim={"name": "s"}),
    ]))
    watch = DisruptionWatch()
    claims = {"a": _claim("a", "aks-a", conds={"Drifted": "NodePoolDrifted"}), "r": _claim("r", "aks-r"),
              "kept": _claim("kept", "aks-kept"), "s": _claim("s", "aks-s", capacity="spot")}
    watch.poll(claims, set(claims), [], [])
    commands, others = read_log(log)
    recs = disruptions.records(watch, commands, others, claims, {"a", "s"}, {"a": 0, "r": 1, "s": 2}, ["r"],
                               {"a": "aks-a", "r": "aks-r", "s": "aks-s"})
    assert [(r["nodeClaim"], r["index"], r["reason"], r["driftReason"], r["method"], r["decision"], r["commandIndex"])
            for r in recs] == [("a", 0, "Drifted", "NodePoolDrifted", "drift", "replace", 1),
                               ("s", 2, "Interrupted", None, "garbage-collection", "delete", None)]
    assert recs[0]["replacements"] == [{"nodeClaim": "r", "node": "aks-r", "instanceType": "Standard_D2s_v3"}]


def test_the_timeline_in_the_order_a_disruption_goes():
    watch = DisruptionWatch()
    a, r = _claim("a", "aks-a"), _claim("r")
    watch.poll({"a": a}, {"a"}, [_node("aks-a")], [])
    a = _claim("a", "aks-a", deleting=True, conds={"DisruptionReason": "Underutilized"})
    watch.poll({"a": a, "r": r}, {"a", "r"}, [_node("aks-a", tainted=True, deleting=True)],
               [{"metadata": {"name": "p"}, "spec": {"nodeName": "aks-a"}}])
    r = _claim("r", "aks-r", conds={"Initialized": ""})
    watch.poll({"a": a, "r": r}, {"a", "r"}, [_node("aks-a", tainted=True, deleting=True), _node("aks-r")], [])
    watch.poll({"a": a, "r": r}, {"r"}, [_node("aks-r")], [])
    assert watch.busy({"r": r}, {"r"}) == []
    got = [(t["nodeClaim"], t["action"], t["detail"]) for t in disruptions.timeline(watch, {"r"})]
    assert got == [("a", "tainted", "Underutilized"), ("a", "deleting", ""), ("r", "replacement created", ""),
                   ("a", "draining", ""), ("r", "replacement initialized", ""), ("a", "drained", ""),
                   ("a", "terminated", "")]


def test_candidates_and_what_is_under_way():
    claims = {"a": _claim("a", conds={"Consolidatable": ""}), "b": _claim("b", conds={"Drifted": "RequirementsDrifted"}),
              "c": _claim("c"), "d": _claim("d", deleting=True, conds={"Consolidatable": ""})}
    assert disruptions.candidates(claims, set(claims)) == ["a", "b"]
    watch = DisruptionWatch()
    watch.poll(claims, set(claims), [_node("aks-x", tainted=True)], [])
    assert watch.busy(claims, set(claims)) == ["Node/aks-x", "NodeClaim/d"]


def test_protections_from_blocked_events():
    """DisruptionBlocked on a Node (core types.go NewCandidate, sentence cased) and a NodePool's budget
    event (disruption/events NodePoolBlockedForDisruptionReason): the pool's candidates for that reason."""
    claims = {"a": _claim("a", "aks-a", conds={"Drifted": "NodePoolDrifted"}), "b": _claim("b", "aks-b")}
    events = [
        {"kind": "Node", "name": "aks-b", "reason": "DisruptionBlocked",
         "message": 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/precious)'},
        {"kind": "Node", "name": "aks-b", "reason": "DisruptionBlocked", "message": "Node is deleting or marked for deletion"},
        {"kind": "NodePool", "name": "default", "reason": "DisruptionBlocked",
         "message": "No allowed disruptions for disruption reason Drifted due to blocking budget"},
    ]
    got = disruptions.protected(events, claims, set(claims), {"a": "aks-a", "b": "aks-b"})
    assert [(p["node"], p["by"], p["method"]) for p in got] == [("aks-b", "do-not-disrupt", ""), ("aks-a", "budget", "drift")]


def test_a_commands_candidates_are_tainted_together_even_when_a_poll_missed_one():
    """core taints every candidate of a command at once (queue.go StartCommand markDisrupted); an empty
    node can be tainted, drained and deleted between two polls."""
    watch = DisruptionWatch()
    claims = {n: _claim(n, f"aks-{n}") for n in ("a", "b", "c")}
    watch.poll(claims, set(claims), [_node(f"aks-{n}") for n in "abc"], [])
    watch.poll(claims, set(claims), [_node("aks-a", tainted=True), _node("aks-b"), _node("aks-c")], [])
    watch.poll(claims, {"a", "c"}, [_node("aks-a", tainted=True), _node("aks-c", tainted=True)], [])
    cmd = disruptions.Command(1, "Empty", "delete", ["a", "b", "c"], 0)
    got = [(t["nodeClaim"], t["action"]) for t in disruptions.timeline(watch, set(), None, [cmd])]
    assert got == [("a", "tainted"), ("c", "tainted"), ("b", "tainted"), ("b", "terminated")]


def test_instance_terminating_missed_between_two_polls():
    """A NodeClaim with an instance is gone only after InstanceTerminating (core v1.14.0 nodeclaim/lifecycle
    controller.go finalize); one that never launched (no providerID) has no instance to terminate."""
    watch = DisruptionWatch()
    a, b = _claim("a", "aks-a", deleting=True), _claim("b", deleting=True)
    a["status"]["providerID"] = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-a"
    watch.poll({"a": a, "b": b}, {"a", "b"}, [], [])
    watch.poll({"a": a, "b": b}, set(), [], [])
    watch.poll({"a": a, "b": b}, set(), [], [])
    got = [(t["nodeClaim"], t["action"]) for t in watch.timeline]
    assert got == [("a", "created"), ("a", "deleting"), ("b", "created"), ("b", "deleting"),
                   ("a", "instance terminating"), ("a", "terminated"), ("b", "terminated")]


def test_a_command_before_core_v1_7_names_its_reason_in_lower_case(tmp_path):
    """core v1.6.2 disruption/queue.go StartCommand logs `reason: drifted` (strings.ToLower of the
    DisruptionReason) where v1.14.0 logs `command: Drifted/...`."""
    log = tmp_path / "controller.log"
    log.write_text(_line("disrupting node(s)", reason="drifted", decision="replace",
                         **{"replacement-node-count": 1, "disrupted-nodes": [{"NodeClaim": {"name": "a"}}]}) + "\n" +
                   _line("disrupting node(s)", reason="underutilized", decision="delete",
                         **{"replacement-node-count": 0, "disrupted-nodes": [{"NodeClaim": {"name": "b"}}]}))
    commands, _ = read_log(log)
    assert [(c.reason, c.decision, c.claims, c.method) for c in commands] == [
        ("Drifted", "replace", ["a"], "drift"), ("Underutilized", "delete", ["b"], "single")]


def test_a_core_v1_0_command_is_read_from_its_text_and_named_by_nodeclaim(tmp_path):
    """core v1.0.6 disruption/controller.go executeCommand logs `disrupting nodeclaim(s) via <Command.String>`
    with the candidates by Node name (types.go); the observer maps them to their NodeClaims."""
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        _line("disrupting nodeclaim(s) via replace, terminating 1 nodes (1 pods) aks-a/Standard_D2s_v3/on-demand "
              "and replacing with on-demand node from types Standard_D2s_v3, Standard_D4s_v3", reason="drifted"),
        _line("disrupting nodeclaim(s) via delete, terminating 2 nodes (0 pods) aks-b/Standard_D2s_v3/on-demand, "
              "aks-c/Standard_D2s_v3/spot", reason="empty"),
        _line("disrupting nodeclaim(s) via replace, terminating 2 nodes (3 pods) aks-d/Standard_D2s_v3/on-demand, "
              "aks-e/Standard_D2s_v3/on-demand and replacing with 1 spot and 2 on-demand, from types Standard_D2s_v3",
              reason="underutilized"),
    ]))
    commands, _ = read_log(log)
    commands = disruptions.by_claim(commands, {"a": "aks-a", "b": "aks-b", "c": "aks-c", "d": "aks-d", "e": "aks-e"})
    assert [(c.reason, c.decision, c.claims, c.replacements) for c in commands] == [
        ("Drifted", "replace", ["a"], 1), ("Empty", "delete", ["b", "c"], 0),
        ("Underutilized", "replace", ["d", "e"], 3)]


def test_a_core_v0_36_command_is_read_from_its_method_type(tmp_path):
    """core v0.36.1 disruption/controller.go executeCommand logs `disrupting via <method Type()> <Command.String>`
    with no reason field; a consolidation delete of candidates with no pods is the empty-node consolidation,
    which core v1.0 made Emptiness (`Empty`)."""
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        _line("disrupting via drift replace, terminating 1 nodes (1 pods) aks-a/Standard_D2s_v3/on-demand "
              "and replacing with on-demand node from types Standard_D2s_v3, Standard_D4s_v3", **{"command-id": "x"}),
        _line("disrupting via consolidation delete, terminating 1 nodes (1 pods) aks-b/Standard_D2s_v3/on-demand"),
        _line("disrupting via consolidation delete, terminating 2 nodes (0 pods) aks-c/Standard_D2s_v3/on-demand, "
              "aks-d/Standard_D2s_v3/spot"),
        _line("disrupting via emptiness delete, terminating 1 nodes (0 pods) aks-e/Standard_D2s_v3/on-demand"),
        _line("disrupting via expiration replace, terminating 1 nodes (2 pods) aks-f/Standard_D2s_v3/on-demand "
              "and replacing with 1 spot and 1 on-demand, from types Standard_D2s_v3"),
    ]))
    commands, _ = read_log(log)
    commands = disruptions.by_claim(commands, {c: f"aks-{c}" for c in "abcdef"})
    assert [(c.reason, c.decision, c.claims, c.replacements, c.method) for c in commands] == [
        ("Drifted", "replace", ["a"], 1, "drift"), ("Underutilized", "delete", ["b"], 0, "single"),
        ("Empty", "delete", ["c", "d"], 0, "empty"), ("Empty", "delete", ["e"], 0, "empty"),
        ("Expired", "replace", ["f"], 2, "expiration")]


def test_core_v0_36s_disruption_taint_and_candidates():
    """core v0.36 taints a candidate karpenter.sh/disruption=disrupting (v1beta1 taints.go) and has no
    Consolidatable condition: a WhenUnderutilized NodePool's initialized NodeClaims are consolidation's
    candidates, Empty and Expired ones emptiness's and expiration's."""
    watch = DisruptionWatch()
    claims = {"a": _claim("a", "aks-a")}
    v036 = {"metadata": {"name": "aks-a"}, "spec": {"taints": [
        {"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"}]}}
    watch.poll(claims, {"a"}, [v036], [])
    assert [t["action"] for t in watch.timeline] == ["tainted", "created"]
    claims = {"a": _claim("a", conds={"Initialized": ""}), "b": _claim("b", conds={"Empty": ""}),
              "c": _claim("c", conds={"Expired": ""}), "d": _claim("d", pool="other", conds={"Initialized": ""})}
    assert disruptions.candidates(claims, set(claims), underutilized={"default"}) == ["a", "b", "c"]
    assert disruptions.candidates(claims, set(claims)) == ["b", "c"]


def test_core_v0_36s_blocked_messages_name_their_protection():
    """v0.36.1 disruption/types.go NewCandidate: `PDB "default/p" prevents pod evictions`, `Nominated for a
    pending pod`, `Pod "default/x" has "karpenter.sh/do-not-disrupt" annotation` (events.Blocked prefixes
    `Cannot disrupt Node: `)."""
    claims = {c: _claim(c, f"aks-{c}") for c in "abc"}
    events = [{"kind": "Node", "name": f"aks-{c}", "reason": "DisruptionBlocked", "message": f"Cannot disrupt Node: {m}"}
              for c, m in (("a", 'PDB "default/p" prevents pod evictions'), ("b", "Nominated for a pending pod"),
                           ("c", 'Pod "default/x" has "karpenter.sh/do-not-disrupt" annotation'))]
    got = disruptions.protected(events, claims, set(claims), {c: f"aks-{c}" for c in "abc"})
    assert [(p["nodeClaim"], p["by"]) for p in got] == [("a", "pdb"), ("b", "nominated"), ("c", "do-not-disrupt")]


def test_a_core_v0_36_budget_keeps_every_candidate_of_its_nodepool():
    """v0.36's NodePoolBlocked names no reason: a WhenUnderutilized pool's initialized NodeClaims are kept
    from consolidation, its drifted ones from drift too; beside per-reason events (later cores) it adds nothing."""
    claims = {"a": _claim("a", "aks-a", conds={"Initialized": ""}),
              "b": _claim("b", "aks-b", conds={"Initialized": "", "Drifted": "NodePoolDrifted"}),
              "c": _claim("c", "aks-c", pool="other", conds={"Initialized": ""})}
    blocked = {"kind": "NodePool", "name": "default", "reason": "DisruptionBlocked",
               "message": "No allowed disruptions due to blocking budget"}
    node_of = {c: f"aks-{c}" for c in "abc"}
    got = disruptions.protected([blocked], claims, set(claims), node_of, {"default": "WhenUnderutilized"})
    assert [(p["nodeClaim"], p["method"]) for p in got] == [
        ("a", "multi"), ("a", "single"), ("b", "drift"), ("b", "multi"), ("b", "single")]
    assert [p["nodeClaim"] for p in disruptions.protected([blocked], claims, set(claims), node_of,
                                                          {"default": "WhenEmpty"})] == ["b"]
    later = {**blocked, "message": "No allowed disruptions for disruption reason Drifted due to blocking budget"}
    assert [(p["nodeClaim"], p["method"]) for p in disruptions.protected([blocked, later], claims, set(claims), node_of,
                                                                         {"default": "WhenUnderutilized"})] == [("b", "drift")]
