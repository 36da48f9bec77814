"""Karpenter core's behaviour at the core version a profile pins, as the loop reads it.

harness/data/core-behaviour.yaml names each behaviour that changed between the oldest modeled core and
v1.14.0; the value per provider release is derived from that release's core source
(harness.model.coresync) into `core.behaviour` of its facts. `CoreBehaviour.of(profile)[name]` gives the loop
a switch's value, and `notices(touched)` the behaviours a run answered with
v1.14.0's although the profile's core differs (a switch known but not implemented, a core older than the
oldest modeled, an option that core does not have), by name, for the scopes the run touched.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from harness.model.upstream.corespec import CORE_FILE, core_spec
from harness.model.upstream.profile import DEFAULT_PROFILE, Profile, raw_profile

# what a run must have done for a switch of that scope to be able to change its outcome (core-behaviour.yaml
# `scopes`: read from the run's objects by harness/loop/corescope.py, or touched by the controller that meets it)
SCOPES: dict[str, str] = dict(core_spec()["scopes"])


@functools.lru_cache(maxsize=None)
def _switches() -> tuple[dict, ...]:
    return tuple(core_spec()["switches"])


@functools.lru_cache(maxsize=None)
def switch_names() -> frozenset[str]:
    """Every switch name of core-behaviour.yaml."""
    return frozenset(s["name"] for s in _switches())


def _version(text: str) -> tuple[int, int, int] | None:
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


@functools.lru_cache(maxsize=None)
def newest_values() -> dict[str, Any]:
    """The switches' values at the newest core (the `upstream` profile's derived facts)."""
    return dict((raw_profile(DEFAULT_PROFILE).get("core") or {}).get("behaviour") or {})


@functools.lru_cache(maxsize=None)
def release_values(core_version: str) -> tuple[str, dict[str, Any]] | None:
    """(a release profile, its switch values) for a release that pins `core_version`, or None."""
    from harness.model.upstream.releaseindex import release_profiles
    for name in release_profiles():
        core = raw_profile(name).get("core") or {}
        if str(core.get("version") or "") == core_version and core.get("behaviour"):
            return name, dict(core["behaviour"])
    return None


@functools.lru_cache(maxsize=None)
def fewest_instance_types() -> int:
    """The smallest maxInstanceTypes of any core: a NodeClaim with no more types than this keeps them all at
    every release, so the loop reads the switch only for one with more."""
    switch = next(s for s in _switches() if s["name"] == "maxInstanceTypes")
    return min(int(v) for v in switch["says"])


class SwitchValues(dict):
    """A profile's switch values that remember which of them, differing from the newest core's, the loop
    read: all of them (`consulted`, for harness/why/deciding.py's counterfactual runs) and those read
    since the last decision was recorded (`recent`, harness/loop/decisions.py). One dict lookup and, for a
    differing switch only, two dict stores per read."""

    __slots__ = ("differing", "recent", "consulted")

    def __init__(self, values: dict, newest: dict):
        super().__init__(values)
        self.differing = frozenset(k for k, v in values.items() if k in newest and newest[k] != v)
        self.recent: dict[str, None] = {}
        self.consulted: dict[str, None] = {}

    def __getitem__(self, key: str):
        if key in self.differing:
            self.recent[key] = None
            self.consulted[key] = None
        return dict.__getitem__(self, key)


@dataclass(frozen=True)
class CoreBehaviour:
    """The core behaviour switches of one profile (values it lacks are the newest core's)."""

    version: str
    values: dict = field(repr=False, compare=False, hash=False)
    profile: str = ""
    # a label policy (before-0006) names a core but carries upstream's behaviour: that core's release values
    policy_reference: tuple[str, dict] | None = field(default=None, repr=False, compare=False, hash=False)

    @staticmethod
    def of(profile: Profile) -> "CoreBehaviour":
        core = profile.raw.get("core") or {}
        newest = newest_values()
        values = SwitchValues({**newest, **(core.get("behaviour") or {})}, newest)
        version = str(core.get("version") or core_spec()["newest"])
        reference = None
        if (profile.raw.get("release") or {}).get("policy"):
            reference = release_values(version.split(" ", 1)[0])
        return CoreBehaviour(version, values, profile.name, reference)

    # -- which differing switches the loop read ------------------------------------------------------
    def take_reads(self) -> tuple[str, ...]:
        """The differing switches read since the last call (each decision names those it read)."""
        recent = getattr(self.values, "recent", None)
        if not recent:
            return ()
        out = tuple(recent)
        recent.clear()
        return out

    def consulted(self) -> tuple[str, ...]:
        """Every differing switch the run read, in first-read order."""
        return tuple(getattr(self.values, "consulted", ()))

    # -- a switch's value --------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Any:
        """The value of the switch `name` of core-behaviour.yaml at this core, read where the loop decides
        (`state.core["driftEmptyCandidates"]`); a name the file lacks is a KeyError that says so
        (tests/model/upstream/test_corebehaviour.py also holds every name read in harness/ to the file)."""
        if name not in switch_names():
            raise KeyError(f"{name!r} is not a switch of harness/data/core-behaviour.yaml")
        return self.values[name]

    # -- what a run says ---------------------------------------------------------------------------------
    @property
    def modeled(self) -> bool:
        v, oldest = _version(self.version), _version(core_spec()["oldestModeled"])
        return v is not None and oldest is not None and v >= oldest

    def differs(self) -> list[dict]:
        """The switches whose value at this core is not the newest core's."""
        newest = newest_values()
        return [s for s in _switches() if s["name"] in newest and self.values.get(s["name"]) != newest[s["name"]]]

    def notices(self, touched: set[str]) -> list[str]:
        """What the run answered with another core's behaviour, by name, for the scopes it touched."""
        version = self.version.split(" ", 1)[0]
        newest = core_spec()["newest"]
        out = []
        if not self.modeled:
            out.append(f"core {version} is older than the oldest core the loop models "
                       f"({core_spec()['oldestModeled']}): provisioning, disruption and termination are modeled as "
                       f"{newest} (with the {newest} API) except the implemented switches derived for {version}; "
                       "answer with --engine real")
        if self.policy_reference is not None:
            release, ref = self.policy_reference
            for s in _switches():
                if s["name"] in ref and ref[s["name"]] != self.values.get(s["name"]) and set(s["scope"]) & touched:
                    out.append(f"{self.profile} is a label policy naming core {version}, but its core behaviour is "
                               f"{newest}'s: {s['name']} differs at core {version} (changed in {s['since']}, "
                               f"kubernetes-sigs/karpenter#{s['pr']}); run profile {release} for that core's behaviour")
        for s in self.differs():
            if not set(s["scope"]) & touched:
                continue
            if not s.get("implemented"):
                how = s.get("modeledAs") or (f"{CORE_FILE} says not how: `python -m harness.model.coresync` names "
                                             "what the entry lacks")
                out.append(f"core {version}: {s['name']} is modeled as {newest} ({how}; changed in "
                           f"{s['since']}, kubernetes-sigs/karpenter#{s['pr']}); answer with --engine real")
            elif s.get("option"):
                out.append(f"core {version} has no {s['option']} option (added in {s['since']}, "
                           f"kubernetes-sigs/karpenter#{s['pr']}): the setting is not applied")
        return out
