"""`kubectl get -o json` dumps: objects and their lines, the errors as `file:line: reason`, and the scenario
`harness new` writes from the JSON form of a dump the same as from its YAML form."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from harness.dump.new import read_objects
from harness.dump.jsonsource import load_documents, looks_like_json
from harness.scenario.yamlsource import SourceError
from tests.scriptload import load_script

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": []}}


def test_detected_by_content_not_name():
    assert looks_like_json('\n  {"kind": "List"}')
    assert looks_like_json("\ufeff[]")
    assert not looks_like_json("kind: List\n")
    assert not looks_like_json("")


def test_list_items_with_their_lines(tmp_path):
    f = tmp_path / "dump.txt"
    f.write_text(json.dumps({"apiVersion": "v1", "items": [POD, {**POD, "metadata": {"name": "b"}}],
                             "kind": "List"}, indent=4))
    objs = read_objects([str(f)])
    assert [(o["metadata"]["name"], line) for o, _, line in objs] == [("a", 4), ("b", 14)]
    assert f.read_text().splitlines()[13] == "        {"


def test_concatenated_objects_and_arrays(tmp_path):
    f = tmp_path / "d.json"
    f.write_text(json.dumps(POD) + "\n" + json.dumps([POD, POD], indent=1) + "\n")
    docs = load_documents(f, f.read_text())
    assert [d.start_line for d in docs] == [1, 3, 3 + len(json.dumps(POD, indent=1).splitlines())]
    assert all(d.data == POD for d in docs)


@pytest.mark.parametrize("text,line,reason", [
    ('{\n "kind": "List",\n "items": [\n  {"a": 1},\n  {"a": 2}\n  {"a": 3}\n ]\n}', 6,
     "malformed JSON: Expecting ',' delimiter (column 3)"),
    ('{\n "items": [\n  {"a": 1,\n   "a": 2}\n ]\n}', 4, 'malformed JSON: duplicate key "a"'),
    ('{\n "kind": "Pod",\n "kind": "Node"\n}', 3, 'malformed JSON: duplicate key "kind"'),
    ('[\n {"a": NaN}\n]', 2, "malformed JSON: NaN is not a JSON value"),
    ('{"items": [' + "[" * 5000 + "]" * 5000 + "]}", 1, "malformed JSON: nesting deeper than 100 levels"),
])
def test_errors_name_the_line(tmp_path, text, line, reason):
    f = tmp_path / "bad.json"
    f.write_text(text)
    with pytest.raises(SourceError) as e:
        read_objects([str(f)])
    assert (e.value.line, e.value.reason) == (line, reason)


def test_a_yaml_flow_mapping_is_read_as_yaml(tmp_path):
    f = tmp_path / "flow.yaml"
    f.write_text("{apiVersion: v1, kind: List, items: [{kind: Pod, metadata: {name: a}}]}\n")
    assert [o["metadata"]["name"] for o, _, _ in read_objects([str(f)])] == ["a"]


def test_json_and_yaml_forms_make_the_same_scenario(tmp_path):
    from harness.dump.new import NewOptions, new_scenario
    gen = load_script("bench/gen_cluster_dump.py", "gen_cluster_dump")
    outs = []
    for fmt in ("yaml", "json"):
        dump = tmp_path / f"dump.{fmt}"
        with open(dump, "w") as fh:
            gen.write(gen.generate(6, None, "mixed", 3, "eastus", 0.1), fh, fmt)
        _, text, notes = new_scenario(NewOptions([str(dump)], "same", output=str(tmp_path / "s.scenario.yaml")))
        outs.append((text, [re.sub(r"dump\.(yaml|json):\d+", "DUMP", n) for n in notes]))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] == outs[1][1]
    assert yaml.safe_load(outs[0][0].split("\n", 1)[1])["given"]["existingNodes"]


def test_nesting_the_interpreter_cannot_follow_names_its_line(tmp_path):
    from harness.dump.new import NewOptions, new_scenario
    for depth in (600, 5000):        # past the Python recursion harness new's copies need; past the scanner's
        deep = '{"a": ' * depth + "{}" + "}" * depth
        pod = json.dumps({**POD, "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "i",
                                                                                     "x": "DEEP"}]}})
        f = tmp_path / "deep.json"
        f.write_text('{"apiVersion": "v1", "kind": "List", "items": [\n' + json.dumps(POD) + ",\n"
                     + pod.replace('"DEEP"', deep) + "\n]}\n")
        with pytest.raises(SourceError) as e:
            new_scenario(NewOptions([str(f)], "deep", region="eastus", output=str(tmp_path / "s.scenario.yaml")))
        assert (e.value.line, e.value.reason) == (3, "malformed JSON: nesting deeper than 100 levels")
