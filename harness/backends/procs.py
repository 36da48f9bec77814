"""Child processes of the local control plane: started in their own process group, logged to a
file, health-checked, and always torn down - by stop(), at exit and by the watcher when the owner is
killed (both through harness/backends/lifetime.py), and by PR_SET_PDEATHSIG (prctl(2)) so a
SIGKILLed pytest worker does not leave etcd/kube-apiserver behind - except the processes of a kept
cluster (keep=True), which only an explicit stop() ends.

sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/process/process.go "Hygiene": kill process groups on
teardown (as envtest starts each
process in its own group: sigs.k8s.io/controller-runtime v0.23.1
pkg/internal/testing/process/procattr_unix.go), keep logs per component for failure artefacts.
"""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Callable

from harness.backends.lifetime import LIFETIME, PROCESSES, pid_alive, start_time

__all__ = ["ManagedProcess", "StartError", "free_port", "pid_alive", "poll_until"]


class StartError(RuntimeError):
    """A component did not come up; the message names it and carries its last log lines."""


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1 (loopback only)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _pdeathsig() -> None:
    # Runs in the child between fork and exec: die with the parent (prctl PR_SET_PDEATHSIG=1).
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
    except OSError:
        pass


def poll_until(check: Callable[[], bool], timeout: float, fail: Callable[[bool], Exception], *,
               gone: Callable[[], bool] = lambda: False, interval: float = 0.05) -> None:
    """Call `check` until it returns true; an exception from it counts as "not yet" (connection
    refused while a server starts). Raises `fail(True)` as soon as `gone()` says the component being
    waited on has exited, `fail(False)` once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while True:
        if gone():
            raise fail(True)
        try:
            if check():
                return
        except Exception:   # noqa: BLE001 - not up yet
            pass
        if time.monotonic() > deadline:
            raise fail(False)
        time.sleep(interval)


class ManagedProcess:
    def __init__(self, name: str, argv: list[str], log_path: Path, cwd: str | None = None, keep: bool = False,
                 env: dict[str, str] | None = None):
        """`keep=True` (a kept cluster): the process survives this one - no PR_SET_PDEATHSIG, and
        the exit reaper leaves it alone; only stop() ends it. `env`: variables over this process's own."""
        self.name = name
        self.argv = argv
        self.log_path = Path(log_path)
        self.cwd, self.keep, self.env = cwd, keep, env
        self._log = open(self.log_path, "ab", buffering=0)
        self.proc = subprocess.Popen(
            argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            cwd=cwd, start_new_session=True,   # own session => own process group
            env={**os.environ, **env} if env else None,
            preexec_fn=None if keep else _pdeathsig,
        )
        self.pid = self.proc.pid
        self._entry = None
        if not keep:    # a strong reference: a dropped cluster's processes must still be reaped
            self._entry = LIFETIME.open(f"process {name} ({self.pid})", lambda: self.stop(grace=2.0),
                                        tier=PROCESSES, reap=(("pgid", f"{self.pid} {start_time(self.pid)}"),))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def replaced(self, binary: str | Path) -> "ManagedProcess":
        """Stop this process and start `binary` in its place: the same arguments, working directory,
        environment and log (appended)."""
        self.stop()
        return ManagedProcess(self.name, [str(binary)] + self.argv[1:], self.log_path, cwd=self.cwd,
                              keep=self.keep, env=self.env)

    def tail(self, n: int = 20) -> str:
        try:
            data = self.log_path.read_bytes()[-16384:].decode("utf-8", "replace")
        except OSError:
            return "(no log)"
        return "\n".join(data.splitlines()[-n:])

    def failure(self, what: str) -> StartError:
        state = "running" if self.alive() else f"exited with code {self.proc.returncode}"
        return StartError(f"{self.name} {what} ({state}; log {self.log_path}); last log lines:\n"
                          f"{self.tail()}")

    def wait_until(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        """Poll `check` until true; raise StartError naming the component and its log tail."""
        poll_until(check, timeout,
                   lambda died: self.failure(f"died before it was {what}" if died
                                             else f"was not {what} within {timeout:.0f}s"),
                   gone=lambda: not self.alive())

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM the process group, SIGKILL after `grace` seconds; idempotent."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        else:
            # The leader is gone; make sure nothing else of its group survives.
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        try:
            self._log.close()
        except OSError:
            pass
        if self._entry is not None:
            self._entry.release()
