"""Profiles: the label policy of one Karpenter core + Azure provider pairing, as data.

A profile is a YAML file under harness/data/profiles. `extends: <other>` deep-merges over another
profile: maps merge key by key, lists are replaced; `name+` appends, `name-` removes and `name!`
replaces a map wholesale, so a derived profile states only its differences (design-0006 =
before-0006 + the decisions).
Adding a profile needs no code change.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

PROFILE_DIR = Path(str(resources.files("harness") / "data" / "profiles"))
DEFAULT_PROFILE = "upstream"


class ProfileError(ValueError):
    pass


def available_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def _merge(base: Any, over: Any) -> Any:
    if not isinstance(base, dict) or not isinstance(over, dict):
        return copy.deepcopy(over)
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key.endswith("!"):
            out[key[:-1]] = copy.deepcopy(value)
        elif key.endswith("+") and isinstance(value, list):
            name = key[:-1]
            out[name] = list(out.get(name) or []) + [v for v in value if v not in (out.get(name) or [])]
        elif key.endswith("-") and isinstance(value, list):
            name = key[:-1]
            out[name] = [v for v in (out.get(name) or []) if v not in value]
        elif key.endswith("+") and isinstance(value, dict):
            name = key[:-1]
            out[name] = {**(out.get(name) or {}), **copy.deepcopy(value)}
        elif key.endswith("-") and isinstance(value, dict):
            name = key[:-1]
            out[name] = {k: v for k, v in (out.get(name) or {}).items() if k not in value}
        else:
            out[key] = _merge(out.get(key), value)
    return out


@functools.lru_cache(maxsize=None)
def raw_profile(name: str) -> dict:
    path = PROFILE_DIR / f"{name}.yaml"
    if not path.exists():
        raise ProfileError(f"unknown profile {name!r}; available: {', '.join(available_profiles())}")
    data = yaml.safe_load(path.read_text()) or {}
    parent = data.pop("extends", None)
    if parent:
        data = _merge(raw_profile(parent), data)
    data["name"] = name
    return data


@dataclass(frozen=True)
class KeyRule:
    """One CEL rule on label keys, as data (rendered by harness.model.crdrules)."""

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
    def label_resolution(self) -> str:
        return self.core.get("labelResolution", "toNodeClaim")

    # -- crd ----------------------------------------------------------------------------------
    @functools.cached_property
    def crd(self) -> dict:
        return self.raw["crd"]

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

    @functools.cached_property
    def base_labels(self) -> tuple[BaseLabel, ...]:
        return tuple(
            BaseLabel(b["key"], b.get("value"), b.get("from"), b.get("when"), bool(b.get("force")))
            for b in self.provider.get("baseLabels") or ()
        )

    # -- kubelet ------------------------------------------------------------------------------
    @functools.cached_property
    def kubelet_allowed_labels(self) -> frozenset[str]:
        return frozenset(self.raw["kubelet"]["allowedLabels"])

    @functools.cached_property
    def kubelet_allowed_namespaces(self) -> tuple[str, ...]:
        return tuple(self.raw["kubelet"]["allowedNamespaces"])


@functools.lru_cache(maxsize=None)
def load_profile(name: str = DEFAULT_PROFILE) -> Profile:
    raw = raw_profile(name)
    return Profile(name=name, description=str(raw.get("description", "")).strip(), raw=raw)


@functools.lru_cache(maxsize=256)
def _with_knobs(name: str, knobs_json: str) -> Profile:
    import json
    raw = _merge(raw_profile(name), json.loads(knobs_json))
    raw["name"] = name
    return Profile(name=name, description=str(raw.get("description", "")).strip(), raw=raw,
                   fingerprint=knobs_json)


def profile_with_knobs(name: str, knobs: dict | None) -> Profile:
    """A profile with a scenario's `given.knobs` merged over it (same merge rules as `extends`),
    for replaying a reported bug at the provider version that had it (reported-bugs.md §3)."""
    if not knobs:
        return load_profile(name)
    import json
    return _with_knobs(name, json.dumps(knobs, sort_keys=True))
