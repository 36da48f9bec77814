"""Render a profile's CRD validation rules into the CEL strings upstream's CRDs carry.

One place produces the rule text: the local backend writes it into the CRDs it installs (so the
real API server judges NodePools), and the embedded backend evaluates the very same strings with
cel-python. Upstream's rules: the provider v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml and
karpenter.sh_nodeclaims.yaml (sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodeclaims.yaml,
sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from harness.model.upstream.profile import KeyRule, Profile

NODEPOOL_LABELS = "nodePoolLabels"
NODEPOOL_REQUIREMENTS = "nodePoolRequirements"
NODECLAIM_REQUIREMENTS = "nodeClaimRequirements"

_DOMAIN = 'KEY.find("^([^/]+)")'


@dataclass(frozen=True)
class RenderedRule:
    rule: str
    message: str


def _predicate(rule: KeyRule) -> str:
    if rule.forbid_key is not None:
        return f'KEY != "{rule.forbid_key}"'
    clauses: list[str] = []
    if rule.allow_keys:
        clauses.append("KEY in [" + ", ".join(f'"{k}"' for k in rule.allow_keys) + "]")
    clauses += [f'{_DOMAIN}.endsWith("{s}")' for s in rule.allow_domain_suffixes]
    clauses.append(f'!{_DOMAIN}.endsWith("{rule.domain}")')
    return " || ".join(clauses)


# Rendered once per Profile object (the embedded backend validates every NodePool and NodeClaim write).
# Keyed by identity, holding the profile so its id cannot be reused: Profile equality ignores its raw data.
_RENDERED: dict[int, tuple[Profile, dict[tuple, list[RenderedRule]]]] = {}


def _rendered(profile: Profile, key: tuple, render) -> list[RenderedRule]:
    hit = _RENDERED.get(id(profile))
    if hit is None or hit[0] is not profile:
        if len(_RENDERED) > 256:
            _RENDERED.clear()
        hit = _RENDERED[id(profile)] = (profile, {})
    rules = hit[1].get(key)
    if rules is None:
        rules = hit[1][key] = render()
    return list(rules)


def label_map_rules(profile: Profile, target: str = NODEPOOL_LABELS) -> list[RenderedRule]:
    """Rules for a labels map (`self` is the map; `self.all(x, ...)` iterates its keys)."""
    return _rendered(profile, ("map", target), lambda: [
        RenderedRule(f"self.all(x, {_predicate(r).replace('KEY', 'x')})", r.message)
        for r in profile.key_rules if target in r.targets])


def requirement_key_rules(profile: Profile, target: str) -> list[RenderedRule]:
    """Rules on one requirement's `key` string (`self` is the key)."""
    return _rendered(profile, ("key", target), lambda: [
        RenderedRule(_predicate(r).replace("KEY", "self"), r.message) for r in profile.key_rules if target in r.targets])


def requirement_list_rules(profile: Profile) -> list[RenderedRule]:
    """Rules on the requirements array (`self` is the list)."""
    return _rendered(profile, ("list",), lambda: [RenderedRule(r.rule, r.message) for r in profile.requirement_list_rules])


def _cel(rules: list[RenderedRule]) -> list[dict]:
    return [{"message": r.message, "rule": r.rule} for r in rules]


def _at(schema: dict, dotted: str) -> dict:
    node = schema
    for part in dotted.split("."):
        node = node["items"] if part == "[]" else node["properties"][part]
    return node


def patch_requirements(req: dict, profile: Profile, target: str) -> None:
    """A requirements array schema with the profile's list rules, key rules and operators (the
    operator enum keeps the CRD's own order when it holds the same operators)."""
    req["x-kubernetes-validations"] = _cel(requirement_list_rules(profile))
    key = req["items"]["properties"]["key"]
    rules = _cel(requirement_key_rules(profile, target))
    if rules:
        key["x-kubernetes-validations"] = rules
    else:
        key.pop("x-kubernetes-validations", None)
    op = req["items"]["properties"]["operator"]
    if set(op.get("enum") or ()) != set(profile.crd["operators"]):
        op["enum"] = list(profile.crd["operators"])   # the CRD's own order when the sets agree


_PATCHED: dict[tuple[int, str], tuple[Profile, dict | None]] = {}


def spec_schema(profile: Profile, kind: str) -> dict | None:
    """The NodePool, NodeClaim or NodeOverlay `spec` schema with the profile's label and requirement rules and
    operators rendered in: the same patches harness.backends.crds applies to the CRDs the local
    backend installs (after github.com/Azure/karpenter-provider-azure v1.14.0 hack/validation/labels.sh and
    hack/validation/requirements.sh, github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/apis/crds/karpenter.sh_nodepools.yaml)."""
    hit = _PATCHED.get((id(profile), kind))
    if hit is not None and hit[0] is profile:
        return hit[1]
    base = profile.crd_spec_schema(kind)
    schema = copy.deepcopy(base) if base is not None else None
    if schema is not None:
        if kind == "NodePool":
            labels = _at(schema, "template.metadata.labels")
            rules = _cel(label_map_rules(profile, NODEPOOL_LABELS))
            if rules:
                labels["x-kubernetes-validations"] = rules
            else:
                labels.pop("x-kubernetes-validations", None)
            patch_requirements(_at(schema, "template.spec.requirements"), profile, NODEPOOL_REQUIREMENTS)
        elif kind == "NodeOverlay":
            # the provider's hack/validation/requirements.sh adds its key rules to the NodeOverlay CRD as to the
            # NodePool's (github.com/Azure/karpenter-provider-azure v1.14.2
            # pkg/apis/crds/karpenter.sh_nodeoverlays.yaml):
            # the rules the release's CRD has, by message, in the profile's rendering (harness.model.crd.cel parses
            # these, not the shipped text); its own list rules and operators stay as core wrote them
            key = _at(schema, "requirements")["items"]["properties"]["key"]
            own = {v.get("message") for v in key.get("x-kubernetes-validations") or ()}
            key["x-kubernetes-validations"] = [r for r in _cel(requirement_key_rules(profile, NODEPOOL_REQUIREMENTS))
                                               if r["message"] in own]
        else:
            patch_requirements(_at(schema, "requirements"), profile, NODECLAIM_REQUIREMENTS)
    if len(_PATCHED) > 256:
        _PATCHED.clear()
    _PATCHED[(id(profile), kind)] = (profile, schema)
    return schema
