"""The provider releases the harness has a profile for, and which of them answers for a version asked.

`python -m harness.model.sync --provider-git DIR --releases all` (harness.model.upstream.releasesync) writes one
profile per release line (a patch gets its own where its facts differ) and harness/data/releases/index.yaml:
what each profile covers, the sigs.k8s.io/karpenter version it builds with, and what changed from the
profile before it with the upstream commits. This module reads that index:

  resolve("v1.6.3")   the profile covering that tag (v1.6.4 covers v1.6.3-v1.6.4): exact, no notice;
  resolve("v1.8.1")   no release v1.8.1: the nearest profile at or before it (v1.7.2), with a loud notice
                      naming the nearest after it (v1.10.2) and the facts that differ between the two;
  resolve("before-0006")  a profile file of that name (label policies and `upstream`, the newest's alias).
  expand(["all-releases"])  every release profile, oldest first.

`modeled(profile)` is what a result says it modeled: the profile, the provider release whose facts it
holds, the tags those facts cover and the core version.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness.model.upstream.profile import (DEFAULT_PROFILE, PROFILE_DIR, Profile, ProfileError, raw_profile,
                                   unknown_profile_text)
from harness.model.upstream.releaseindex import covered_tags, index, neighbours, parse, release_profiles

ALL_RELEASES = "all-releases"


def policy_profiles() -> list[str]:
    """The profiles that are not one release: label policies and `upstream` (the newest's alias)."""
    releases = set(release_profiles())
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml") if p.stem not in releases)


@dataclass(frozen=True)
class Resolution:
    requested: str
    profile: str                 # the profile that answers
    exact: bool                  # the profile is the one asked, or covers the release asked
    notice: str | None = None    # what may differ, when not exact
    between: tuple[str, ...] = ()


def resolve(name: str) -> Resolution:
    """The profile answering for `name`: a profile, a release tag a profile covers, or (with a notice)
    the nearest release profile to a version the harness has none for."""
    if (PROFILE_DIR / f"{name}.yaml").exists():
        return Resolution(name, name, True)
    version = parse(name)
    if version is None or not covered_tags():
        raise ProfileError(unknown_text(name))
    tag = "v" + ".".join(map(str, version))
    exact, low, high = neighbours(version)
    if exact is not None:
        return Resolution(name, exact[2], True)
    chosen = low or high
    assert chosen is not None
    if low is not None and high is not None:
        diffs = _with_commits(differences(low[2], high[2]), low[2], high[2])
        where = (f"no profile for provider {tag}; answering with {chosen[2]} (the nearest release before it, "
                 f"{low[1]}); the nearest after it is {high[1]} (profile {high[2]})")
        if diffs:
            body = "; facts that differ between them, any of which may hold at " + tag + ":\n" + "\n".join(
                f"  - {d}" for d in diffs)
        else:
            body = "; the two derive the same facts."
        return Resolution(name, chosen[2], False, where + body, (low[2], high[2]))
    if low is not None:
        text = (f"no profile for provider {tag}: it is newer than every release the harness has; answering with "
                f"{low[2]} (covers {low[1]}). Facts changed since are not modeled; regenerate with "
                "`python -m harness.model.sync --provider-git DIR --releases all`.")
        return Resolution(name, low[2], False, text, (low[2],))
    text = (f"no profile for provider {tag}: it is older than every release the harness has; answering with "
            f"{high[2]} (the oldest, covers {high[1]}), which may differ in anything.")
    return Resolution(name, high[2], False, text, (high[2],))


def fact_spans(fact: str) -> list[tuple[Any, str, str]]:
    """(value, first tag, last tag) of each run of release profiles holding one value of the dotted `fact`
    (provider.drift.imageReason: ImageVersionDrift v0.5.0-v0.7.5, ImageDrift v1.4.0-v1.14.2), oldest first."""
    out: list[tuple[Any, str, str]] = []
    for name in release_profiles():
        value: Any = raw_profile(name)
        for part in fact.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        covers = (index().get("profiles") or {}).get(name, {}).get("covers") or [name]
        if out and out[-1][0] == value:
            out[-1] = (value, out[-1][1], str(covers[-1]))
        else:
            out.append((value, str(covers[0]), str(covers[-1])))
    return out


def _with_commits(lines: list[str], low: str, high: str) -> list[str]:
    """Each difference line with the upstream commits the index attributes it to (the changes of every
    profile after `low` up to `high`)."""
    names = release_profiles()
    if low not in names or high not in names:
        return lines
    commits: dict[str, list[str]] = {}
    for name in names[names.index(low) + 1:names.index(high) + 1]:
        for change in (index()["profiles"][name].get("changes") or ()):
            for c in change.get("commits") or ():
                m = re.search(r"\(#(\d+)\)", c.get("subject", ""))
                ref = c["commit"][:8] + (f" #{m.group(1)}" if m else "")
                if ref not in commits.setdefault(change["fact"], []):
                    commits[change["fact"]].append(ref)
    out = []
    for line in lines:
        fact = line.split(":", 1)[0]
        refs = [r for f, rs in commits.items() if fact == f or fact.startswith(f + ".") or f.startswith(fact + ".")
                for r in rs]
        out.append(line + (f" [{', '.join(dict.fromkeys(refs))}]" if refs else ""))
    return out


def unknown_text(name: str) -> str:
    return unknown_profile_text(name)


def expand(names: list[str]) -> list[str]:
    """`all-releases` replaced by every release profile (oldest first), duplicates dropped."""
    out: list[str] = []
    for n in names:
        for p in (release_profiles() if n == ALL_RELEASES else [n]):
            if p not in out:
                out.append(p)
    return out


# -- what differs --------------------------------------------------------------------------------------
_COMPARED = ("apis", "core", "crd", "crdVersions", "aksNodeClass", "provider")
_SKIP = {("core", "version"), ("provider", "version"), ("provider", "compiledPrices")}


def _flat(node: Any, path: tuple = ()) -> dict[tuple, Any]:
    if isinstance(node, dict) and node and not (path[:1] == ("aksNodeClass",) and len(path) >= 2):
        out: dict[tuple, Any] = {}
        for k, v in node.items():
            out.update(_flat(v, path + (k,)))
        return out
    return {path: node}


def _summary(a: Any, b: Any) -> str:
    if isinstance(a, list) and isinstance(b, list) and all(isinstance(x, (str, int, float, bool)) for x in a + b):
        added = [x for x in b if x not in a]
        removed = [x for x in a if x not in b]
        parts = [f"+{x}" for x in added] + [f"-{x}" for x in removed]
        return ", ".join(parts) if parts else "reordered"
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return "changed"
    return f"{a!r} -> {b!r}"


def differences(a: str, b: str) -> list[str]:
    """One line per fact that differs between two profiles (their derived facts and SKU tables)."""
    return differences_raw(raw_profile(a), raw_profile(b))


def differences_raw(ra: dict, rb: dict) -> list[str]:
    """`differences` of two profiles' raw data (one may carry a scenario's knobs)."""
    out = []
    fa = {p: v for s in _COMPARED for p, v in _flat(ra.get(s), (s,)).items()}
    fb = {p: v for s in _COMPARED for p, v in _flat(rb.get(s), (s,)).items()}
    for p in sorted(set(fa) | set(fb), key=lambda t: ".".join(map(str, t))):
        if p[:2] in _SKIP or fa.get(p) == fb.get(p):
            continue
        out.append(f"{'.'.join(map(str, p))}: {_summary(fa.get(p), fb.get(p))}")
    from harness.model.upstream import skutables
    ta, tb = str(ra.get("derived") or "."), str(rb.get("derived") or ".")
    if skutables.supported_gpus(ta) != skutables.supported_gpus(tb):
        ga, gb = skutables.supported_gpus(ta), skutables.supported_gpus(tb)
        changed = sorted(k for k in set(ga) | set(gb) if ga.get(k) != gb.get(k))
        out.append(f"supported GPU sizes: {len(changed)} differ ({', '.join(changed[:6])}{', ...' if len(changed) > 6 else ''})")
    if skutables.restricted_skus(ta) != skutables.restricted_skus(tb):
        out.append("restricted SKUs: changed")
    if skutables.known_skus_or_none(ta) != skutables.known_skus_or_none(tb):
        out.append("known SKUs: changed")
    return out


# -- what a result modeled ---------------------------------------------------------------------------
def modeled(profile: Profile | str) -> dict[str, Any]:
    """{profile, release, covers, core, policy}: the provider release whose facts the profile holds.
    A label policy (before-0006, design-0006) names its own basis instead."""
    name = profile if isinstance(profile, str) else profile.name
    raw = raw_profile(name) if isinstance(profile, str) else profile.raw
    rel = raw.get("release") or {}
    provider = str(rel.get("provider") or (raw.get("provider") or {}).get("version") or "")
    entry = (index().get("profiles") or {}).get(provider) or {}
    out: dict[str, Any] = {"profile": name, "release": provider,
                           "covers": list(entry.get("covers") or ([provider] if provider else [])),
                           "core": str(rel.get("core") or (raw.get("core") or {}).get("version") or "")}
    if rel.get("policy"):
        out["policy"] = str(rel["policy"])
    if raw.get("answeredBy"):
        out["answeredBy"] = str(raw["answeredBy"])
        asked = parse(name)
        out["exact"] = any(parse(t) == asked for t in out["covers"])
    return out


def modeled_text(profile: Profile | str) -> str:
    """`v1.6.4 (provider v1.6.3-v1.6.4, core v1.6.2)`; a policy: `before-0006 (label policy: ...)`."""
    m = modeled(profile)
    if m.get("policy"):
        return f"{m['profile']} (label policy: {m['policy']})"
    covers = m["covers"]
    span = covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"
    if m["profile"] == m["release"]:
        alias = ""
    elif m.get("answeredBy") and not m.get("exact"):
        alias = f" -> answered by {m['answeredBy']} (NOT that release)"
    else:
        alias = f" = {m.get('answeredBy') or m['release']}"
    return f"{m['profile']}{alias} (provider {span}, core {m['core'].split(' ', 1)[0]})"


__all__ = ["ALL_RELEASES", "Resolution", "resolve", "expand", "release_profiles", "policy_profiles",
           "differences", "differences_raw", "modeled", "modeled_text", "DEFAULT_PROFILE"]
