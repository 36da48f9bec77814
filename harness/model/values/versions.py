"""Kubernetes version strings (`1.33.0`, `v1.36.3`, `1.34`) as comparable (major, minor) pairs."""
from __future__ import annotations

import re

_VERSION_RE = re.compile(r"^v?(\d+)(?:\.(\d+))?")


def parse_version(version: str | None) -> tuple[int, int] | None:
    """`[v]X[.Y[...]]` -> (X, Y), a missing minor reading as 0; None for text that does not start
    with a number (and for None or "")."""
    m = _VERSION_RE.match(version or "")
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def version_at_least(version: str | None, major_minor: tuple[int, int]) -> bool:
    """Whether `version` is at least `major_minor`; an unparseable version is not."""
    parsed = parse_version(version)
    return parsed is not None and parsed >= major_minor


__all__ = ["parse_version", "version_at_least"]
