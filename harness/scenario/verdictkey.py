"""What a JSON Schema reads of a value, as a hashable key: two values with equal keys get the same verdict
from the schema. A customer's dump gives thousands of values a schema judges alike (pods that differ in their
names, NodeClaims in their times); each is judged once per key, not one by one (jsonschema walks a pod in
tens of microseconds, a key is a few dict lookups).

Only the keywords in KEYED are keyed; a schema that uses any other (or a reference outside its `$defs`) is
not keyable, and its values are judged one by one. The key holds each value's type (jsonschema tells
`true` from `1`, and `1.0` is an integer: a float keeps whether it is whole), a value itself only where `enum`
or `const` reads it (a mapping or list only where they hold one), a number's side of each bound, whether a
string matches a `pattern`, a length where a bound reads it, and the keys of the values
the schema reaches: a listed property's, each extra property's under `additionalProperties`, the set of an
array's items' (`items` judges each item alone), and each branch's of `oneOf`/`anyOf`/`allOf`/`not`.
"""
from __future__ import annotations

import re

import jsonschema

DEFS = "#/$defs/"
# keywords whose verdict the key captures; the annotations change no verdict (jsonschema does not check
# `format` unless asked, and it is not keyed here)
KEYED = frozenset({"type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "properties", "required", "additionalProperties",
                   "minProperties", "maxProperties", "items", "minItems", "maxItems", "oneOf", "anyOf", "allOf",
                   "not", "$ref", "title", "description", "default", "examples"})
_ANNOTATIONS = frozenset({"title", "description", "default", "examples"})
_KEYED_BY_TYPE = frozenset({str, dict, list, int, bool, type(None)})   # a type-only reading keys these by type alone
_BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_LENGTH = ("minLength", "maxLength")
_SIZE = ("minProperties", "maxProperties", "minItems", "maxItems")


def keyable(node, defs: dict, refs: set[str] | None = None) -> bool:
    """Whether the schema `node` and every schema it reaches use only KEYED keywords and `$defs` references."""
    refs = set() if refs is None else refs
    if isinstance(node, bool):
        return True
    if not isinstance(node, dict) or set(node) - KEYED:
        return False
    ref = node.get("$ref")
    if ref is not None and ref not in refs:
        refs.add(ref)
        if not (isinstance(ref, str) and ref.startswith(DEFS) and keyable(defs.get(ref[len(DEFS):]), defs, refs)):
            return False
    subs = list((node.get("properties") or {}).values()) + [node[k] for k in ("additionalProperties", "items", "not")
                                                             if k in node]
    subs += [b for k in ("oneOf", "anyOf", "allOf") for b in node.get(k) or []]
    return all(keyable(sub, defs, refs) for sub in subs)


class Judge:
    """One schema's verdicts on many values: jsonschema judges the first value of each verdict key, the rest
    share its verdict (each value judged alone when the schema is not keyable or a value is no dict key)."""

    def __init__(self, schema: dict, defs: dict) -> None:
        self.schema = schema
        self.validator = jsonschema.Draft202012Validator({"$defs": defs, **schema})
        self.keyer = Keyer(defs) if keyable(schema, defs) else None
        self.verdicts: dict[tuple, bool] = {}

    def valid(self, value) -> bool:
        if self.keyer is None:
            return self.validator.is_valid(value)
        try:
            key = self.keyer.key(value, self.schema)
            verdict = self.verdicts.get(key)
        except (TypeError, RecursionError):
            return self.validator.is_valid(value)
        if verdict is None:
            verdict = self.verdicts[key] = self.validator.is_valid(value)
        return verdict


class Keyer:
    """Verdict keys under the schemas of one set of `$defs`: each schema node's reading compiled once (a
    _Reading), as a dump's values meet the same few nodes hundreds of thousands of times."""

    def __init__(self, defs: dict) -> None:
        self.defs = defs
        self.readings: dict[int, _Reading] = {}          # id(schema node) -> its reading (the nodes live in defs)

    def key(self, value, node) -> tuple:
        """`value`'s key under the keyable schema `node`."""
        return self.reading(node).key(value)

    def representatives(self, values, node):
        """The first of `values` (a list, or a mapping's entries) with each key: the schema `node` finds them all
        valid exactly when it finds these valid. All of them when a value is no dict key (data not read from YAML
        or JSON)."""
        reading = self.reading(node)
        firsts: dict = {}
        try:
            if isinstance(values, dict):
                for k, v in values.items():
                    firsts.setdefault(reading.key(v), k)
                return {k: values[k] for k in firsts.values()}
            for v in values:
                firsts.setdefault(reading.key(v), v)
        except TypeError:
            return values
        return list(firsts.values())

    def reading(self, node) -> _Reading:
        hit = self.readings.get(id(node))
        if hit is None:
            hit = self.readings[id(node)] = _Reading()
            hit.compile(node, self)
        return hit


class _Reading:
    """What one keyable schema node reads of a value (see the module docstring), and the key of a value."""

    __slots__ = ("plain", "forward", "false", "ref", "whole", "whole_containers", "bounds", "pattern", "length",
                 "props", "required", "closed", "extra", "items", "size", "branches", "negated")

    def compile(self, node, keyer: Keyer) -> None:
        self.false = node is False
        node = node if isinstance(node, dict) else {}
        ref = node.get("$ref")
        self.ref = keyer.reading(keyer.defs[ref[len(DEFS):]]) if ref else None
        self.whole = "enum" in node or "const" in node
        # a mapping or list equals no enum value that is not one (a dump's {scheduled: true} among the words)
        self.whole_containers = any(isinstance(v, (dict, list))
                                    for v in list(node.get("enum") or []) + ([node["const"]] if "const" in node else []))
        self.bounds = tuple((k, node[k]) for k in _BOUNDS if k in node)
        self.pattern = re.compile(node["pattern"]) if "pattern" in node else None
        self.length = any(k in node for k in _LENGTH)
        self.props = {k: keyer.reading(sub) for k, sub in (node.get("properties") or {}).items()}
        self.required = tuple(node["required"]) if "required" in node else None
        extra = node.get("additionalProperties")
        self.closed = extra is False                      # an extra property's name is an error
        self.extra = keyer.reading(extra) if isinstance(extra, dict) else None
        self.items = keyer.reading(node["items"]) if "items" in node else None
        self.size = any(k in node for k in _SIZE)
        self.branches = tuple(tuple(keyer.reading(b) for b in node[k]) for k in ("oneOf", "anyOf", "allOf") if k in node)
        self.negated = keyer.reading(node["not"]) if "not" in node else None
        reads = set(node) - _ANNOTATIONS
        # most nodes read a value's type alone (the key is its type, a number whole), or are a reference
        self.plain = not self.false and not reads - {"type"}
        self.forward = self.ref if reads == {"$ref"} else None

    def key(self, value):
        kind = type(value)
        if self.plain:
            return kind if kind in _KEYED_BY_TYPE else (kind, value.is_integer()) if kind is float else (kind, value)
        if self.forward is not None:
            return self.forward.key(value)
        if self.false:
            return ()
        out: list = [] if self.ref is None else [self.ref.key(value)]
        if kind is str:
            out.append(value if self.whole else kind)
            if self.pattern is not None:
                out.append(self.pattern.search(value) is not None)
            if self.length:
                out.append(len(value))
        elif kind is dict:
            out.append(("dict", id(value)) if self.whole_containers else kind)
            props = self.props
            if props:
                out.append(tuple([(k, props[k].key(v)) for k, v in value.items() if k in props]))
            if self.required is not None:
                out.append(tuple([k in value for k in self.required]))
            if self.closed:
                out.append(frozenset([k for k in value if k not in props]))
            elif self.extra is not None:
                out.append(_keys_of(self.extra, value.values() if not props else
                                    [v for k, v in value.items() if k not in props]))
        elif kind is list:
            out.append(("list", id(value)) if self.whole_containers else kind)
            if self.items is not None:
                out.append(_keys_of(self.items, value))
        elif (kind is int or kind is float) and not self.whole:
            # what jsonschema asks of a number: whether it is whole (`integer`), and each bound it holds
            out.append((kind, kind is int or value.is_integer(), tuple(_beyond(k, b, value) for k, b in self.bounds)))
        else:
            out.append((kind, value))
        if self.size and (kind is dict or kind is list):
            out.append(len(value))
        for branch in self.branches:
            out.append(tuple([r.key(value) for r in branch]))
        if self.negated is not None:
            out.append(self.negated.key(value))
        return tuple(out)


def _beyond(keyword: str, bound, value) -> bool:
    """Whether `value` fails the bound, as jsonschema compares (jsonschema/_keywords.py minimum, ...)."""
    if keyword == "minimum":
        return value < bound
    if keyword == "maximum":
        return value > bound
    if keyword == "exclusiveMinimum":
        return value <= bound
    return value >= bound


def _keys_of(reading: _Reading, values) -> frozenset:
    """The set of the keys of `values` under `reading`: the set of their types, without a call per value, when
    the reading is a type alone and none is a float (a label's values, a list of names)."""
    if reading.plain:
        types = frozenset(map(type, values))
        if types <= _KEYED_BY_TYPE:
            return types
    return frozenset([reading.key(v) for v in values])
