"""AKSNodeClass admission: what the API server does to an AKSNodeClass before anything reads it.

The provider ships its AKSNodeClass CRD with defaults, enums, bounds, patterns and CEL rules
(github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml,
generated from the kubebuilder markers in pkg/apis/v1beta1/aksnodeclass.go). A real API server
defaults the object (so an AKSNodeClass without imageFamily is stored, and read by the provider, as
`imageFamily: Ubuntu`, `osDiskSizeGB: 128`) and refuses what breaks the schema, e.g.
"FIPS is not yet supported for Ubuntu2204 or Ubuntu2404". The embedded backend repeats both here, from
the v1beta1 schema `python -m harness.model.sync` derives into provider-facts.yaml (`aksNodeClass`),
so both backends judge an AKSNodeClass alike (tests/backends/test_conformance_embedded.py compares
them against a real kube-apiserver; tests/model/crd/test_aksnodeclass.py pins its answers).

The steps (pruning, defaulting, OpenAPI validation, list types, CEL) are the generic CRD admission
of harness.model.crd.schema, which NodePool and NodeClaim admission share.
"""
from __future__ import annotations

from harness.model.kube.apistatus import APIRejected
from harness.model.crd.schema import Admitted, FieldError
from harness.model.crd import schema as crdschema

GROUP = "karpenter.azure.com"


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


def admit(obj: dict, schema: dict, server_version: tuple[int, int] = (99, 0), old: dict | None = None) -> Admitted:
    """What a kube-apiserver of `server_version` does with an AKSNodeClass (harness.model.crd.schema.admit;
    `old`: the stored object, on update)."""
    return crdschema.admit(obj, schema, server_version, old=old)


def rejection(obj: dict, errs: list[FieldError]) -> APIRejected:
    return crdschema.rejection(f"AKSNodeClass.{GROUP}", obj, errs)
