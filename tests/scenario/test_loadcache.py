"""harness/scenario/loadcache.py: a loaded scenario file comes back from disk only while it, and every
manifest file it references, is byte for byte the same; a bad file is judged afresh every time."""
from __future__ import annotations

import pytest

from harness.scenario import loadcache
from harness.scenario.load import load_scenarios
from harness.scenario.yamlsource import SourceError

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: cached}
manifests:
- file: ../manifests/pool.yaml
expect: {}
"""
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %s}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      requirements: []
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("HARNESS_SCENARIO_CACHE", raising=False)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "scenarios" / "manifests").mkdir(parents=True)
    (tmp_path / "scenarios" / "loop").mkdir()
    (tmp_path / "scenarios" / "manifests" / "pool.yaml").write_text(POOL % "general")
    path = tmp_path / "scenarios" / "loop" / "x.scenario.yaml"
    path.write_text(SCENARIO)
    return path


def _entries(tree) -> list:
    return sorted((tree.parents[2] / "cache" / "scenarios").rglob("*.pickle"))


def _pool_name(path) -> str:
    (sc,) = load_scenarios(path)
    return sc.manifests[0].obj["metadata"]["name"]


def test_a_second_load_comes_from_the_cache(tree, monkeypatch):
    first = load_scenarios(tree)
    assert len(_entries(tree)) == 1
    monkeypatch.setattr("harness.scenario.load._load", lambda *a, **k: pytest.fail("loaded again"))
    again = load_scenarios(tree)
    assert [s.name for s in again] == [s.name for s in first] == ["cached"]
    assert again[0].manifests[0].obj == first[0].manifests[0].obj
    assert again[0].doc.lines == first[0].doc.lines


def test_an_edited_manifest_file_is_read_again(tree):
    assert _pool_name(tree) == "general"
    (tree.parents[1] / "manifests" / "pool.yaml").write_text(POOL % "edited")
    assert _pool_name(tree) == "edited"


def test_an_edited_scenario_file_is_read_again(tree):
    load_scenarios(tree)
    tree.write_text(SCENARIO.replace("name: cached", "name: renamed"))
    assert [s.name for s in load_scenarios(tree)] == ["renamed"]


def test_a_bad_file_is_not_kept_and_fails_the_same_way_each_time(tree):
    tree.write_text(SCENARIO.replace("- file: ../manifests/pool.yaml", "- file: ../manifests/missing.yaml"))
    for _ in range(2):
        with pytest.raises(SourceError, match="missing.yaml"):
            load_scenarios(tree)
    assert _entries(tree) == []


def test_off_when_asked(tree, monkeypatch):
    monkeypatch.setenv("HARNESS_SCENARIO_CACHE", "0")
    load_scenarios(tree)
    assert _entries(tree) == []


def test_a_damaged_entry_is_replaced(tree):
    load_scenarios(tree)
    (entry,) = _entries(tree)
    entry.write_bytes(b"not a pickle")
    assert [s.name for s in load_scenarios(tree)] == ["cached"]
    assert entry.read_bytes() != b"not a pickle"


def test_the_stamp_follows_the_code():
    assert loadcache.code_stamp() == loadcache.code_stamp()
    assert len(loadcache.code_stamp()) == 24


def test_a_scenario_keeps_the_spelling_of_its_path(tree, monkeypatch):
    absolute = load_scenarios(tree)
    monkeypatch.chdir(tree.parent)
    relative = load_scenarios(tree.name)
    assert str(absolute[0].file) == str(tree)
    assert str(relative[0].file) == tree.name
    assert len(_entries(tree)) == 2
