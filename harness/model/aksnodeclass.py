"""AKSNodeClass admission: what the API server does to an AKSNodeClass before anything reads it.

The provider ships its AKSNodeClass CRD with defaults, enums, bounds, patterns and CEL rules
(github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml,
generated from the kubebuilder markers in pkg/apis/v1beta1/aksnodeclass.go). A real API server
defaults the object (so an AKSNodeClass without imageFamily is stored, and read by the provider, as
`imageFamily: Ubuntu`, `osDiskSizeGB: 128`) and refuses what breaks the schema, e.g.
"FIPS is not yet supported for Ubuntu2204 or Ubuntu2404". The embedded backend repeats both here, from
the v1beta1 schema `python -m harness.model.sync` derives into provider-facts.yaml (`aksNodeClass`),
so both backends judge an AKSNodeClass alike (tests/backends/test_conformance_embedded.py compares
them against a real kube-apiserver; tests/model/test_aksnodeclass.py pins its answers).

Order and message shapes follow k8s.io/apiextensions-apiserver v0.36.3: structural defaulting
(pkg/apiserver/schema/defaulting/algorithm.go Default), then OpenAPI validation converted to field
errors (pkg/apiserver/validation/validation.go kubeOpenAPIResultToFieldErrors, messages from
k8s.io/kube-openapi pkg/validation/errors/schema.go), then CEL rules unless a blocking error
(enum, required, too long, too many, wrong type) stops them (pkg/registry/customresource/strategy.go
hasBlockingErr). Error bodies print values as k8s.io/apimachinery v0.36.3
pkg/util/validation/field/errors.go ErrorBody does.

Errors on sibling fields are listed in key order here; the real server lists them in Go map order,
which varies between requests. Unknown fields are pruned, as the API server prunes them
(pkg/apiserver/schema/pruning/algorithm.go Prune): a field v1.14.0 does not know never reaches the provider. `admit` returns their paths so the
caller can say so (the API server answers them as `unknown field "spec.x"` warnings). Not modeled:
`x-kubernetes-list-type: map` duplicate keys.
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass

from harness.model import cel
from harness.model.apistatus import APIRejected, Cause
from harness.model.validation import NOT_CHECKED_MESSAGE, rule_error

GROUP = "karpenter.azure.com"
_INT32 = (-(2 ** 31), 2 ** 31 - 1)


@dataclass(frozen=True)
class FieldError:
    field: str
    body: str          # what follows "<field>: " in the API server's message
    detail: str        # the cause's message
    blocking: bool = False

    @property
    def text(self) -> str:
        return f"{self.field}: {self.body}"


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


def _json_type(v) -> str:
    """The type name kube-openapi reports for a decoded JSON value."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


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
def _type_ok(value, want: str) -> bool:
    return {"string": lambda v: isinstance(v, str),
            "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "boolean": lambda v: isinstance(v, bool),
            "object": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list)}.get(want, lambda v: True)(value)


def schema_errors(value, schema: dict, path: str) -> list[FieldError]:
    want = schema.get("type")
    if want and not _type_ok(value, want):
        if want == "integer" and isinstance(value, float) and schema.get("format") == "int32":
            # kube-openapi reports a float for an int32 field as a format-typed error, then the
            # format check itself, then goes on to the bounds
            errs = [FieldError(path, f'Invalid value: "float64": {path} in body must be of type int32: "float64"',
                               f'{path} in body must be of type int32: "float64"', True),
                    FieldError("<nil>", f'Invalid value: "": Checked value must be of type integer with format int32 in {path}',
                               f"Checked value must be of type integer with format int32 in {path}")]
            return errs + _value_errors(value, schema, path)
        detail = f'{path} in body must be of type {want}: "{_json_type(value)}"'
        errs = [FieldError(path, f'Invalid value: "{_json_type(value)}": {detail}', detail, True)]
        if "enum" in schema:
            errs += _enum_errors(value, schema, path)
        return errs
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
                errs += schema_errors(value[key], sub, f"{path}.{key}")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errs += schema_errors(item, schema["items"], f"{path}[{i}]")
    return errs


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
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            n = schema["maxLength"]
            detail = f"may not be more than {n} {'byte' if n == 1 else 'bytes'}"
            errs.append(FieldError(path, f"Too long: {detail}", detail, True))
        if "minLength" in schema and len(value) < schema["minLength"]:
            errs.append(_invalid(path, value, f"{path} in body should be at least {schema['minLength']} chars long"))
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            errs.append(_invalid(path, value, f"{path} in body should match '{schema['pattern']}'"))
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            detail = f"must have at most {schema['maxItems']} items"
            errs.append(FieldError(path, f"Too many: {len(value)}: {detail}", detail, True))
        if "minItems" in schema and len(value) < schema["minItems"]:
            errs.append(_invalid(path, value, f"{path} in body should have at least {schema['minItems']} items"))
    return errs


_PATTERNS: dict[str, re.Pattern] = {}


def _pattern(p: str) -> re.Pattern:
    """Go RE2 patterns used by the CRD are valid Python patterns (a leading (?i) included)."""
    if p not in _PATTERNS:
        _PATTERNS[p] = re.compile(p)
    return _PATTERNS[p]


# -- CEL ---------------------------------------------------------------------------------------
def cel_errors(value, schema: dict, path: str, server_version: tuple[int, int] = (99, 0)) -> list[FieldError]:
    """x-kubernetes-validations, the node's own rules before its children's; the value is printed
    the way the scenario's kube-apiserver version prints it (harness.model.validation)."""
    errs: list[FieldError] = []
    for rule in schema.get("x-kubernetes-validations") or ():
        if not cel.evaluate(rule["rule"], value):
            msg = rule.get("message") or f"failed rule: {rule['rule']}"
            e = rule_error(path, value, msg, server_version)
            errs.append(FieldError(path, e.detail, msg))
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for key in sorted(value):
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                errs += cel_errors(value[key], sub, f"{path}.{key}", server_version)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errs += cel_errors(item, schema["items"], f"{path}[{i}]", server_version)
    return errs


# -- readiness -----------------------------------------------------------------------------------
def not_ready(spec: dict, use_sig: bool, fips_requires_sig: bool = True) -> tuple[str, str, str] | None:
    """Why the provider's status controllers keep an admitted AKSNodeClass from Ready, as
    (dependent condition, its reason, its message), or None. Modeled: FIPS without SIG images, when
    the profile says so (`provider.fipsRequiresSIG`)
    (provider v1.14.0 pkg/controllers/nodeclass/status/images.go NodeImageReconciler.Reconcile sets
    ImagesReady=False). The Ready root then reads `UnhealthyDependents` / `ImagesReady=False`
    (github.com/awslabs/operatorpkg status/condition_set.go recomputeRootCondition), which core's
    nodepool.readiness copies into the NodePool's NodeClassReady (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/nodepool/readiness/controller.go setReadyCondition)."""
    if fips_requires_sig and (spec or {}).get("fipsMode") == "FIPS" and not use_sig:
        return ("ImagesReady", "SIGRequiredForFIPS",
                "FIPS images require UseSIG to be enabled, but UseSIG is false (note: UseSIG is only supported "
                "in AKS managed NAP)")
    return None


# -- admission -----------------------------------------------------------------------------------
@dataclass
class Admitted:
    obj: dict                      # as the API server stores it: pruned and defaulted
    errors: list[FieldError]       # empty = admitted
    pruned: list[str]              # paths of unknown fields dropped


def admit(obj: dict, schema: dict, server_version: tuple[int, int] = (99, 0)) -> Admitted:
    """What a kube-apiserver of `server_version` does with `obj`. `schema` is the CRD version's
    openAPIV3Schema `spec` node; only `spec` is judged (status is a subresource, metadata is the
    API server's own)."""
    out = copy.deepcopy(obj)
    spec = out.get("spec")
    if spec is None:
        return Admitted(out, [], [])
    pruned = prune(spec, schema, "spec")
    if isinstance(spec, dict):
        apply_defaults(spec, schema)
    errs = schema_errors(spec, schema, "spec")
    if any(e.blocking for e in errs):
        errs.append(FieldError("<nil>", f"Invalid value: null: {NOT_CHECKED_MESSAGE}", NOT_CHECKED_MESSAGE))
    else:
        errs += cel_errors(spec, schema, "spec", server_version)
    return Admitted(out, errs, pruned)


def rejection(obj: dict, errs: list[FieldError]) -> APIRejected:
    name = (obj.get("metadata") or {}).get("name", "")
    texts = [e.text for e in errs]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return APIRejected(422, "Invalid", f'AKSNodeClass.{GROUP} "{name}" is invalid: {body}',
                       [Cause(e.field, e.detail) for e in errs])
