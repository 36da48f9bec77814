"""Shared fixtures for the `harness parity` tests: one embedded cluster, small label subsets."""
from __future__ import annotations

import pytest

from harness import parity

# A small subset that still exercises every outcome kind: binds (arch), unknown key (network-name),
# restricted/ignored (sku-hyperv-generation), well-known without requirement (cluster), a decision
# label with a variant (mode), a blocked label (agentpool) and an allowed one (ebpf-dataplane).
SUBSET = [
    "kubernetes.io/arch",
    "kubernetes.azure.com/network-name",
    "karpenter.azure.com/sku-hyperv-generation",
    "kubernetes.azure.com/cluster",
    "kubernetes.azure.com/mode",
    "kubernetes.azure.com/agentpool",
    "kubernetes.azure.com/ebpf-dataplane",
]


@pytest.fixture(scope="session")
def labels():
    return parity.load_labels()


@pytest.fixture(scope="session")
def subset(labels):
    return parity.select_labels(labels, SUBSET)


@pytest.fixture(scope="session")
def cluster():
    from harness.backends.embedded import EmbeddedBackend
    c = EmbeddedBackend().start()
    yield c
    c.close()


@pytest.fixture(scope="session")
def rows_before(subset, cluster):
    return parity.run_matrix("before-0006", subset, cluster)


@pytest.fixture(scope="session")
def rows_design(subset, cluster):
    return parity.run_matrix("design-0006", subset, cluster)


@pytest.fixture(scope="session")
def rows_upstream(subset, cluster):
    return parity.run_matrix("upstream", subset, cluster)


def row(rows, key):
    return next(r for r in rows[0] if r.entry.key == key)
