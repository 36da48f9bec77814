"""The StatefulSet validation kube-apiserver applies, as the scenario loader checks it before a run
(k8s.io/kubernetes v1.36.3 pkg/apis/apps/validation/validation.go ValidateStatefulSetSpec,
ValidatePodTemplateSpecForStatefulSet, ValidatePersistentVolumeClaimRetentionPolicyType, ValidateStatefulSetUpdate):
the checks that decide whether the set's pods exist at all. Each error is (field path, the API server's text for
that field; a value it would print in Go's formatting is left out, as is the `Invalid value:` before it)."""
from __future__ import annotations

from harness.model.kube.poddefaults import semantic

__all__ = ["spec_errors", "update_forbidden", "UPDATE_FORBIDDEN", "UPDATABLE"]

POLICIES = ("OrderedReady", "Parallel")
STRATEGIES = ("RollingUpdate", "OnDelete")
RETENTION = ("Retain", "Delete")
# ValidateStatefulSetUpdate: the spec fields an update may change, and its refusal of any other
UPDATABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
             "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
UPDATE_FORBIDDEN = ("spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
                    "'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' "
                    "and 'minReadySeconds' are forbidden")


def _supported(value, allowed: tuple[str, ...]) -> str:
    """field.NotSupported's text."""
    return f'Unsupported value: "{value}": supported values: ' + ", ".join(f'"{a}"' for a in allowed)


def spec_errors(spec: dict) -> list[tuple[tuple, str]]:
    """What ValidateStatefulSetSpec refuses in `spec` (as written: the defaults fill what it leaves out), as
    (path under the object, text)."""
    from harness.loop.scheduling.topology import selector_matches       # the loader reads the loop only for a StatefulSet
    out: list[tuple[tuple, str]] = []
    policy = spec.get("podManagementPolicy")
    if policy is not None and policy not in POLICIES:
        out.append((("spec", "podManagementPolicy"),
                    "spec.podManagementPolicy: must be 'OrderedReady' or 'Parallel'"))
    strategy = spec.get("updateStrategy") or {}
    if isinstance(strategy, dict):
        kind = strategy.get("type")
        if kind is not None and kind not in STRATEGIES:
            out.append((("spec", "updateStrategy", "type"),
                        "spec.updateStrategy: must be 'RollingUpdate' or 'OnDelete'"))
        if kind == "OnDelete" and strategy.get("rollingUpdate") is not None:
            out.append((("spec", "updateStrategy", "rollingUpdate"),
                        "spec.updateStrategy.rollingUpdate: only allowed for updateStrategy "
                        "'RollingUpdate'"))
        partition = (strategy.get("rollingUpdate") or {}).get("partition") if isinstance(
            strategy.get("rollingUpdate"), dict) else None
        if isinstance(partition, int) and partition < 0:
            out.append((("spec", "updateStrategy", "rollingUpdate", "partition"),
                        f"spec.updateStrategy.rollingUpdate.partition: Invalid value: {partition}: must be greater "
                        "than or equal to 0"))
    retention = spec.get("persistentVolumeClaimRetentionPolicy") or {}
    if isinstance(retention, dict):
        for k in ("whenDeleted", "whenScaled"):
            if retention.get(k) is not None and retention[k] not in RETENTION:
                out.append((("spec", "persistentVolumeClaimRetentionPolicy", k),
                            f"spec.persistentVolumeClaimRetentionPolicy.{k}: {_supported(retention[k], RETENTION)}"))
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = ((template.get("metadata") or {}).get("labels")) or {}
    if not isinstance(selector, dict):
        out.append((("spec",), "spec.selector: Required value"))
    elif not (selector.get("matchLabels") or selector.get("matchExpressions")):
        out.append((("spec", "selector"), "spec.selector: empty selector is invalid for statefulset"))
    elif isinstance(labels, dict) and not selector_matches(selector, labels):
        out.append((("spec", "template", "metadata"),
                    "spec.template.metadata.labels: `selector` does not match template `labels`"))
    for i, claim in enumerate(spec.get("volumeClaimTemplates") or []):
        out += _claim_errors(claim, i)
    restart = ((template.get("spec") or {}).get("restartPolicy")) if isinstance(template.get("spec"), dict) else None
    if restart not in (None, "Always"):
        out.append((("spec", "template", "spec", "restartPolicy"),
                    f"spec.template.spec.restartPolicy: {_supported(restart, ('Always',))}"))
    if isinstance(template.get("spec"), dict) and template["spec"].get("activeDeadlineSeconds") is not None:
        out.append((("spec", "template", "spec", "activeDeadlineSeconds"),
                    "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is "
                    "not Supported"))
    return out


def _claim_errors(claim, i: int) -> list[tuple[tuple, str]]:
    """validateVolumeClaimTemplates (ValidatePersistentVolumeClaimSpec's required fields) and the claim's name,
    which names the pod's volume and the claim (`<name>-<set>-<ordinal>`)."""
    at = ("spec", "volumeClaimTemplates", i)
    if not isinstance(claim, dict):
        return [(at, f"spec.volumeClaimTemplates[{i}]: a claim template must be a mapping")]
    out = []
    if not ((claim.get("metadata") or {}).get("name")):
        out.append((at, f"spec.volumeClaimTemplates[{i}].metadata.name: Required value (it names the claims and "
                        "the pods' volume)"))
    cspec = claim.get("spec") if isinstance(claim.get("spec"), dict) else {}
    if not cspec.get("accessModes"):
        out.append((at + ("spec",), f"spec.volumeClaimTemplates[{i}].spec.accessModes: Required value: at least 1 "
                                    "access mode is required"))
    if (((cspec.get("resources") or {}).get("requests") or {}).get("storage")) is None:
        out.append((at + ("spec",), f"spec.volumeClaimTemplates[{i}].spec.resources[storage]: Required value"))
    return out


def update_forbidden(old: dict, new: dict) -> bool:
    """Whether applying `new` over the stored `old` changes a spec field an update may not change, both as the
    API server stores them: defaulted (podManagementPolicy), and each claim template without what the API server
    writes into it (apiVersion, kind, status; volumeMode Filesystem), so a dump's full object applied in short
    form is the same set."""
    from harness.loop.kube.statefulsets import defaulted

    def fixed(obj: dict) -> dict:
        spec = {k: v for k, v in (defaulted(obj).get("spec") or {}).items() if k not in UPDATABLE}
        claims = []
        for c in spec.get("volumeClaimTemplates") or []:
            c = {k: v for k, v in (c or {}).items() if k not in ("apiVersion", "kind", "status")}
            cspec = dict(c.get("spec") or {})
            if cspec.get("volumeMode") == "Filesystem":
                cspec.pop("volumeMode")
            claims.append({**c, "spec": cspec})
        if claims:
            spec["volumeClaimTemplates"] = claims
        return semantic(spec) or {}
    return fixed(old) != fixed(new)
