"""The hashes drift compares: a NodePool's template and an AKSNodeClass's spec.

Core stamps `karpenter.sh/nodepool-hash` (NodePool.Hash: hashstructure FormatV2 of spec.template with
SlicesAsSets, IgnoreZeroValue and ZeroNil; requirements and resources are `hash:"ignore"`) on each
NodeClaim it creates (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go Hash,
pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go NewNodeClaimTemplate); the provider
stamps `karpenter.azure.com/aksnodeclass-hash` (AKSNodeClass.Hash over spec, tags ignored) at Create
(github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/aksnodeclass.go Hash,
pkg/cloudprovider/cloudprovider.go). Drift only asks whether a hash changed, so the harness hashes a
canonical form with the same ignore rules (harness assumption: the digits differ from hashstructure's;
the hash versions are upstream's, v3 for both).
"""
from __future__ import annotations

import hashlib
import json

NODEPOOL_HASH = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION = "karpenter.sh/nodepool-hash-version"
NODEPOOL_HASH_VERSION_VALUE = "v3"                     # core pkg/apis/v1/nodepool.go NodePoolHashVersion
NODECLASS_HASH = "karpenter.azure.com/aksnodeclass-hash"
NODECLASS_HASH_VERSION = "karpenter.azure.com/aksnodeclass-hash-version"
NODECLASS_HASH_VERSION_VALUE = "v3"                    # provider pkg/apis/v1beta1 AKSNodeClassHashVersion


def _canonical(value):
    """Zero values dropped (IgnoreZeroValue, ZeroNil), lists as sets (SlicesAsSets)."""
    if isinstance(value, dict):
        out = {k: _canonical(v) for k, v in value.items()}
        return {k: v for k, v in sorted(out.items()) if v not in (None, "", 0, False, [], {})}
    if isinstance(value, list):
        items = [_canonical(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _digest(value) -> str:
    raw = json.dumps(_canonical(value), sort_keys=True, separators=(",", ":")).encode()
    return str(int.from_bytes(hashlib.sha256(raw).digest()[:8], "big"))


def nodepool_hash(nodepool: dict) -> str:
    template = json.loads(json.dumps(((nodepool.get("spec") or {}).get("template")) or {}))
    spec = template.setdefault("spec", {})
    spec.pop("requirements", None)
    spec.pop("resources", None)
    spec.setdefault("expireAfter", "720h")             # the CRD default a real API server stores
    return _digest(template)


def nodeclass_hash(nodeclass: dict) -> str:
    spec = dict((nodeclass.get("spec") or {}))
    spec.pop("tags", None)
    return _digest(spec)


_MEMO: dict[int, tuple[dict, str]] = {}      # id(nodepool) -> (the object, its hash); a pass reuses one
_MEMO_SIZE = 64                               # object for every NodeClaim it creates


def nodepool_hash_annotations(nodepool: dict) -> dict[str, str]:
    """A new NodeClaim's annotations: the template's, then the NodePool hash and its version (core
    nodeclaimtemplate.go NewNodeClaimTemplate; NodeClaimTemplate.ToNodeClaim)."""
    hit = _MEMO.get(id(nodepool))
    if hit is None or hit[0] is not nodepool:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        hit = _MEMO[id(nodepool)] = (nodepool, nodepool_hash(nodepool))
    template = (((nodepool.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations") or {}
    return {**{str(k): str(v) for k, v in template.items()},
            NODEPOOL_HASH: hit[1], NODEPOOL_HASH_VERSION: NODEPOOL_HASH_VERSION_VALUE}


def template_lifetime(template_spec: dict) -> dict:
    """The NodeClaim spec fields NodeClaimTemplate.ToNodeClaim copies for disruption: expireAfter
    (the CRD default 720h when unset) and terminationGracePeriod."""
    out = {"expireAfter": template_spec.get("expireAfter", "720h")}
    if template_spec.get("terminationGracePeriod") is not None:
        out["terminationGracePeriod"] = template_spec["terminationGracePeriod"]
    return out
