"""What a Kubernetes API server does to a custom resource's `spec` before anything reads it:
structural pruning, defaulting, OpenAPI validation and the CRD's x-kubernetes-validations (CEL)
rules, from a CRD version's schema node.

Used for the provider's AKSNodeClass (harness.model.crd.aksnodeclass) and core's NodePool and NodeClaim
(harness.model.crd.validation), from the schemas of every served API version `python -m harness.model.sync`
derives into each release profile's provider-facts.yaml (github.com/Azure/karpenter-provider-azure
pkg/apis/crds/*.yaml at the release's tag; v1.14.0's for `upstream`).

Why it is built this way: docs/architecture/model.md."""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass

from harness.model.crd import cel, celgo
from harness.model.kube.apistatus import APIRejected, Cause

_INT32 = (-(2 ** 31), 2 ** 31 - 1)
# What the API server appends when a blocking schema error (required, enum, type, too long/many) stops
# the CEL rules; the cause carries the whole text (k8s.io/apiextensions-apiserver v0.36.3
# pkg/registry/customresource/strategy.go hasBlockingErr; checked against a real v1.36.3 server)
NOT_CHECKED_MESSAGE = ("some validation rules were not checked because the object was invalid; "
                       "correct the existing errors to complete validation")
# kube-apiserver changed how a failed x-kubernetes-validations rule prints the value: up to 1.34
# it names the type ("object", "string", "array"); from 1.35 it quotes a string value and prints
# nothing for a map or list (checked against real 1.34.4, 1.35.4 and 1.36.3 servers built by the
# local backend).
VALUE_FORMAT_CHANGED_IN = (1, 35)


def quote(v) -> str:
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


def rule_failure_body(value, message: str, server_version: tuple[int, int]) -> str:
    """What follows `<field>: ` when a rule evaluates to false (validation.go validateExpressions:
    field.Invalid with the value, or field.OmitValueType for an object or array)."""
    if server_version < VALUE_FORMAT_CHANGED_IN:
        type_name = "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"
        return f'Invalid value: "{type_name}": {message}'
    if isinstance(value, str):
        return f"Invalid value: {quote(value)}: {message}"
    if isinstance(value, (dict, list)):
        return f"Invalid value: {message}"
    return f"Invalid value: {_go_value(value)}: {message}"


@dataclass(frozen=True)
class FieldError:
    field: str
    body: str          # what follows "<field>: " in the API server's message
    detail: str        # the cause's message
    blocking: bool = False

    @property
    def text(self) -> str:
        return f"{self.field}: {self.body}"



def rejection(qualified_kind: str, obj: dict, errs: list[FieldError]) -> APIRejected:
    """The API server's refusal of a custom resource the schema refused: `<Kind>.<group> "<name>" is invalid:
    <field>: <body>`, several in brackets (apierrors.NewInvalid)."""
    name = (obj.get("metadata") or {}).get("name", "")
    texts = [e.text for e in errs]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return APIRejected(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {body}',
                       [Cause(e.field, e.detail) for e in errs])

def _go_value(v) -> str:
    """ErrorBody's rendering of a bad value: %v for numbers and bools, %q for strings, else JSON."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if v is None:
        return "null"
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


def _invalid(path: str, value, detail: str, blocking: bool = False) -> FieldError:
    return FieldError(path, f"Invalid value: {_go_value(value)}: {detail}", detail, blocking)


# -- pruning -----------------------------------------------------------------------------------
def prune(value, schema: dict, path: str) -> list[str]:
    """Drop fields the schema does not declare; returns their paths."""
    dropped: list[str] = []
    if isinstance(value, dict) and schema.get("type") == "object":
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key in list(value):
            if props is not None and key in props:
                dropped += prune(value[key], props[key], f"{path}.{key}")
            elif isinstance(extra, dict):
                dropped += prune(value[key], extra, f"{path}.{key}")
            elif props is not None or extra is False:
                del value[key]
                dropped.append(f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            dropped += prune(item, schema["items"], f"{path}[{i}]")
    return dropped


def missing_fields(sent, stored, path: str) -> list[str]:
    """Paths present in what was sent and absent from what the API server stored: what it pruned
    (works for any backend, since it only compares the two objects)."""
    if not isinstance(sent, dict):
        return []
    if not isinstance(stored, dict):
        return [path] if stored is None and sent is not None else []
    out: list[str] = []
    for key, v in sent.items():
        if key not in stored:
            out.append(f"{path}.{key}")
        else:
            out += missing_fields(v, stored[key], f"{path}.{key}")
    return out


# -- defaulting --------------------------------------------------------------------------------
def apply_defaults(value, schema: dict):
    """Structural defaulting: a missing property with a `default` gets a copy of it, walking only
    what is present (an absent parent object is not created)."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
        for key, v in value.items():
            if key in props:
                apply_defaults(v, props[key])
            elif isinstance(schema.get("additionalProperties"), dict):
                apply_defaults(v, schema["additionalProperties"])
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(item, schema["items"])
    return value


# -- OpenAPI validation --------------------------------------------------------------------------
def _value_info(v) -> tuple[str, str]:
    """kube-openapi typeValidator.schemaInfoForType for a decoded JSON value: (type, format)."""
    if isinstance(v, bool):
        return "boolean", ""
    if isinstance(v, int):
        return "integer", "int64"
    if isinstance(v, float):
        return "number", "float64"
    if isinstance(v, str):
        return "string", ""
    if isinstance(v, list):
        return "array", ""
    if isinstance(v, dict):
        return "object", ""
    return "null", ""


def _type_invalid(path: str, want: str, got: str) -> FieldError:
    detail = f'{path} in body must be of type {want}: "{got}"'
    return FieldError(path, f'Invalid value: "{got}": {detail}', detail, True)


def _type_errors(value, want: str | None, fmt: str, path: str) -> list[FieldError]:
    """kube-openapi v0.0.0-20260317180543-43fb72c5454a pkg/validation/validate/type.go
    typeValidator.Validate: a number, bool or object checked against a format first (`must be of type
    int64: "float64"`), then the type; an integral float passes as an integer."""
    if not want:
        return []
    got, got_fmt = _value_info(value)
    if value is None:
        return [_type_invalid(path, want, "null")]
    float_int = got == "number" and float(value).is_integer() and want == "integer"
    int_float = got == "integer" and want == "number"
    if not isinstance(value, (str, list)) and fmt and not (want == got or got_fmt == fmt or float_int or int_float):
        return [_type_invalid(path, fmt, got_fmt)]
    if want not in ("number", "integer") and fmt and isinstance(value, (str, list)):
        return []
    if not (want == got or float_int or int_float):
        return [_type_invalid(path, want, got)]
    return []


def _checked_integer(path: str, fmt: str) -> FieldError:
    kind = f"with format {fmt}" if fmt else "(default format)"
    detail = f"Checked value must be of type integer {kind} in {path}"
    return FieldError("<nil>", f'Invalid value: "": {detail}', detail)


def schema_errors(value, schema: dict, path: str, old=cel.NO_OLD) -> list[FieldError]:
    """OpenAPI errors of `value`. On update (`old`: the correlated old value) an unchanged subtree
    reports nothing: CRD validation ratcheting (KEP-4008, on by default since 1.30;
    k8s.io/apiextensions-apiserver v0.36.3 pkg/apiserver/schema/validation/ratcheting.go)."""
    if old is not cel.NO_OLD and old == value and type(old) is type(value):
        return []
    want = schema.get("type")
    fmt = schema.get("format") or ""
    if schema.get("x-kubernetes-int-or-string"):
        # the structural int-or-string type, then anyOf [integer, string]: the failing branch kept is
        # the first (kube-openapi pkg/validation/validate/schema_props.go schemaPropsValidator.Validate)
        if isinstance(value, bool) or not isinstance(value, (int, str)) and not (
                isinstance(value, float) and value.is_integer()):
            got = _value_info(value)[0]
            errs = [_type_invalid(path, "integer,string", got),
                    FieldError("<nil>", f'Invalid value: "": "{path}" must validate at least one schema (anyOf)',
                               f'"{path}" must validate at least one schema (anyOf)'),
                    _type_invalid(path, "integer", got)]
            if isinstance(value, float):
                errs.append(_checked_integer(path, ""))
            return errs
        return _value_errors(value, schema, path)
    type_errs = _type_errors(value, want, fmt, path)
    if type_errs:
        if want == "integer" and isinstance(value, float):
            # a fraction for an integer: the format (or default) check, then the bounds
            return type_errs + [_checked_integer(path, fmt)] + _value_errors(value, schema, path)
        if "enum" in schema:
            type_errs += _enum_errors(value, schema, path)
        return type_errs
    errs: list[FieldError] = []
    if want == "integer" and schema.get("format") == "int32" and not _INT32[0] <= value <= _INT32[1]:
        errs.append(FieldError("<nil>", f'Invalid value: "": Checked value must be of type integer with format int32 in {path}',
                               f"Checked value must be of type integer with format int32 in {path}"))
    errs += _value_errors(value, schema, path)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for req in schema.get("required") or ():
            if req not in value:
                errs.append(FieldError(f"{path}.{req}", "Required value", "Required value", True))
        for key in sorted(value):
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                errs += schema_errors(value[key], sub, f"{path}.{key}", _child(old, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errs += schema_errors(item, schema["items"], f"{path}[{i}]", _item(old, item, schema))
    return errs


def _child(old, key):
    """The old value correlated with property `key` (k8s.io/apiserver v0.36.3 pkg/cel/common/equality.go
    CorrelatedObject.Key)."""
    return old[key] if isinstance(old, dict) and key in old else cel.NO_OLD


def _item(old, item, schema: dict):
    """The old list item correlated with `item`: by key in a list-type map, by value in a set; items
    of an atomic list have none (equality.go CorrelatedObject.Index)."""
    if not isinstance(old, list):
        return cel.NO_OLD
    kind = schema.get("x-kubernetes-list-type")
    if kind == "set":
        return item if item in old else cel.NO_OLD
    if kind == "map" and isinstance(item, dict):
        keys = schema.get("x-kubernetes-list-map-keys") or []
        want = {k: item.get(k) for k in keys}
        return next((o for o in old if isinstance(o, dict) and {k: o.get(k) for k in keys} == want), cel.NO_OLD)
    return cel.NO_OLD


def _enum_errors(value, schema: dict, path: str) -> list[FieldError]:
    if value in schema["enum"]:
        return []
    allowed = ", ".join(json.dumps(v if isinstance(v, str) else json.dumps(v)) for v in schema["enum"])
    detail = f"supported values: {allowed}"
    return [FieldError(path, f"Unsupported value: {_go_value(value)}: {detail}", detail, True)]


def _value_errors(value, schema: dict, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if "enum" in schema:
        errs += _enum_errors(value, schema, path)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errs.append(_invalid(path, value, f"{path} in body should be greater than or equal to {schema['minimum']}"))
        if "maximum" in schema and value > schema["maximum"]:
            errs.append(_invalid(path, value, f"{path} in body should be less than or equal to {schema['maximum']}"))
    if isinstance(value, str):
        # kube-openapi stringValidator.Validate returns the first of maxLength, minLength, pattern
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            n = schema["maxLength"]
            detail = f"may not be more than {n} {'byte' if n == 1 else 'bytes'}"
            errs.append(FieldError(path, f"Too long: {detail}", detail, True))
        elif "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(_invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long"))
        elif "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            errs.append(_invalid(path, value, f"{path} in body should match '{schema['pattern']}'"))
    if isinstance(value, dict) and "maxProperties" in schema and len(value) > schema["maxProperties"]:
        detail = f"must have at most {schema['maxProperties']} items"
        errs.append(FieldError(path, f"Too many: {len(value)}: {detail}", detail, True))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            detail = f"must have at most {schema['maxItems']} items"
            errs.append(FieldError(path, f"Too many: {len(value)}: {detail}", detail, True))
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(_invalid(path, value, f"{path} in body should have at least {schema['minItems']} items"))
    return errs


_PATTERNS: dict[str, re.Pattern] = {}


def _pattern(p: str) -> re.Pattern:
    """A CRD pattern (Go RE2 syntax) with Go's meaning (harness.model.crd.celgo.go_regex: ASCII
    classes, `$` only at the end of the text)."""
    if p not in _PATTERNS:
        _PATTERNS[p] = celgo.go_regex(p)
    return _PATTERNS[p]


# -- list types (pkg/apiserver/schema/listtype/validation.go ValidateListSetsAndMaps) ------------------
def list_type_errors(value, schema: dict, path: str) -> list[FieldError]:
    """Duplicate items of an x-kubernetes-list-type set, duplicate keys of a list-type map (not
    ratcheted on update: ValidateListSetsAndMaps runs on the new object alone)."""
    errs: list[FieldError] = []
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        kind = schema.get("x-kubernetes-list-type")
        # only an item's second occurrence is reported (listtype/validation.go validateListSet)
        if kind == "set":
            counts: dict[str, int] = {}
            for i, item in enumerate(value):
                k = json.dumps(item, sort_keys=True)
                counts[k] = counts.get(k, 0) + 1
                if counts[k] == 2:
                    errs.append(FieldError(f"{path}[{i}]", f"Duplicate value: {_go_value(item)}", _go_value(item)))
        elif kind == "map":
            keys = schema.get("x-kubernetes-list-map-keys") or []
            counts = {}
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    continue
                key = {k: item[k] for k in keys if k in item}
                k = json.dumps(key, sort_keys=True)
                counts[k] = counts.get(k, 0) + 1
                if counts[k] == 2:
                    errs.append(FieldError(f"{path}[{i}]", f"Duplicate value: {_go_value(key)}", _go_value(key)))
        for i, item in enumerate(value):
            errs += list_type_errors(item, schema["items"], f"{path}[{i}]")
    elif isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        for key in sorted(value):
            sub = props.get(key, extra)
            if sub is not None:
                errs += list_type_errors(value[key], sub, f"{path}.{key}")
    return errs


# -- CEL ---------------------------------------------------------------------------------------
_OLD_SELF = re.compile(r"\boldSelf\b")


def cel_errors(value, schema: dict, path: str, server_version: tuple[int, int] = (99, 0),
               old=cel.NO_OLD) -> list[FieldError]:
    """x-kubernetes-validations, the node's own rules before its children's; the value is printed
    the way the scenario's kube-apiserver version prints it. Transition rules (reading `oldSelf`)
    run only with a correlated old value (`old`, on update); a rule without oldSelf on an unchanged
    value is ratcheted (validation.go validateExpressions, correlation.shouldRatchetError)."""
    errs: list[FieldError] = []
    unchanged = old is not cel.NO_OLD and old == value and type(old) is type(value)
    for rule in schema.get("x-kubernetes-validations") or ():
        transition = bool(_OLD_SELF.search(rule["rule"]))
        if transition and old is cel.NO_OLD:
            continue
        got = cel.outcome(rule["rule"], value, schema, old if transition else cel.NO_OLD)
        if got is True or (unchanged and not transition):
            continue
        if isinstance(got, str):
            # an evaluation error: reported against the schema's type, with the rule's message or text
            # (k8s.io/apiextensions-apiserver v0.36.3 pkg/apiserver/schema/cel/validation.go
            # validateExpressions, ruleErrorString)
            detail = cel.error_detail(got, (rule.get("message") or rule["rule"]).strip())
            errs.append(FieldError(path, f"Invalid value: {_go_value(schema.get('type') or '')}: {detail}", detail))
            continue
        msg = (rule.get("message") or "").strip() or f"failed rule: {rule['rule'].strip()}"
        errs.append(FieldError(path, rule_failure_body(value, msg, server_version), msg))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key in sorted(value):
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                errs += cel_errors(value[key], sub, f"{path}.{key}", server_version, _child(old, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errs += cel_errors(item, schema["items"], f"{path}[{i}]", server_version, _item(old, item, schema))
    return errs


# -- admission -----------------------------------------------------------------------------------
@dataclass
class Admitted:
    obj: dict                      # as the API server stores it: pruned and defaulted
    errors: list[FieldError]       # empty = admitted
    pruned: list[str]              # paths of unknown fields dropped


def scale_errors(obj: dict, replicas_path: str | None) -> list[FieldError]:
    """The scale subresource's spec replicas check (k8s.io/apiextensions-apiserver v0.36.3
    pkg/registry/customresource/validator.go ValidateScaleSpec; the field is named by the path as
    written, leading dot included; the type error is apimachinery's unstructured.NestedInt64)."""
    if not replicas_path:
        return []
    node = obj
    for part in replicas_path.lstrip(".").split("."):
        if not isinstance(node, dict) or part not in node:
            return []
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, int):
        detail = f"{replicas_path} accessor error: {_go_plain(node)} is of the type {_go_type(node)}, expected int64"
        return [FieldError(replicas_path, f"Invalid value: 0: {detail}", detail)]
    if node < 0:
        return [FieldError(replicas_path, f"Invalid value: {node}: should be a non-negative integer",
                           "should be a non-negative integer")]
    if node > _INT32[1]:
        detail = f"should be less than or equal to {_INT32[1]}"
        return [FieldError(replicas_path, f"Invalid value: {node}: {detail}", detail)]
    return []


def _go_plain(v) -> str:
    """Go's %v of a decoded JSON value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return celgo.go_float_g(v)
    if v is None:
        return "<nil>"
    if isinstance(v, (dict, list)):
        return ("map[" + " ".join(f"{k}:{_go_plain(x)}" for k, x in sorted(v.items())) + "]" if isinstance(v, dict)
                else "[" + " ".join(_go_plain(x) for x in v) + "]")
    return str(v)


def _go_type(v) -> str:
    """Go's %T of a decoded JSON value."""
    return {bool: "bool", float: "float64", str: "string", dict: "map[string]interface {}",
            list: "[]interface {}", type(None): "<nil>"}.get(type(v), "int64")


def admit(obj: dict, schema: dict, server_version: tuple[int, int] = (99, 0), spec_required: bool = False,
          old: dict | None = None, scale_replicas_path: str | None = None) -> Admitted:
    """What a kube-apiserver of `server_version` does with `obj`. `schema` is the CRD version's
    openAPIV3Schema `spec` node; only `spec` is judged (status is a subresource, metadata is the
    API server's own). `spec_required`: the root schema lists `spec` as required (NodePool, NodeClaim).
    `old`: the stored object on update (transition rules and ratcheting). `scale_replicas_path`: the
    CRD's scale subresource specReplicasPath (NodePool: `.spec.replicas`)."""
    stored, errs, pruned = verdict(obj, schema, server_version, spec_required, old, scale_replicas_path)
    out = dict(obj)
    if "spec" in obj:
        out["spec"] = copy.deepcopy(stored)
    return Admitted(copy.deepcopy(out), list(errs), list(pruned))


def verdict(obj: dict, schema: dict, server_version: tuple[int, int] = (99, 0), spec_required: bool = False,
            old: dict | None = None, scale_replicas_path: str | None = None) -> tuple:
    """(the stored spec, the errors, the pruned paths) of admit, shared: never change them. The
    verdict depends on the spec (and the old spec) alone, so it is memoized per schema and spec
    text: a loop writes the same NodeClaim spec under many names."""
    spec = obj.get("spec")
    if spec is None:
        if spec_required:
            return None, (FieldError("spec", "Required value", "Required value", True), _not_checked()), ()
        return None, (), ()
    old_spec = _child(old, "spec") if old is not None else cel.NO_OLD
    key = (cel.schema_key(schema), json.dumps(spec, sort_keys=True),
           None if old_spec is cel.NO_OLD else json.dumps(old_spec, sort_keys=True), server_version,
           scale_replicas_path)
    hit = _ADMITTED.get(key)
    if hit is None:
        hit = _judge(spec, schema, server_version, old_spec, scale_replicas_path)
        if len(_ADMITTED) > 20_000:
            _ADMITTED.clear()
        _ADMITTED[key] = hit
    return hit


_ADMITTED: dict[tuple, tuple] = {}


def _judge(spec, schema: dict, server_version: tuple[int, int], old_spec, scale_replicas_path: str | None):
    """(the stored spec, the errors, the pruned paths) for a spec; see admit."""
    spec = copy.deepcopy(spec)
    pruned = prune(spec, schema, "spec")
    if isinstance(spec, dict):
        apply_defaults(spec, schema)
    if old_spec is not cel.NO_OLD:
        # the stored object went through the same pruning and defaulting
        old_spec = copy.deepcopy(old_spec)
        prune(old_spec, schema, "spec")
        if isinstance(old_spec, dict):
            apply_defaults(old_spec, schema)
    errs = schema_errors(spec, schema, "spec", old_spec)
    errs += scale_errors({"spec": spec}, scale_replicas_path)
    errs += list_type_errors(spec, schema, "spec")
    if any(e.blocking for e in errs):
        errs.append(_not_checked())
    else:
        errs += cel_errors(spec, schema, "spec", server_version, old_spec)
    return spec, tuple(errs), tuple(pruned)


def _not_checked() -> FieldError:
    return FieldError("<nil>", f"Invalid value: null: {NOT_CHECKED_MESSAGE}", NOT_CHECKED_MESSAGE)
