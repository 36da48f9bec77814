"""One home for everything a process opens that must not outlive it: real clusters, their child
processes and work dirs, and the clusters a run shares.

Why it is built this way: docs/architecture/backends.md."""
from __future__ import annotations

import atexit
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

# Close order at exit: shared clusters and clusters first (each stops its own components in
# order), then processes and work dirs nobody closed.
CLUSTERS, PROCESSES, DIRS = 0, 1, 2
OWNER_FILE = "owner.pid"       # in a work dir: the pid that removes it (none: kept, never swept)


def pid_alive(pid: int) -> bool:
    """True if `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start_time(pid: int) -> int:
    """The process's start time (field 22 of /proc/<pid>/stat; proc(5)): tells a pid apart from a
    later process that reuses it. 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


def tmp_root() -> str | None:
    """Where work dirs go: HARNESS_TMPDIR, else tmpfs (/dev/shm) when writable - etcd start-up and
    writes are I/O bound on disk - else the system temp dir (None)."""
    return os.environ.get("HARNESS_TMPDIR") or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)


def sweep_stale_workdirs(prefix: str) -> list[str]:
    """Remove work dirs named `prefix*` whose owner (OWNER_FILE) is dead; dirs without an owner
    file (kept clusters) are never swept."""
    removed = []
    root = Path(tmp_root() or tempfile.gettempdir())
    for d in root.glob(prefix + "*"):
        try:
            owner = int((d / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if owner != os.getpid() and not pid_alive(owner):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


# -- the registry -----------------------------------------------------------------------------------
@dataclass
class Entry:
    """One open thing. `reap`: orders for the watcher, (verb, argument) pairs, should the process
    die before `close` runs (nothing for a kept entry: it is meant to outlive the process)."""
    id: int
    what: str
    close: Callable[[], None]
    tier: int
    keep: bool = False
    kept_message: Callable[[], str] | None = None
    reap: tuple[tuple[str, str], ...] = ()
    owner: "Lifetime | None" = field(default=None, repr=False)

    def release(self) -> None:
        """Closed by its owner: forget it here and in the watcher. Idempotent."""
        if self.owner is not None:
            self.owner._release(self)


class Lifetime:
    """What this process has open, in one place; `close_all` runs once at exit."""

    def __init__(self):
        self._entries: dict[int, Entry] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()     # re-entrant: the signal handler runs on the main thread
        self._watcher: subprocess.Popen | None = None
        self._exit_hooks = False

    def open(self, what: str, close: Callable[[], None], *, tier: int, keep: bool = False,
             kept_message: Callable[[], str] | None = None, reap: tuple[tuple[str, str], ...] = ()) -> Entry:
        """Register an open thing; call `entry.release()` once it is closed."""
        e = Entry(next(self._ids), what, close, tier, keep, kept_message, () if keep else tuple(reap), self)
        with self._lock:
            self._entries[e.id] = e
            self._install_exit_hooks()
            for i, (verb, arg) in enumerate(e.reap):
                self._order(f"{e.id}.{i} {verb} {arg}")
        return e

    def _release(self, e: Entry) -> None:
        with self._lock:
            if self._entries.pop(e.id, None) is None:
                return
            for i in range(len(e.reap)):
                self._order(f"-{e.id}.{i}")

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries.values())

    def close_all(self) -> None:
        """Close every open entry (tier by tier, the latest first within a tier); a kept one is
        reported on stderr instead. Errors are swallowed: this runs at exit."""
        for e in sorted(self.entries(), key=lambda e: (e.tier, -e.id)):
            if e.keep:
                if e.kept_message is not None:
                    print(e.kept_message(), file=sys.stderr)
                continue
            try:
                e.close()
            except Exception:   # noqa: BLE001 - best effort at exit
                pass
            e.release()

    # -- the exit handler ---------------------------------------------------------------------------
    def _install_exit_hooks(self) -> None:
        if self._exit_hooks:
            return
        self._exit_hooks = True
        atexit.register(self.close_all)
        install_signal_cleanup(self)

    def _on_signal(self, signum, frame) -> None:
        """Close everything, then die of the signal as the default action would have."""
        try:
            self.close_all()
        finally:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    # -- the watcher --------------------------------------------------------------------------------
    def watcher_pid(self) -> int | None:
        """The pid of this process's watcher, once one was needed."""
        w = self._watcher
        return w.pid if w is not None else None

    def order(self, key: str, verb: str, arg: str) -> int:
        """A standing order to the watcher, never taken back (e.g. a backend's sweep of its labelled
        Docker objects, harmless when nothing is left); the same `key` replaces an earlier order.
        Returns the watcher's pid."""
        with self._lock:
            self._install_exit_hooks()
            self._order(f"{key} {verb} {arg}")
            return self._watcher.pid

    def _order(self, line: str) -> None:
        """Send one line to the watcher, starting it first if needed (or again if it died)."""
        w = self._watcher
        if w is None or w.poll() is not None:
            if line.startswith("-"):
                return                      # a release for a watcher that is gone: nothing to take back
            w = self._watcher = spawn_watcher(os.getpid())
        try:
            w.stdin.write(line + "\n")
            w.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass


def spawn_watcher(owner: int, orders: list[str] = ()) -> subprocess.Popen:
    """A detached watcher for `owner` (its own session: it outlives the owner and no terminal
    signal reaches it); `orders` are written now, more go through the returned Popen's stdin."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    w = subprocess.Popen([sys.executable, "-m", "harness.backends.lifetime", str(owner)],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, env=env, text=True)
    for line in orders:
        w.stdin.write(line + "\n")
    w.stdin.flush()
    return w


def install_signal_cleanup(lifetime: Lifetime) -> None:
    """SIGTERM/SIGINT close everything first - only over the default action (pytest's, an IDE's or
    an embedding program's handler stays theirs; Python's own SIGINT handler raises
    KeyboardInterrupt, which reaches atexit anyway), and only from the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, lifetime._on_signal)


LIFETIME = Lifetime()


# -- the clusters a run shares ----------------------------------------------------------------------
class ClusterCache:
    """One started cluster per (backend, options); closed by close() at the end of the run, and at
    exit at the latest. Kept clusters (keep=True) are left running."""

    def __init__(self, lifetime: Lifetime = LIFETIME):
        self._lifetime = lifetime
        self._clusters: dict[tuple, object] = {}
        self._lock = threading.Lock()
        self._entry: Entry | None = None

    def get(self, key: tuple, start: Callable[[], object]) -> object:
        with self._lock:
            c = self._clusters.get(key)
            if c is not None and getattr(c, "retired", False):    # upgraded: no longer what `key` says
                c.close()
                c = None
            if c is None:
                c = self._clusters[key] = start()
                if self._entry is None:
                    self._entry = self._lifetime.open("shared clusters", self.close, tier=CLUSTERS)
            return c

    def close(self) -> None:
        with self._lock:
            clusters = list(self._clusters.values())
            self._clusters.clear()
            entry, self._entry = self._entry, None
        for c in clusters:
            if getattr(c, "keep", False):
                continue
            try:
                c.close()
            except Exception:   # noqa: BLE001 - best effort, as at exit
                pass
        if entry is not None:
            entry.release()


DEFAULT_CLUSTERS = ClusterCache()


# -- the watcher process ------------------------------------------------------------------------------
def reap(owner: int, orders: list[tuple[str, str]], grace: float = 10.0) -> None:
    """Carry out the orders left for a dead owner: kill process groups (those still the same
    processes), run sweeps (`module:function`, called with the owner's pid), then remove dirs."""
    groups = []
    for verb, arg in orders:
        if verb == "pgid":
            pgid, started = (int(x) for x in arg.split())
            # A leader alive under another start time is a new process reusing the pid: not ours.
            # A dead leader's group id cannot be reused while any member lives, so members are ours.
            if pid_alive(pgid) and start_time(pgid) != started:
                continue
            try:
                os.killpg(pgid, signal.SIGKILL)
                groups.append(pgid)
            except (ProcessLookupError, PermissionError):
                pass
    deadline = time.monotonic() + grace
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if _group_alive(g)]
        time.sleep(0.05)
    for verb, arg in orders:
        if verb == "call":
            import importlib
            module, _, fn = arg.partition(":")
            try:
                getattr(importlib.import_module(module), fn)(owner)
            except Exception:   # noqa: BLE001 - the other orders still run
                pass
    for verb, arg in orders:
        if verb == "dir":
            shutil.rmtree(arg, ignore_errors=True)


def _group_alive(pgid: int) -> bool:
    """True while a process of group `pgid` runs (zombies do not count: in a container nobody may
    reap an orphan)."""
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    state, _ppid, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
            except (OSError, ValueError):
                continue
            if int(pgrp) == pgid and state != "Z":
                return True
    return False


def watch(owner: int, lines) -> None:
    """Read orders until end-of-file (`<key> <verb> <argument>` adds, `-<key>` takes back), wait
    for `owner` to be gone, then reap what is left."""
    started = start_time(owner)         # a pid reused by a later process is not the owner
    orders: dict[str, tuple[str, str]] = {}
    for line in lines:
        line = line.rstrip("\n")
        if line.startswith("-"):
            orders.pop(line[1:], None)
        elif line:
            key, verb, arg = (line.split(" ", 2) + ["", ""])[:3]
            orders[key] = (verb, arg)
    while pid_alive(owner) and start_time(owner) == started:
        time.sleep(0.2)
    reap(owner, list(orders.values()))


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch(int(sys.argv[1]), sys.stdin)
