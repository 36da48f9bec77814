"""The scenario writer of `harness new` writes yaml.dump's text byte for byte."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.dump import writer as dumpwriter
from harness.scenario.yamlsource import load_documents

ROOT = Path(__file__).resolve().parents[2]
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _same(doc) -> None:
    assert dumpwriter.dump(doc) == yaml.dump(doc, Dumper=DUMPER, sort_keys=False, allow_unicode=True)
    _same_lines(doc)


def _same_lines(doc) -> None:
    """The lines the writer gives each path are those the scenario loader records reading its text back, so
    `harness new` places its notices without parsing the scenario (dump.py _validated)."""
    text, lines = dumpwriter.dump_with_lines(doc)
    if lines is not None:
        assert lines == load_documents("x.yaml", text)[0].lines


@pytest.mark.parametrize("path", sorted((ROOT / "scenarios" / "tickets").glob("*.scenario.yaml"))
                         + sorted((ROOT / "tests" / "dump" / "dumps").rglob("*.yaml")), ids=lambda p: p.name)
def test_repository_documents(path):
    for doc in yaml.safe_load_all(path.read_text()):
        _same(doc)


TRICKY = ["", "true", "yes", "null", "~", "3", "0x1f", "1e3", "1.5", ".inf", "2026-11-20T11:59:30Z", "500m",
          "-", "-x", "a: b", "a #b", "#x", "'q'", '"d"', "multi\nline", " lead", "trail ", "é", "=", "<<",
          "/dev/termination-log", "x" * 130, "word " * 40, "k8s.io/x-y_z", "@at", "!tag", "*star", "&amp",
          "%p", "a,b", "[x]", "{y}", "tab\there", "\u2028",
          "acr.io/app:1.0", "a:", "a::b", "12:30", "1:2:3", "http://x", ":x"]


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_scalars_in_every_place(value):
    _same({"a": value, "list": [value, {"k": value}], "deep": {"deeper": {"long-key-name": value}},
           value or "e": 1, "f": 1.0, "n": None, "b": False, "empty": {}, "none": []})


def test_shared_objects_and_nested_lists_fall_back():
    shared = {"x": 1}
    _same({"a": shared, "b": shared})
    _same({"a": [[1, 2], [3]]})


def test_lines_are_the_written_paths_only_from_the_first_line_given():
    """dump_with_lines numbers from the line the caller's head ends on; a path it did not write (past a
    scalar, an index out of range, a key not there, the document itself) has no line, as with the loader."""
    doc = {"a": 1, "b": {"c": [1, {"d": 2}], "e": {}}, "f": []}
    text, lines = dumpwriter.dump_with_lines(doc, 3)
    assert text.startswith("a: 1\nb:\n  c:\n  - 1\n  - d: 2\n")
    assert dict(lines) == {("a",): 3, ("b",): 4, ("b", "c"): 5, ("b", "c", 0): 6, ("b", "c", 1): 7,
                           ("b", "c", 1, "d"): 7, ("b", "e"): 8, ("f",): 9}
    for absent in [(), ("a", 0), ("b", "c", 2), ("b", "c", -1), ("b", "c", True), ("zz",), ("f", 0), ("b", "e", "x")]:
        assert absent not in lines and lines.get(absent) is None
