"""The run's one-line outcome and its counts (harness/report/console.py): live objects only, the deleted
shown as such, pending without completed or deleted pods, each node kind with its NodePool."""
from __future__ import annotations

from harness.loop.result import NodeResult, PodResult, RunResult
from harness.report.console import node_count, outcome_summary, pending_pods, restart_lines, unsettled


def _node(name: str, pool: str = "default", size: str = "Standard_D2s_v3", deleted: str | None = None) -> NodeResult:
    return NodeResult(name, 0, f"nc-{name}", pool, size, "southcentralus-1", "on-demand", name, deleted=deleted)


def test_deleted_nodes_are_counted_apart_from_the_live_ones():
    """Two runs that both end with 7 nodes read alike, whether or not one replaced 2 on the way."""
    r = RunResult("x", "upstream", "embedded", 1)
    r.nodes = [_node(f"n{i}") for i in range(7)] + [_node("old1", deleted="Drifted"), _node("old2", deleted="Empty")]
    assert node_count(r) == "7 node(s), 2 deleted"
    assert outcome_summary(r) == "7 node(s), 2 deleted: Standard_D2s_v3 on-demand x7 (NodePool default)"
    r.nodes = r.nodes[:7]
    assert node_count(r) == "7 node(s)"


def test_succeeded_and_deleted_pods_are_not_pending():
    r = RunResult("x", "upstream", "embedded", 1)
    r.pods["d/job-a"] = PodResult("job-a", "d", owner_kind="Job", owner_name="job", state="succeeded")
    r.pods["d/gone"] = PodResult("gone", "d", state="deleted")
    r.pods["d/ds"] = PodResult("ds", "d", owner_kind="DaemonSet", owner_name="ds")
    r.pods["d/wait"] = PodResult("wait", "d")
    assert [p.name for p in pending_pods(r)] == ["wait"]
    assert outcome_summary(r) == "0 node(s); pending: wait"


def test_each_node_kind_names_its_nodepool():
    """The same size from the fallback pool is another outcome: the across-releases table marks it."""
    a, b = RunResult("x", "v1.6.1", "embedded", 1), RunResult("x", "v1.6.2", "embedded", 1)
    a.nodes, b.nodes = [_node("n", pool="primary")], [_node("n", pool="fallback")]
    assert outcome_summary(a) == "1 node(s): Standard_D2s_v3 on-demand x1 (NodePool primary)"
    assert outcome_summary(a) != outcome_summary(b)
    b.nodes.append(_node("m", pool="primary", size="Standard_D4s_v3"))
    assert outcome_summary(b) == ("2 node(s): Standard_D2s_v3 on-demand x1 (NodePool fallback), "
                                  "Standard_D4s_v3 on-demand x1 (NodePool primary)")


def test_unsettled_unless_the_scenario_bounded_the_run_itself():
    from types import SimpleNamespace
    r = RunResult("x", "upstream", "embedded", 1)
    r.trace = ["[settle] not steady after 60 iterations (given.loop.maxIterations)"]

    def run(given=None, expect=None, steps=()):
        sc = SimpleNamespace(given=given or {}, expect=expect or {}, steps=list(steps))
        return SimpleNamespace(final=r, scenario=sc, error=None, skipped=None)
    assert unsettled(run()) == "not steady after 60 iterations (given.loop.maxIterations)"
    assert unsettled(run(given={"loop": {"maxIterations": 1}})) is None           # one pass per step, as asked
    assert unsettled(run(given={"loop": {"horizon": "2h"}})) is None               # watched as long as asked
    assert unsettled(run(steps=[{"expect": {"loop": {"steady": False}}}])) is None
    r.steady = True
    assert unsettled(run()) is None


def test_differences_that_repeat_but_for_an_index_are_one_line():
    """A dump of 357 nodes consolidated away differs in 357 `expect.nodes[i].deleted`: one line with the count;
    fewer than GROUP_AT stay one line each."""
    from harness.scenario.expect.match import Mismatch
    from harness.report.console import GROUP_AT, mismatch_lines
    many = [Mismatch(f"expect.nodes[{i}].deleted", False, "Underutilized", line=100 + 7 * i) for i in range(357)]
    other = Mismatch("expect.pods.web.pending", True, False, line=20)
    lines = mismatch_lines("s.yaml", [other, *many])
    assert lines == ['s.yaml:20: expect.pods.web.pending: expected True, got False',
                     's.yaml:100: expect.nodes[*].deleted: expected False, got "Underutilized": 357 times: '
                     'expect.nodes[0].deleted (line 100), expect.nodes[1].deleted (line 107), '
                     'expect.nodes[2].deleted (line 114) and 354 more']
    few = many[:GROUP_AT - 1]
    assert mismatch_lines("s.yaml", few) == [f"s.yaml:{m.line}: {m.render()}" for m in few]


def test_an_exit_of_the_controllers_own_shows_its_last_words():
    """A crash step's restart is one line; an exit the controller made itself is followed by its last log lines,
    so a failed run says why it restarted."""
    r = RunResult("s", "upstream", "embedded", 1, started=100.0)
    r.restarts = [{"at": 104.0, "why": "the controller exited (code 2)", "planned": False, "restart_at": 104.0,
                   "log": "panic: runtime error\ngoroutine 1 [running]:"},
                  {"at": 130.0, "why": "a crash step", "planned": True, "restart_at": 140.0, "log": "ignored"}]
    lines = restart_lines(r)
    assert lines[0].startswith("Karpenter restarted: the controller exited (code 2) at +4s")
    assert lines[1:3] == ["  | panic: runtime error", "  | goroutine 1 [running]:"]
    assert lines[3].startswith("Karpenter restarted: a crash step at +30s") and "started again at +40s" in lines[3]
    assert len(lines) == 4
