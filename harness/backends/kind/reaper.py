"""The kind backend's part of the one reaper (harness/backends/lifetime.py): once an owner process
is gone - whatever ended it (SIGTERM, SIGKILL) - the watcher calls `sweep`, which removes the kind
containers, volumes and network labelled with that pid (what testcontainers' Ryuk does, without its
registry image). A clean close() has already removed them; the sweep then finds nothing.
"""
from __future__ import annotations

import os

from harness.backends.lifetime import LIFETIME, spawn_watcher

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

    from harness.backends.kind.cluster import _client, sweep_stale
    client = _client()
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
