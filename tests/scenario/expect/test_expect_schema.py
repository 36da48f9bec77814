"""The schema and the checker agree (issue 29): every property harness/data/scenario.schema.json
allows in an expectation is read by harness/scenario/expect/match.py. For each property the walk builds the
smallest expectation that holds it (the objects it names exist in the result, so the checker gets
past its selectors) and checks it against a run's result with dicts that record which keys were
read. A property the checker never reads is an expectation that can never fail: implement it or
remove it from the schema. (Whether each one can fail is the mutation test's part:
tests/judge/test_mutation.py.)"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.loop.result import NodeClassResult, NodePoolResult
from harness.runner.engines import run
from harness.scenario.expect.match import check
from harness.scenario.load import load_scenarios_text, schema

ROOT = Path(__file__).resolve().parents[3]

TEXT = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: schema-walk}
given:
  skus: [Standard_D2s_v3]
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
"""


class Reads(dict):
    """A dict that records every key read from it (items/keys/iteration read them all)."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.read: set = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self.read.add(k)
        return super().get(k, default)

    def __contains__(self, k):
        self.read.add(k)
        return super().__contains__(k)

    def items(self):
        self.read.update(self.keys())
        return super().items()

    def __iter__(self):
        self.read.update(super().keys())
        return super().__iter__()


@pytest.fixture(scope="module")
def result():
    cluster = EmbeddedBackend().start()
    try:
        sc = load_scenarios_text(TEXT, "schema-walk.scenario.yaml", ROOT / "scenarios")[0]
        r = run(sc, "upstream", cluster).result
    finally:
        cluster.close()
    assert r.nodes and r.instance_types and r.azure.get("vms") and r.azure.get("request_log")
    # what one run lacks: a refused NodePool and AKSNodeClass, a taint, an unavailable offering, events
    r.nodepools["k"] = NodePoolResult("k", accepted=False, stage="admission", message="m",
                                      events=[{"reason": "r", "message": "m"}])
    r.nodeclasses["k"] = NodeClassResult("k", accepted=False, message="m")
    r.nodes[0].taints.append({"key": "x", "value": "v", "effect": "NoSchedule"})     # "x": the sample key
    r.unavailable_offerings.append({"key": "spot::", "size": "", "zone": "", "capacityType": "spot",
                                    "family": "", "scope": "capacity-type", "ttl": 180.0})
    r.events.append({"kind": "Pod", "name": "web", "reason": "r", "message": "m"})
    # a disruption record, a protected candidate and a timeline entry, so the disruption checks get past
    # their loops (harness/scenario/expect/disruption.py)
    node = r.nodes[0]
    r.disruptions.append({"index": 0, "commandIndex": 1, "nodePool": "default", "reason": "Empty",
                          "method": "empty", "decision": "replace", "replacements": [{"instanceType": "x"}]})
    r.protected.append({"node": node.name, "by": "pdb", "method": "single", "message": "m"})
    r.timeline.append({"node": node.name, "nodeClaim": node.nodeclaim, "action": "tainted", "detail": "d", "t": 0})
    return r


def _ref(s: dict, root: dict) -> dict:
    while "$ref" in s:
        s = root["$defs"][s["$ref"].rsplit("/", 1)[-1]]
    return s


def properties(s: dict, root: dict, path: tuple = ()) -> list[tuple]:
    """Every named property under an object schema, as a path: names, "*" for a map's entries,
    "[]" for a list's items."""
    s = _ref(s, root)
    out = []
    for branch in s.get("oneOf") or s.get("anyOf") or []:
        out += properties(branch, root, path)
    for name, sub in (s.get("properties") or {}).items():
        out.append(path + (name,))
        out += properties(sub, root, path + (name,))
    if isinstance(s.get("additionalProperties"), dict):
        out += properties(s["additionalProperties"], root, path + ("*",))
    if isinstance(s.get("items"), dict):
        out += properties(s["items"], root, path + ("[]",))
    return out


def _sub(s: dict, step: str, root: dict) -> dict:
    """The schema one step down, through the object or list alternative of a oneOf."""
    s = _ref(s, root)
    for branch in [s] + [_ref(b, root) for b in s.get("oneOf") or []]:
        if step == "*" and isinstance(branch.get("additionalProperties"), dict):
            return branch["additionalProperties"]
        if step == "[]" and isinstance(branch.get("items"), dict):
            return branch["items"]
        if step in (branch.get("properties") or {}):
            return branch["properties"][step]
    raise KeyError(step)


def _sample(s: dict, root: dict):
    """A value of the schema's first scalar alternative (an empty map or list otherwise)."""
    s = _ref(s, root)
    for branch in [s] + [_ref(b, root) for b in s.get("oneOf") or []]:
        t = branch.get("type")
        t = ("integer" if "integer" in t else t[0]) if isinstance(t, list) else t    # quantities: 1
        if "enum" in branch:
            return branch["enum"][0]
        if t == "string" and "pattern" in branch:
            return next(v for v in ("x", "1m", "1") if re.fullmatch(branch["pattern"], v))
        if t in ("boolean", "integer", "number", "string"):
            return {"boolean": True, "integer": 1, "number": 1.0, "string": "x"}[t]
    return [] if s.get("type") == "array" else {}


def _key(result, where: str) -> str:
    """A key for a map entry that exists in the result, where the checker first looks it up."""
    it = next(iter(result.instance_types))
    return {"instanceTypes": it, "nodePools": "k", "nodeClasses": "k", "pods": "web",
            "requirements": next(iter(result.instance_types[it].requirements.keys())),
            "nodeClaimRequirements": result.nodes[0].nodeclaim_requirements[0]["key"],
            "labels": next(iter(result.nodes[0].labels))}.get(where, "k")


def expectation_for(prop: tuple, result, root: dict) -> tuple[Reads, Reads]:
    """(the expectation, the dict that holds the property) for one property path."""
    s = root["$defs"]["expect"]
    top = container = Reads()
    for i, step in enumerate(prop):
        sub = _sub(s, step, root)
        if i == len(prop) - 1:
            container[step] = _sample(sub, root)
            return top, container
        if step == "[]" and prop[i + 1] == "[]":      # a list of lists (nodes.oneOf)
            child = []
            container.append(child)
        elif step == "[]":                        # an item, with the keys its schema requires
            item = Reads({k: "web" if k == "pod" else _sample(_sub(sub, k, root), root)      # a pod of the run
                          for k in _ref(sub, root).get("required") or []})
            container.append(item)
            child = item
        else:
            child = [] if prop[i + 1] == "[]" else Reads()
            container[_key(result, prop[i - 1]) if step == "*" else step] = child
        container, s = child, sub
    raise AssertionError(f"{prop}: a path ends in a property name")


def _unread(result, props, root: dict) -> list[str]:
    out = []
    for prop in props:
        expect, holder = expectation_for(prop, result, root)
        check(expect, copy.deepcopy(result))
        if prop[-1] not in holder.read:
            out.append(".".join(prop))
    return out


def test_every_expectation_property_in_the_schema_is_read_by_the_checker(result):
    props = sorted(set(properties(schema()["$defs"]["expect"], schema())))
    assert len(props) > 80
    assert _unread(result, props, schema()) == []


def test_the_walk_sees_a_property_the_checker_ignores(result):
    """The check itself: a property added to the schema and not to the checker is reported."""
    s = copy.deepcopy(schema())
    s["$defs"]["nodeList"]["items"]["properties"]["bogus"] = {"type": "string"}
    assert ("nodes", "[]", "bogus") in properties(s["$defs"]["expect"], s)
    assert _unread(result, [("nodes", "[]", "bogus"), ("nodes", "[]", "zone")], s) == ["nodes.[].bogus"]
