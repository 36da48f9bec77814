"""Which of a timing's source edits (harness/data/controller-timing.yaml) a module version takes, and how
often each `find` must occur there: an edit with `since` and/or `until` applies to the versions of its
module from `since` up to (not including) `until`, so one line spelled differently across core's releases
is one edit per spelling; `count` is how many times its `find` occurs (1 when not given), every one
replaced. The rule apply-edits.py (the build, run by the system python: standard library only) and
controller.py (the check before a build) share."""
from __future__ import annotations

import re

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(-[^+]*)?")


def version_key(version: str) -> tuple[int, int, int, int]:
    """A module version's order: v1.12.1-0.2026...-abcdef (a pseudo-version, a pre-release) sorts before
    v1.12.1 and after v1.12.0; `+incompatible` is ignored."""
    m = _VERSION.match(version or "")
    if not m:
        raise ValueError(f"not a module version: {version!r}")
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if m.group(4) else 1


def applies(edit: dict, version: str | None) -> bool:
    """Whether `edit` applies to its module at `version` (None: unknown, which only an edit without a
    range takes)."""
    if "since" not in edit and "until" not in edit:
        return True
    if not version:
        return False
    v = version_key(version)
    return (("since" not in edit or version_key(edit["since"]) <= v)
            and ("until" not in edit or v < version_key(edit["until"])))


def expected(edit: dict) -> int:
    """How many times an edit's `find` must occur in its file."""
    return int(edit.get("count", 1))


def before(version: str, oldest: str | None) -> bool:
    """Whether `version` is older than `oldest` (None: no bound)."""
    return bool(oldest) and version_key(version) < version_key(oldest)
