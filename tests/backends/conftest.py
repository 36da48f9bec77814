"""Fixtures for the real-cluster backends: one local control plane per pytest(-xdist) process,
reset after every test, and one container cluster per test module; skipped with the reason when
the binaries (or Docker) are missing.

Keep a cluster's temp dir (PKI, etcd data, component logs) with HARNESS_KEEP_CLUSTER=1.
"""
from __future__ import annotations

import pytest


def _start_or_skip(backend):
    """Start `backend` for a fixture (closed after it), or skip with the backend's reason."""
    ok, why = backend.available()
    if not ok:
        pytest.skip(f"{backend.name} backend unavailable: {why}")
    cluster = backend.start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def local_cluster():
    from harness.backends.local import LocalBackend
    yield from _start_or_skip(LocalBackend(profile="upstream"))


@pytest.fixture(scope="module")
def container_cluster():
    from harness.backends.container import ContainerBackend
    yield from _start_or_skip(ContainerBackend(profile="upstream"))


@pytest.fixture
def cluster(local_cluster):
    """The session's local cluster under the `upstream` profile, emptied after the test."""
    local_cluster.install_profile("upstream")
    try:
        yield local_cluster
    finally:
        local_cluster.reset()
