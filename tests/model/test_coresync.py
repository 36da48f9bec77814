"""harness/model/coresync.py: the source checks `--check` runs without a core clone (every switch name read in
harness/ is one of core-behaviour.yaml's) and the scenario-pair template of `--new-pair`, which `--check` refuses
until it is edited."""
from __future__ import annotations

import pytest

from harness.model.coresync import new_pair, pair_problems, pair_sides, source_problems, source_reads
from harness.model.upstream.gosource import SyncError
from harness.scenario.load import load_scenarios


def test_harness_reads_only_switches_of_the_file():
    """A misspelt switch name fails here (and in `coresync --check`), not at the first run that reaches it."""
    assert source_problems() == []


def test_a_misspelt_switch_and_scope_are_said_at_their_line(tmp_path):
    pkg = tmp_path / "harness" / "loop"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text('def f(s):\n    if s.core["driftEmptyCandidate"]:\n        s.touch_scope("drfit")\n')
    problems = source_problems(root=tmp_path / "harness")
    assert "harness/loop/x.py:2: reads switch 'driftEmptyCandidate', which core-behaviour.yaml lacks" in problems
    assert "harness/loop/x.py:3: touches scope 'drfit', which core-behaviour.yaml `scopes` lacks" in problems
    # every implemented switch is read somewhere: none is in this one-file tree
    assert "driftEmptyCandidates: implemented, but nothing in harness/ reads core['driftEmptyCandidates']" in problems


def test_reads_are_found_where_the_loop_decides():
    reads, touches = source_reads()
    assert any(w.startswith("harness/loop/disruption/drift.py:") for w in reads["driftEmptyCandidates"])
    assert "unpricedCandidate" in touches


def test_pair_sides_are_the_releases_around_the_change():
    assert pair_sides("driftEmptyCandidates") == (("v1.6.1", "v1.6.1", "skip"), ("v1.6.8", "v1.6.2", "first"))
    with pytest.raises(SyncError, match="no release shows the other side"):
        pair_sides("nilLabelSelectorTopology")


def test_new_pair_writes_a_scenario_that_loads(tmp_path):
    (tmp_path / "scenarios" / "releases" / "core").mkdir(parents=True)
    path = new_pair("launchTimeout", tmp_path)
    assert path.name == "launch-timeout.scenario.yaml"
    text = path.read_text()
    assert "profiles: [v1.6.8, v1.7.2]" in text and "Switch launchTimeout." in text
    assert all(len(line) <= 112 for line in text.split("description: >-\n")[1].split("\ngiven:")[0].splitlines())
    (sc,) = load_scenarios(path)
    assert sc.name == "core-launch-timeout" and list(sc.profiles) == ["v1.6.8", "v1.7.2"]
    # as written it shows nothing of the switch: --check says so at the comment's line until it is deleted
    assert pair_problems(tmp_path) == [
        "scenarios/releases/core/launch-timeout.scenario.yaml:4: still as `--new-pair` wrote it: make its input "
        "reach the switch, give each side's outcome under expectByProfile and the description, then delete the "
        "comment"]
    with pytest.raises(SyncError, match="exists already"):
        new_pair("launchTimeout", tmp_path)
    with pytest.raises(SyncError, match="not a switch of core-behaviour.yaml"):
        new_pair("launchTimeOut", tmp_path)


def test_no_pair_is_left_as_new_pair_wrote_it():
    assert pair_problems() == []
