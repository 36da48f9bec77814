"""The hashes drift compares: a NodePool's template and an AKSNodeClass's spec.

Core stamps `karpenter.sh/nodepool-hash` (NodePool.Hash: hashstructure FormatV2 of spec.template with
SlicesAsSets, IgnoreZeroValue and ZeroNil) and its version on each NodeClaim it creates
(sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go Hash, pkg/controllers/provisioning/scheduling/
nodeclaimtemplate.go NewNodeClaimTemplate); which template spec fields it reads and the version are the
release's (core-behaviour.yaml nodePoolHashVersion, nodePoolHashedFields: v2 and the v1beta1 spec at core
v0.36, v3 and the v1 spec from v1.0.0). The provider
stamps `karpenter.azure.com/aksnodeclass-hash` (AKSNodeClass.Hash over spec, less the release's
`hash:"ignore"` fields) and its version at Create (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/apis/v1beta1/aksnodeclass.go Hash, pkg/cloudprovider/cloudprovider.go); v0.5-v0.6 have no
AKSNodeClass hash (profile provider.nodeClassHash, derived per release). Drift only asks whether a hash
changed, so the harness hashes a canonical form with the same ignore rules (harness assumption: the
digits differ from hashstructure's; the versions are upstream's). The template is hashed as the API
server stores it, with the release's CRD defaults, and its durations by value as the typed fields hash:
why, docs/architecture/loop.md.
"""
from __future__ import annotations

import copy
import hashlib
import json

from harness.model.crd import schema as crdschema
from harness.model.values.durations import crd_duration
from harness.model.upstream.profile import Profile

NODEPOOL_HASH = "karpenter.sh/nodepool-hash"
NODEPOOL_HASH_VERSION = "karpenter.sh/nodepool-hash-version"
NODECLASS_HASH = "karpenter.azure.com/aksnodeclass-hash"
NODECLASS_HASH_VERSION = "karpenter.azure.com/aksnodeclass-hash-version"


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


# the template spec's typed duration fields (core NodeClaimTemplateSpec: TerminationGracePeriod
# *metav1.Duration, ExpireAfter NillableDuration, whose Raw text is `hash:"ignore"`)
DURATION_FIELDS = ("terminationGracePeriod", "expireAfter")
NEVER = "Never"


def stored_template(nodepool: dict, profile: Profile) -> dict:
    """spec.template as the API server stores it: the `default:` values of the profile's NodePool CRD
    (its storage version's schema) filled in. A release whose CRDs store v1beta1 (core v0.36) defaults
    expireAfter under spec.disruption, which the model's v1 view moves into the template
    (harness.model.crd.apiversions.to_model_version)."""
    template = copy.deepcopy(((nodepool.get("spec") or {}).get("template")) or {})
    spec = template.setdefault("spec", {})
    props = (profile.crd_spec_schema("NodePool") or {}).get("properties") or {}
    if "template" in props:
        crdschema.apply_defaults(template, props["template"])
    beta = ((props.get("disruption") or {}).get("properties") or {}).get("expireAfter") or {}
    if "expireAfter" not in spec and "default" in beta:
        spec["expireAfter"] = beta["default"]
    return template


def _duration_value(text):
    """A duration field as hashstructure sees the typed value: one spelling per length (`60m` and
    `1h0m` are `1h`), None for Never (a nil duration) and for zero (IgnoreZeroValue); text the CRD
    pattern would refuse is hashed as written."""
    if text == NEVER:
        return None
    try:
        seconds = round(crd_duration(str(text)))
    except ValueError:
        return text
    h, rest = divmod(seconds, 3600)
    m, sec = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((h, "h"), (m, "m"), (sec, "s")) if n) or None


# (id(profile), repr of spec.template) -> (the profile, its hash): every run hashes its NodePools' templates (at
# the first NodeClaim a pass writes and at each drift check), mostly the same templates run after run; the repr
# of YAML-shaped data tells every value and type apart (a dict in another key order only misses)
_BY_TEXT: dict[tuple[int, str], tuple[Profile, str]] = {}
_BY_TEXT_SIZE = 1024


def _template_key(nodepool: dict, profile: Profile) -> tuple[int, str]:
    return id(profile), repr((nodepool.get("spec") or {}).get("template"))


def nodepool_hash(nodepool: dict, profile: Profile) -> str:
    """The NodePool's template hash, worked out once per profile and template text."""
    key = _template_key(nodepool, profile)
    hit = _BY_TEXT.get(key)
    if hit is None or hit[0] is not profile:
        if len(_BY_TEXT) >= _BY_TEXT_SIZE:
            _BY_TEXT.clear()
        hit = _BY_TEXT[key] = (profile, _nodepool_hash(nodepool, profile))
    return hit[1]


def _nodepool_hash(nodepool: dict, profile: Profile) -> str:
    """The template's metadata and the spec fields the release hashes (a field its spec type lacks, such as
    expireAfter at core v0.36 where it is spec.disruption's, is not read)."""
    template = stored_template(nodepool, profile)
    hashed = profile.nodepool_hashed_fields
    spec = {k: v for k, v in template["spec"].items() if k in hashed}
    for k in DURATION_FIELDS:
        if k in spec:
            spec[k] = _duration_value(spec[k])
    return _digest({**template, "spec": spec})


def nodeclass_hash(nodeclass: dict, profile: Profile) -> str:
    """The AKSNodeClass's spec hash at the profile's release: its `hash:"ignore"` fields left out."""
    ignored = profile.nodeclass_hash_ignored
    return _digest({k: v for k, v in (nodeclass.get("spec") or {}).items() if k not in ignored})


def nodeclass_hash_annotations(nodeclass: dict | None, profile: Profile) -> dict[str, str]:
    """What the provider's Create stamps on a NodeClaim: the AKSNodeClass hash and its version, nothing where
    the release has no AKSNodeClass hash (provider v0.5-v0.6)."""
    version = profile.nodeclass_hash_version
    if version is None:
        return {}
    return {NODECLASS_HASH: nodeclass_hash(nodeclass or {}, profile), NODECLASS_HASH_VERSION: version}


def nodepool_hash_annotations(nodepool: dict, profile: Profile) -> dict[str, str]:
    """A new NodeClaim's annotations: the template's, then the NodePool hash and the release's hash version
    (core nodeclaimtemplate.go NewNodeClaimTemplate; NodeClaimTemplate.ToNodeClaim)."""
    template = (((nodepool.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations") or {}
    return {**{str(k): str(v) for k, v in template.items()},
            NODEPOOL_HASH: nodepool_hash(nodepool, profile), NODEPOOL_HASH_VERSION: profile.nodepool_hash_version}


def restamps(stamped: str | None, nodepool: dict | None, profile: Profile) -> bool:
    """Whether core's NodePool hash controller re-stamps a NodeClaim whose hash version is `stamped` with the
    release's version (and the current hash unless it is Drifted): at its first reconcile of a NodePool whose
    own hash-version annotation is not the release's (absent, or a dump of another core), every NodeClaim of
    another version; a NodePool already at the release's version re-stamps nothing, and drift then never
    compares that NodeClaim's hash (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodepool/hash/controller.go
    Reconcile, updateNodeClaimHash; v0.36.1 the same)."""
    version = profile.nodepool_hash_version
    if nodepool is None or stamped is None or stamped == version:
        return False
    return ((nodepool.get("metadata") or {}).get("annotations") or {}).get(NODEPOOL_HASH_VERSION) != version


# (id(profile), repr of spec.template) -> (the profile, its template_lifetime), as _BY_TEXT
_LIFETIMES: dict[tuple[int, str], tuple[Profile, dict]] = {}


def template_lifetime(nodepool: dict, profile: Profile) -> dict:
    """The NodeClaim spec fields NodeClaimTemplate.ToNodeClaim copies from the stored template for
    disruption: expireAfter (defaulted by the CRD) and terminationGracePeriod. They stay with the
    NodeClaim: a later change of the NodePool drifts it, but its expiry and a drain's deadline count
    from its own copy (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go NodeClaimTemplate.ToNodeClaim,
    pkg/controllers/nodeclaim/lifecycle/controller.go ensureTerminationGracePeriodTerminationTimeAnnotation).
    Worked out once per profile and template (a pass, or seeding, writes many NodeClaims from one; runs
    write NodeClaims from the same templates)."""
    key = _template_key(nodepool, profile)
    hit = _LIFETIMES.get(key)
    if hit is None or hit[0] is not profile:
        spec = stored_template(nodepool, profile)["spec"]
        out = {}
        if "expireAfter" in spec:
            out["expireAfter"] = spec["expireAfter"]
        if spec.get("terminationGracePeriod") is not None:
            out["terminationGracePeriod"] = spec["terminationGracePeriod"]
        if len(_LIFETIMES) >= _BY_TEXT_SIZE:
            _LIFETIMES.clear()
        hit = _LIFETIMES[key] = (profile, out)
    return copy.deepcopy(hit[1])
