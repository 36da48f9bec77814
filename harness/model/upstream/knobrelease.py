"""Which provider release a scenario's `given.knobs` replays: the release whose own derived facts
(harness/data/releases/<profile>/) hold every fact the knobs set.

A knob replays a reported bug at the release that had it by editing the profile's facts by hand; the
real engine cannot edit a controller, so it runs that release's own. Each knob is one fact: a value
(`path: v`, `path!: v`) the release must hold as is, or list items (`path+`, `path-`) it must hold or
lack, as profile.merge reads them. Of the releases holding every fact, the newest not newer than the
scenario's profile answers (a knob goes back in time: a value that came back later, as
nvmeOnlyExcludedWithoutSIG false from v1.12.0 on, is not the bug's release), else the oldest newer one.
None holds them: no release had that combination, and the reason names the facts no release holds.
A release whose CRDs do not serve the API versions the scenario's manifests write cannot take it.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from harness.model.upstream import skutables
from harness.model.upstream.profile import merge, raw_profile
from harness.model.upstream.releaseindex import parse, release_profiles
from harness.model.upstream.releases import differences_raw, modeled

# a knob fact read from a release's SKU table rather than from its provider-facts: the SKU names the
# knob calls unknown are absent from the release's known-SKU list (a release with no list knows no
# "unknown" SKU: harness.model.azure.staticpart)
_TABLE_FACTS = {("provider", "unknownSKUs")}
# what makes two items of a list fact the same item when a knob removes one (`path-`): a release whose
# rule for the same domain and targets allows other keys, or whose label of the same key has another
# value, still has it (an added item, `path+`, must be there as written)
_IDENTITY = {("crd", "keyRules"): ("domain", "forbidKey", "targets"), ("provider", "baseLabels"): ("key",)}


@dataclass(frozen=True)
class KnobFact:
    """One fact a knob sets: `op` "=" (the value as is), "+" (the list holds these items) or "-" (it
    lacks them)."""
    path: tuple[str, ...]
    op: str
    value: Any

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def text(self) -> str:
        """`provider.requirements.ephemeralFormat=float`, `core.wellKnownLabels+[karpenter.azure.com/zone]`."""
        if self.op == "=":
            return f"{self.name}={_short(self.value)}"
        fields = _IDENTITY.get(self.path)
        items = [{f: x[f] for f in fields if x.get(f) is not None} if fields and isinstance(x, dict) else x
                 for x in self.value]
        written = " (as the knob writes them)" if fields and self.op == "+" else ""
        return f"{self.name}{self.op}{_short(items, 120)}{written}"

    def holds(self, raw: dict) -> bool:
        """Whether a profile's raw facts hold this fact."""
        if self.path in _TABLE_FACTS:
            known = skutables.known_skus(str(raw.get("derived") or "."))
            return known is not None and not (set(self.value or ()) & known)
        have = _at(raw, self.path)
        if self.op == "=":
            return _canon(have) == _canon(self.value)
        key = _key if self.op == "+" else functools.partial(_identity, _IDENTITY.get(self.path))
        if not isinstance(have, list):      # the release has no such list (a null zonalRegions: no static list)
            return False
        items = {key(x) for x in have}
        wanted = {key(x) for x in self.value or ()}
        return wanted <= items if self.op == "+" else not (wanted & items)


def knob_facts(knobs: dict, prefix: tuple[str, ...] = ()) -> list[KnobFact]:
    """The facts a `given.knobs` map sets, in its order."""
    out: list[KnobFact] = []
    for key, value in (knobs or {}).items():
        op = key[-1] if key[-1:] in ("!", "+", "-") else ""
        name = key[:-1] if op else key
        if op in ("+", "-") and isinstance(value, list):
            if op == "-":         # an item the knob removes and adds back changed: its `+` says how
                ident = functools.partial(_identity, _IDENTITY.get(prefix + (name,)))
                added = {ident(x) for x in knobs.get(name + "+") or ()}
                value = [x for x in value if ident(x) not in added]
            if value:
                out.append(KnobFact(prefix + (name,), op, value))
        elif op in ("+", "-") and isinstance(value, dict):      # map entries added or removed
            out += [KnobFact(prefix + (name, k), "=", v if op == "+" else None) for k, v in value.items()]
        elif op == "" and isinstance(value, dict) and value:
            out += knob_facts(value, prefix + (name,))
        else:
            out.append(KnobFact(prefix + (name,), "=", value))
    return out


@dataclass(frozen=True)
class KnobRelease:
    """What answers a scenario's knobs under `profile`: `release` (a release profile) or None, with
    `reason` saying which and why (`notice`: the same for a simulated run), `facts` the knobs' facts and
    `unmatched` the facts no release holds (release None). `differs`, the other facts where the release
    differs from the profile with the knobs, and `detail` (`reason` with them) are worked out on use: the
    SKU tables they compare are read only for a real run."""
    profile: str
    facts: tuple[KnobFact, ...]
    release: str | None
    reason: str
    notice: str
    covers: tuple[str, ...] = ()
    core: str = ""
    unmatched: tuple[str, ...] = ()
    knobs_json: str = field(default="{}", repr=False)

    @property
    def differs(self) -> tuple[str, ...]:
        return _differs(self.profile, self.knobs_json, self.release) if self.release else ()

    @property
    def detail(self) -> str:
        d = self.differs
        return self.reason + (f"; {len(d)} other fact(s) differ from {self.profile}: {_list(d)}" if d else "")

    def to_json(self) -> dict:
        return {"profile": self.profile, "facts": [f.text() for f in self.facts], "release": self.release,
                "covers": list(self.covers), "core": self.core, "reason": self.detail,
                "unmatched": list(self.unmatched), "differs": list(self.differs)}


@functools.lru_cache(maxsize=128)
def _differs(profile: str, knobs_json: str, release: str) -> tuple[str, ...]:
    """The facts other than the knobs' where `release` differs from `profile` with the knobs."""
    knobs = json.loads(knobs_json)
    skip = {".".join(f.path) for f in knob_facts(knobs)}
    return tuple(d for d in differences_raw(merge(raw_profile(profile), knobs), raw_profile(release))
                 if not any(d.split(":", 1)[0] == p or d.startswith(p + ".") for p in skip))


def knob_release(profile: str, knobs: dict, api_versions=()) -> KnobRelease:
    """The release replaying `knobs` over `profile` (see the module docstring). `api_versions`: the
    (kind, apiVersion) pairs the scenario's manifests write; a release whose CRDs do not serve one
    cannot take the scenario as written (provider v0.7.x serves AKSNodeClass v1alpha2 only)."""
    return _knob_release(profile, json.dumps(knobs, sort_keys=True), tuple(sorted(set(api_versions))))


def unserved(raw: dict, api_versions) -> list[str]:
    """The `kind apiVersion` pairs of `api_versions` a profile's CRDs do not serve (kinds it has no
    CRD for are not its to judge)."""
    apis = raw.get("apis") or {}
    out = []
    for kind, api_version in api_versions:
        crd = apis.get(kind)
        group, _, version = str(api_version).rpartition("/")
        if crd and group == crd.get("group") and version not in (crd.get("served") or ()):
            out.append(f"{kind} {api_version}")
    return out


@functools.lru_cache(maxsize=128)
def _knob_release(profile: str, knobs_json: str, api_versions: tuple = ()) -> KnobRelease:
    knobs = json.loads(knobs_json)
    facts = tuple(knob_facts(knobs))
    stated = "given.knobs " + ", ".join(f.text() for f in facts)
    names = release_profiles()
    raws = {n: raw_profile(n) for n in names}
    holding = [n for n in names if all(f.holds(raws[n]) for f in facts)]
    taking = [n for n in holding if not unserved(raws[n], api_versions)]
    if holding and not taking:          # the facts are a release's, the manifests are of a later API
        chosen, _ = _choose(holding, profile)
        text = (f"{stated} is provider {chosen}'s, but its CRDs do not serve "
                f"{', '.join(unserved(raws[chosen], api_versions))}, which the scenario's manifests write")
        return KnobRelease(profile, facts, None, f"{text}: write them at that release's API version to replay it "
                           "on its controller", f"{text}: the real engine skips it", unmatched=("apis",))
    holding = taking
    if not holding:
        lacking = [f for f in facts if not any(f.holds(raws[n]) for n in names)]
        span = f"{_covers(names[0])[0]}-{_covers(names[-1])[-1]}" if names else "none"
        if len(lacking) == len(facts):
            why = f"holds {'it' if len(facts) == 1 else 'any of them'}"
        elif lacking:
            why = "holds " + ", ".join(f.text() for f in lacking)
        else:       # each holds somewhere, never all at once
            why = "holds them together (" + "; ".join(
                f"{f.name} only {', '.join(n for n in names if f.holds(raws[n]))}" for f in facts) + ")"
        text = f"{stated}: no provider release the harness has ({span}) {why}"
        return KnobRelease(profile, facts, None,
                           f"{text}, so no release's controller replays it (a release before the oldest, or a "
                           "hand-made combination)", f"{text}: a hand-made combination the real engine skips",
                           unmatched=tuple(f.name for f in (lacking or facts)))
    chosen, before = _choose(holding, profile)
    base = modeled(profile)
    covers = _covers(chosen)
    core = str(raw_profile(chosen).get("core", {}).get("version") or "")
    where = (f"the newest release at or before {profile}'s ({base.get('release')}) with them" if before else
             f"no release at or before {profile}'s ({base.get('release')}) has them: the oldest after it")
    span = covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"
    what = f"{stated} is provider {span}'s (core {core}; {where})"
    return KnobRelease(profile, facts, chosen, f"{what}: run on {chosen}'s controller",
                       f"{what}: the real engine runs {chosen}'s controller", tuple(covers), core,
                       knobs_json=knobs_json)


def _choose(holding: list[str], profile: str) -> tuple[str, bool]:
    """The newest of `holding` not newer than `profile`'s release (True), else the oldest (False)."""
    own = parse(modeled(profile).get("release") or "") or (999, 0, 0)
    before = [n for n in holding if parse(_covers(n)[0]) <= own]
    return (before[-1], True) if before else (holding[0], False)


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _covers(name: str) -> list[str]:
    return list(modeled(name).get("covers") or [name])


# which differing facts a one-line reason names first: what decides provisioning before the CRD schemas
_FIRST = ("provider.", "core.", "crd.", "known SKUs", "supported GPU", "restricted SKUs")


def _list(items: tuple[str, ...], most: int = 4) -> str:
    rank = lambda i: next((n for n, p in enumerate(_FIRST) if i.startswith(p)), len(_FIRST))  # noqa: E731
    shown = [i.split(":", 1)[0] for i in sorted(items, key=rank)[:most]]
    return ", ".join(shown) + (f", ... (+{len(items) - most})" if len(items) > most else "")


def _short(value: Any, most: int = 60) -> str:
    text = value if isinstance(value, str) and value else json.dumps(value, separators=(",", ":"))
    return text if len(text) <= most else text[:most - 3] + "..."


def _canon(value: Any) -> Any:
    """A value compared as data: lists of plain items as sets (their order is no fact), maps by key."""
    if isinstance(value, dict):
        return {k: _canon(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_key(x) for x in value))
    return value


def _identity(fields: tuple[str, ...] | None, item: Any) -> str:
    if fields is None or not isinstance(item, dict):
        return _key(item)
    return _key({f: item.get(f) for f in fields})


def _key(item: Any) -> str:
    return json.dumps(_canon(item), sort_keys=True)


__all__ = ["KnobFact", "KnobRelease", "knob_facts", "knob_release", "unserved"]
