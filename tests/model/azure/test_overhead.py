"""Capacity and overhead (harness.model.azure.overhead; provider v1.14.0 instancetype.go, utils.go GetMaxPods)."""
from __future__ import annotations

import math

import pytest

from harness.model.azure.overhead import kube_reserved, max_pods, memory_capacity


@pytest.mark.parametrize("vcpus,gib,cpu_m,mem_mi", [(2, 8, 100, 1843), (4, 7, 140, 1638), (3, 64, 120, 5611)])
def test_kube_reserved_tax_brackets(vcpus, gib, cpu_m, mem_mi):
    assert kube_reserved(vcpus, gib) == {"cpu": cpu_m, "memory": mem_mi * 2**20}


def test_memory_capacity_uses_floor_gib():
    assert memory_capacity(218.75, 0.075) == 218 * 2**30 - math.ceil(218 * 2**30 * 0.075)
    assert memory_capacity(8, 0) == 8 * 2**30


@pytest.mark.parametrize("plugin,mode,expected", [("none", "", 250), ("azure", "overlay", 250), ("azure", "", 30),
                                                  ("kubenet", "", 110), ("Azure", "Overlay", 250)])
def test_max_pods_by_network_plugin(plugin, mode, expected):
    assert max_pods(None, plugin, mode) == expected
    assert max_pods(17, plugin, mode) == 17
