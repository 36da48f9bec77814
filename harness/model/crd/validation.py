"""NodePool / NodeClaim validation in the two stages upstream runs them.

Stage `admission`: the API server checks the CRD's OpenAPI schema and x-kubernetes-validations
(CEL) when the object is written (the provider v1.14.0 ships pkg/apis/crds/karpenter.sh_nodepools.yaml
and karpenter.sh_nodeclaims.yaml, sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodeclaims.yaml). The rules
come from the profile (harness.model.crd.rules), the same text the local backend installs. Each release
profile carries the spec schema and rules of every API version its CRDs serve (harness.model.upstream.derivation);
an object in a served version other than the storage one is judged with that version's
(harness.model.crd.apiversions.admission_profile).

Stage `runtime`: core's Go `RuntimeValidate`, run by the nodepool.validation controller, which sets
`ValidationSucceeded=False` / `NodePoolValidationFailed` (sigs.k8s.io/karpenter v1.14.0
pkg/apis/v1/nodepool_validation.go, nodeclaim_validation.go).
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.model.kube.apistatus import APIRejected, Cause
from harness.model.crd import rules as crdrules, schema as crdschema
from harness.model.labels.policy import go_list, go_set, label_value_errors, qualified_name_errors, restricted_label_error
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import IN
from harness.model.labels.semantics import semantics_for
from harness.model.values.versions import parse_version as _parse_version

ADMISSION = "admission"
RUNTIME = "runtime"
# core apis.Group of NodePool and NodeClaim (sigs.k8s.io/karpenter v1.14.0 pkg/apis/apis.go; sigs.k8s.io/karpenter
# v1.14.0 pkg/apis/v1/labels.go)
GROUP = "karpenter.sh"


@dataclass(frozen=True)
class AdmissionError:
    field: str
    detail: str       # what the API server prints after the field, e.g. 'Invalid value: "object": <msg>'
    message: str      # the rule's own message

    @property
    def text(self) -> str:
        return f"{self.field}: {self.detail}"


def parse_version(version: str | None) -> tuple[int, int]:
    """'1.33.0' / 'v1.36.3' -> (1, 33); None -> the newest behaviour; unparseable text -> (0, 0)."""
    if not version:
        return (99, 0)
    return _parse_version(str(version)) or (0, 0)


# The CRDs' kinds judged here (core's NodePool and NodeClaim).
KINDS = ("NodePool", "NodeClaim")
NOT_CHECKED_MESSAGE = crdschema.NOT_CHECKED_MESSAGE


def admission_errors(obj: dict, profile: Profile, server_version: str | None = None,
                     old: dict | None = None) -> list[AdmissionError]:
    """Schema + CEL errors for a NodePool or NodeClaim manifest (empty list = admitted): the profile's
    spec schema of the CRD (the storage version's, or the served version's in an
    apiversions.admission_profile view) with its label rules rendered in (harness.model.crd.rules.spec_schema),
    judged as the API server judges it (harness.model.crd.schema.admit: defaults, OpenAPI
    validation, list types, then the CEL rules unless a blocking error stops them). The object is
    judged after defaulting; the caller stores what it sent. `old`: the stored object, on update."""
    kind = obj.get("kind")
    schema = crdrules.spec_schema(profile, kind) if kind in KINDS else None
    if schema is None:
        return []
    _stored, errors, _pruned = crdschema.verdict(obj, schema, parse_version(server_version), spec_required=True,
                                                 old=old, scale_replicas_path=profile.crd_scale_replicas_path(kind))
    return [AdmissionError(e.field, e.body, e.detail) for e in errors]


def admission_rejection(obj: dict, profile: Profile, server_version: str | None = None,
                        old: dict | None = None) -> APIRejected | None:
    """The APIRejected a kube-apiserver of `server_version` would return, in its own message
    format, or None."""
    errs = admission_errors(obj, profile, server_version, old)
    if not errs:
        return None
    name = (obj.get("metadata") or {}).get("name", "")
    texts = [e.text for e in errs]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return APIRejected(422, "Invalid", f'{obj["kind"]}.{GROUP} "{name}" is invalid: {body}',
                       [Cause(e.field, e.message) for e in errs])


# -- runtime (Go) validation ---------------------------------------------------------------------
def validate_requirement(req: dict, profile: Profile) -> list[str]:
    """core ValidateRequirement (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodeclaim_validation.go;
    sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool_validation.go RuntimeValidate; Azure known
    values registered in provider pkg/apis/v1beta1/labels.go init, sigs.k8s.io/karpenter v1.14.0
    pkg/apis/v1/nodepool_validation.go RuntimeValidate)."""
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
    sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool_validation.go RuntimeValidate): the
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
