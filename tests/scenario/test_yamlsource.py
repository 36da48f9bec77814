"""harness/scenario/yamlsource.py: bounded, non-recursive loading with lines (issue 12)."""
from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pytest

from harness.scenario.load import find_scenario_files, load_scenarios
from harness.scenario.yamlsource import MAX_DEPTH, SourceError, load_documents

ROOT = Path(__file__).resolve().parents[2]


def test_merge_keys_and_aliases_keep_data_and_lines():
    text = "base: &b\n  x: 1\n  y: [a, b]\nother:\n  <<: *b\n  y: [c]\ncopy: *b\n"
    (doc,) = load_documents("t.yaml", text)
    assert doc.data["other"] == {"x": 1, "y": ["c"]}
    assert doc.data["copy"] == {"x": 1, "y": ["a", "b"]}
    assert doc.data["copy"] is not doc.data["base"]            # an alias is a copy, as before
    assert doc.line(("copy", "y", 1)) == 3                      # lines of the anchored subtree
    assert doc.line(("other", "y")) == 6


@pytest.mark.parametrize("text, line, reason", [
    ("a: &a [*a]\n", 1, "refers to its own anchor"),
    ("a: *nope\n", 1, "has no anchor"),
    ("a:\n  <<: [1]\n", 2, "merge key << needs a mapping"),
    ("a: !!float x\n", 1, "cannot read 'x' as !!float"),
    ("a: !custom 1\n", 1, "unsupported YAML tag"),
    # a tag on a mapping or sequence is refused as on a scalar, not dropped
    ("a: 1\ngiven: !!python/object:os.system\n  b: 1\n", 2, "unsupported YAML tag 'tag:yaml.org,2002:python/object:os.system'"),
    ("a: !!python/object/apply:os.system [ls]\n", 1, "unsupported YAML tag"),
    ("a:\n  - !!set {x, y}\n", 2, "unsupported YAML tag 'tag:yaml.org,2002:set'"),
    ("a: !!omap [{b: 1}]\n", 1, "unsupported YAML tag 'tag:yaml.org,2002:omap'"),
    ("a: !foo\n  - 1\n", 1, "unsupported YAML tag '!foo'"),
    ("a: !!map [1]\n", 1, "unsupported YAML tag 'tag:yaml.org,2002:map'"),
    ("a: 1\nb: \"\x07\"\n", 2, "U+0007"),
    ("a: " + "{b: " * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1) + "\n", 1, "nesting deeper than"),
])
def test_refused_inputs_name_their_line(text, line, reason):
    with pytest.raises(SourceError) as e:
        load_documents("t.yaml", text)
    assert e.value.line == line and reason in e.value.reason


def test_oversized_file_is_refused_before_parsing(tmp_path, monkeypatch):
    from harness.scenario import yamlsource
    monkeypatch.setattr(yamlsource, "MAX_FILE_BYTES", 100)
    f = tmp_path / "big.yaml"
    f.write_text("a: " + "x" * 200)
    with pytest.raises(SourceError, match="larger than") as e:
        load_documents(f)
    assert e.value.render() == f"{f}:1: file larger than 0 MiB"


def test_a_collection_with_its_own_tag_loads():
    assert load_documents("t.yaml", "--- !!map\na: !!map {b: !!seq [1]}\nc: ! {d: 2}\n")[0].data == \
        {"a": {"b": [1]}, "c": {"d": 2}}


def test_validating_the_library_repeatedly_does_not_grow_memory():
    files = find_scenario_files([ROOT / "scenarios"])

    def once():
        for f in files:
            load_scenarios(f)
    once()
    gc.collect()
    tracemalloc.start()
    try:
        sizes = []
        for _ in range(4):
            gc.collect()
            sizes.append(tracemalloc.get_traced_memory()[0])
            once()
        gc.collect()
        sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    # a leak grows every pass (before the fix: ~11 MB, SafeConstructor.construct_object's memo); a
    # one-off growth (an interpreter table resized while this worker happens to run the test) shows in
    # one pass only, so the median pass is judged
    per_pass = sorted(b - a for a, b in zip(sizes, sizes[1:]))
    assert per_pass[len(per_pass) // 2] < 1_000_000, per_pass


def test_an_anchored_list_item_lends_its_lines_to_each_alias():
    text = "a:\n  list:\n  - x\n  - &item\n    k: 1\n    l: [2,\n      3]\nb: *item\nc: [*item]\n"
    (doc,) = load_documents("t.yaml", text)
    assert doc.data["b"] == doc.data["c"][0] == {"k": 1, "l": [2, 3]}
    sub = {("k",): 5, ("l",): 6, ("l", 0): 6, ("l", 1): 7}
    assert doc.lines == {("a",): 1, ("a", "list"): 2, ("a", "list", 0): 3, ("a", "list", 1): 4,
                         **{("a", "list", 1) + p: n for p, n in sub.items()},
                         ("b",): 8, **{("b",) + p: n for p, n in sub.items()},
                         ("c",): 9, ("c", 0): 9, **{("c", 0) + p: n for p, n in sub.items()}}


def test_an_anchor_name_used_again_inside_its_own_collection():
    # the inner &a closes first: *a inside the outer one is the inner mapping, and the outer one's
    # lines, copied to `later`, hold those the inner alias copied
    text = "outer: &a\n  inner: &a\n    x: 1\n  use: *a\nlater: *a\n"
    (doc,) = load_documents("t.yaml", text)
    assert doc.data["later"] == doc.data["outer"] == {"inner": {"x": 1}, "use": {"x": 1}}
    assert doc.lines == {("outer",): 1, ("outer", "inner"): 2, ("outer", "inner", "x"): 3, ("outer", "use"): 4,
                         ("outer", "use", "x"): 3, ("later",): 5, ("later", "inner"): 2, ("later", "inner", "x"): 3,
                         ("later", "use"): 4, ("later", "use", "x"): 3}


def test_merge_keys_with_a_list_keep_the_first_mapping_and_record_lines_under_the_merge_key():
    text = "one: &one {x: 1, y: 1}\ntwo: &two\n  y: 2\n  z: 2\nm:\n  <<: [*one, *two]\n  x: 0\n"
    (doc,) = load_documents("t.yaml", text)
    assert list(doc.data["m"].items()) == [("x", 0), ("y", 1), ("z", 2)]
    assert {p: n for p, n in doc.lines.items() if p[0] == "m"} == {
        ("m",): 5, ("m", "<<", 0): 6, ("m", "<<", 0, "x"): 1, ("m", "<<", 0, "y"): 1,
        ("m", "<<", 1): 6, ("m", "<<", 1, "y"): 3, ("m", "<<", 1, "z"): 4, ("m", "x"): 7}
    assert doc.line(("m", "y")) == 5                            # a merged key has no line of its own


def test_aliases_of_scalars_as_keys():
    # an alias of `<<` is a key like any other, not a merge; an alias key counts for duplicates
    (doc,) = load_documents("t.yaml", "a: &k name\nb: &m <<\nc:\n  *k : 1\n  *m : 2\n")
    assert doc.data["c"] == {"name": 1, "<<": 2}
    assert doc.lines[("c", "name")] == 4 and doc.lines[("c", "<<")] == 5
    with pytest.raises(SourceError) as e:
        load_documents("t.yaml", "a: &k name\nb:\n  name: 1\n  *k : 2\n")
    assert (e.value.line, e.value.reason) == (4, 'malformed YAML: duplicate key "name" (first at line 3)')


def test_collection_keys_and_documents_have_their_own_lines():
    (doc,) = load_documents("t.yaml", "? [a,\n   b]\n: 1\n{c: 2}: 3\n")
    assert doc.data == {"['a', 'b']": 1, "{'c': 2}": 3}
    assert doc.lines == {("['a', 'b']",): 2, ("{'c': 2}",): 4}   # a collection key's line is where it ends
    first, second = load_documents("t.yaml", "--- &a\nx: 1\n---\n- 2\n- 3\n")
    assert (first.lines, first.start_line) == ({("x",): 2}, 1)
    assert (second.lines, second.start_line) == ({(0,): 4, (1,): 5}, 4)
    with pytest.raises(SourceError, match="has no anchor"):     # anchors end with their document
        load_documents("t.yaml", "--- &a x\n--- *a\n")


@pytest.mark.parametrize("limit, refused", [(20, True), (21, False)])
def test_alias_expansion_counts_every_node_of_nested_aliases(monkeypatch, limit, refused):
    from harness.scenario import yamlsource
    monkeypatch.setattr(yamlsource, "MAX_ALIAS_NODES", limit)
    # &a is 5 nodes (the mapping, 2 keys, 2 values), &b 11 (itself and two of &a): 10 + 11 = 21
    text = "a: &a {x: 1, y: 2}\nb: &b [*a, *a]\nc: *b\n"
    if refused:
        with pytest.raises(SourceError) as e:
            load_documents("t.yaml", text)
        assert (e.value.line, e.value.reason) == (3, f"malformed YAML: aliases expand to more than {limit} nodes")
    else:
        assert load_documents("t.yaml", text)[0].data["c"] == [{"x": 1, "y": 2}] * 2


def test_every_ascii_control_character_but_tab_and_line_ends_is_refused():
    for code in range(128):
        text = f"a: 1\n# {chr(code)}\n"
        if code in (9, 10, 13) or 0x20 <= code < 0x7f:
            assert load_documents("t.yaml", text)[0].data == {"a": 1}
        else:
            with pytest.raises(SourceError) as e:
                load_documents("t.yaml", text)
            assert e.value.line == 2 and "not allowed in YAML text" in e.value.reason
