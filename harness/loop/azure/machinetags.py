"""The tags of an AKS machine and the in-place update hash that says whether they are current.

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/launchtemplate/tags.go Tags (the operator's
additional tags, the AKSNodeClass's spec.tags, then the cluster, NodePool and billing tags, every key's "/" as "_"),
pkg/providers/instance/aksmachineinstancehelpers.go ConfigureAKSMachineTags (+ the NodeClaim's name),
pkg/controllers/nodeclaim/inplaceupdate/utils.go HashFromNodeClaim (FNV-32a of the JSON of {"tags": ...}, as
aksMachineInPlaceUpdateFields marshals it), pkg/apis/v1beta1/annotations.go AnnotationInPlaceUpdateHash. The same
at every release with the Machine API path (v1.7.0+).
"""
from __future__ import annotations

import json

# pkg/apis/v1beta1/annotations.go AnnotationInPlaceUpdateHash: stamped at Create, moved by the in-place update
INPLACE_UPDATE_HASH = "karpenter.azure.com/in-place-update-hash"
CLUSTER_TAG, NODEPOOL_TAG, BILLING_TAG = "karpenter.azure.com_cluster", "karpenter.sh_nodepool", "compute.aks.billing"
NODECLAIM_TAG = "karpenter.azure.com_aksmachine_nodeclaim"     # launchtemplate.KarpenterAKSMachineNodeClaimTagKey
_FNV32_OFFSET, _FNV32_PRIME = 0x811C9DC5, 0x01000193


def _mapped(tags: dict | None) -> dict[str, str]:
    return {str(k).replace("/", "_"): str(v) for k, v in (tags or {}).items()}


def resource_tags(cluster_name: str, nodeclass_tags: dict | None, nodepool: str | None) -> dict[str, str]:
    """launchtemplate.Tags: the AKSNodeClass's tags under the cluster's (and the NodePool's, when the NodeClaim has
    one) and the billing tag. (harness simplification: the operator's ADDITIONAL_TAGS are none.)"""
    defaults = {CLUSTER_TAG: cluster_name, BILLING_TAG: "linux"}
    if nodepool is not None:
        defaults[NODEPOOL_TAG] = nodepool
    return {**_mapped(nodeclass_tags), **_mapped(defaults)}


def machine_tags(cluster_name: str, nodeclass_tags: dict | None, nodepool: str | None, nodeclaim: str) -> dict:
    """ConfigureAKSMachineTags: the resource tags and the NodeClaim's name."""
    return {**resource_tags(cluster_name, nodeclass_tags, nodepool), NODECLAIM_TAG: nodeclaim}


def _go_json(value) -> str:
    """encoding/json's text: map keys sorted, no spaces, <, > and & escaped as \\u003c, \\u003e, \\u0026."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inplace_update_hash(cluster_name: str, nodeclass_tags: dict | None, nodepool: str | None) -> str:
    """HashFromNodeClaim of an AKS machine's NodeClaim: FNV-32a of aksMachineInPlaceUpdateFields' JSON (the resource
    tags, omitted when empty), in decimal."""
    tags = resource_tags(cluster_name, nodeclass_tags, nodepool)
    h = _FNV32_OFFSET
    for b in _go_json({"tags": tags} if tags else {}).encode():
        h = ((h ^ b) * _FNV32_PRIME) & 0xFFFFFFFF
    return str(h)
