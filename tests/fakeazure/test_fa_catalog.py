"""Catalog data: wire shape, the southcentralus fixture table of github.com/Azure/karpenter-provider-azure v1.14.0
pkg/fake/zz_generated.sku.southcentralus.go (upstream fixtures:
karpenter-provider-azure v1.14.0 pkg/fake/zz_generated.sku.southcentralus.go), westcentralus, the broad eastus catalog, prices,
synthetic SKUs."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from fakeazure import FakeAzure, available_catalogs, synthetic_prices, synthetic_skus
from fakeazure import catalog as cat
# skewer's size grammar (GetVMSize, github.com/Azure/skewer@v0.0.24/vmsize.go);
# parse_vm_size raises if unparsable
from harness.model.azure.vmsize import parse_vm_size

# (cpu, memory MiB, hyperv, ephemeral max GB or None, premium, accel, arch, zones, LowPriorityCapable)
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/fake/zz_generated.sku.southcentralus.go derived-value table
# (zone "0" is the regional offering, not a SKU zone), derived from
# the SKUs of karpenter-provider-azure v1.14.0 pkg/fake/zz_generated.sku.southcentralus.go.
SCUS_TABLE = {
    "Standard_A0": (1, 768, "1", None, False, False, "amd64", [], False),
    "Standard_B1s": (1, 1024, "1,2", 32, True, False, "amd64", ["1", "2", "3"], False),
    "Standard_B20ms": (20, 81920, "1,2", 32, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_D128ds_v6": (128, 524288, "2", 7559, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_D16plds_v5": (16, 32768, "2", 429, True, True, "arm64", ["1", "2", "3"], True),
    "Standard_D2as_v6": (2, 8192, "2", None, True, True, "amd64", ["2", "3"], True),
    "Standard_D2s_v3": (2, 8192, "1,2", 53, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_D2_v2": (2, 7168, "1", None, False, True, "amd64", ["1", "2", "3"], True),
    "Standard_D2_v3": (2, 8192, "1", None, False, True, "amd64", ["1", "2", "3"], True),
    "Standard_D2_v5": (2, 8192, "1,2", None, False, True, "amd64", ["1", "2", "3"], True),
    "Standard_D4s_v3": (4, 16384, "1,2", 107, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_D64s_v3": (64, 262144, "1,2", 1717, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_DC8s_v3": (8, 65536, "2", None, True, True, "amd64", ["1"], True),
    "Standard_DS2_v2": (2, 7168, "1,2", 92, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_E4d_v5": (4, 32768, "1,2", 161, False, True, "amd64", ["1", "2", "3"], True),
    "Standard_F16s_v2": (16, 32768, "1,2", 274, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_M8-2ms": (8, 224000, "1,2", 851, True, True, "amd64", ["2", "3"], True),
    "Standard_NC16as_T4_v3": (16, 112640, "1,2", 154, True, True, "amd64", ["1", "2", "3"], True),
    "Standard_NC24ads_A100_v4": (24, 225280, "2", 274, True, True, "amd64", ["1", "3"], True),
    "Standard_NC6s_v3": (6, 114688, "1,2", 343, True, True, "amd64", [], True),
}
SCUS_PRICES = {"Standard_A0": 0.02, "Standard_B1s": 0.0125, "Standard_B20ms": 0.998, "Standard_D128ds_v6": 9.568,
               "Standard_D16plds_v5": 0.737, "Standard_D2_v2": 0.127, "Standard_D2_v3": 0.110,
               "Standard_D2_v5": 0.115, "Standard_D2as_v6": 0.109, "Standard_D2s_v3": 0.110,
               "Standard_D4s_v3": 0.220, "Standard_D64s_v3": 3.520, "Standard_DC8s_v3": 0.922,
               "Standard_DS2_v2": 0.127, "Standard_E4d_v5": 0.346, "Standard_F16s_v2": 0.816,
               "Standard_M8-2ms": 1.844, "Standard_NC16as_T4_v3": 1.445, "Standard_NC24ads_A100_v4": 4.408,
               "Standard_NC6s_v3": 3.366}


def max_ephemeral_gb(caps: dict) -> int:
    """FindMaxEphemeralSizeGBAndPlacement (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go)."""
    if caps.get("EphemeralOSDiskSupported", "").lower() != "true":
        return 0
    nvme = int(caps.get("NvmeDiskSizeInMiB", "0") or 0)
    if nvme > 0 and "NvmeDisk" in caps.get("SupportedEphemeralOSDiskPlacements", ""):
        return nvme * 1048576 // 10 ** 9
    cached = int(caps.get("CachedDiskBytes", "0") or 0)
    if cached > 0:
        return cached // 10 ** 9
    res = int(caps.get("MaxResourceVolumeMB", "0") or 0)
    return res * 1048576 // 10 ** 9


def hyperv(caps: dict) -> str:
    v = caps.get("HyperVGenerations", "").replace(" ", "").upper()
    return ",".join(g for g, tag in (("1", "V1"), ("2", "V2")) if tag in v)


def test_bundled_catalogs():
    assert {"southcentralus", "westcentralus", "eastus"} <= set(available_catalogs())


@pytest.mark.parametrize("name", ["southcentralus", "westcentralus", "eastus"])
def test_catalog_wire_shape(name):
    skus, _ = cat.load_catalog_file(cat.CATALOG_DIR / "skus" / f"{name}.json")
    names = [s["name"] for s in skus]
    assert len(names) == len(set(names))
    for s in skus:
        assert s["resourceType"] == "virtualMachines"
        assert s["name"] == f"{s['tier']}_{s['size']}"
        assert s["locations"] == [name]
        assert isinstance(s["restrictions"], list)
        for c in s["capabilities"]:
            assert isinstance(c["value"], str), (s["name"], c)  # all strings
            # (https://learn.microsoft.com/rest/api/compute/resource-skus/list)
        for li in s["locationInfo"]:
            for zd in li.get("zoneDetails", []):
                assert "Name" in zd and "name" not in zd  # capital Name (azure-mgmt-compute 39.0.0
                # azure/mgmt/compute/models/_models.py ResourceSkuZoneDetails)
        caps = cat.capabilities(s)
        for key in ("vCPUs", "MemoryGB", "HyperVGenerations", "CpuArchitectureType", "PremiumIO",
                    "AcceleratedNetworkingEnabled", "EphemeralOSDiskSupported", "LowPriorityCapable",
                    "MaxResourceVolumeMB", "EncryptionAtHostSupported"):
            assert key in caps, (s["name"], key)
        assert parse_vm_size(s["size"]), s["size"]
        float(caps["MemoryGB"])
        assert int(caps["vCPUsAvailable"]) <= int(caps["vCPUs"])


def test_southcentralus_derived_values_match_provider_table():
    state = FakeAzure("southcentralus")
    skus = {s["name"]: s for s in state.skus()}
    assert set(skus) == set(SCUS_TABLE) and len(skus) == 20
    for name, (cpu, mem, hv, eph, premium, accel, arch, zones, lowpri) in SCUS_TABLE.items():
        caps = cat.capabilities(skus[name])
        assert int(caps["vCPUs"]) == cpu, name
        assert int(float(caps["MemoryGB"]) * 1024) == mem, name
        assert hyperv(caps) == hv, name
        assert (max_ephemeral_gb(caps) or None) == eph, name
        assert (caps["PremiumIO"] == "True") is premium, name
        assert (caps["AcceleratedNetworkingEnabled"] == "True") is accel, name
        assert {"x64": "amd64", "Arm64": "arm64"}[caps["CpuArchitectureType"]] == arch, name
        assert cat.available_zones(skus[name], "southcentralus") == zones, name
        assert (caps["LowPriorityCapable"] == "True") is lowpri, name
        assert skus[name]["restrictions"] == []
    gpus = {n: cat.capability(s, "GPUs") for n, s in skus.items() if cat.capability(s, "GPUs")}
    assert gpus == {"Standard_NC16as_T4_v3": "1", "Standard_NC24ads_A100_v4": "1", "Standard_NC6s_v3": "1"}
    assert cat.capability(skus["Standard_M8-2ms"], "vCPUsAvailable") == "2"
    assert cat.capability(skus["Standard_D2as_v6"], "DiskControllerTypes") == "NVMe"


def test_southcentralus_prices():
    prices = FakeAzure("southcentralus").prices["southcentralus"]
    assert {k: v["on-demand"] for k, v in prices.items()} == SCUS_PRICES
    # Spot items only where the SKU is LowPriorityCapable.
    assert "spot" not in prices["Standard_A0"] and "spot" not in prices["Standard_B1s"]
    assert all(0 < v["spot"] < v["on-demand"] for k, v in prices.items() if "spot" in v)


def test_westcentralus_is_non_zonal_with_a0_location_restricted():
    state = FakeAzure("westcentralus")
    skus = {s["name"]: s for s in state.skus()}
    assert len(skus) == 12
    assert all(li["zones"] == [] for s in skus.values() for li in s["locationInfo"])
    a0 = skus["Standard_A0"]
    assert a0["restrictions"] == [{"type": "Location", "values": ["westcentralus"],
                                   "restrictionInfo": {"locations": ["westcentralus"], "zones": []},
                                   "reasonCode": "NotAvailableForSubscription"}]
    assert cat.location_restricted(a0, "westcentralus")
    assert not any(cat.location_restricted(s, "westcentralus") for n, s in skus.items() if n != "Standard_A0")


def test_eastus_covers_requested_families():
    skus = {s["name"]: s for s in FakeAzure("eastus").skus()}
    names = set(skus)
    wanted = [
        "Standard_D2_v3", "Standard_D2s_v3", "Standard_D2s_v4", "Standard_D2s_v5", "Standard_D2s_v6",
        "Standard_D2as_v4", "Standard_D2as_v5", "Standard_D2as_v6", "Standard_D2ps_v5", "Standard_D2ps_v6",
        "Standard_D2pls_v5", "Standard_D2pls_v6", "Standard_E2s_v5", "Standard_F2s_v2", "Standard_B2s",
        "Standard_L8s_v3", "Standard_M8ms", "Standard_NC24ads_A100_v4", "Standard_NC40ads_H100_v5",
        "Standard_NC4as_T4_v3", "Standard_ND96isr_H100_v5", "Standard_NV36ads_A10_v5", "Standard_NV4ads_V710_v5",
        "Standard_DC2as_v5", "Standard_EC4as_v5", "Standard_M8-2ms", "Standard_E4-2s_v5", "Standard_D4als_v6",
    ]
    assert not [w for w in wanted if w not in names]
    caps = {n: cat.capabilities(s) for n, s in skus.items()}
    assert caps["Standard_D2ps_v5"]["CpuArchitectureType"] == "Arm64"
    assert caps["Standard_D2s_v6"]["DiskControllerTypes"] == "NVMe"  # NVMe-only v6 amd64
    assert caps["Standard_D2ps_v6"]["DiskControllerTypes"] == "SCSI,NVMe"
    assert caps["Standard_DC2as_v5"]["ConfidentialComputingType"] == "SNP"
    assert caps["Standard_ND96isr_H100_v5"]["GPUs"] == "8"
    assert int(caps["Standard_E4-2s_v5"]["vCPUsAvailable"]) < int(caps["Standard_E4-2s_v5"]["vCPUs"])
    # The zone-restricted SKU: every zone restricted -> only a regional offering remains.
    d8 = skus["Standard_D8s_v3"]
    assert d8["locationInfo"][0]["zones"] == ["1", "2", "3"]
    assert cat.available_zones(d8, "eastus") == []
    assert d8["restrictions"][0]["type"] == "Zone" and \
        d8["restrictions"][0]["reasonCode"] == "NotAvailableForSubscription"
    # A size pricing does not know.
    prices = FakeAzure("eastus").prices["eastus"]
    unpriced = [n for n in names if n not in prices]
    assert unpriced == ["Standard_D4as_v7"]
    # eastus examples of https://learn.microsoft.com/rest/api/compute/resource-skus/list,
    # https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices
    # (https://learn.microsoft.com/rest/api/compute/resource-skus/list,
    # https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices).
    for n, p in {"Standard_D2s_v3": 0.096, "Standard_D4s_v5": 0.192, "Standard_D2ps_v5": 0.077,
                 "Standard_E2s_v5": 0.126, "Standard_B2s": 0.0416, "Standard_DC2as_v5": 0.086,
                 "Standard_NC24ads_A100_v4": 3.673}.items():
        assert prices[n]["on-demand"] == p
    # Memory consistency: MemoryGB per vCPU in a sane band for every non-GPU, non-M size.
    for n, c in caps.items():
        ratio = float(c["MemoryGB"]) / int(c["vCPUs"])
        assert 0.5 <= ratio <= 30, (n, ratio)
        if c.get("EphemeralOSDiskSupported") == "True":
            assert c.get("SupportedEphemeralOSDiskPlacements"), n


def test_load_catalog_from_path_and_combined_file(tmp_path):
    f = tmp_path / "mine.json"
    skus = synthetic_skus(3, seed=1, region="westeurope")
    f.write_text(json.dumps({"value": skus, "prices": synthetic_prices(skus), "_meta": {"region": "westeurope"}}))
    state = FakeAzure("westeurope", catalog=str(f))
    assert len(state.skus()) == 3
    assert set(state.prices["westeurope"]) == {s["name"] for s in skus}
    with pytest.raises(FileNotFoundError):
        FakeAzure(catalog="nowhere-land")


def test_add_skus_normalizes_zone_details_and_values():
    state = FakeAzure(skus=[{"name": "Standard_X2s_v9", "locations": ["eastus"],
                             "locationInfo": [{"location": "eastus", "zones": ["1"],
                                               "zoneDetails": [{"name": ["1"], "capabilities": []}]}],
                             "capabilities": [{"name": "vCPUs", "value": 2}, {"name": "PremiumIO", "value": True}]}],
                      region="eastus")
    (sku,) = state.skus()
    assert sku["locationInfo"][0]["zoneDetails"] == [{"Name": ["1"], "capabilities": []}]
    assert cat.capabilities(sku) == {"vCPUs": "2", "PremiumIO": "True"}
    assert sku["size"] == "X2s_v9" and sku["restrictions"] == []


# ------------------------------------------------------------------------- synthetic SKUs


def test_synthetic_skus_are_deterministic_and_distinct():
    a = synthetic_skus(50, seed=7)
    b = synthetic_skus(50, seed=7)
    c = synthetic_skus(50, seed=8)
    assert a == b and a != c
    assert len({s["name"] for s in a}) == 50
    with pytest.raises(ValueError):
        synthetic_skus(10 ** 6)


def test_faker_provider():
    fake = cat.sku_faker(3)
    name = fake.azure_vm_size_name()
    assert name.startswith("Standard_") and parse_vm_size(name.split("_", 1)[1])
    sku = fake.azure_resource_sku(region="uksouth", zonal=False)
    assert sku["locations"] == ["uksouth"] and sku["locationInfo"][0]["zones"] == []


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10 ** 6), n=st.integers(1, 40), zonal=st.booleans())
def test_synthetic_skus_are_valid(seed, n, zonal):
    for s in synthetic_skus(n, seed=seed, region="eastus", zonal=zonal):
        caps = cat.capabilities(s)
        assert all(isinstance(v, str) for v in caps.values())
        assert parse_vm_size(s["size"]) and s["name"] == "Standard_" + s["size"]
        vcpus, mem = int(caps["vCPUs"]), float(caps["MemoryGB"])
        assert vcpus >= 2 and mem >= 2 * vcpus  # at least 2 GiB per vCPU
        assert caps["CpuArchitectureType"] in ("x64", "Arm64")
        if caps["CpuArchitectureType"] == "Arm64":
            assert caps["HyperVGenerations"] == "V2"
        if caps["EphemeralOSDiskSupported"] == "True":
            assert max_ephemeral_gb(caps) > 0
        zones = s["locationInfo"][0]["zones"]
        assert bool(zones) == zonal and set(zones) <= {"1", "2", "3"}
        assert set(cat.available_zones(s, "eastus")) <= set(zones)
    prices = synthetic_prices(synthetic_skus(n, seed=seed))
    assert all(p["on-demand"] > 0 for p in prices.values())


def test_eastus_matches_the_real_capture_where_sizes_overlap():
    keys = ["vCPUs", "MemoryGB", "MaxResourceVolumeMB", "CachedDiskBytes", "NvmeDiskSizeInMiB",
            "HyperVGenerations", "CpuArchitectureType", "PremiumIO", "AcceleratedNetworkingEnabled",
            "EphemeralOSDiskSupported", "SupportedEphemeralOSDiskPlacements", "GPUs", "DiskControllerTypes",
            "TrustedLaunchDisabled", "vCPUsAvailable", "MaxNetworkInterfaces", "MaxDataDiskCount"]
    east = {s["name"]: cat.capabilities(s) for s in FakeAzure("eastus").skus()}
    south = {s["name"]: cat.capabilities(s) for s in FakeAzure("southcentralus").skus()}
    common = set(east) & set(south)
    assert len(common) == 19
    for n in common:
        assert {k: east[n].get(k) for k in keys} == {k: south[n].get(k) for k in keys}, n


def test_a_name_no_file_system_can_hold_is_an_unknown_catalog():
    # a fuzzed region of 5,000 letters (seed 20261126) made Path.is_dir raise ENAMETOOLONG
    from fakeazure.catalog import resolve_catalog
    with pytest.raises(FileNotFoundError, match="unknown catalog"):
        resolve_catalog("a" * 5000)
