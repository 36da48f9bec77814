"""Which release gave a profile its value of one behaviour fact, and which later release behaves otherwise, as
data and as one sentence: "core v1.6.1: Drift skips empty candidates, leaving them to Emptiness
(driftEmptyCandidates, #2180; v1.6.2: Drift tries empty candidates first, #2459)".

A fact is a core switch (harness/data/core-behaviour.yaml, `core.behaviour.<name>`, values as
harness.model.upstream.corebehaviour reads them; PRs are kubernetes-sigs/karpenter's, from the switch's `pr`, `backports` and
`introducedBy`) or a provider probe (harness/data/release-probes.yaml `fact`, values from the profile; PRs are
Azure/karpenter-provider-azure's, from the commit subjects harness/data/releases/index.yaml attributes the change
to; a `module: core` probe is attributed to the provider's go.mod bumps there, so it is a provider fact too). What
each value means is the data's `says` (the rule for a probe value without one is in release-probes.yaml's header).
Read by the counterfactual that names the fact which decided a run (issue 63, "The release that decided").
"""
from __future__ import annotations

import copy
import difflib
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from harness.model.upstream.corebehaviour import CoreBehaviour
from harness.model.upstream.corespec import core_spec
from harness.model.upstream.profile import DEFAULT_PROFILE, ProfileError, load_profile, raw_profile
from harness.model.upstream.releaseindex import index, parse, release_profiles
from harness.model.upstream.releases import modeled

CORE_PREFIX = "core.behaviour."
_PR = re.compile(r"\(#(\d+)\)")
_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")


class FactError(ValueError):
    """A fact that is neither a core switch nor a provider probe."""


@dataclass(frozen=True)
class FactChange:
    fact: str                   # dotted: core.behaviour.driftEmptyCandidates, provider.requirements.mode
    name: str                   # the switch's name, or the fact
    kind: str                   # core | provider
    profile: str                # the profile asked
    version: str                # core facts: its core version; provider facts: its provider release
    value: Any = field(hash=False)      # a copy of the profile's (a list or map for some provider facts)
    says: str = ""
    pr: int | None = None       # the PR that gave `value` (None: the oldest behaviour, or no single PR)
    next_release: str | None = None     # the first release profile after this one whose value differs
    next_core: str | None = None        # next_release's core version
    next_value: Any = field(default=None, hash=False)
    next_says: str | None = None
    next_pr: int | None = None
    next_tag: str | None = None     # the first provider tag next_release covers (v1.4.0 for profile v1.4.1)
    next_span: str | None = None    # the provider tags next_release covers: v1.4.0-v1.4.1
    newest: str = ""                # the newest core (core facts) or provider release (provider facts)

    def sentence(self) -> str:
        """`core v1.6.1: <says> (<name>, #<pr>; <next>: <next_says>, #<next_pr>)`, a `#` left out where there is no
        PR. <next> is, for a core fact, the next release's core version, as `provider v1.5.0-v1.5.1, core v1.5.0`
        unless that release is one tag named as its core; for a provider fact, the first tag the next release covers.
        With no later release that differs: `(...; unchanged through the newest, v1.14.0)`, or `(...; the newest)`.
        A list-valued provider fact's tail names what the next release adds and drops."""
        head = f"{self.kind} {self.version}: {self.says} ({self.name}{_ref(self.pr)}; "
        if self.next_release is None:
            if self.version == self.newest:
                return head + "the newest)"
            return head + f"unchanged through the newest, {self.newest})"
        if self.kind == "core":
            # the profile's core is its newest tag's pin: named alone only where that is the one tag it covers
            where = str(self.next_core)
            if self.next_span != where:
                where = f"provider {self.next_span}, core {where}"
        else:
            where = str(self.next_tag or self.next_release)
        what = self.next_says
        if isinstance(self.value, list) and isinstance(self.next_value, list):
            what = _list_change(self.value, self.next_value)
        return head + f"{where}: {what}{_ref(self.next_pr)})"


def _ref(pr: int | None) -> str:
    return f", #{pr}" if pr is not None else ""


def _list_change(old: list, new: list) -> str:
    added = [_item(x) for x in new if x not in old]
    dropped = [_item(x) for x in old if x not in new]
    parts = ([f"adds {', '.join(added)}"] if added else []) + ([f"drops {', '.join(dropped)}"] if dropped else [])
    return "; ".join(parts) if parts else "reorders them"


# -- the facts ---------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _switches() -> dict[str, dict]:
    return {s["name"]: s for s in core_spec()["switches"]}


@functools.lru_cache(maxsize=1)
def _probes() -> dict[str, dict]:
    """The provider probes (release-probes.yaml), by fact, in file order."""
    from harness.model.upstream.releasesync import probes_spec     # imported here: releasesync is the sync's, not a run's
    return {p["fact"]: p for p in probes_spec() if not p["fact"].startswith(CORE_PREFIX)}


def _normalize(fact: str) -> str:
    if fact in _probes() or fact.startswith(CORE_PREFIX) and fact[len(CORE_PREFIX):] in _switches():
        return fact
    if fact in _switches():
        return CORE_PREFIX + fact
    known = [CORE_PREFIX + n for n in _switches()] + list(_probes())
    close = difflib.get_close_matches(fact, known + list(_switches()), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise FactError(f"unknown fact {fact!r}: neither a core switch (harness/data/core-behaviour.yaml) nor a provider "
                    f"probe (harness/data/release-probes.yaml){hint}")


def _lookup(raw: dict, fact: str) -> Any:
    data: Any = raw
    for part in fact.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


@functools.lru_cache(maxsize=None)
def _core_values(profile: str) -> dict[str, Any]:
    """The switch values the loop reads at `profile` (values it lacks are the newest core's)."""
    return dict(CoreBehaviour.of(load_profile(profile)).values)


def fact_value(profile: str, fact: str) -> Any:
    """The fact's value under `profile`: a core switch as the loop reads it (values a profile lacks are the newest
    core's), a probe fact from the profile."""
    if fact.startswith(CORE_PREFIX):
        return _core_values(profile).get(fact[len(CORE_PREFIX):])
    return _lookup(raw_profile(profile), fact)


def _core_version(profile: str) -> str:
    raw = raw_profile(profile)
    if (raw.get("release") or {}).get("policy"):
        # a label policy names an older core but extends upstream: its core behaviour is the newest core's
        # (docs/core-releases.md, "A label policy ...")
        return str(core_spec()["newest"])
    return str((raw.get("core") or {}).get("version") or core_spec()["newest"]).split(" ", 1)[0]


def _position(profile: str) -> tuple[int, str]:
    """(index in release order, the release profile whose facts `profile` holds or is based on)."""
    names = release_profiles()
    raw = raw_profile(profile)
    for candidate in (profile, raw.get("answeredBy"), (raw.get("release") or {}).get("provider")):
        if candidate and candidate in names:
            return names.index(candidate), str(candidate)
    if profile == DEFAULT_PROFILE:
        return len(names) - 1, names[-1]
    version = parse(str((raw.get("release") or {}).get("provider") or ""))
    if version is not None:       # a label policy based on a release between profiles: the one before it
        before = [i for i, n in enumerate(names) if (parse(n) or (0, 0, 0)) <= version]
        if before:
            return before[-1], names[before[-1]]
    raise ProfileError(f"profile {profile!r} is not placed among the release profiles")


def _provider_version(profile: str) -> str:
    m = modeled(profile)
    if m.get("policy"):
        return f"{profile} (label policy)"
    if m.get("answeredBy") and m.get("exact"):
        return profile          # a tag the answering profile covers: the customer's own release
    return m["release"] or profile


# -- what a value means --------------------------------------------------------------------------------------
def _item(x: Any) -> str:
    if isinstance(x, dict) and "key" in x:
        text = str(x["key"]) + (f"={x['value']}" if "value" in x else f"=<{x['from']}>" if "from" in x else "")
        return text + (f" if {x['when']}" if x.get("when") else "") + (" (forced)" if x.get("force") else "")
    if isinstance(x, dict):
        return ", ".join(f"{k}: {_item(v)}" for k, v in x.items())
    if isinstance(x, str):
        return x if x else '""'
    return str(x)


LIST_CHARS = 160     # a long list (30 zonal regions, 11 base labels) is cut here; a sentence's tail names the change


def _items(values: list) -> str:
    shown: list[str] = []
    for x in values:
        text = _item(x)
        if shown and len(", ".join(shown + [text])) > LIST_CHARS:
            return f"{', '.join(shown)} and {len(values) - len(shown)} more ({len(values)} in all)"
        shown.append(text)
    return ", ".join(shown)


def _has(says: dict, value: Any) -> bool:
    # True == 1 in a dict: a boolean is matched only by a boolean key, a number only by a number
    return any(k == value and type(k) is type(value) for k in says)


def says(fact: str, value: Any) -> str:
    """What a fact's value means: the data's `says` entry, else (a provider probe) the rule of
    release-probes.yaml's header: a boolean reads `about` or "not: " + `about`, an empty list or map
    "not: " + `about`, a list or map `about` + ": " + its items (a long list cut at LIST_CHARS), anything else
    `about` + ": " + the value."""
    fact = _normalize(fact)
    spec = _switches()[fact[len(CORE_PREFIX):]] if fact.startswith(CORE_PREFIX) else _probes()[fact]
    table = spec.get("says") or {}
    if not isinstance(value, (list, dict)) and _has(table, value):
        return str(next(v for k, v in table.items() if k == value and type(k) is type(value)))
    about = " ".join(str(spec.get("about") or fact).split())
    if isinstance(value, bool):
        return about if value else f"not: {about}"
    if isinstance(value, (list, dict)) and not value:
        return f"not: {about}"
    if isinstance(value, list):
        return f"{about}: {_items(value)}"
    if isinstance(value, dict):
        return f"{about}: {_item(value)}"
    return f"{about}: {_item(value) if value is not None else 'none'}"


# -- which PR gave a value -----------------------------------------------------------------------------------
def _core_pr(switch: dict, value: Any, core: str) -> int | None:
    """kubernetes-sigs/karpenter's PR that gave a switch `value` at core version `core`: introducedBy's for its value
    (at or after its `since`); for the newest core's value, the backport's when `core` is on that backport's release
    line at or after its tag, else the switch's `pr` when `core` is at or after `since` (or a pseudo-version at the
    switch's own commit). None otherwise: the oldest behaviour, or a core older than the change that happens to
    derive the same value (core v0.36.1, before the oldest modeled core)."""
    v = _core_tuple(core)
    intro = switch.get("introducedBy") or {}
    if intro and value == intro.get("value") and (v is None or v >= (_core_tuple(str(intro["since"])) or v)):
        return int(intro["pr"])
    if value != _core_values(DEFAULT_PROFILE).get(switch["name"]):
        return None
    if v is None:
        return int(switch["pr"])
    for b in switch.get("backports") or ():
        t = _core_tuple(str(b["tag"]))
        if t is not None and v[:2] == t[:2] and v >= t:
            return int(b["pr"])
    rev = re.search(r"-([0-9a-f]{12})$", core)
    commit = str(switch.get("commit") or "")
    if v >= (_core_tuple(str(switch["since"])) or v) or rev and commit and (
            rev.group(1).startswith(commit[:9]) or commit.startswith(rev.group(1)[:9])):
        return int(switch["pr"])
    return None


def _core_tuple(text: str) -> tuple[int, int, int] | None:
    m = _VERSION.match(text)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _provider_pr(fact: str, release: str) -> int | None:
    """The provider PR index.yaml attributes `fact`'s change at release profile `release` to: the last commit of
    the change (after which the value is the release's), its last "(#NNN)" (a cherry-pick's subject ends with its
    own PR); None when the change names no single commit (`narrowed: false`, or none)."""
    entry = (index().get("profiles") or {}).get(release) or {}
    for change in entry.get("changes") or ():
        f = str(change.get("fact") or "")
        if not (f == fact or fact.startswith(f + ".") or f.startswith(fact + ".")):
            continue
        commits = change.get("commits") or []
        if change.get("narrowed") is False or not commits:
            return None
        prs = _PR.findall(str(commits[-1].get("subject") or ""))
        return int(prs[-1]) if prs else None
    return None


# -- the API --------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def fact_change(profile: str, fact: str) -> FactChange:
    """`fact` (dotted, or a bare switch name) at `profile` (a release profile, a provider version, `upstream` or a
    label policy): its value, what it means, the PR that gave it, and the first later release profile whose value
    differs, with the same for that release. A provider version is placed at the profile that answers it; a label
    policy at the release it names (`release.provider`) for provider facts and at the newest for core facts."""
    fact = _normalize(fact)
    names = release_profiles()
    i, base = _position(profile)
    value = fact_value(profile, fact)
    core = fact.startswith(CORE_PREFIX)
    if core and (raw_profile(profile).get("release") or {}).get("policy"):
        i = len(names) - 1      # a label policy's core behaviour is the newest core's (see _core_version)
    later = next((n for n in names[i + 1:] if fact_value(n, fact) != value), None)
    tag = span = None
    if later is not None:
        covers = [str(c) for c in ((index().get("profiles") or {}).get(later) or {}).get("covers") or [later]]
        tag, span = covers[0], covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"
    if core:
        switch = _switches()[fact[len(CORE_PREFIX):]]
        version = _core_version(profile)
        pr = _core_pr(switch, value, version)
        next_core = _core_version(later) if later else None
        next_pr = _core_pr(switch, fact_value(later, fact), next_core) if later and next_core else None
        newest = _core_version(names[-1])
    else:
        version = _provider_version(profile)
        # where this value arrived: the earliest release of the run of equal values ending at `base`
        pr = None
        if fact_value(base, fact) == value:
            j = i
            while j > 0 and fact_value(names[j - 1], fact) == value:
                j -= 1
            pr = _provider_pr(fact, names[j]) if j > 0 else None
        next_core = _core_version(later) if later else None
        next_pr = _provider_pr(fact, later) if later else None
        newest = names[-1]
    next_value = fact_value(later, fact) if later else None
    return FactChange(
        fact=fact, name=fact[len(CORE_PREFIX):] if core else fact, kind="core" if core else "provider",
        profile=profile, version=version, value=copy.deepcopy(value), says=says(fact, value), pr=pr,
        next_release=later, next_core=next_core, next_value=copy.deepcopy(next_value),
        next_says=says(fact, next_value) if later else None, next_pr=next_pr, next_tag=tag, next_span=span,
        newest=newest)


def all_facts() -> list[str]:
    """Every fact this module answers for: the core switches (file order), then the provider probes."""
    return [CORE_PREFIX + n for n in _switches()] + list(_probes())


def differing_facts(profile: str) -> list[str]:
    """The facts (core switches, then provider probes, as dotted paths) whose value at `profile` is not the
    newest release's (the `upstream` profile's)."""
    return [f for f in all_facts() if fact_value(profile, f) != fact_value(DEFAULT_PROFILE, f)]


__all__ = ["FactChange", "FactError", "fact_change", "differing_facts", "all_facts", "says"]
