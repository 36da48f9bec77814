"""Profiles: the label policy of one Karpenter core + Azure provider pairing, as data.

A profile is a YAML file under harness/data/profiles. `extends: <other>` deep-merges over another
profile: maps merge key by key, lists are replaced; `name+` appends, `name-` removes and `name!`
replaces a map wholesale, so a derived profile states only its differences (design-0006 =
before-0006 + the decisions).
`derived: <dir>` names the directory under harness/data that `python -m harness.model.sync` fills from
the provider's source: its provider-facts.yaml is merged beneath the profile's own body (after the
parent), and instancetypes reads the SKU tables there. Profiles inherit their parent's `derived`.
Adding a profile needs no code change.

Release profiles (`v1.6.2`, ...) are generated, one per provider release line and behaviour change
(harness.model.upstream.releasesync; `extends: upstream`, `derived: releases/<tag>`); `upstream` reads the newest's
facts. A name that is no profile but a provider version resolves through harness.model.upstream.releases: a tag a
profile covers answers exactly; another version is answered by the nearest release profile (the caller
warns with what may differ). The Profile keeps the name asked for; `release` says what answered.
"""
from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from harness.model.data import DATA_DIR, load_yaml
from harness.model.upstream.releaseindex import answer_for, release_profiles

PROFILE_DIR = DATA_DIR / "profiles"
DEFAULT_PROFILE = "upstream"


class ProfileError(ValueError):
    pass


def available_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def unknown_profile_text(name: str) -> str:
    """What a name that is no profile and no provider version gets: the label policies and `upstream`,
    then the span of release profiles."""
    releases = release_profiles()
    policies = [p for p in available_profiles() if p not in set(releases)]
    span = (f"; or a provider version ({releases[0]} .. {releases[-1]}, `all-releases` for every one)"
            if releases else "")
    return f"unknown profile {name!r}; available: {', '.join(policies)}{span}"


def merge(base: Any, over: Any) -> Any:
    """`over` merged over `base` by the `extends` rules above; shares no object with either."""
    return _merge_into(copy.deepcopy(base), over)


def _merge_into(out: Any, over: Any) -> Any:
    """Merge `over` into `out` (a private copy, changed in place); only values from `over` are copied."""
    if not isinstance(over, dict):
        return copy.deepcopy(over)
    if not isinstance(out, dict):
        out = {}        # a new map: its `name!`/`name+`/`name-` keys are still read as merge directives
    for key, value in over.items():
        name = key[:-1]
        if key.endswith("!"):
            out[name] = copy.deepcopy(value)
        elif key.endswith("+") and isinstance(value, list):
            current = out.get(name) or []
            out[name] = list(current) + [copy.deepcopy(v) for v in value if v not in current]
        elif key.endswith("-") and isinstance(value, list):
            out[name] = [v for v in (out.get(name) or []) if v not in value]
        elif key.endswith("+") and isinstance(value, dict):
            out[name] = {**(out.get(name) or {}), **copy.deepcopy(value)}
        elif key.endswith("-") and isinstance(value, dict):
            out[name] = {k: v for k, v in (out.get(name) or {}).items() if k not in value}
        else:
            out[key] = _merge_into(out.get(key), value)
    return out


@functools.lru_cache(maxsize=None)
def raw_profile(name: str) -> dict:
    path = PROFILE_DIR / f"{name}.yaml"
    if not path.exists():
        answer = answer_for(name)                # a provider version: the release profile that answers
        if answer is None:
            raise ProfileError(unknown_profile_text(name))
        data = copy.deepcopy(raw_profile(answer))
        data["name"] = name
        data["answeredBy"] = answer
        return data
    data = load_yaml(path.read_text()) or {}
    parent = data.pop("extends", None)
    base = raw_profile(parent) if parent else None
    if data.get("derived") is not None:
        base = merge(base or {}, _derived_facts(str(data["derived"])))
    if base is not None:
        data = merge(base, data)
    data["name"] = name
    return data


FACTS_FILE = "provider-facts.yaml"


@functools.lru_cache(maxsize=None)
def _derived_facts(derived: str) -> dict:
    """The facts `python -m harness.model.sync` derived from the provider (harness.model.sync)."""
    path = DATA_DIR / derived / FACTS_FILE
    if not path.exists():
        raise ProfileError(f"{path}: missing; run python -m harness.model.sync")
    # the C loader when PyYAML has it: a release's facts are ~40 KB (same result as safe_load)
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


def _lookup(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


@dataclass(frozen=True)
class KeyRule:
    """One CEL rule on label keys, as data (rendered by harness.model.crd.rules)."""

    message: str
    targets: frozenset[str]
    domain: str | None = None
    allow_keys: tuple[str, ...] = ()
    allow_domain_suffixes: tuple[str, ...] = ()
    forbid_key: str | None = None


@dataclass(frozen=True)
class ListRule:
    message: str
    rule: str


@dataclass(frozen=True)
class BaseLabel:
    key: str
    value: str | None = None
    source: str | None = None     # a named fact from the cluster/nodeclass context
    when: str | None = None       # a named condition
    force: bool = False           # applied after every other input (wins over claim labels)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    raw: dict = field(repr=False, compare=False, hash=False)
    fingerprint: str = ""        # distinguishes a profile with scenario knobs from its base

    # -- core ---------------------------------------------------------------------------------
    @functools.cached_property
    def core(self) -> dict:
        return self.raw["core"]

    @functools.cached_property
    def operators(self) -> tuple[str, ...]:
        return tuple(self.core["operators"])

    @functools.cached_property
    def inclusive_bounds(self) -> bool:
        return self.core.get("boundSemantics", "inclusive") == "inclusive"

    @functools.cached_property
    def well_known_labels(self) -> frozenset[str]:
        return frozenset(self.core["wellKnownLabels"])

    @functools.cached_property
    def restricted_label_domains(self) -> tuple[str, ...]:
        return tuple(self.core["restrictedLabelDomains"])

    @functools.cached_property
    def label_domain_exceptions(self) -> tuple[str, ...]:
        return tuple(self.core.get("labelDomainExceptions") or ())

    @functools.cached_property
    def restricted_labels(self) -> frozenset[str]:
        return frozenset(self.core.get("restrictedLabels") or ()) | frozenset(
            self.provider.get("extraRestrictedLabels") or ())

    @functools.cached_property
    def well_known_values(self) -> dict[str, frozenset[str]]:
        return {k: frozenset(v) for k, v in (self.core.get("wellKnownValues") or {}).items()}

    @functools.cached_property
    def normalized_labels(self) -> dict[str, str]:
        return dict(self.core.get("normalizedLabels") or {})

    @functools.cached_property
    def normalized_label_values(self) -> dict[str, dict[str, str]]:
        return {k: dict(v) for k, v in (self.core.get("normalizedLabelValues") or {}).items()}

    @functools.cached_property
    def scheduling_simulation_keys(self) -> tuple[str, ...]:
        return tuple(self.core.get("schedulingSimulationKeys") or ())

    @property
    def node_class_label(self) -> bool:
        """Whether core's NodeClaim template labels (and so requires) `<group>/<lowercased kind>` =
        nodeClassRef.name (sigs.k8s.io/karpenter v1.1.0+ nodeclaimtemplate.go NewNodeClaimTemplate
        NodeClassLabelKey; probe core.nodeClassLabel). Core v0.36/v1.0 put only the NodePool label there, and
        their providers' NodeClaim CRDs refuse the karpenter.azure.com key."""
        return bool(self.core.get("nodeClassLabel", True))

    @property
    def min_values_policy(self) -> bool:
        """Whether core reads MIN_VALUES_POLICY (Strict/BestEffort; sigs.k8s.io/karpenter v1.6.0+
        pkg/operator/options/options.go; probe core.minValuesPolicy). Before, minValues is always strict."""
        return bool(self.core.get("minValuesPolicy", True))

    @property
    def label_resolution(self) -> str:
        return self.core.get("labelResolution", "toNodeClaim")

    @property
    def uses_restricted_node_label(self) -> bool:
        """Core before v1.9: `IsRestrictedNodeLabel` (plain suffix matching, LabelDomainExceptions) judges
        restricted keys and `Requirements.Labels()` resolves custom requirement labels (sigs.k8s.io/karpenter
        v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirements.go). v1.9 (kubernetes-sigs/karpenter#2586)
        removed both together (kubernetes-sigs/karpenter#2586 caveat, sigs.k8s.io/karpenter v1.6.2 pkg/scheduling/requirement.go), so `labelResolution` decides both."""
        return self.label_resolution == "requirementsLabels"

    # -- crd ----------------------------------------------------------------------------------
    @functools.cached_property
    def crd(self) -> dict:
        return self.raw["crd"]

    @property
    def aks_nodeclass_schema(self) -> dict | None:
        """The AKSNodeClass CRD's `spec` schema admission applies (harness.model.crd.aksnodeclass); None
        when the profile's data carries none."""
        return (self.raw.get("aksNodeClass") or {}).get("spec")

    def crd_spec_schema(self, kind: str) -> dict | None:
        """The `spec` schema of core's NodePool, NodeClaim or NodeOverlay CRD (`nodePool` / `nodeClaim` /
        `nodeOverlay` in the profile's data, derived by harness.model.sync: the storage version's, or in a with_crd
        view the view's version's), before the profile's own label rules are rendered in
        (harness.model.crd.rules.spec_schema); None for a NodeOverlay at a release without its CRD."""
        return (self.raw.get({"NodePool": "nodePool", "NodeClaim": "nodeClaim", "NodeOverlay": "nodeOverlay"}[kind])
                or {}).get("spec")

    def crd_scale_replicas_path(self, kind: str) -> str | None:
        """The CRD's scale subresource specReplicasPath (NodePool: `.spec.replicas`), or None."""
        return (self.raw.get({"NodePool": "nodePool", "NodeClaim": "nodeClaim"}[kind]) or {}).get("scaleSpecReplicasPath")

    @functools.cached_property
    def key_rules(self) -> tuple[KeyRule, ...]:
        return tuple(
            KeyRule(
                message=r["message"],
                targets=frozenset(r["targets"]),
                domain=r.get("domain"),
                allow_keys=tuple(r.get("allowKeys") or ()),
                allow_domain_suffixes=tuple(r.get("allowDomainSuffixes") or ()),
                forbid_key=r.get("forbidKey"),
            )
            for r in self.crd.get("keyRules") or ()
        )

    @functools.cached_property
    def requirement_list_rules(self) -> tuple[ListRule, ...]:
        return tuple(ListRule(r["message"], r["rule"]) for r in self.crd.get("requirementRules") or ())

    # -- provider -----------------------------------------------------------------------------
    @functools.cached_property
    def provider(self) -> dict:
        return self.raw["provider"]

    def provides(self, switch: str) -> Any:
        """A provider requirement switch, e.g. provides("mode")."""
        return (self.provider.get("requirements") or {}).get(switch)

    def provider_setting(self, *path: str) -> Any:
        """provider.<path>, or upstream.yaml's value where this profile has none (missing or null).
        Every shipped profile extends upstream, so the defaults live in the data only."""
        value = _lookup(self.provider, path)
        return value if value is not None else _lookup(raw_profile(DEFAULT_PROFILE)["provider"], path)

    @property
    def provision_modes(self) -> tuple[str, ...]:
        """The PROVISION_MODE values the release accepts (probe provider.provisionModes, its pkg/consts/consts.go);
        a release that reads none (before v0.6.2) has aksscriptless only."""
        return tuple(self.provider_setting("provisionModes") or ()) or ("aksscriptless",)

    @property
    def nodeclass_hash_version(self) -> str | None:
        """The AKSNodeClass hash version the release stamps on a NodeClaim at Create and compares at drift
        (AKSNodeClassHashVersion; probe provider.nodeClassHash.version); None where the release has no
        AKSNodeClass hash (provider v0.5-v0.6: no hash annotation, no NodeClassDrift)."""
        version = (self.provider.get("nodeClassHash") or {}).get("version")
        return str(version) if version else None

    @property
    def nodeclass_hash_ignored(self) -> frozenset[str]:
        """The AKSNodeClass spec fields the release's hash leaves out (`hash:"ignore"`; probe
        provider.nodeClassHash.ignored): spec.kubelet at v0.7.0-v0.7.4, spec.tags from v1.6.2."""
        return frozenset((self.provider.get("nodeClassHash") or {}).get("ignored") or ())

    @property
    def nodeclass_hashed_fields(self) -> frozenset[str]:
        """The AKSNodeClass spec fields the release's hash reads, so that a change of one drifts every node of the
        AKSNodeClass (NodeClassDrift): the fields of its CRD's spec less the ignored ones; none without a hash."""
        if self.nodeclass_hash_version is None:
            return frozenset()
        return frozenset(((self.aks_nodeclass_schema or {}).get("properties") or {})) - self.nodeclass_hash_ignored

    def _core_behaviour(self, name: str) -> Any:
        """core.behaviour.<name>, or upstream.yaml's where this profile has none."""
        value = (self.core.get("behaviour") or {}).get(name)
        return value if value is not None else (raw_profile(DEFAULT_PROFILE)["core"].get("behaviour") or {})[name]

    @property
    def nodepool_hash_version(self) -> str:
        """The NodePool hash version core stamps on each NodeClaim beside the template hash and compares at drift
        (NodePoolHashVersion; core-behaviour.yaml nodePoolHashVersion): v2 at core v0.36, v3 from v1.0.0."""
        return str(self._core_behaviour("nodePoolHashVersion"))

    @property
    def nodepool_hashed_fields(self) -> frozenset[str]:
        """The NodePool template's spec fields core's hash reads (core-behaviour.yaml nodePoolHashedFields; the
        template's metadata is hashed too): kubelet and no expireAfter at core v0.36 (v1beta1), expireAfter and
        terminationGracePeriod from v1.0.0."""
        return frozenset(self._core_behaviour("nodePoolHashedFields"))

    @property
    def nodepool_hash_ignored(self) -> frozenset[str]:
        """The NodePool template's spec fields core's hash leaves out (`hash:"ignore"`; core-behaviour.yaml
        nodePoolHashIgnored): requirements, and resources at core v0.36."""
        return frozenset(self._core_behaviour("nodePoolHashIgnored"))

    @functools.cached_property
    def base_labels(self) -> tuple[BaseLabel, ...]:
        return tuple(
            BaseLabel(b["key"], b.get("value"), b.get("from"), b.get("when"), bool(b.get("force")))
            for b in self.provider.get("baseLabels") or ()
        )

    def with_crd(self, version: str, rules: dict) -> "Profile":
        """The profile judging objects of another served API version: `crd` replaced by that version's
        rules, and `nodePool` / `nodeClaim` by that version's spec schemas (harness.model.crd.apiversions)."""
        return _crd_view(self, version, json.dumps(rules, sort_keys=True))

    # -- kubelet ------------------------------------------------------------------------------
    @functools.cached_property
    def kubelet_allowed_labels(self) -> frozenset[str]:
        return frozenset(self.raw["kubelet"]["allowedLabels"])

    @functools.cached_property
    def kubelet_allowed_namespaces(self) -> tuple[str, ...]:
        return tuple(self.raw["kubelet"]["allowedNamespaces"])


@functools.lru_cache(maxsize=64)
def _crd_view(base: Profile, version: str, rules_json: str) -> Profile:
    raw = dict(base.raw)
    raw["crd"] = json.loads(rules_json)
    for key in ("nodePool", "nodeClaim"):
        other = ((raw.get(key) or {}).get("versions") or {}).get(version)
        if other is not None:
            raw[key] = {"version": version, **other}
    return Profile(name=base.name, description=base.description, raw=raw,
                   fingerprint=f"{base.fingerprint}|crd:{version}")


@functools.lru_cache(maxsize=None)
def load_profile(name: str = DEFAULT_PROFILE) -> Profile:
    raw = raw_profile(name)
    return Profile(name=name, description=str(raw.get("description", "")).strip(), raw=raw)


@functools.lru_cache(maxsize=256)
def _with_knobs(name: str, knobs_json: str) -> Profile:
    raw = merge(raw_profile(name), json.loads(knobs_json))
    return Profile(name=name, description=str(raw.get("description", "")).strip(), raw=raw,
                   fingerprint=knobs_json)


def profile_with_knobs(name: str, knobs: dict | None) -> Profile:
    """A profile with a scenario's `given.knobs` merged over it (same merge rules as `extends`),
    for replaying a reported bug at the provider version that had it (the bugs are issues of
    https://github.com/Azure/karpenter-provider-azure/issues)."""
    if not knobs:
        return load_profile(name)
    return _with_knobs(name, json.dumps(knobs, sort_keys=True))
