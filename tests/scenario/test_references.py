"""harness/scenario/references.py: `{file: ...}` confined to the scenario's tree (issue 12)."""
from __future__ import annotations

import os

import pytest

from harness.scenario import references
from harness.scenario.references import UnsafeReference, confine, scenario_root


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "scenarios" / "manifests").mkdir(parents=True)
    (tmp_path / "scenarios" / "manifests" / "np.yaml").write_text("kind: NodePool\n")
    return tmp_path


def test_a_relative_reference_inside_the_tree_resolves(tree):
    base = tree / "scenarios" / "loop"
    base.mkdir()
    assert scenario_root(base / "x.scenario.yaml") == tree
    assert confine(base, "../manifests/np.yaml", tree) == tree / "scenarios" / "manifests" / "np.yaml"


@pytest.mark.parametrize("ref, reason", [
    ("/etc/passwd", "is absolute"), ("~/x.yaml", "is absolute"), ("../../etc/passwd", "outside the scenario's tree"),
    ("a\x00b", "NUL byte"), ("x" * 300, "longer than 255"), ("y/" * 600, "longer than 1024"), (5, "non-empty string"),
    ("manifests", "is a directory"),
])
def test_unsafe_references_are_refused(tree, ref, reason):
    with pytest.raises(UnsafeReference, match=reason):
        confine(tree / "scenarios", ref, tree)


def test_a_fifo_is_refused_without_blocking(tree):
    os.mkfifo(tree / "scenarios" / "pipe.yaml")
    with pytest.raises(UnsafeReference, match="not a regular file"):
        confine(tree / "scenarios", "pipe.yaml", tree)


def test_a_symlink_out_of_the_tree_is_refused(tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.yaml"
    outside.write_text("kind: Pod\n")
    (tree / "scenarios" / "link.yaml").symlink_to(outside)
    with pytest.raises(UnsafeReference, match="outside the scenario's tree"):
        confine(tree / "scenarios", "link.yaml", tree)


def test_size_cap(tree, monkeypatch):
    monkeypatch.setattr(references, "MAX_FILE_BYTES", 4)
    with pytest.raises(UnsafeReference, match="larger than"):
        confine(tree / "scenarios", "manifests/np.yaml", tree)


def test_missing_is_marked_missing(tree):
    with pytest.raises(UnsafeReference) as e:
        confine(tree / "scenarios", "nope.yaml", tree)
    assert e.value.missing
