"""A watcher that removes a dead process's kind containers, volumes and network (what testcontainers'
Ryuk does, without its registry image): started detached by the kind backend, it polls the owner
pid and, once the owner is gone - whatever killed it (SIGTERM, SIGKILL) - sweeps everything labelled
with that pid, then exits. A clean close() has already removed it all; the sweep then finds nothing.

    python -m harness.backends.kind.reaper <owner pid>
"""
from __future__ import annotations

import os
import subprocess
import sys
import time


def start(owner: int) -> int:
    """Start the watcher for `owner` in its own session (it outlives the owner); returns its pid."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-m", "harness.backends.kind.reaper", str(owner)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    return proc.pid


def main(argv: list[str]) -> int:
    from harness.backends.kind.cluster import _client, sweep_stale
    from harness.backends.procs import pid_alive
    owner = int(argv[0])
    while pid_alive(owner):
        time.sleep(1.0)
    client = _client()
    try:
        sweep_stale(client, owner=owner)
    finally:
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
