"""harness/model/azure/staticpart.py: read_sku (UpdateInstanceTypes' filters, provider v1.14.0
pkg/providers/instancetype/instancetypes.go) feeds survivor and static_part, so a SKU's size and
capabilities are parsed once; the results match a fresh parse."""
from __future__ import annotations

import copy

from fakeazure.catalog import synthetic_skus
from harness.model.azure.itcache import InstanceTypeCache
from harness.model.azure.params import ClusterParams, NodeClassParams
from harness.model.upstream.profile import load_profile
from harness.model.azure.skus import canonical_sku
from harness.model.azure.staticpart import SkuReading, read_sku, static_part, survivor
from harness.model.azure.switches import Switches

CLUSTER = ClusterParams(region="eastus")
SW = Switches.of(load_profile("upstream"))


def pairs(*skus):
    return [(s, canonical_sku(s)) for s in skus]


def test_read_sku_gives_the_drop_reason_or_the_reading():
    sku = synthetic_skus(1, seed=3)[0]
    assert isinstance(read_sku(canonical_sku(sku), CLUSTER, SW), SkuReading)
    elsewhere = ClusterParams(region="westeurope")
    assert read_sku(canonical_sku(sku), elsewhere, SW) == "not offered in region westeurope"
    no_size = {k: v for k, v in sku.items() if k != "size"}
    assert read_sku(canonical_sku(no_size), CLUSTER, SW) == "no size (the provider panics on such a SKU)"


def test_survivor_is_the_last_that_passes_or_the_last_with_its_own_reason():
    good = synthetic_skus(1, seed=3)[0]
    other_region = copy.deepcopy(good)
    other_region["locations"] = ["westeurope"]
    no_type = copy.deepcopy(good)
    no_type["resourceType"] = "disks"
    raw, reading = survivor(pairs(good, other_region), CLUSTER, SW)
    assert raw is good and isinstance(reading, SkuReading)
    raw, reading = survivor(pairs(other_region, no_type), CLUSTER, SW)
    assert raw is no_type and reading == "not a virtualMachines SKU (disks)"
    assert survivor(pairs(good), CLUSTER, SW) == (good, None)


def test_static_part_with_a_reading_equals_a_fresh_one():
    nc = NodeClassParams(image_family="Ubuntu2204")
    for sku in synthetic_skus(40, seed=5):
        reading = read_sku(canonical_sku(sku), CLUSTER, SW)
        assert static_part(sku, nc, CLUSTER, SW, None, InstanceTypeCache(), reading) == \
            static_part(sku, nc, CLUSTER, SW, None, InstanceTypeCache())
