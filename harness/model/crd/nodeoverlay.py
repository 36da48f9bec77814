"""NodeOverlay admission: what the API server does to a karpenter.sh/v1alpha1 NodeOverlay before core reads it.

Core ships the CRD (sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodeoverlays.yaml, from the markers
of pkg/apis/v1alpha1/nodeoverlay.go) and the provider's chart carries it from provider v1.7.2: the price and
priceAdjustment patterns, weight 1-10000, and the CEL rules ("cannot set both 'price' and 'priceAdjustment'",
"invalid resource restricted" for a capacity of cpu, memory, ephemeral-storage or pods). The embedded backend
judges a NodeOverlay with the `spec` schema `python -m harness.model.sync` derives into each release's
provider-facts.yaml (`nodeOverlay`), through the generic CRD admission of harness.model.crd.schema. Whether the
release has the kind at all is harness.model.crd.apiversions overlay_rejection's.
"""
from __future__ import annotations

from harness.model.crd import schema as crdschema
from harness.model.crd.schema import Admitted, FieldError
from harness.model.kube.apistatus import APIRejected

GROUP = "karpenter.sh"


def admit(obj: dict, schema: dict, server_version: tuple[int, int] = (99, 0), old: dict | None = None) -> Admitted:
    """What a kube-apiserver of `server_version` does with a NodeOverlay (its root requires `spec`)."""
    return crdschema.admit(obj, schema, server_version, spec_required=True, old=old)


def rejection(obj: dict, errs: list[FieldError]) -> APIRejected:
    return crdschema.rejection(f"NodeOverlay.{GROUP}", obj, errs)
