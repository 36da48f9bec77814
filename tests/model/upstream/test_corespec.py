"""harness/model/upstream/corespec.py: what each entry of harness/data/core-behaviour.yaml must hold, said at its
line (`coresync` prints it before a run would meet the entry)."""
from __future__ import annotations

from harness.model.data import DATA_DIR
from harness.model.upstream.corespec import CORE_FILE, entry_problems


def test_every_entry_is_complete():
    assert entry_problems() == []


def _with_entry(tmp_path, entry: str) -> str:
    text = (DATA_DIR / CORE_FILE).read_text().rstrip("\n") + "\n" + entry
    (tmp_path / CORE_FILE).write_text(text)
    return str(tmp_path)


def test_an_entry_lacking_what_its_kind_needs_is_said_at_its_line(tmp_path):
    base = (DATA_DIR / CORE_FILE).read_text().rstrip("\n").count("\n") + 1
    data_dir = _with_entry(tmp_path, """\
  - name: newSwitch
    fact: core.behaviour.newSwitch
    about: what it decides
    decides: what it decides
    scope: [disruption]
    implemented: false
    since: v1.1.0
    pr: 1
    commit: abc
    before: a.go F
    after: a.go F
    module: core
    files: [pkg/a.go]
  - name: otherSwitch
    fact: core.behaviour.other
    module: core
    implemented: true
""")
    problems = entry_problems(data_dir)
    assert problems[0] == (f"core-behaviour.yaml:{base + 1}: newSwitch: lacks modeledAs, touched (implemented: "
                           "false is a switch the loop answers with v1.14.0's behaviour: set true once the loop "
                           "reads it)")
    assert problems[1] == (f"core-behaviour.yaml:{base + 14}: otherSwitch: lacks about, decides, scope, since, pr, "
                           "commit, before, after, files, pair")
    assert problems[2] == (f"core-behaviour.yaml:{base + 14}: otherSwitch: fact is 'core.behaviour.other', not "
                           "'core.behaviour.otherSwitch'")
