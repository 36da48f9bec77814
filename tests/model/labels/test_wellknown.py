"""Label keys and the cluster label value (harness.model.labels.wellknown)."""
from __future__ import annotations

import pytest

from harness.model.labels.wellknown import normalize_cluster_label


@pytest.mark.parametrize("rg,expected", [
    ("test-resourceGroup", "test-resourceGroup"),
    ("MC_rg(1)_cluster_eastus", "MC_rg-1-_cluster_eastus"),
    ("rg-", "rg-z"), ("rg_", "rg_z"), ("rg.", "rg.z"), ("rg(x)", "rg-x-z"),
    ("a" * 70, "a" * 63), ("a" * 62 + "-", "a" * 62 + "z"),           # length 63: the last char becomes z
    ("a" * 61 + "-", "a" * 61 + "-z"), ("", ""),
])
def test_normalize_cluster_label(rg, expected):
    assert normalize_cluster_label(rg) == expected
    assert len(normalize_cluster_label(rg)) <= 63
