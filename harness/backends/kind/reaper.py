"""The kind backend's part of the one reaper (harness/backends/lifetime.py): once an owner process
is gone - whatever ended it (SIGTERM, SIGKILL) - the watcher calls `sweep`, which removes the kind
containers, volumes and network labelled with that pid (what testcontainers' Ryuk does, without its
registry image). A clean close() has already removed them; the sweep then finds nothing.
"""
from __future__ import annotations

import os

from harness.backends.kind.nodes import LABEL, OWNER_LABEL, remove_container
from harness.backends.lifetime import LIFETIME, spawn_watcher
from harness.backends.procs import pid_alive

SWEEP = "harness.backends.kind.reaper:sweep"


def start(owner: int) -> int:
    """Have a watcher sweep `owner`'s kind objects once `owner` is gone; returns the watcher's pid.
    For this process that is its one watcher; another pid gets a watcher of its own."""
    if owner == os.getpid():
        return LIFETIME.order("kind", "call", SWEEP)
    w = spawn_watcher(owner, [f"kind call {SWEEP}"])
    w.stdin.close()             # no more orders: the watcher now only waits for `owner` to go
    return w.pid


def sweep(owner: int, attempts: int = 5) -> None:
    """Remove what the kind backend labelled with `owner`'s pid (called by the watcher). Listing
    containers inspects each one, so a container another process removes meanwhile fails the list
    with NotFound (docker-py ContainerCollection.list): the sweep is tried again."""
    from docker.errors import NotFound

    client = docker_client()
    try:
        for attempt in range(attempts):
            try:
                sweep_stale(client, owner=owner)
                return
            except NotFound:
                if attempt == attempts - 1:
                    raise
    finally:
        client.close()


def docker_client():
    """A Docker client for the kind backend (long timeout: node containers start slowly)."""
    import docker
    return docker.from_env(timeout=300)


def sweep_stale(client, owner: int | None = None) -> int:
    """Remove kind-backend containers, volumes and networks whose owning process is gone (or, with
    `owner`, those of that dead process)."""
    n = 0

    def dead(labels: dict) -> bool:
        try:
            pid = int((labels or {}).get(OWNER_LABEL, "0"))
        except ValueError:
            return False
        if owner is not None:
            return pid == owner and not pid_alive(pid)
        return bool(pid) and pid != os.getpid() and not pid_alive(pid)

    # ignore_removed: another process (a closing cluster, another sweeper) may remove a container
    # between the list and its inspect
    for c in client.containers.list(all=True, filters={"label": f"{LABEL}=node"}, ignore_removed=True):
        if dead(c.labels):
            remove_container(c)
            n += 1
    for v in client.volumes.list(filters={"label": f"{LABEL}=node"}):
        if dead(v.attrs.get("Labels")):
            try:
                v.remove(force=True)
                n += 1
            except Exception:   # noqa: BLE001 - still in use
                pass
    for net in client.networks.list(filters={"label": f"{LABEL}=network"}):
        if dead(net.attrs.get("Labels")):
            try:
                net.remove()
                n += 1
            except Exception:   # noqa: BLE001
                pass
    return n
