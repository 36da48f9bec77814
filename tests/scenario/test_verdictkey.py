"""Verdict keys (harness/scenario/verdictkey.py): values with equal keys get the same verdict from the schema,
for schemas of every keyed keyword; a schema with another keyword is not keyable."""
from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenario.verdictkey import Keyer, keyable

_NAMES = st.sampled_from(["a", "b", "c"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.sampled_from([1.0, 1.5, "", "a", "ab", "x1"]))
VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(_NAMES, inner, max_size=3)), max_leaves=8)
_TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"])
_LEAVES = st.one_of(
    st.booleans(),
    st.fixed_dictionaries({"type": st.one_of(_TYPES, st.lists(_TYPES, min_size=1, max_size=3, unique=True))}),
    st.fixed_dictionaries({"enum": st.lists(st.one_of(_SCALARS, st.sampled_from([{"a": 1}, [1], {}])), min_size=1,
                                            max_size=3)}),
    st.fixed_dictionaries({"const": _SCALARS}),
    st.fixed_dictionaries({"pattern": st.sampled_from(["^a", "[0-9]", "^$"])}),
    st.fixed_dictionaries({"minLength": st.integers(0, 2)}),
    st.fixed_dictionaries({"maximum": st.integers(-1, 1), "exclusiveMinimum": st.integers(-2, 0)}),
    st.fixed_dictionaries({"minimum": st.sampled_from([0, 1.5]), "exclusiveMaximum": st.integers(0, 2)}),
    st.fixed_dictionaries({"minItems": st.integers(0, 2), "maxProperties": st.integers(0, 2)}),
    st.fixed_dictionaries({"required": st.lists(_NAMES, max_size=2, unique=True)}),
    st.fixed_dictionaries({"$ref": st.just("#/$defs/name")}))
SCHEMAS = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.fixed_dictionaries({"properties": st.dictionaries(_NAMES, inner, max_size=2)},
                          optional={"additionalProperties": st.one_of(st.booleans(), inner), "description": st.text()}),
    st.fixed_dictionaries({"items": inner}, optional={"type": st.just("array")}),
    st.fixed_dictionaries({"oneOf": st.lists(inner, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"anyOf": st.lists(inner, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"allOf": st.lists(inner, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"not": inner})), max_leaves=6)
DEFS = {"name": {"type": "string", "pattern": "^[a-z]+$"}}


@settings(max_examples=300, deadline=None)
@given(st.one_of(_LEAVES, SCHEMAS), st.lists(VALUES, min_size=2, max_size=12))
def test_equal_keys_equal_verdicts(schema, values):
    assert keyable(schema, DEFS)
    validator = jsonschema.Draft202012Validator({"$defs": DEFS, **schema} if isinstance(schema, dict) else schema)
    keyer = Keyer(DEFS)
    verdicts: dict = {}
    for v in values:
        assert verdicts.setdefault(keyer.key(v, schema), validator.is_valid(v)) == validator.is_valid(v), v
    # the first value of each key stands for the rest
    assert all(validator.is_valid(v) for v in keyer.representatives(values, schema)) == \
        all(validator.is_valid(v) for v in values)


def test_each_keyword_reads_what_decides_it():
    keyer = Keyer({})
    for schema, same, other in [({"required": ["a"]}, ({"a": 1}, {"a": "x", "b": 2}), {"b": 1}),
                                ({"maximum": 1}, (0, 0), 2), ({"enum": [1]}, (1, 1), 2), ({"const": "a"}, ("a", "a"), "b"),
                                ({"maxItems": 1}, ([1], ["x"]), [1, 2]), ({"minProperties": 1}, ({"a": 1}, {"b": 2}), {}),
                                ({"additionalProperties": False, "properties": {"a": {}}}, ({"a": "x"}, {"a": "y"}), {"a": "x", "b": "x"}),
                                ({"items": {"type": "string"}}, (["a"], ["b", "c"]), ["a", 1]),
                                ({"items": {"type": "string"}}, (["a"], ["b", "c"]), [{}]),
                                ({"items": {"type": "integer"}}, ([1.0], [1.0, 1.0]), [1.5]),
                                ({"additionalProperties": {"type": "string"}}, ({"a": "x"}, {"b": "y"}), {"a": {}})]:
        assert keyer.key(same[0], schema) == keyer.key(same[1], schema), schema
        assert keyer.key(same[0], schema) != keyer.key(other, schema), schema


def test_strings_differ_only_where_the_schema_reads_them():
    keyer = Keyer({})
    pod = {"type": "object", "properties": {"kind": {"enum": ["Pod"]}, "name": {"type": "string"},
                                            "image": {"pattern": ":"}}}
    assert keyer.key({"kind": "Pod", "name": "a", "image": "x:1"}, pod) == \
        keyer.key({"kind": "Pod", "name": "b", "image": "y:2"}, pod)
    assert keyer.key({"kind": "Pod", "name": "a"}, pod) != keyer.key({"kind": "Job", "name": "a"}, pod)
    assert keyer.key({"kind": "Pod", "image": "x"}, pod) != keyer.key({"kind": "Pod", "image": "x:1"}, pod)
    assert keyer.key(True, {"type": "integer"}) != keyer.key(1, {"type": "integer"})


def test_a_keyword_the_key_does_not_read_is_not_keyable():
    assert not keyable({"properties": {"a": {"uniqueItems": True}}}, {})
    assert not keyable({"$ref": "other.json#/x"}, {})
    assert not keyable({"patternProperties": {"^a": {}}}, {})
