"""The API versions a release serves, and what the API server does with an object in one of them.

Why it is built this way: docs/architecture/model.md."""
from __future__ import annotations

import copy
import json

from harness.model.kube.apistatus import APIRejected
from harness.model.upstream.corebehaviour import CoreBehaviour
from harness.model.upstream.profile import Profile

GROUPS = {"NodePool": "karpenter.sh", "NodeClaim": "karpenter.sh", "AKSNodeClass": "karpenter.azure.com"}
OVERLAY_API_VERSION = "karpenter.sh/v1alpha1"     # the one version core serves (pkg/apis/v1alpha1, v1.7.0-v1.14.0)
# core v1.0.6 pkg/apis/v1/labels.go / nodepool_conversion.go annotation keys
KUBELET_COMPATIBILITY_ANNOTATION = "compatibility.karpenter.sh/v1beta1-kubelet-conversion"
NODECLASS_REFERENCE_ANNOTATION = "compatibility.karpenter.sh/v1beta1-nodeclass-reference"


def version_of(obj: dict) -> str:
    api = str(obj.get("apiVersion") or "")
    return api.rsplit("/", 1)[-1] if "/" in api else api


def apis(profile: Profile) -> dict:
    return profile.raw.get("apis") or {}


def served(profile: Profile, kind: str) -> list[str]:
    """The versions of `kind` the profile's release serves ([] when the profile does not say)."""
    return list((apis(profile).get(kind) or {}).get("served") or ())


def storage(profile: Profile, kind: str) -> str | None:
    return (apis(profile).get(kind) or {}).get("storage")


def served_rejection(obj: dict, profile: Profile) -> APIRejected | None:
    """The refusal of an object whose apiVersion the release does not serve (None when served, or when
    the profile has no `apis`)."""
    kind = obj.get("kind")
    if kind == "NodeOverlay":
        return overlay_rejection(obj, profile)
    if kind not in GROUPS:
        return None
    versions = served(profile, kind)
    api = str(obj.get("apiVersion") or "")
    group, _, version = api.rpartition("/")
    if not versions or (group == GROUPS[kind] and version in versions):
        return None
    return APIRejected(404, "NotFound", f'no matches for kind "{kind}" in version "{api}"')


def overlay_rejection(obj: dict, profile: Profile) -> APIRejected | None:
    """The refusal of a NodeOverlay at a release whose core has no such kind (core-behaviour.yaml nodeOverlay:
    core v1.7.0 added karpenter.sh/v1alpha1 NodeOverlay, #2296; the provider's chart ships core's CRDs), or in a
    version other than v1alpha1."""
    api = str(obj.get("apiVersion") or "")
    if api == OVERLAY_API_VERSION and CoreBehaviour.of(profile)["nodeOverlay"]:
        return None
    return APIRejected(404, "NotFound", f'no matches for kind "NodeOverlay" in version "{api}"')


def admission_profile(obj: dict, profile: Profile) -> Profile:
    """The profile judging `obj`: for a NodePool/NodeClaim in a served version that is not the storage
    one, the same profile with that version's CRD rules (`crdVersions.<version>`)."""
    version = version_of(obj)
    if obj.get("kind") not in ("NodePool", "NodeClaim") or version == storage(profile, obj["kind"]):
        return profile
    rules = (profile.raw.get("crdVersions") or {}).get(version)
    return profile.with_crd(version, rules) if rules else profile


def nodeclass_schema(obj: dict, profile: Profile) -> dict | None:
    """The AKSNodeClass spec schema of the object's version (the storage one's by default)."""
    version = version_of(obj)
    other = ((profile.raw.get("aksNodeClass") or {}).get("versions") or {}).get(version)
    if other and version != (profile.raw.get("aksNodeClass") or {}).get("version"):
        return other.get("spec")
    return profile.aks_nodeclass_schema


def written_api_version(profile: Profile, kind: str) -> str:
    """The apiVersion core's controllers write `kind` in: their Go API's, which the CRDs store (core v0.36
    writes karpenter.sh/v1beta1 NodeClaims, v1.0+ karpenter.sh/v1); `<group>/v1` when the profile does not say."""
    return f"{GROUPS[kind]}/{storage(profile, kind) or 'v1'}"


def nodeclaim_nodeclass_ref(nodepool: dict, profile: Profile) -> dict | None:
    """The NodeClaim's spec.nodeClassRef in the version core writes it: v1's {group, kind, name}, or a
    v1beta1 {apiVersion, kind, name} - the NodePool's own as written (kept in NODECLASS_REFERENCE_ANNOTATION
    by to_model_version), as core v0.36 copies the template's reference."""
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef")
    if not isinstance(ref, dict) or storage(profile, "NodeClaim") in (None, "v1"):
        return ref
    kept = ((nodepool.get("metadata") or {}).get("annotations") or {}).get(NODECLASS_REFERENCE_ANNOTATION)
    if kept:
        return json.loads(kept)
    group = ref.get("group") or GROUPS["AKSNodeClass"]
    return {"apiVersion": f"{group}/{storage(profile, 'AKSNodeClass') or 'v1beta1'}",
            "kind": ref.get("kind") or "AKSNodeClass", "name": ref.get("name")}


# why a NodePool of another provider's NodeClass makes nothing: core's controllers list only the NodePools whose
# nodeClassRef is one of the provider's NodeClasses (sigs.k8s.io/karpenter v1.1.0+ pkg/utils/nodepool/nodepool.go
# IsManaged, #1818); core v1.0 has no such filter but its readiness controller finds no NodeClass of that kind
# (pkg/controllers/nodepool/readiness/controller.go getNodeClass) and holds the NodePool NotReady
FOREIGN_NODECLASS = ("Karpenter-on-Azure does not manage this NodePool: no NodeClaim is made from it and none of "
                     "its nodes is disrupted (core v1.1.0+ IsManaged; core v1.0 marks it NodeClassReady=False "
                     "NodeClassNotFound, to the same effect)")


def foreign_nodeclass(nodepool: dict) -> str | None:
    """`group/Kind` of the NodePool's nodeClassRef when it names another provider's NodeClass (an EC2NodeClass
    of a manifest written for AWS), else None. A v1beta1 reference is read by its apiVersion's group; a part left
    out is the provider's own (as core v1.0's conversion fills it in)."""
    ref = ((nodepool.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef")
    if not isinstance(ref, dict):
        return None
    group = ref.get("group") or str(ref.get("apiVersion") or "").partition("/")[0] or GROUPS["AKSNodeClass"]
    kind = ref.get("kind") or "AKSNodeClass"
    return None if (group, kind) == (GROUPS["AKSNodeClass"], "AKSNodeClass") else f"{group}/{kind}"


def nodeclaim_kubelet(nodepool: dict, profile: Profile) -> dict | None:
    """The kubelet block a karpenter.sh/v1beta1 NodeClaim copies from its NodePool's template (core v0.36
    ToNodeClaim copies the whole template spec: sigs.k8s.io/karpenter v0.36.1
    pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go); None for a v1 NodeClaim, which has none."""
    if storage(profile, "NodeClaim") in (None, "v1"):
        return None
    tspec = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
    if isinstance(tspec.get("kubelet"), dict):
        return copy.deepcopy(tspec["kubelet"])
    kept = ((nodepool.get("metadata") or {}).get("annotations") or {}).get(KUBELET_COMPATIBILITY_ANNOTATION)
    return json.loads(kept) if kept else None


def to_model_version(obj: dict) -> dict:
    """The object as the model reads it: a karpenter.sh/v1beta1 NodePool converted to v1 (module doc)."""
    if obj.get("kind") != "NodePool" or obj.get("apiVersion") != "karpenter.sh/v1beta1":
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = "karpenter.sh/v1"
    spec = out.setdefault("spec", {})
    disruption = spec.setdefault("disruption", {}) if isinstance(spec.get("disruption", {}), dict) else {}
    tspec = spec.setdefault("template", {}).setdefault("spec", {})
    expire = disruption.pop("expireAfter", None)
    if expire is not None:
        tspec["expireAfter"] = expire
    if disruption.get("consolidationPolicy", "WhenUnderutilized") == "WhenUnderutilized":   # the v1beta1 default
        disruption["consolidationPolicy"] = "WhenEmptyOrUnderutilized"
        disruption["consolidateAfter"] = "0s"
    _v1_reference_and_kubelet(out, tspec)
    return out


def _v1_reference_and_kubelet(out: dict, spec: dict) -> None:
    """core v1.0's conversion of a v1beta1 spec (a NodePool's template spec, a NodeClaim's spec): nodeClassRef
    by group, the v1beta1 reference and the kubelet block kept as annotations of `out`."""
    ref = spec.get("nodeClassRef")
    if isinstance(ref, dict) and "group" not in ref:
        ann = out.setdefault("metadata", {}).setdefault("annotations", {})
        ann[NODECLASS_REFERENCE_ANNOTATION] = json.dumps(ref, separators=(",", ":"))
        api_version = str(ref.get("apiVersion") or "")
        spec["nodeClassRef"] = {"group": api_version.split("/")[0] if api_version else "karpenter.azure.com",
                                "kind": ref.get("kind") or "AKSNodeClass", "name": ref.get("name")}
    kubelet = spec.pop("kubelet", None)
    if kubelet is not None:
        out.setdefault("metadata", {}).setdefault("annotations", {})[KUBELET_COMPATIBILITY_ANNOTATION] = json.dumps(
            kubelet, separators=(",", ":"), sort_keys=True)


def nodeclaim_to_v1(obj: dict) -> dict:
    """A karpenter.sh/v1beta1 NodeClaim as core v1.0's conversion stores it in v1 (sigs.k8s.io/karpenter
    v1.0.6 pkg/apis/v1/nodeclaim_conversion.go ConvertFrom): nodeClassRef by group, the v1beta1 reference
    and kubelet kept as annotations. A real API server whose CRD serves v1 only is sent this."""
    if obj.get("kind") != "NodeClaim" or obj.get("apiVersion") != "karpenter.sh/v1beta1":
        return obj
    out = copy.deepcopy(obj)
    out["apiVersion"] = "karpenter.sh/v1"
    _v1_reference_and_kubelet(out, out.setdefault("spec", {}))
    return out


__all__ = ["nodeclaim_to_v1", "served_rejection", "overlay_rejection", "admission_profile", "nodeclass_schema", "to_model_version", "version_of",
           "served", "storage", "written_api_version", "nodeclaim_nodeclass_ref",
           "nodeclaim_kubelet"]
