"""harness/dump/rymlsource.py: a large YAML dump read by rapidyaml gives yamlsource's data and item lines, or
is left to yamlsource (issue 65: `harness new` on a 5,000-node `-o yaml` dump)."""
from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.dump import rymlsource
from harness.dump.new import read_objects
from harness.scenario.yamlsource import SourceError, load_documents
from tests.scriptload import load_script

pytest.importorskip("ryml")


def _typed(x):
    """`x` with each scalar's type beside it, so 1, 1.0 and True differ (== holds them equal), NaN equals NaN."""
    if type(x) is dict:
        return ("map", [(_typed(k), _typed(v)) for k, v in x.items()])
    if type(x) is list:
        return ("seq", [_typed(v) for v in x])
    if type(x) is float and math.isnan(x):
        return ("float", "nan")
    return (type(x).__name__, x)


def read_alike(text: str) -> bool:
    """Whether rymlsource read `text` (False: left to yamlsource); when it did, its data and item lines are
    yamlsource's."""
    try:
        exact = load_documents("t.yaml", text)
    except SourceError:
        exact = None
    try:
        fast = rymlsource._documents("t.yaml", text)
    except rymlsource._Apart:
        return False
    assert exact is not None, "read a text yamlsource refuses"
    assert len(exact) == len(fast) == 1
    assert _typed(fast[0].data) == _typed(exact[0].data)
    assert fast[0].start_line == exact[0].start_line
    items = exact[0].data.get("items") if isinstance(exact[0].data, dict) else None
    for j in range(len(items) if isinstance(items, list) else 0):
        assert fast[0].line(("items", j)) == exact[0].line(("items", j)), j
    return True


def _list(*items: str, head: str = "apiVersion: v1\nkind: List\n", tail: str = "") -> str:
    return head + "items:\n" + "".join(items) + tail


POD = "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: {name}\n  spec:\n    containers: []\n"


def test_a_kubectl_list_is_read_with_each_items_line():
    text = _list(POD.format(name="a"), "# a comment between items\n\n", POD.format(name="b"),
                 head="# kubectl get pods -o yaml\napiVersion: v1\n", tail="kind: List\nmetadata:\n  resourceVersion: \"\"\n")
    assert read_alike(text)
    (doc,) = rymlsource._documents("t.yaml", text)
    assert [doc.line(("items", j)) for j in range(2)] == [4, 12]
    assert doc.start_line == 2 and list(doc.data) == ["apiVersion", "items", "kind", "metadata"]


@pytest.mark.parametrize("value", [
    # YAML 1.1 reads these plain scalars as other than YAML 1.2 does
    "yes", "No", "ON", "off", "True", "FALSE", "Null", "NULL", "~", "0777", "00", "0x1F", "0b101", "1_000", "+5",
    "12:30", "1e3", "1.5e3", "-.5", "+.5", "1E400", ".inf", "-.Inf", ".NaN", "-01",
])
def test_a_plain_scalar_read_apart_leaves_the_text_to_yamlsource(value):
    for where in (f"  metadata:\n    name: {value}\n", f"  args:\n  - {value}\n", f"  args: [a, {value}]\n",
                  f"  data: {{k: {value}}}\n", f"  args:\n  - x\n  - {value} # why\n"):
        assert not read_alike(_list("- kind: Pod\n" + where)), where


@pytest.mark.parametrize("value", ["'yes'", '"0777"', "'1e3'", "x yes", "yes-no", "true", "false", "null", "",
                                   "-5", "0", "3.25", "1.5e+3", "2026-11-29", "2026-11-29T01:02:03Z", "500m",
                                   "'~'", "|\n      yes please\n      0777 mode", "-yes", "a:b"])
def test_what_both_read_alike_is_read(value):
    assert read_alike(_list(f"- kind: Pod\n  metadata:\n    name: {value}\n"))


@pytest.mark.parametrize("key", ["80", "yes", "true", "null", "1.5", "~", "<<"])
def test_a_key_yaml_1_1_reads_as_other_than_a_string_is_apart(key):
    assert not read_alike(_list(f"- kind: Pod\n  data:\n    {key}: x\n"))
    assert read_alike(_list(f"- kind: Pod\n  data:\n    '{key}': x\n"))


@pytest.mark.parametrize("text", [
    _list("- kind: Pod\n  a: &x 1\n  b: *x\n"),                       # anchor and alias
    _list("- kind: Pod\n  a: !!str 1\n"),                              # a tag
    _list("- kind: Pod\n  ? complex\n  : key\n"),
    "%YAML 1.1\n---\n" + _list(POD.format(name="a")),
    _list(POD.format(name="a")) + "---\n" + _list(POD.format(name="b")),   # two documents
    _list(POD.format(name="a")).replace("  kind: Pod", "\tkind: Pod"),      # a tab
    _list(POD.format(name="a")).replace("\n", "\r"),                     # CR line breaks
    _list(POD.format(name="a")) + "# \ufeff\n",                          # a byte-order mark inside
    _list("- kind: Pod\n  kind: Node\n"),                             # a duplicate key
    _list(POD.format(name="a\x07")),                                   # a control character
    _list("- kind: Pod\n  a: [1, 2\n"),                                # malformed
    _list("-\n  kind: Pod\n"),                                         # an entry's node on the next line
    _list("- # the pod\n  kind: Pod\n"),
    "apiVersion: v1\nitems:\n  - kind: Pod\n",                         # an indented sequence
    "apiVersion: v1\nitems: [{kind: Pod}]\n",                          # a flow sequence
    "items:\n- a\nother:\n- b\n",                                       # (read: another sequence at column 0)
])
def test_what_either_reader_may_read_otherwise_is_left_to_yamlsource(text):
    read = read_alike(text)
    assert not read or text.startswith("items:\n- a\nother")


def test_a_dump_saved_on_windows_is_read_alike():
    """CRLF line breaks and a byte-order mark opening the file (PowerShell's redirection writes them): both
    readers take CRLF for LF, in block and quoted scalars too, and drop the mark; the lines are the same."""
    text = _list(POD.format(name="a"), "- kind: ConfigMap\n  data:\n    s: |\n      x\n      y\n"
                 "    q: \"folded\n      line\"\n", POD.format(name="b"))
    for variant in (text.replace("\n", "\r\n"), "\ufeff" + text, "\ufeff" + text.replace("\n", "\r\n")):
        assert read_alike(variant)


def test_nesting_near_the_bound_is_yamlsource_s():
    deep = "a:\n" + "".join("  " * i + "- \n" for i in range(1, 3))
    assert read_alike(_list("- kind: Pod\n  " + deep.replace("\n", "\n  ")))
    nested = "x: " + "[" * 120 + "]" * 120 + "\n"
    assert not read_alike(_list("- kind: Pod\n  " + nested))


def test_block_scalars_and_quoted_lines_read_alike():
    text = _list(
        "- kind: ConfigMap\n  data:\n"
        "    keep: |+\n      a\n\n    strip: |-\n      b\n    folded: >\n      c\n      d\n\n        e\n      f\n"
        "    script: |\n      #!/bin/sh\n      - not: a node\n      {\"apiVersion\":\"v1\",\"n\":[1,2]}\n"
        "    long: \"a long string folded \\\n      by the printer, with \\\"quotes\\\" and \\u00e9 and \\t\"\n"
        "    single: 'it''s\n      folded'\n    plain: a plain scalar\n      over two lines\n"
        "    empty:\n    nothing: null\n    unicode: \"\\U0001F600 ✓\"\n")
    assert read_alike(text)
    # a line of a block scalar that would be a plain scalar read apart is taken for one: yamlsource reads it
    assert not read_alike(text.replace("#!/bin/sh", "yes"))


_TRICKY = ["yes", "no", "on", "True", "~", "null", "0777", "0x1F", "1_000", "12:30", "1e3", "-.5", ".inf", "1.",
           "00", "-0", "+1", "1.5e+3", "2024-01-01", "<<", "=", "y"]
_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="\x7f")
                | st.sampled_from("\x85\u2028\u2029\ufeff\n\\\"':#-? \U0001F600"), max_size=30)
_KEY = _TEXT.filter(lambda k: 0 < len(k) < 10)
_SCALAR = st.one_of(st.sampled_from(_TRICKY), _TEXT, _TEXT, st.integers(), st.floats(allow_nan=True),
                    st.booleans(), st.none())
_DATA = st.recursive(_SCALAR, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_KEY | _KEY | _KEY | _SCALAR, inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.dictionaries(_KEY, _DATA, max_size=4), max_size=4),
       st.sampled_from([None, None, None, None, '"', "'", "|", ">"]), st.sampled_from([20, 80, 1000]),
       st.booleans(), st.sampled_from(["\n", "\n", "\r\n"]), st.sampled_from(["", "", "\ufeff"]))
def test_any_list_pyyaml_prints_reads_alike_or_apart(items, style, width, unicode, newline, mark):
    """(A style other than plain quotes the `items` key too, or makes the keys complex: such a text is left to
    yamlsource; about a third of the examples are read here.)"""
    try:
        text = yaml.safe_dump({"apiVersion": "v1", "items": items, "kind": "List"}, default_style=style,
                              width=width, allow_unicode=unicode, sort_keys=False)
    except yaml.YAMLError:
        return
    read_alike(mark + text.replace("\n", newline))


# what a hand-written dump may hold as a plain value: mostly what both read alike, some of what they read apart
_ALIKE = ["-1", "1", "1.5", "true", "null", "x", "a b", "'q'", '"d"', "[a, 1]", "{k: v}", "{}", "[]", "|\n    a",
          ">-\n    b", "x #c", "", "500m", "2024-01-01", "'yes'", "-x", "a:b", "a - b", "[]x", "\"\\u00e9\\n\"",
          '{"a":1}', "[a: b, c]", "{a, b}", "[a, b,]", "{a: [1, {b: c}]}", "[\n    a,\n    b\n  ]", "{url: http://x}",
          "[-1, .5]", "{a: 1\n    , b: 2}", "[a #c\n  ]"]
_APART = ["yes", "No", "on", "0777", "0x1F", "1_000", "12:30", "1e3", "-.5", ".inf", "~", "&a x", "*a", "!t x",
          "- x", "k: v", "#c", "[1, 2", "]", "{: a}", "[ , ]", "{a: !x y}", "[&a x, *a]", "[yes, 0777]", "{80: x}"]
_VALUE = st.sampled_from(_ALIKE * 6 + _APART)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.dictionaries(st.sampled_from(["name", "kind", "image", "a b", "'k'", "x y", "80", "yes", "name"]),
                                _VALUE, min_size=1, max_size=4), max_size=5))
def test_any_hand_written_list_reads_alike_or_apart(entries):
    body = "".join("- " + "\n  ".join(f"{k}: {v}" for k, v in fields.items()) + "\n" for fields in entries)
    read_alike(_list(body))


@pytest.mark.parametrize("shape", ["mixed", "ticket"])
def test_a_generated_dump_is_read_here(tmp_path, shape):
    """bench/gen_cluster_dump.py writes what `kubectl get -o yaml` prints: the fast reader takes it (were it
    left to yamlsource, `harness new` at 5,000 nodes would cost 24 CPU-s again)."""
    gen = load_script("bench/gen_cluster_dump.py", "gen_cluster_dump")
    out = tmp_path / "d.yaml"
    gen.main(["--nodes", "12", "--shape", shape, "--out", str(out)])
    assert read_alike(out.read_text())


def test_read_objects_takes_a_large_dump_from_here(tmp_path, monkeypatch):
    gen = load_script("bench/gen_cluster_dump.py", "gen_cluster_dump")
    out = tmp_path / "d.yaml"
    gen.main(["--nodes", "8", "--out", str(out)])
    monkeypatch.setattr(rymlsource, "FAST_BYTES", 0)
    calls = []
    real = rymlsource._documents
    monkeypatch.setattr(rymlsource, "_documents", lambda f, t: calls.append(f) or real(f, t))
    fast = read_objects([str(out)])
    monkeypatch.setattr(rymlsource, "FAST_BYTES", 1 << 40)
    assert calls and fast == read_objects([str(out)])


def test_a_parse_error_prints_nothing(capfd):
    assert not read_alike(_list("- kind: Pod\n  a: [1, 2\n"))
    assert capfd.readouterr().err == ""


# strings kubectl's printer (go-yaml) quotes, folds or writes as block scalars
_STRINGS = ["yes", "No", "on", "OFF", "y", "n", "True", "false", "null", "~", "", " ", "0777", "0x1F", "1_000",
            "12:30", "1e3", "-.5", ".inf", ".nan", "1.5", "-1", "+1", "2026-11-29", "2026-11-29T01:02:03Z", "<<",
            "=", "-", "- x", "? x", "a: b", "a #b", "#c", "'q'", '"d"', "[a]", "{a: 1}", "&a", "*a", "!t", "%p",
            "@x", "`x`", "|", ">", " lead", "trail ", "a\\b", "é ✓ \U0001F600", "line1\nline2\n",
            "line1\nline2", "keep\n\n", "\nlead", "  indented\nnext\n", "trailing space \nline\n",
            '{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":3,"template":{"spec":{}}}}\n',
            "word " * 40, "x" * 200, "quote\"and\\slash " * 12, "a\tb", "x: |\n  y\n"]


def _kubectl_objects() -> list[dict]:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "tricky", "namespace": "ns",
          "annotations": {f"a{i}": s for i, s in enumerate(_STRINGS)}},
          # (keys of 128 characters or more kubectl prints as complex keys, `? `, and `<<` as YAML 1.1's merge
          # key, which yamlsource refuses)
          "data": {s: s for s in _STRINGS if s.strip() and "\n" not in s and len(s) < 128 and s != "<<"}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "yes"}},
           "spec": {"containers": [{"name": "c", "image": "registry.example/app:1.25", "args": _STRINGS,
                                    "ports": [{"containerPort": 80}], "env": [{"name": "ON", "value": "on"}],
                                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}],
                    "priority": 0, "terminationGracePeriodSeconds": 30, "hostNetwork": False,
                    "tolerations": [{"operator": "Exists", "tolerationSeconds": 300}]},
           "status": {"phase": "Running", "conditions": []}}
    return [cm, pod, {**pod, "metadata": {"name": "q"}, "spec": {"containers": [], "overhead": {}}}]


def test_what_kubectl_prints_is_read_here_alike(tmp_path):
    """The real printer: `kubectl label --local -o yaml` prints each object as `kubectl get -o yaml` does
    (k8s.io/cli-runtime's YAMLPrinter, sigs.k8s.io/yaml); the objects as one List, each under `- `, are read
    here and read alike. (Their one exception, a string with NEL, LS or PS, which kubectl prints raw and YAML
    1.1 takes for a line break, is yamlsource's: `test_yaml_1_1_line_breaks_are_yamlsource_s`.)"""
    import json
    import re
    import subprocess

    from harness.backends.binaries.controlplane import find_node_binary
    kubectl = find_node_binary("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not built (python -m harness.backends build --node)")
    objects = _kubectl_objects()
    src = tmp_path / "objects.json"
    src.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    out = subprocess.run([str(kubectl), "label", "--local", "-f", str(src), "-o", "yaml", "harness-probe-"],
                         env={"KUBECONFIG": "/dev/null", "HOME": str(tmp_path)}, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    printed = re.split(r"\n(?=apiVersion: )", out.strip("\n"))
    assert len(printed) == len(objects)
    text = ("apiVersion: v1\nitems:\n" + "".join("- " + p.replace("\n", "\n  ") + "\n" for p in printed)
            + "kind: List\nmetadata:\n  resourceVersion: \"\"\n")
    assert read_alike(text)
    (doc,) = rymlsource._documents("t.yaml", text)
    cm = doc.data["items"][0]
    assert cm["metadata"]["annotations"] == {f"a{i}": s for i, s in enumerate(_STRINGS)}


def test_yaml_1_1_line_breaks_are_yamlsource_s():
    for ch in "\x85\u2028\u2029":
        assert not read_alike(_list(POD.format(name=f"a{ch}b")))
