"""The words for an option that selects no scenario, shared by `harness run` (harness/cli.py) and
the pytest plugin (harness/runner/plugin.py), so both say it the same way."""
from __future__ import annotations

from typing import Iterable

# what makes a file a scenario file (here, not in scenario.py, so the pytest plugin can tell without
# importing the loader and its dependencies)
SUFFIX = ".scenario.yaml"


def unknown_profile(name: str, known: Iterable[str], flag: str = "--profile") -> str:
    """A profile option naming no profile in harness/data/profiles/ and no provider version."""
    from harness.model.upstream import releases
    policies = [k for k in known if k in set(releases.policy_profiles())] or list(known)
    rel = releases.release_profiles()
    span = (f"; or a provider version ({rel[0]} .. {rel[-1]}; `all` runs every release profile)" if rel else "")
    return f"{flag} {name}: unknown profile; known profiles: {', '.join(policies)}{span}"


def no_scenario(wanted: list[str], count: int, declared: Iterable[str], where: str | None = None,
                flag: str = "--profile") -> str:
    """`--profile` values none of `count` scenarios declare in given.profiles; `where` names the paths
    searched (harness run), else the scenarios are the ones pytest collected (`--harness-profile`)."""
    scenarios = f"scenario(s) in {where}" if where is not None else "collected scenario(s)"
    return (f"{flag} {f' {flag} '.join(wanted)} selects no scenario: none of the {count} {scenarios} "
            f"declares it in given.profiles (they declare: {', '.join(sorted(declared))})")


def split_profiles(values: Iterable[str]) -> tuple[list[str], list[str]]:
    """`--profile` values as (filters, forced): a label policy or `upstream` filters each scenario's
    given.profiles (as before); a release profile, a provider version (`v1.6.2`, `v1.8.1`: the nearest
    release answers, harness.model.upstream.releases) or `all` / `all-releases` makes every selected scenario run
    under it as well, to show where the outcome changes between releases. ProfileError for a name that
    is neither."""
    from harness.model.upstream import releases
    filters: list[str] = []
    forced: list[str] = []
    policies = set(releases.policy_profiles())
    for v in values:
        if v in ("all", releases.ALL_RELEASES):
            forced += [p for p in releases.release_profiles() if p not in forced]
        elif v in policies:
            filters.append(v)
        else:
            releases.resolve(v)
            if v not in forced:
                forced.append(v)
    return filters, forced


def profiles_for(declared: list[str], values: Iterable[str]) -> list[str]:
    """The profiles one scenario runs under: its declared ones the filters keep (all without filters
    when nothing is forced), then the forced ones."""
    filters, forced = split_profiles(values)
    kept = [p for p in declared if (p in filters if filters else not forced)]
    return kept + [p for p in forced if p not in kept]


def version_notices(values: Iterable[str]) -> list[str]:
    """The loud notice of each `--profile` version the harness answers with another release."""
    from harness.model.upstream import releases
    out = []
    for v in values:
        if v in ("all", releases.ALL_RELEASES) or v in releases.policy_profiles():
            continue
        r = releases.resolve(v)
        if r.notice:
            out.append(f"--profile {v}: {r.notice}")
    return out


def select_jobs(scenarios, profiles: list[str], k: str | None, paths: list[str],
                names: Iterable[str] = ()) -> tuple[list, str]:
    """(scenario, profile) pairs selected by --profile, -k (a substring of the name) and exact `names`;
    when none, the reason, so an option that selects nothing fails loudly instead of printing an empty
    table. A release profile, a provider version or `all` runs every selected scenario under it
    (split_profiles)."""
    from harness.model.upstream.profile import ProfileError, available_profiles
    for p in profiles:
        try:
            split_profiles([p])
        except ProfileError:
            return [], unknown_profile(p, available_profiles())
    where = " ".join(paths)
    if not scenarios:
        return [], f"no scenario files found in {where}"
    names = set(names)
    if names - {sc.name for sc in scenarios}:
        missing = sorted(names - {sc.name for sc in scenarios})
        return [], f"{where}: no scenario named {', '.join(missing)}"
    named = [sc for sc in scenarios if (not k or k in sc.name) and (not names or sc.name in names)]
    if not named:
        return [], f"-k {k}: no scenario name in {where} contains it"
    jobs = [(sc, p) for sc in named for p in profiles_for(sc.profiles, profiles)]
    if not jobs:
        declared = sorted({p for sc in named for p in sc.profiles})
        return [], no_scenario(profiles, len(named), declared, where)
    return jobs, ""
