"""Backend lookup by name, for the runner's `--backend local|container|embedded` option.

    from harness.backends.registry import get_backend
    backend = get_backend("local", scheduler=True)
    ok, why = backend.available()

Imports are lazy so choosing `embedded` never imports the real-cluster machinery and vice versa.
"""
from __future__ import annotations

from harness.backends.base import Backend

BACKEND_NAMES = ("embedded", "local", "container")


def get_backend(name: str, **options) -> Backend:
    """A Backend instance for `name`; keyword options go to the backend's constructor
    (local/container: scheduler, controller_manager, kwok, profile, keep, build, start_timeout)."""
    if name == "local":
        from harness.backends.local import LocalBackend
        return LocalBackend(**options)
    if name == "container":
        from harness.backends.container import ContainerBackend
        return ContainerBackend(**options)
    if name == "embedded":
        from harness.backends.embedded import EmbeddedBackend   # the lead's module
        return EmbeddedBackend(**options)
    raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
