"""Loaded scenario files kept on disk between processes, as Python keeps bytecode.

Loading a file (YAML with the line of every path, the JSON Schema, the harness's own checks, the
manifests it references) is ~2 CPU-s for the library, paid again by every pytest process: under
xdist each worker collects every file. A file whose bytes, whose referenced manifest files' bytes
and whose harness code and data are unchanged loads to the same scenarios, so the second process
unpickles them instead (docs/benchmarks/simulation.md). Only files that load cleanly are kept: a bad file is
judged afresh each time, with its `file:line: reason`.

Where: `<harness cache>/scenarios/<code stamp>/` ($HARNESS_CACHE, else ~/.cache/karpenter-harness);
a stamp's folder not written to for a week is removed when another is made.
`HARNESS_SCENARIO_CACHE=0` turns it off.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

STALE_SECONDS = 7 * 24 * 3600
_PACKAGES = ("harness", "fakeazure")      # whose code and data decide what a file loads to


def enabled() -> bool:
    return os.environ.get("HARNESS_SCENARIO_CACHE", "1") != "0"


@functools.lru_cache(maxsize=1)
def code_stamp() -> str:
    """A digest of the Python version and every file of the packages that judge a scenario file
    (path, size, modification time): any edit there loads every file afresh."""
    h = hashlib.sha256(sys.version.encode())
    for name in _PACKAGES:
        root = Path(importlib.util.find_spec(name).origin).parent
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for f in sorted(filenames):
                st = os.stat(os.path.join(dirpath, f))
                h.update(f"{os.path.relpath(os.path.join(dirpath, f), root)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:24]


def _folder() -> Path:
    from harness.backends.binaries.controlplane import cache_dir
    return cache_dir() / "scenarios" / code_stamp()


def _digest(path: str | Path) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def cached(path: Path, load: Callable[[Path, set[str]], list]) -> list:
    """`load(path, reads)` (which adds every other file it reads to `reads`), or what it returned
    for the same bytes before."""
    if not enabled():
        return load(path, set())
    folder = _folder()
    # the path as given and where it points: a scenario keeps the spelling it was loaded by (its file:line)
    entry = folder / (hashlib.sha256(f"{path.absolute()}\0{path}".encode()).hexdigest()[:32] + ".pickle")
    own = _digest(path)
    try:
        with entry.open("rb") as f:
            kept = pickle.load(f)
        if kept["file"] == own and all(_digest(p) == d for p, d in kept["reads"].items()):
            return kept["scenarios"]
    except Exception:           # missing, partly written by a process that died, or from another layout
        pass
    reads: set[str] = set()
    scenarios = load(path, reads)
    _keep(folder, entry, {"file": own, "reads": {p: _digest(p) for p in sorted(reads)}, "scenarios": scenarios})
    return scenarios


def _keep(folder: Path, entry: Path, value: dict) -> None:
    """Written whole or not at all (a temporary file renamed), so concurrent workers never read half
    an entry; a cache that cannot be written (read-only home) is no cache, not an error."""
    try:
        fresh = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        if fresh:
            _prune(folder)
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except (OSError, pickle.PicklingError):
        pass


def _prune(keep: Path) -> None:
    now = time.time()
    for other in keep.parent.iterdir():
        try:
            if other != keep and now - other.stat().st_mtime > STALE_SECONDS:
                shutil.rmtree(other, ignore_errors=True)
        except OSError:
            pass
