"""harness/model/corechanges.py and harness/data/core-changes.yaml: every core PR in the modeled paths, once, with
a verdict that names what exists. The file against core's history is `python -m harness.model.coresync --check`
(CI has no core clone); these hold the file to itself and to core-behaviour.yaml."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

import harness.loop
from harness.model import corechanges as cc
from harness.model.data import DATA_DIR
from harness.model.upstream.releasesync import git_dir_of

SPEC = cc.load()


def test_the_file_is_consistent():
    assert cc.consistency() == []


def test_each_change_is_listed_once_and_judged():
    keys = [c.key for c in SPEC.changes]
    assert len(keys) == len(set(keys))
    assert all(c.kind in cc.VERDICTS and c.reason for c in SPEC.changes)
    assert all(c.tag.startswith("v1.") for c in SPEC.changes)


def test_every_switch_pr_is_listed_as_its_switch():
    """Every switch's PR, but one whose switch came with the range's first tag (the v0.36 -> v1.0 API change:
    its PR is in the history before it, outside `git log since..until`)."""
    listed = {c.pr: c.verdict for c in SPEC.changes}
    before = {s["name"] for s in cc.core_spec(str(DATA_DIR))["switches"] if s.get("since") == SPEC.since}
    for pr, name in cc.switch_prs().items():
        if name not in before:
            assert listed.get(pr) == f"switch: {name}", pr


def test_2430_is_the_max_instance_types_switch():
    assert {c.pr: c for c in SPEC.changes}[2430].verdict == "switch: maxInstanceTypes"


def test_write_keeps_the_text(tmp_path):
    shutil.copy(DATA_DIR / cc.CHANGES_FILE, tmp_path / cc.CHANGES_FILE)
    assert cc.write(cc.load(tmp_path), tmp_path) is False
    assert cc.load(tmp_path) == SPEC


@pytest.mark.parametrize("subject,files,verdict", [
    ("fix: a test", ["pkg/controllers/disruption/suite_test.go"], "no-outcome: tests only"),
    ("chore(deps): bump x", ["pkg/controllers/disruption/controller.go"], "no-outcome: dependencies"),
    ("feat: a metric", ["pkg/controllers/disruption/metrics.go", "pkg/controllers/disruption/suite_test.go"],
     "no-outcome: metrics only"),
    ("fix: drift", ["pkg/controllers/disruption/drift.go", "pkg/controllers/disruption/metrics.go"], None),
])
def test_rule_verdict(subject, files, verdict):
    assert cc.rule_verdict(subject, files) == verdict


def _broken(tmp_path, old: str, new: str):
    for name in (cc.CHANGES_FILE, "core-behaviour.yaml", "release-probes.yaml"):
        shutil.copy(DATA_DIR / name, tmp_path / name)
    path = tmp_path / cc.CHANGES_FILE
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return cc.consistency(tmp_path)


def test_a_switch_verdict_names_an_existing_switch(tmp_path):
    problems = _broken(tmp_path, 'verdict: "switch: maxInstanceTypes"', 'verdict: "switch: maxInstanceType"')
    assert "#2430: switch 'maxInstanceType' is not in core-behaviour.yaml" in problems
    assert "#2430: switch maxInstanceTypes names it, core-changes.yaml says 'switch: maxInstanceType'" in problems


def test_a_pr_listed_twice_is_said(tmp_path):
    first = SPEC.changes[0]
    line = f"  - {{pr: {first.pr}, tag: {first.tag}, commit: {first.commit}, title: \"x\",\n     verdict: \"no-outcome: x\"}}\n"
    problems = _broken(tmp_path, "changes:\n", "changes:\n" + line)
    assert f"#{first.pr}: listed twice" in problems


def test_an_unknown_kind_and_an_unjudged_pr_are_said(tmp_path):
    problems = _broken(tmp_path, 'verdict: "switch: maxInstanceTypes"', 'verdict: "unjudged"')
    assert any(p.startswith("#2430 (v1.7.0, ") and p.endswith("unjudged") for p in problems)
    problems = _broken(tmp_path, 'verdict: "no-outcome: tests only"', 'verdict: "fine"')
    assert any("verdict 'fine' is not" in p for p in problems)


def test_the_one_command_answers(capsys):
    assert cc.main(["2430"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#2430 v1.7.0 ") and "switch: maxInstanceTypes" in out
    assert cc.main(["#99999"]) == 1
    assert "#99999: not in core-changes.yaml" in capsys.readouterr().out


def test_the_modeled_paths_cover_what_the_loop_cites():
    """Every sigs.k8s.io/karpenter file harness/loop cites is under a modeled path, except the CRDs, which each
    release's derived schema holds (harness/data/releases)."""
    derived = ("pkg/apis/crds/",)
    cited = set()
    for f in Path(harness.loop.__file__).parent.rglob("*.py"):
        cited |= {m.group(1).rstrip(".") for m in
                  re.finditer(r"sigs\.k8s\.io/karpenter v[\d.]+\s+(pkg/[\w/.-]+)", f.read_text())}
    assert cited
    outside = {p for p in cited if not p.startswith(derived)
               and not any(p == q or p.startswith(q + "/") for q in SPEC.paths)}
    assert outside == set()


@pytest.mark.skipif(not os.environ.get("HARNESS_CORE_GIT"), reason="HARNESS_CORE_GIT (core's git history) not given")
def test_the_file_is_the_history():
    """With a core clone: every PR of the range in the modeled paths is listed, and each switch's PR there."""
    git_dir = git_dir_of(os.environ["HARNESS_CORE_GIT"])
    assert cc.check_history(git_dir) == []
    assert cc.missing_switch_prs(git_dir) == []


def test_a_switch_prs_verdict_is_set_from_the_switch(tmp_path):
    """A new switch's PRs need no hand edit in core-changes.yaml: `coresync` sets `switch: <name>` for each PR a
    switch names, whatever the file said."""
    assert _broken(tmp_path, 'verdict: "switch: maxInstanceTypes"', 'verdict: "no-outcome: x"') != []
    assert cc.with_switch_verdicts(tmp_path) == ["#2430"]
    assert cc.consistency(tmp_path) == [] and cc.with_switch_verdicts(tmp_path) == []
    assert (tmp_path / cc.CHANGES_FILE).read_text() == (DATA_DIR / cc.CHANGES_FILE).read_text()
