"""The release index (harness/data/releases/index.yaml, written by harness.model.upstream.releasesync): which
provider tags each release profile covers, and which profile answers for a version. Read by
harness.model.upstream.profile (a version as a profile name) and harness.model.upstream.releases (what differs, what a
result modeled); it reads no profile itself."""
from __future__ import annotations

import functools
import re
from typing import Any

from harness.model.data import DATA_DIR, load_yaml

INDEX = DATA_DIR / "releases" / "index.yaml"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


@functools.lru_cache(maxsize=1)
def index() -> dict[str, Any]:
    if not INDEX.exists():
        return {"profiles": {}}
    return load_yaml(INDEX.read_text()) or {"profiles": {}}


def release_profiles() -> list[str]:
    """Every release profile, oldest first."""
    return list(index().get("profiles") or {})


def parse(version: str) -> tuple[int, int, int] | None:
    m = _VERSION.match(version.strip())
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def covered_tags() -> list[tuple[tuple[int, int, int], str, str]]:
    """(version, tag, profile) of every tag a release profile covers, in version order."""
    out = []
    for name, entry in (index().get("profiles") or {}).items():
        for tag in entry.get("covers") or [name]:
            out.append((parse(tag), tag, name))
    return sorted(out)


def neighbours(version: tuple[int, int, int]):
    """(the covered tag equal to `version`, or None; the nearest before; the nearest after), each a
    (version, tag, profile) or None."""
    tags = covered_tags()
    exact = next((t for t in tags if t[0] == version), None)
    before = [t for t in tags if t[0] < version]
    after = [t for t in tags if t[0] > version]
    return exact, (before[-1] if before else None), (after[0] if after else None)


def answer_for(name: str) -> str | None:
    """The release profile answering for a version-like `name` (the one covering it, else the nearest
    release before it, else the oldest); None when `name` is no version or there is no index."""
    version = parse(name)
    if version is None or not covered_tags():
        return None
    exact, low, high = neighbours(version)
    chosen = exact or low or high
    return chosen[2] if chosen else None
