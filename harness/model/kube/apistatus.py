"""What an API server answers when it refuses a write: a model value, so the model's own
validation (harness.model.crd.validation) and every cluster backend raise the same type."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Cause:
    field: str           # e.g. "spec.template.spec.requirements[0].key"
    message: str         # the rule's own message, e.g. 'label domain "kubernetes.io" is restricted'


@dataclass
class APIRejected(Exception):
    """The API server refused a request (schema/CEL validation, admission, authorization, conflict).

    `message` is the full server text, e.g.
    'NodePool.karpenter.sh "x" is invalid: spec.template.metadata.labels: Invalid value: label domain
    "kubernetes.azure.com" is restricted' (kube-apiserver 1.36 prints no value for a map, the
    string itself for a string).
    """

    status: int
    reason: str          # "Invalid" | "Forbidden" | "Conflict" | "NotFound" | "AlreadyExists" | ...
    message: str
    causes: list[Cause] = field(default_factory=list)
    # a validating admission plugin's refusal (ResourceQuota, LimitRanger.Validate): it runs after the object's
    # generateName was resolved, so it names the generated name, where a mutating plugin names the generateName
    validating: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return self.message


def forbidden(resource: str, obj: dict, why: str, validating: bool = False) -> APIRejected:
    """An admission plugin's refusal, admission.NewForbidden (k8s.io/apiserver v0.36.3
    pkg/admission/errors.go): the object's name (its generateName before names are generated, else
    "Unknown"), then apierrors.NewForbidden's `<resource> "<name>" is forbidden: <why>`. `validating`: a
    validating plugin's (the registry has generated the name by then: k8s.io/apiserver v0.36.3
    pkg/registry/generic/registry/store.go Create, BeforeCreate before createValidation)."""
    meta = obj.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName") or "Unknown"
    return APIRejected(403, "Forbidden", f'{resource} "{name}" is forbidden: {why}', validating=validating)


def invalid(qualified_kind: str, name: str, causes: list[Cause]) -> APIRejected:
    """A built-in kind's validation refusal, apierrors.NewInvalid (k8s.io/apimachinery v0.36.3
    pkg/api/errors/errors.go): `<Kind>.<group> "<name>" is invalid: <field>: <error>`, several errors in
    brackets; each cause's message is the field error's text after its field (`Forbidden: ...`,
    `Invalid value: ...`). `qualified_kind`: `PriorityClass.scheduling.k8s.io`, or `LimitRange` (core group)."""
    texts = [f"{c.field}: {c.message}" for c in causes]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return APIRejected(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {body}', list(causes))
