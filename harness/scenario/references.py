"""`{file: ...}` references in scenario files, confined to the scenario's own tree.

A reference is read only if it is a relative path that stays, after symlinks, inside the
scenario's root (the nearest enclosing directory holding pyproject.toml or .git, else the
scenario's own directory), names a regular file (not a FIFO, device or directory), and is at most
MAX_FILE_BYTES. Anything else is a `file:line: reason`; nothing outside the tree is opened.
"""
from __future__ import annotations

import os
import stat
import re
from pathlib import Path

from harness.scenario.yamlsource import Document, Path_

# a referenced file (manifests, a SKU or price file) is at most this; a scenario file or a dump may be
# larger (yamlsource.MAX_FILE_BYTES)
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_REFERENCE_CHARS = 1024
MAX_NAME_CHARS = 255                 # NAME_MAX on Linux
ROOT_MARKERS = ("pyproject.toml", ".git")
_DRIVE = re.compile(r"^[A-Za-z]:")            # C:\x, C:x (absolute or drive-relative on Windows)


class UnsafeReference(ValueError):
    """A reference the harness will not open; `missing` when it is only absent."""

    def __init__(self, reason: str, missing: bool = False):
        super().__init__(reason)
        self.reason, self.missing = reason, missing


def scenario_root(scenario_file: str | Path) -> Path:
    """The tree a scenario's references may read from."""
    start = Path(scenario_file).resolve().parent
    for d in (start, *start.parents):
        if any((d / m).exists() for m in ROOT_MARKERS):
            return d
    return start


def confine(base_dir: str | Path, ref, root: str | Path) -> Path:
    """The resolved path of `ref` (relative to `base_dir`), or UnsafeReference saying why not."""
    if not isinstance(ref, str) or not ref:
        raise UnsafeReference("file: must be a relative path (a non-empty string)")
    if "\x00" in ref:
        raise UnsafeReference("file: the path contains a NUL byte")
    if len(ref) > MAX_REFERENCE_CHARS:
        raise UnsafeReference(f"file: the path is longer than {MAX_REFERENCE_CHARS} characters")
    if any(len(part) > MAX_NAME_CHARS for part in ref.split("/")):
        raise UnsafeReference(f"file: a path component is longer than {MAX_NAME_CHARS} characters")
    if ref.startswith(("/", "\\", "~")) or _DRIVE.match(ref):
        raise UnsafeReference(f"file: {ref!r} is absolute; use a path relative to the scenario file")
    root = Path(root).resolve()
    try:
        target = (Path(base_dir) / ref).resolve()
    except (OSError, RuntimeError) as e:         # symlink loops
        raise UnsafeReference(f"file: {ref!r} cannot be resolved ({e})") from None
    if target != root and root not in target.parents:
        raise UnsafeReference(f"file: {ref!r} is outside the scenario's tree ({root.name or root}/)")
    try:
        st = os.stat(target)
    except FileNotFoundError:
        raise UnsafeReference(f"file not found: {ref}", missing=True) from None
    except OSError as e:
        raise UnsafeReference(f"file: {ref!r} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(st.st_mode):
        what = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise UnsafeReference(f"file: {ref!r} is {what}")
    if st.st_size > MAX_FILE_BYTES:
        raise UnsafeReference(f"file: {ref!r} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return target


def resolve_reference(doc: Document, path: Path_, ref, what: str = "file") -> Path:
    """`confine` for a `{file: ...}` at `path` in `doc`, as a SourceError at that line (e.g.
    `manifest file not found: x.yaml`, `file: '/etc/passwd' is absolute; ...`)."""
    base = Path(doc.file).parent
    try:
        return confine(base, ref, scenario_root(doc.file))
    except UnsafeReference as e:
        reason = f"{what} {e.reason}" if e.missing else e.reason
        raise doc.error(path, reason) from None
