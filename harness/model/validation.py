"""NodePool / NodeClaim validation in the two stages upstream runs them.

Stage `admission`: the API server checks the CRD's OpenAPI schema and x-kubernetes-validations
(CEL) when the object is written (the provider v1.14.0 ships pkg/apis/crds/karpenter.sh_nodepools.yaml
and karpenter.sh_nodeclaims.yaml; azure-provider.md §3.3, karpenter-core.md §5.1-5.2). The rules
come from the profile (harness.model.crdrules), the same text the local backend installs.

Stage `runtime`: core's Go `RuntimeValidate`, run by the nodepool.validation controller, which sets
`ValidationSucceeded=False` / `NodePoolValidationFailed` (sigs.k8s.io/karpenter v1.14.0
pkg/apis/v1/nodepool_validation.go, nodeclaim_validation.go; karpenter-core.md §5.3, azure-provider.md §3.2).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harness.model.apistatus import APIRejected, Cause
from harness.model import cel, crdrules
from harness.model.labels import (LABEL_VALUE_PATTERN, LABEL_VALUE_RE, go_list, go_set, label_value_errors,
                                  qualified_name_errors, restricted_label_error)
from harness.model.profile import Profile
from harness.model.requirements import IN
from harness.model.semantics import semantics_for
from harness.model.versions import parse_version as _parse_version

ADMISSION = "admission"
RUNTIME = "runtime"
# core apis.Group of NodePool and NodeClaim (sigs.k8s.io/karpenter v1.14.0 pkg/apis/apis.go; karpenter-core.md §1.1)
GROUP = "karpenter.sh"

# The requirement-key pattern of the CRDs (karpenter-provider-azure v1.14.0
# pkg/apis/crds/karpenter.sh_nodepools.yaml; karpenter-core.md §5.1); the
# label-value pattern is apimachinery's label-value regex (harness.model.labels)
REQUIREMENT_KEY_PATTERN = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\/))?"
                           r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_REQ_KEY_RE = re.compile(REQUIREMENT_KEY_PATTERN)


def _quote(v) -> str:
    return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class AdmissionError:
    field: str
    detail: str       # what the API server prints after the field, e.g. 'Invalid value: "object": <msg>'
    message: str      # the rule's own message

    @property
    def text(self) -> str:
        return f"{self.field}: {self.detail}"


# kube-apiserver changed how a failed x-kubernetes-validations rule prints the value: up to 1.34
# it names the type ("object", "string", "array"); from 1.35 it quotes a string value and prints
# nothing for a map or list (checked against real 1.34.4, 1.35.4 and 1.36.3 servers built by the
# local backend).
VALUE_FORMAT_CHANGED_IN = (1, 35)


def rule_error(field: str, value, message: str, server_version: tuple[int, int]) -> AdmissionError:
    if server_version < VALUE_FORMAT_CHANGED_IN:
        type_name = "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"
        return AdmissionError(field, f'Invalid value: "{type_name}": {message}', message)
    if isinstance(value, str):
        return AdmissionError(field, f"Invalid value: {_quote(value)}: {message}", message)
    return AdmissionError(field, f"Invalid value: {message}", message)


def parse_version(version: str | None) -> tuple[int, int]:
    """'1.33.0' / 'v1.36.3' -> (1, 33); None -> the newest behaviour; unparseable text -> (0, 0)."""
    if not version:
        return (99, 0)
    return _parse_version(str(version)) or (0, 0)


def _schema_error(field: str, value, message: str) -> AdmissionError:
    return AdmissionError(field, f"Invalid value: {_quote(value)}: {message}", message)


def _check_labels(labels: dict, field: str, profile: Profile, target: str,
                  server_version: tuple[int, int]) -> list[AdmissionError]:
    errs: list[AdmissionError] = []
    if len(labels) > 100:
        errs.append(AdmissionError(field, f"Too many: {len(labels)}: must have at most 100 items",
                                   "must have at most 100 items"))
    for key in sorted(labels):
        value = labels[key]
        if not isinstance(value, str):
            errs.append(AdmissionError(f"{field}.{key}", f'Invalid value: "{type(value).__name__}": '
                                       f'{field}.{key} in body must be of type string: "{type(value).__name__}"',
                                       "must be of type string"))
            continue
        if len(value) > 63:
            errs.append(AdmissionError(f"{field}.{key}", "Too long: may not be more than 63 bytes",
                                       "may not be more than 63 bytes"))
        if not LABEL_VALUE_RE.match(value):
            msg = f"{field}.{key} in body should match '{LABEL_VALUE_PATTERN}'"
            errs.append(_schema_error(f"{field}.{key}", value, msg))
    for rule in crdrules.label_map_rules(profile, target):
        if not cel.evaluate(rule, labels):
            errs.append(rule_error(field, labels, rule.message, server_version))
    return errs


def _check_requirements(reqs: list, field: str, profile: Profile, target: str,
                        server_version: tuple[int, int]) -> list[AdmissionError]:
    errs: list[AdmissionError] = []
    if len(reqs) > 100:
        errs.append(AdmissionError(field, f"Too many: {len(reqs)}: must have at most 100 items",
                                   "must have at most 100 items"))
    operators = profile.crd["operators"]
    key_rules = crdrules.requirement_key_rules(profile, target)
    for i, req in enumerate(reqs):
        f = f"{field}[{i}]"
        key = req.get("key")
        if not isinstance(key, str):
            errs.append(AdmissionError(f"{f}.key", "Required value", "Required value"))
        else:
            if len(key) > 316:
                errs.append(AdmissionError(f"{f}.key", "Too long: may not be more than 316 bytes",
                                           "may not be more than 316 bytes"))
            if not _REQ_KEY_RE.match(key):
                errs.append(_schema_error(f"{f}.key", key, f"{f}.key in body should match '{REQUIREMENT_KEY_PATTERN}'"))
            for rule in key_rules:
                if not cel.evaluate(rule, key):
                    errs.append(rule_error(f"{f}.key", key, rule.message, server_version))
        op = req.get("operator")
        if op not in operators:
            supported = ", ".join(_quote(o) for o in operators)
            errs.append(AdmissionError(f"{f}.operator", f"Unsupported value: {_quote(op)}: supported values: {supported}",
                                       "supported values: " + supported))
        mv = req.get("minValues")
        if mv is not None and isinstance(mv, int):
            if mv < 1:
                errs.append(AdmissionError(f"{f}.minValues", f"Invalid value: {mv}: {f}.minValues in body should be "
                                           "greater than or equal to 1", "should be greater than or equal to 1"))
            if mv > 50:
                errs.append(AdmissionError(f"{f}.minValues", f"Invalid value: {mv}: {f}.minValues in body should be "
                                           "less than or equal to 50", "should be less than or equal to 50"))
    for rule in crdrules.requirement_list_rules(profile):
        if not cel.evaluate(rule, reqs):
            errs.append(rule_error(field, reqs, rule.message, server_version))
    return errs


# Required fields of the v1 CRDs' OpenAPI schemas (karpenter-provider-azure v1.14.0
# pkg/apis/crds/karpenter.sh_nodepools.yaml,
# karpenter.sh_nodeclaims.yaml). karpenter-core.md §5 (CRD validation) documents the CRDs'
# patterns and rules but not these lists; they are read from the CRDs and conformance-checked (a NodePool
# without spec.template.spec.requirements is refused).
REQUIRED = {
    "NodePool": [("spec",), ("spec", "template"), ("spec", "template", "spec"),
                 ("spec", "template", "spec", "nodeClassRef"), ("spec", "template", "spec", "requirements"),
                 ("spec", "template", "spec", "nodeClassRef", "group"), ("spec", "template", "spec", "nodeClassRef", "kind"),
                 ("spec", "template", "spec", "nodeClassRef", "name"), ("spec", "disruption", "consolidateAfter")],
    "NodeClaim": [("spec",), ("spec", "nodeClassRef"), ("spec", "requirements"),
                  ("spec", "nodeClassRef", "group"), ("spec", "nodeClassRef", "kind"), ("spec", "nodeClassRef", "name")],
}
REQUIRED_ITEMS = {"requirements": ("key", "operator"), "taints": ("key", "effect"), "startupTaints": ("key", "effect")}
# What the API server appends when a blocking schema error (required, enum, type, too long/many) stops
# the CEL rules; the cause carries the whole text (k8s.io/apiextensions-apiserver v0.36.3
# pkg/registry/customresource/strategy.go hasBlockingErr; checked against a real v1.36.3 server)
NOT_CHECKED_MESSAGE = ("some validation rules were not checked because the object was invalid; "
                       "correct the existing errors to complete validation")
NOT_CHECKED = AdmissionError("<nil>", f"Invalid value: null: {NOT_CHECKED_MESSAGE}", NOT_CHECKED_MESSAGE)


def _required_errors(obj: dict) -> list[AdmissionError]:
    errs = []
    for path in REQUIRED.get(obj.get("kind"), []):
        parent = obj
        for part in path[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
            if parent is None:
                break
        if isinstance(parent, dict) and path[-1] not in parent:
            errs.append(AdmissionError(".".join(path), "Required value", "Required value"))
    spec = obj.get("spec") or {}
    base = ("spec", "template", "spec") if obj.get("kind") == "NodePool" else ("spec",)
    inner = ((spec.get("template") or {}).get("spec") or {}) if obj.get("kind") == "NodePool" else spec
    for field, keys in REQUIRED_ITEMS.items():
        for i, item in enumerate(inner.get(field) or []):
            for k in keys:
                if not isinstance(item, dict) or k not in item:
                    errs.append(AdmissionError(".".join(base) + f".{field}[{i}].{k}", "Required value", "Required value"))
    return errs


def admission_errors(obj: dict, profile: Profile, server_version: str | None = None) -> list[AdmissionError]:
    """Schema + CEL errors for a NodePool or NodeClaim manifest (empty list = admitted). Missing
    required fields stop validation before the CEL rules run, as in kube-apiserver."""
    kind = obj.get("kind")
    version = parse_version(server_version)
    required = _required_errors(obj)
    if required:
        return required + [NOT_CHECKED]
    if kind == "NodePool":
        tmpl = (obj.get("spec") or {}).get("template") or {}
        labels = (tmpl.get("metadata") or {}).get("labels") or {}
        reqs = (tmpl.get("spec") or {}).get("requirements") or []
        errs = _check_labels(labels, "spec.template.metadata.labels", profile, crdrules.NODEPOOL_LABELS, version)
        errs += _check_requirements(reqs, "spec.template.spec.requirements", profile, crdrules.NODEPOOL_REQUIREMENTS,
                                    version)
        return errs
    if kind == "NodeClaim":
        reqs = (obj.get("spec") or {}).get("requirements") or []
        return _check_requirements(reqs, "spec.requirements", profile, crdrules.NODECLAIM_REQUIREMENTS, version)
    return []


def admission_rejection(obj: dict, profile: Profile, server_version: str | None = None) -> APIRejected | None:
    """The APIRejected a kube-apiserver of `server_version` would return, in its own message
    format, or None."""
    errs = admission_errors(obj, profile, server_version)
    if not errs:
        return None
    group = GROUP if obj["kind"] in REQUIRED else ""     # callers pass NodePools and NodeClaims
    name = (obj.get("metadata") or {}).get("name", "")
    texts = [e.text for e in errs]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return APIRejected(422, "Invalid", f'{obj["kind"]}.{group} "{name}" is invalid: {body}',
                       [Cause(e.field, e.message) for e in errs])


# -- runtime (Go) validation ---------------------------------------------------------------------
def validate_requirement(req: dict, profile: Profile) -> list[str]:
    """core ValidateRequirement (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodeclaim_validation.go;
    karpenter-core.md §5.3; Azure known
    values registered in provider pkg/apis/v1beta1/labels.go init, azure-provider.md §3.2)."""
    sem = semantics_for(profile)
    key = sem.normalize_key(str(req.get("key", "")))
    op = req.get("operator")
    values = [str(v) for v in (req.get("values") or [])]
    min_values = req.get("minValues")
    errs: list[str] = []
    if op not in profile.operators:
        errs.append(f"key {key} has an unsupported operator {op} not in {go_list(profile.operators)}")
    restricted = restricted_label_error(key, profile)
    if restricted:
        errs.append(restricted)
    known = profile.well_known_values.get(key)
    if known is not None and key in profile.well_known_labels and op == IN:
        valid = [v for v in values if v in known]
        invalid = [v for v in values if v not in known]
        if not valid:
            # core validateWellKnownValues prints the known values, a sets.Set, with %v
            # (sigs.k8s.io/karpenter v1.14.0 and v1.6.2 pkg/apis/v1/nodeclaim_validation.go; seen on
            # the real controller: `expected one of: map[system:{} user:{}]`)
            errs.append(f"no valid values found in {go_list(values)} for {key}, expected one of: "
                        f"{go_set(known)}, got: {go_list(invalid)}")
        elif min_values is not None and len(valid) < min_values:
            errs.append(f"not enough valid values found in {go_list(values)} for {key}, expected at least "
                        f"{min_values} valid values from: {go_list(sorted(known))}, got: {len(valid)}")
    for msg in qualified_name_errors(key):
        errs.append(f"key {key} is not a qualified name, {msg}")
    for v in values:
        for msg in label_value_errors(v):
            errs.append(f"invalid value {v} for key {key}, {msg}")
    if op == IN and not values:
        errs.append(f"key {key} with operator In must have a value defined")
    if op == IN and min_values is not None and len(values) < min_values:
        errs.append(f"key {key} with operator In must have at least minimum number of values defined in 'values' field")
    if op in ("Gt", "Lt", "Gte", "Lte"):
        if len(values) != 1 or not values[0].lstrip("+").isdigit():
            errs.append(f"key {key} with operator {op} must have a single positive integer value")
    return errs


def runtime_validation_error(nodepool: dict, profile: Profile) -> str | None:
    """core NodePool.RuntimeValidate (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool_validation.go;
    karpenter-core.md §5.3): the
    ValidationSucceeded=False message."""
    tmpl = (nodepool.get("spec") or {}).get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    reqs = (tmpl.get("spec") or {}).get("requirements") or []
    errs: list[str] = []
    for key in sorted(labels):
        value = str(labels[key])
        if key == "karpenter.sh/nodepool":
            errs.append(f'invalid key name "{key}" in labels, restricted')
            continue
        for msg in qualified_name_errors(key):
            errs.append(f'invalid key name "{key}" in labels, "{msg}"')
        for msg in label_value_errors(value):
            errs.append(f"invalid value: {value} for label[{key}], {msg}")
        restricted = restricted_label_error(key, profile)
        if restricted:
            errs.append(f'invalid key name "{key}" in labels, {restricted}')
    for req in reqs:
        if req.get("key") == "karpenter.sh/nodepool":
            errs.append('invalid key: "karpenter.sh/nodepool" in requirements, restricted')
            continue
        problems = validate_requirement(req, profile)
        if problems:
            errs.append(f"invalid value: {'; '.join(problems)} in requirements, restricted")
    return "; ".join(errs) if errs else None
