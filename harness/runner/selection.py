"""The words for an option that selects no scenario, shared by `harness run` (harness/cli.py) and
the pytest plugin (harness/runner/plugin.py), so both say it the same way."""
from __future__ import annotations

from typing import Iterable

# what makes a file a scenario file (here, not in scenario.py, so the pytest plugin can tell without
# importing the loader and its dependencies)
SUFFIX = ".scenario.yaml"


def unknown_profile(name: str, known: Iterable[str], flag: str = "--profile") -> str:
    """A profile option naming no profile in harness/data/profiles/."""
    return f"{flag} {name}: unknown profile; known profiles: {', '.join(known)}"


def no_scenario(wanted: list[str], count: int, declared: Iterable[str], where: str | None = None,
                flag: str = "--profile") -> str:
    """`--profile` values none of `count` scenarios declare in given.profiles; `where` names the paths
    searched (harness run), else the scenarios are the ones pytest collected (`--harness-profile`)."""
    scenarios = f"scenario(s) in {where}" if where is not None else "collected scenario(s)"
    return (f"{flag} {f' {flag} '.join(wanted)} selects no scenario: none of the {count} {scenarios} "
            f"declares it in given.profiles (they declare: {', '.join(sorted(declared))})")
