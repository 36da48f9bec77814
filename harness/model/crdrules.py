"""Render a profile's CRD validation rules into the CEL strings upstream's CRDs carry.

One place produces the rule text: the local backend writes it into the CRDs it installs (so the
real API server judges NodePools), and the embedded backend evaluates the very same strings with
cel-python. Upstream's rules: the provider v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml and
karpenter.sh_nodeclaims.yaml (azure-provider.md §3.3, karpenter-core.md §5.1-5.2, §8.1).
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.model.profile import KeyRule, Profile

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
