"""What a JSON Schema reads of a value, as a hashable key: two values with equal keys get the same verdict
from the schema. A customer's dump gives thousands of values a schema judges alike (pods that differ in their
names, NodeClaims in their times); each is judged once per key, not one by one (jsonschema walks a pod in
tens of microseconds, a key is a few dict lookups).

Only the keywords in KEYED are keyed; a schema that uses any other (or a reference outside its `$defs`) is
not keyable, and its values are judged one by one. The key holds each value's type (jsonschema tells
`true` from `1`, and `1.0` is an integer: a number is kept whole), a string itself only where `enum` or
`const` reads it, whether it matches a `pattern`, a length where a bound reads it, and the keys of the values
the schema reaches: a listed property's, each extra property's under `additionalProperties`, the set of an
array's items' (`items` judges each item alone), and each branch's of `oneOf`/`anyOf`/`allOf`/`not`.
"""
from __future__ import annotations

import re

DEFS = "#/$defs/"
# keywords whose verdict the key captures; the annotations change no verdict (jsonschema does not check
# `format` unless asked, and it is not keyed here)
KEYED = frozenset({"type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "maximum",
                   "exclusiveMinimum", "exclusiveMaximum", "properties", "required", "additionalProperties",
                   "minProperties", "maxProperties", "items", "minItems", "maxItems", "oneOf", "anyOf", "allOf",
                   "not", "$ref", "title", "description", "default", "examples"})
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


class Keyer:
    """Verdict keys under the schemas of one set of `$defs`: each schema node's reading compiled once (a
    _Reading), as a dump's values meet the same few nodes hundreds of thousands of times."""

    def __init__(self, defs: dict) -> None:
        self.defs = defs
        self.readings: dict[int, _Reading] = {}          # id(schema node) -> its reading (the nodes live in defs)

    def key(self, value, node) -> tuple:
        """`value`'s key under the keyable schema `node`."""
        return self.reading(node).key(value)

    def representatives(self, values: list, node) -> list:
        """The first of `values` with each key: the schema `node` finds them all valid exactly when it finds
        these valid. All of them when a value is no dict key (data not read from YAML or JSON)."""
        reading = self.reading(node)
        firsts: dict = {}
        try:
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

    __slots__ = ("false", "ref", "whole", "pattern", "length", "props", "required", "closed", "extra", "items",
                 "size", "branches", "negated")

    def compile(self, node, keyer: Keyer) -> None:
        self.false = node is False
        node = node if isinstance(node, dict) else {}
        ref = node.get("$ref")
        self.ref = keyer.reading(keyer.defs[ref[len(DEFS):]]) if ref else None
        self.whole = "enum" in node or "const" in node
        self.pattern = re.compile(node["pattern"]) if "pattern" in node else None
        self.length = any(k in node for k in _LENGTH)
        self.props = tuple((k, keyer.reading(sub)) for k, sub in (node.get("properties") or {}).items())
        self.required = tuple(node["required"]) if "required" in node else None
        extra = node.get("additionalProperties")
        self.closed = extra is False                      # an extra property's name is an error
        self.extra = keyer.reading(extra) if isinstance(extra, dict) else None
        self.items = keyer.reading(node["items"]) if "items" in node else None
        self.size = any(k in node for k in _SIZE)
        self.branches = tuple(tuple(keyer.reading(b) for b in node[k]) for k in ("oneOf", "anyOf", "allOf") if k in node)
        self.negated = keyer.reading(node["not"]) if "not" in node else None

    def key(self, value) -> tuple:
        if self.false:
            return ()
        out: list = [] if self.ref is None else [self.ref.key(value)]
        kind = type(value)
        if kind is str:
            out.append(value if self.whole else "str")
            if self.pattern is not None:
                out.append(self.pattern.search(value) is not None)
            if self.length:
                out.append(len(value))
        elif kind is dict:
            out.append(("dict", id(value)) if self.whole else "dict")
            if self.props:
                out.append(tuple((k, r.key(value[k])) for k, r in self.props if k in value))
            if self.required is not None:
                out.append(tuple(k in value for k in self.required))
            if self.closed or self.extra is not None:
                listed = {k for k, _ in self.props}
                if self.closed:
                    out.append(frozenset(k for k in value if k not in listed))
                else:
                    out.append(frozenset(self.extra.key(v) for k, v in value.items() if k not in listed))
        elif kind is list:
            out.append(("list", id(value)) if self.whole else "list")
            if self.items is not None:
                out.append(frozenset(self.items.key(v) for v in value))
        else:
            out.append((kind.__name__, value))
        if self.size and (kind is dict or kind is list):
            out.append(len(value))
        for branch in self.branches:
            out.append(tuple(r.key(value) for r in branch))
        if self.negated is not None:
            out.append(self.negated.key(value))
        return tuple(out)
