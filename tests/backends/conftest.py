"""Fixtures for the real-cluster backends: one local control plane per pytest(-xdist) process,
reset after every test; skipped with the reason when the binaries are missing.

Keep a cluster's temp dir (PKI, etcd data, component logs) with HARNESS_KEEP_CLUSTER=1.
"""
from __future__ import annotations

import pytest

from harness.backends.local import LocalBackend


@pytest.fixture(scope="session")
def local_cluster():
    backend = LocalBackend(profile="upstream")
    ok, why = backend.available()
    if not ok:
        pytest.skip(f"local backend unavailable: {why}")
    cluster = backend.start()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def cluster(local_cluster):
    """The session's local cluster under the `upstream` profile, emptied after the test."""
    local_cluster.install_profile("upstream")
    try:
        yield local_cluster
    finally:
        local_cluster.reset()

