"""CEL evaluation of the CRDs' x-kubernetes-validations rules, as a Kubernetes API server does it.

The interpreter is harness.model.crd.celgo (cel-go's semantics and the API server's CEL libraries over
cel-python's parser). Results are memoized per (rule, input) because the same keys and requirement
items recur across a scenario library.

An outcome is True (the rule holds), False (it does not: the API server reports the rule's
message) or a str: the evaluation error's text, which the API server reports as
`<error> evaluating rule: <message>` (k8s.io/apiextensions-apiserver v0.36.3
pkg/apiserver/schema/cel/validation.go validateExpressions).
"""
from __future__ import annotations

import functools
import json
import re

from harness.model.crd import celgo
from harness.model.crd.rules import RenderedRule

_ALL_FORM = re.compile(r"^self\.all\((?P<var>[A-Za-z_][A-Za-z0-9_]*),\s*(?P<body>.*)\)$", re.S)
# Schema nodes by a key for the memo; keyed by identity (the schemas are loaded data that lives
# as long as its profile), holding the node so its id cannot be reused.
_SCHEMAS: dict[str, dict] = {}
_SCHEMA_IDS: dict[int, tuple[dict, str]] = {}


def schema_key(schema: dict | None) -> str:
    if not schema:
        return ""
    hit = _SCHEMA_IDS.get(id(schema))
    if hit is None or hit[0] is not schema:
        key = json.dumps(schema, sort_keys=True)
        _SCHEMAS.setdefault(key, schema)
        hit = _SCHEMA_IDS[id(schema)] = (schema, key)
    return hit[1]


NO_OLD = object()    # no correlated old value: the object is being created


@functools.lru_cache(maxsize=200_000)
def _outcome_json(rule: str, var: str, payload: str, schema_key: str, old_payload: str | None = None) -> bool | str:
    try:
        schema = _SCHEMAS.get(schema_key)
        variables = {var: celgo.from_json(json.loads(payload), schema)}
        if old_payload is not None:
            variables["oldSelf"] = celgo.from_json(json.loads(old_payload), schema)
        result = celgo.evaluate(rule, variables)
    except celgo.CELError as e:
        return str(e)
    if not isinstance(result, bool):
        return "no such overload"
    return result


def outcome(rule: RenderedRule | str, self_value, schema: dict | None = None, old=NO_OLD) -> bool | str:
    """True, False, or the evaluation error's text. `schema` is the schema node the rule sits on
    (it types the value as the API server does: formats, numbers, escaped field names).
    `self.all(x, body)` rules whose body reads only `x` are evaluated per element (list items or
    map keys), so each element's verdict is cached on its own: false wins, else the first error,
    as cel-go's `all` macro. `old`: the correlated old value, bound as `oldSelf` (transition rules)."""
    text = rule.rule if isinstance(rule, RenderedRule) else rule
    if old is not NO_OLD:
        return _outcome_json(text, "self", json.dumps(self_value, sort_keys=True), schema_key(schema),
                             json.dumps(old, sort_keys=True))
    m = _ALL_FORM.match(text)
    if m and isinstance(self_value, (list, dict)) and not re.search(r"\bself\b", m.group("body")) and not schema:
        body, var = m.group("body"), m.group("var")
        elements = list(self_value.keys()) if isinstance(self_value, dict) else self_value
        error: str | None = None
        for e in elements:
            got = _outcome_json(body, var, json.dumps(e, sort_keys=True), "")
            if got is False:
                return False
            if isinstance(got, str) and error is None:
                error = got
        return error if error is not None else True
    return _outcome_json(text, "self", json.dumps(self_value, sort_keys=True), schema_key(schema))


def evaluate(rule: RenderedRule | str, self_value, schema: dict | None = None) -> bool:
    """True only when the rule holds (an evaluation error counts as not holding)."""
    return outcome(rule, self_value, schema) is True


def error_detail(error: str, message: str) -> str:
    """The cause the API server gives for a rule whose evaluation failed (validation.go
    validateExpressions: the `no such overload` case words it differently)."""
    if error.startswith("no such overload"):
        return (f"'{error}': call arguments did not match a supported operator, function or macro "
                f"signature for rule: {message}")
    return f"{error} evaluating rule: {message}"
