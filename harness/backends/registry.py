"""Backend lookup by name, for pytest's `--harness-backend` and `harness run --backend` (local|container|kind|embedded).

    from harness.backends.registry import get_backend
    backend = get_backend("local", scheduler=True)
    ok, why = backend.available()

Imports are lazy so choosing `embedded` never imports the real-cluster machinery and vice versa.
The clusters a run shares live in a `ClusterCache` (harness/backends/lifetime.py, the one home of
what a process has open).
"""
from __future__ import annotations

from harness.backends.base import Backend, Cluster
from harness.backends.lifetime import DEFAULT_CLUSTERS, ClusterCache

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


def shared_cluster(name: str, *, cache: ClusterCache | None = None, **options) -> Cluster:
    """One started cluster per (backend, options) in `cache` - a pytest session's (on config.stash,
    so per xdist worker) or, by default, the process's - closed when the cache is closed and at exit
    at the latest (harness/backends/lifetime.py). Raises RuntimeError with the backend's reason when
    it is unavailable (callers turn that into pytest.skip)."""
    def start() -> Cluster:
        backend = get_backend(name, **options)
        ok, why = backend.available()
        if not ok:
            raise RuntimeError(f"backend {name!r} unavailable: {why}")
        return backend.start()
    return (cache or DEFAULT_CLUSTERS).get((name, tuple(sorted(options.items()))), start)


def close_shared() -> None:
    """Close the process's default shared clusters (`harness run`'s). Kept clusters (keep=True, e.g.
    get_backend(..., keep=True) for --harness-keep-cluster) are left running: at exit their location goes
    to stderr."""
    DEFAULT_CLUSTERS.close()
