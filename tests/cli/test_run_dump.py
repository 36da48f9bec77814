"""A scenario `harness new` made from a dump (label `dump`) reads as the answer it is (issue 63 item 5):
`reproduced the dump` when the run shows the dump's state, `moved on from the dump: <what differs>` when the
cluster went on from the snapshot, and FAIL for any other failure. pytest still fails a moved-on run, and so
does the exit code: the run did not reproduce the dump."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.scenario.load import load_scenarios

DUMP = Path(__file__).resolve().parents[1] / "dump" / "dumps" / "expiring-node.yaml"   # expires 2026-11-20T14:00Z


@pytest.fixture
def made(tmp_path):
    """The dump at its own time (the node there) and 5 minutes after its node expired (its provision mode given:
    a VM-path dump does not tell aksscriptless from bootstrappingclient, which would be an assumption)."""
    def new(name: str, *extra: str) -> Path:
        out = tmp_path / f"{name}.scenario.yaml"
        assert cli(["new", str(DUMP), "--name", name, "-o", str(out), "--profile", "upstream",
                    "--provision-mode", "aksscriptless", *extra]) == 0
        return out
    return new("kept"), new("moved", "--at", "2026-11-20T14:05:00Z")


def _row(out: str, name: str) -> list[str]:
    row = next(line for line in out.splitlines() if f"│ {name} " in line)
    return [c.strip() for c in row.split("│")[1:-1]]


def test_harness_new_labels_the_scenario_as_from_a_dump(made, capsys):
    kept, _ = made
    (sc,) = load_scenarios(kept)
    assert sc.tags == ["bug", "dump"] and "moved on from the dump" in sc.description


def test_reproduced_and_moved_on(made, capsys):
    kept, moved = made
    capsys.readouterr()
    assert cli(["run", str(kept), str(moved)]) == 1
    out = capsys.readouterr().out
    assert "2 run(s) on embedded: 1 passed, 0 xfailed, 0 failed, 1 moved on from the dump" in out
    assert _row(out, "kept")[3] == "reproduced" and _row(out, "moved")[3] == "moved on"
    assert f"--- {kept}:2: kept [upstream] reproduced the dump: what happened ---" in out
    assert (f"{moved}:2: scenario 'moved' moved on from the dump under profile 'upstream' on backend 'embedded' "
            "(seed 1): the cluster went on from the snapshot; what differs from the dump:") in out
    assert 'expect.nodes[0].deleted: expected False, got "Expired"' in out
    assert "failed under profile" not in out
    assert cli(["run", str(moved), "--json"]) == 1
    run, = json.loads(capsys.readouterr().out)
    assert run["verdict"] == "FAIL"          # what pytest says too
    assert run["fromDump"] == 'moved on from the dump: expect.nodes[0].deleted: expected False, got "Expired"'


def test_only_a_settled_run_whose_dump_expectations_differ_moved_on():
    """A refused object (the release does not take the dump's manifests), a run that did not settle, a
    step the user added: a FAIL as any other."""
    from types import SimpleNamespace

    from harness.loop.result import NodePoolResult, RunResult
    from harness.runner.engines.base import Outcome
    from harness.scenario.expect.match import Mismatch
    from harness.report.console import dump_verdict, shown_verdict

    def outcome(path="expect.nodes[0].deleted", tags=("bug", "dump"), **result) -> Outcome:
        sc = SimpleNamespace(tags=list(tags), given={}, expect={}, steps=[], xfail_reason=lambda *a, **k: None)
        r = RunResult("x", "upstream", "embedded", 1, steady=True)
        for k, v in result.items():
            setattr(r, k, v)
        return Outcome(sc, "upstream", "embedded", r, mismatches=[Mismatch(path, False, "Expired")])
    assert dump_verdict(outcome()) == 'moved on from the dump: expect.nodes[0].deleted: expected False, got "Expired"'
    assert shown_verdict(outcome()) == "moved on"
    refused = {"web": NodePoolResult("web", accepted=False, stage="admission", message="no matches")}
    for o in (outcome(nodepools=refused), outcome(steady=False), outcome(runaway=True),
              outcome(path="steps[0].expect.nodes[0].deleted")):
        assert dump_verdict(o) is None and shown_verdict(o) == "FAIL"
    assert dump_verdict(outcome(tags=("bug",))) is None          # not from a dump: a FAIL
