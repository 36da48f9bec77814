"""CEL evaluation of the CRDs' x-kubernetes-validations rules, with cel-python.

Kubernetes' CEL library adds `find(regex)` to strings; we register it. Results are memoized per
(rule, input) because cel-python costs milliseconds per evaluation and the same keys and
requirement items recur across a scenario library.
"""
from __future__ import annotations

import functools
import json
import re

import celpy
from celpy import celtypes

from harness.model.crdrules import RenderedRule

_ENV = celpy.Environment()
_ALL_FORM = re.compile(r"^self\.all\(x,\s*(?P<body>.*)\)$", re.S)


def _find(s, pattern):
    m = re.search(str(pattern), str(s))
    return celtypes.StringType(m.group(0) if m else "")


@functools.lru_cache(maxsize=None)
def _program(rule: str):
    return _ENV.program(_ENV.compile(rule), functions={"find": _find})


def _truthy(value) -> bool:
    return isinstance(value, celtypes.BoolType) and bool(value)


@functools.lru_cache(maxsize=200_000)
def _eval_json(rule: str, var: str, payload: str) -> bool:
    """Evaluate `rule` with `var` bound to the JSON payload. A CEL runtime error (e.g. int() of a
    non-integer) counts as a failed rule, as the API server reports it against the rule."""
    try:
        return _truthy(_program(rule).evaluate({var: celpy.json_to_cel(json.loads(payload))}))
    except celpy.CELEvalError:
        return False


def evaluate(rule: RenderedRule | str, self_value) -> bool:
    """True when the rule holds for `self`. `self.all(x, body)` rules are evaluated per element
    (list items, or map keys) so each element's verdict is cached on its own."""
    text = rule.rule if isinstance(rule, RenderedRule) else rule
    m = _ALL_FORM.match(text)
    if m and isinstance(self_value, (list, dict)):
        body = m.group("body")
        elements = list(self_value.keys()) if isinstance(self_value, dict) else self_value
        return all(_eval_json(body, "x", json.dumps(e, sort_keys=True)) for e in elements)
    return _eval_json(text, "self", json.dumps(self_value, sort_keys=True))
