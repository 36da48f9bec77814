"""Backend lookup by name, for the runner's `--backend local|container|kind|embedded` option.

    from harness.backends.registry import get_backend
    backend = get_backend("local", scheduler=True)
    ok, why = backend.available()

Imports are lazy so choosing `embedded` never imports the real-cluster machinery and vice versa.
"""
from __future__ import annotations

import atexit
import threading

from harness.backends.base import Backend, Cluster

BACKEND_NAMES = ("embedded", "local", "container", "kind")


def get_backend(name: str, **options) -> Backend:
    """A Backend instance for `name`; keyword options go to the backend's constructor
    (local/container: scheduler, controller_manager, kwok, profile, keep, build, start_timeout,
    apiserver_args; container also flavor, k3s_image; kind also pool_size)."""
    if name == "local":
        from harness.backends.local import LocalBackend
        return LocalBackend(**options)
    if name == "container":
        from harness.backends.container import ContainerBackend
        return ContainerBackend(**options)
    if name == "kind":
        from harness.backends.kind.cluster import KindBackend
        return KindBackend(**options)
    if name == "embedded":
        from harness.backends.embedded import EmbeddedBackend   # the lead's module
        return EmbeddedBackend(**options)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")


_shared: dict[tuple, Cluster] = {}
_shared_lock = threading.Lock()


def shared_cluster(name: str, **options) -> Cluster:
    """One started cluster per (backend, options) per process - i.e. per pytest-xdist worker -
    for a session fixture; closed at interpreter exit. Raises RuntimeError with the backend's
    reason when it is unavailable (callers turn that into pytest.skip)."""
    key = (name, tuple(sorted(options.items())))
    with _shared_lock:
        c = _shared.get(key)
        if c is None:
            backend = get_backend(name, **options)
            ok, why = backend.available()
            if not ok:
                raise RuntimeError(f"backend {name!r} unavailable: {why}")
            c = _shared[key] = backend.start()
        return c


@atexit.register
def close_shared() -> None:
    """Close the shared clusters (at the end of a session; at exit at the latest). Kept clusters
    (keep=True, e.g. get_backend(..., keep=True) for --keep-cluster) are left running: at exit
    their location goes to stderr."""
    with _shared_lock:
        for c in _shared.values():
            if getattr(c, "keep", False):
                continue
            try:
                c.close()
            except Exception:   # noqa: BLE001 - best effort at exit
                pass
        _shared.clear()
