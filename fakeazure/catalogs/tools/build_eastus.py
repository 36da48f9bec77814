"""Build ``catalogs/skus/eastus.json`` and ``catalogs/prices/eastus.json``.

The eastus catalog is *authored* data: per-series rules (memory per vCPU, temp
disk per vCPU, cache per vCPU, disk controller, architecture...) taken from the
public Azure size documentation, plus the real values of the sizes that also
appear in Karpenter's captured fixtures (D2s_v3, D16plds_v5, NC24ads_A100_v4,
A0 ...).  See ``catalogs/README.md`` for provenance and which values are
approximate.  Run ``python -m fakeazure.catalogs.tools.build_eastus`` to
regenerate; the JSON files are the source of truth at runtime.
"""
from __future__ import annotations

import json
import pathlib

REGION = "eastus"
Z3 = ["1", "2", "3"]
HERE = pathlib.Path(__file__).resolve().parent.parent


def _b(v: bool) -> str:
    return "True" if v else "False"


def vm(name, family, vcpus, mem, *, zones=Z3, hyperv="V1,V2", arch="x64", premium=True,
       accel=True, lowpri=True, temp_mib=0, cached_bytes=0, nvme_mib=0, placements=None,
       eah=True, ultra=True, max_data=None, max_nics=None, gpus=None, disk_ctrl=None,
       tl_disabled=False, cct=None, vcpus_avail=None, per_core=2, acus=None, rdma=False,
       parent=None, restrictions=None, zone_details=None, iops=None, bps=None,
       deploy="IaaS", mpm=True, tier="Standard"):
    if placements is None:
        if nvme_mib and not temp_mib:
            placements = "NvmeDisk"
        elif temp_mib and cached_bytes:
            placements = "ResourceDisk,CacheDisk"
        elif temp_mib:
            placements = "ResourceDisk"
        else:
            placements = ""
    n = vcpus
    max_data = max_data or min(64, max(4, 2 * n if n <= 16 else 32))
    max_nics = max_nics or (2 if n <= 4 else 4 if n <= 8 else 8)
    iops = iops or 1600 * n
    bps = bps or 24000000 * n
    c = []
    add = lambda k, v: c.append({"name": k, "value": str(v)})  # noqa: E731
    add("MaxResourceVolumeMB", temp_mib)
    add("OSVhdSizeMB", 1047552)
    add("vCPUs", n)
    add("MemoryPreservingMaintenanceSupported", _b(mpm))
    add("HyperVGenerations", hyperv)
    if disk_ctrl:
        add("DiskControllerTypes", disk_ctrl)
    add("SupportedCapacityReservationTypes", "Targeted")
    if placements:
        add("SupportedEphemeralOSDiskPlacements", placements)
    add("MemoryGB", mem)
    add("MaxDataDiskCount", max_data)
    add("CpuArchitectureType", arch)
    add("LowPriorityCapable", _b(lowpri))
    add("PremiumIO", _b(premium))
    add("VMDeploymentTypes", deploy)
    add("vCPUsAvailable", vcpus_avail if vcpus_avail is not None else n)
    if acus:
        add("ACUs", acus)
    if gpus:
        add("GPUs", gpus)
    if parent:
        add("ParentSize", parent)
    add("vCPUsPerCore", per_core)
    if temp_mib or cached_bytes:
        add("CombinedTempDiskAndCachedIOPS", 2000 * n)
        add("CombinedTempDiskAndCachedReadBytesPerSecond", 16384000 * n)
        add("CombinedTempDiskAndCachedWriteBytesPerSecond", 16384000 * n)
    if cached_bytes:
        add("CachedDiskBytes", cached_bytes)
    add("UncachedDiskIOPS", iops)
    add("UncachedDiskBytesPerSecond", bps)
    if nvme_mib:
        add("NvmeDiskSizeInMiB", nvme_mib)
    add("EphemeralOSDiskSupported", _b(bool(placements)))
    add("EncryptionAtHostSupported", _b(eah))
    add("CapacityReservationSupported", "False")
    if cct:
        add("ConfidentialComputingType", cct)
    if tl_disabled:
        add("TrustedLaunchDisabled", "True")
    add("AcceleratedNetworkingEnabled", _b(accel))
    add("RdmaEnabled", _b(rdma))
    add("MaxNetworkInterfaces", max_nics)
    add("UltraSSDAvailable", _b(ultra))
    if zone_details is None:
        zone_details = ([{"Name": sorted(zones), "capabilities": [{"name": "UltraSSDAvailable", "value": "True"}]}]
                        if ultra and zones else [])
    return {
        "resourceType": "virtualMachines",
        "name": name,
        "tier": tier,
        "size": name.split("_", 1)[1],
        "family": family,
        "locations": [REGION],
        "locationInfo": [{"location": REGION, "zones": list(zones), "zoneDetails": zone_details}],
        "capabilities": c,
        "restrictions": restrictions or [],
    }


def zone_restriction(zones, reason="NotAvailableForSubscription"):
    return {"type": "Zone", "values": [REGION],
            "restrictionInfo": {"locations": [REGION], "zones": list(zones)}, "reasonCode": reason}


def location_restriction(reason="NotAvailableForSubscription"):
    return {"type": "Location", "values": [REGION],
            "restrictionInfo": {"locations": [REGION], "zones": []}, "reasonCode": reason}


GIB = 1024 ** 3
SKUS = []
S = SKUS.append

# --- A / legacy --------------------------------------------------------------
# Real eastus capture: A0 regional, every zone restricted for the subscription.
S(vm("Standard_A0", "standardA0_A7Family", 1, 0.75, zones=[], hyperv="V1", premium=False, accel=False,
     lowpri=False, temp_mib=20480, eah=False, ultra=False, max_data=1, max_nics=2, per_core=1, acus=50,
     iops=1600, bps=24000000, deploy="IaaS,PaaS", placements="",
     restrictions=[zone_restriction(Z3)]))
# Real (skewer eastus.json): promo size restricted for the subscription in the location and all zones.
S(vm("Standard_D13_v2_Promo", "standardDv2PromoFamily", 8, 56, hyperv="V1", premium=False, temp_mib=409600,
     eah=False, ultra=False, per_core=1, acus=210, placements="", deploy="IaaS,PaaS",
     restrictions=[location_restriction(), zone_restriction(Z3)]))
S(vm("Standard_D2_v2", "standardDv2Family", 2, 7, hyperv="V1", premium=False, temp_mib=102400, eah=False,
     ultra=False, per_core=1, acus=210, placements="", deploy="IaaS,PaaS", max_data=8, iops=6400, bps=96000000))
S(vm("Standard_DS2_v2", "standardDSv2Family", 2, 7, temp_mib=14336, cached_bytes=92341796864, ultra=False,
     per_core=1, acus=210, max_data=8, iops=6400, bps=96000000))

# --- D v3 / v4 ---------------------------------------------------------------
for n in (2, 4, 8, 16):
    restr = [zone_restriction(Z3)] if n == 8 else None  # every zone restricted -> regional only
    S(vm(f"Standard_D{n}s_v3", "standardDSv3Family", n, 4 * n, temp_mib=8192 * n, cached_bytes=25 * GIB * n,
         acus=160, restrictions=restr, zones=(["2", "3", "1"] if n == 16 else Z3)))
for n in (2, 4):
    S(vm(f"Standard_D{n}_v3", "standardDv3Family", n, 4 * n, hyperv="V1", premium=False, temp_mib=25600 * n,
         eah=False, ultra=False, acus=160, placements="", deploy="IaaS,PaaS"))
    S(vm(f"Standard_D{n}s_v4", "standardDSv4Family", n, 4 * n))
    S(vm(f"Standard_D{n}as_v4", "standardDASv4Family", n, 4 * n, temp_mib=8192 * n, cached_bytes=25 * GIB * n,
         acus=230))

# --- D v5 --------------------------------------------------------------------
for n in (2, 4, 8, 16):
    S(vm(f"Standard_D{n}s_v5", "standardDSv5Family", n, 4 * n, iops=1875 * n, bps=42500000 * n))
for n in (2, 4):
    S(vm(f"Standard_D{n}_v5", "standardDv5Family", n, 4 * n, premium=False, iops=1875 * n, bps=42500000 * n))
    S(vm(f"Standard_D{n}ds_v5", "standardDDSv5Family", n, 4 * n, temp_mib=38400 * n, iops=1875 * n,
         bps=42500000 * n))
    S(vm(f"Standard_D{n}as_v5", "standardDASv5Family", n, 4 * n, iops=1875 * n, bps=41000000 * n))
    S(vm(f"Standard_D{n}ps_v5", "standardDPSv5Family", n, 4 * n, hyperv="V2", arch="Arm64", per_core=1,
         tl_disabled=True, iops=1875 * n, bps=42500000 * n))
    S(vm(f"Standard_D{n}pls_v5", "standardDPLSv5Family", n, 2 * n, hyperv="V2", arch="Arm64", per_core=1,
         tl_disabled=True, iops=1875 * n, bps=42500000 * n))
S(vm("Standard_D2ads_v5", "standardDADSv5Family", 2, 8, temp_mib=76800, iops=3750, bps=82000000))
S(vm("Standard_D4pds_v5", "standardDPDSv5Family", 4, 16, hyperv="V2", arch="Arm64", per_core=1,
     tl_disabled=True, temp_mib=38400 * 4, cached_bytes=25 * GIB * 4))
S(vm("Standard_D4plds_v5", "standardDPLDSv5Family", 4, 8, hyperv="V2", arch="Arm64", per_core=1,
     tl_disabled=True, temp_mib=38400 * 4, cached_bytes=25 * GIB * 4))
# Real capture values (southcentralus/eastus fixtures).
S(vm("Standard_D16plds_v5", "standardDPLDSv5Family", 16, 32, hyperv="V2", arch="Arm64", per_core=1,
     tl_disabled=True, temp_mib=614400, cached_bytes=429496729600, iops=25600, bps=600000000, max_nics=4))

# --- D v6 (NVMe) ---------------------------------------------------------------
for n in (2, 4):
    # Intel Dsv6 / AMD Dasv6 / Dalsv6: NVMe-only disk controller (Azure/karpenter-provider-azure#616).
    S(vm(f"Standard_D{n}s_v6", "standardDSv6Family", n, 4 * n, hyperv="V2", disk_ctrl="NVMe",
         iops=3750 * n // 2, bps=106000000 * n // 2))
    S(vm(f"Standard_D{n}as_v6", "standardDav6Family", n, 4 * n, hyperv="V2", disk_ctrl="NVMe", acus=230,
         iops=2000 * n, bps=45000000 * n))
    S(vm(f"Standard_D{n}als_v6", "standardDalsv6Family", n, 2 * n, hyperv="V2", disk_ctrl="NVMe", acus=230,
         iops=2000 * n, bps=45000000 * n))
    # Cobalt 100 (Arm64) declares both controllers.
    S(vm(f"Standard_D{n}ps_v6", "standardDPSv6Family", n, 4 * n, hyperv="V2", arch="Arm64", per_core=1,
         disk_ctrl="SCSI,NVMe", tl_disabled=True, iops=3750 * n // 2, bps=40000000 * n))
    S(vm(f"Standard_D{n}pls_v6", "standardDPLSv6Family", n, 2 * n, hyperv="V2", arch="Arm64", per_core=1,
         disk_ctrl="SCSI,NVMe", tl_disabled=True, iops=3750 * n // 2, bps=40000000 * n))
S(vm("Standard_D2ads_v6", "standardDadsv6Family", 2, 8, hyperv="V2", disk_ctrl="NVMe", nvme_mib=56320 * 2,
     iops=4000, bps=90000000))
S(vm("Standard_D4ds_v6", "standardDDSv6Family", 4, 16, hyperv="V2", disk_ctrl="NVMe", nvme_mib=56320 * 4,
     iops=7500, bps=212000000))
S(vm("Standard_D128ds_v6", "StandardDdsv6Family", 128, 512, hyperv="V2", disk_ctrl="NVMe", nvme_mib=7208960,
     iops=204800, bps=6782000000, max_data=64, ultra=False))

# --- E v5 ----------------------------------------------------------------------
for n in (2, 4, 8):
    S(vm(f"Standard_E{n}s_v5", "standardESv5Family", n, 8 * n, iops=1875 * n, bps=42500000 * n))
S(vm("Standard_E2ds_v5", "standardEDSv5Family", 2, 16, temp_mib=76800, iops=3750, bps=85000000))
S(vm("Standard_E4d_v5", "standardEDv5Family", 4, 32, premium=False, temp_mib=153600, iops=6400,
     bps=145000000))
S(vm("Standard_E2as_v5", "standardEASv5Family", 2, 16, iops=3750, bps=82000000))
S(vm("Standard_E2ps_v5", "standardEPSv5Family", 2, 16, hyperv="V2", arch="Arm64", per_core=1,
     tl_disabled=True, iops=3750, bps=85000000))
# Constrained vCPU: 4 vCPUs of hardware, 2 usable (priced like its parent).
S(vm("Standard_E4-2s_v5", "standardESv5Family", 4, 32, vcpus_avail=2, parent="Standard_E4s_v5",
     iops=7500, bps=170000000))

# --- F v2 ----------------------------------------------------------------------
for n in (2, 4, 8, 16):
    S(vm(f"Standard_F{n}s_v2", "standardFSv2Family", n, 2 * n, temp_mib=8192 * n, cached_bytes=16 * GIB * n,
         acus=195, max_nics=(2 if n <= 4 else 4)))

# --- B -------------------------------------------------------------------------
S(vm("Standard_B1s", "standardBSFamily", 1, 1, lowpri=False, accel=False, temp_mib=4096,
     cached_bytes=30 * GIB, per_core=1, ultra=False, iops=320, bps=22500000, max_data=2))
S(vm("Standard_B2s", "standardBSFamily", 2, 4, lowpri=False, accel=False, temp_mib=8192,
     cached_bytes=15 * GIB, per_core=1, ultra=False, iops=1280, bps=15000000, max_nics=3))
S(vm("Standard_B2ms", "standardBSFamily", 2, 8, lowpri=False, accel=False, temp_mib=16384,
     cached_bytes=15 * GIB, per_core=1, ultra=False, iops=1920, bps=22500000, max_nics=3))
S(vm("Standard_B4ms", "standardBSFamily", 4, 16, lowpri=False, accel=False, temp_mib=32768,
     cached_bytes=35 * GIB, per_core=1, ultra=False, iops=2880, bps=35000000, max_nics=4))
S(vm("Standard_B20ms", "standardBSFamily", 20, 80, lowpri=False, temp_mib=163840, cached_bytes=30 * GIB,
     per_core=1, iops=4320, bps=50000000, max_data=32, max_nics=8))
S(vm("Standard_B2s_v2", "standardBsv2Family", 2, 8, lowpri=False, ultra=False, iops=3750, bps=85000000))
S(vm("Standard_B2pls_v2", "standardBplsv2Family", 2, 4, hyperv="V2", arch="Arm64", per_core=1,
     lowpri=False, ultra=False, tl_disabled=True, iops=3750, bps=85000000))

# --- L (storage optimised, local NVMe) -----------------------------------------
S(vm("Standard_L8s_v3", "standardLSv3Family", 8, 64, temp_mib=81920, nvme_mib=1831055,
     placements="ResourceDisk", iops=12800, bps=290000000))
S(vm("Standard_L8as_v3", "standardLASv3Family", 8, 64, temp_mib=81920, nvme_mib=1831055,
     placements="ResourceDisk", iops=12800, bps=200000000))

# --- M -------------------------------------------------------------------------
S(vm("Standard_M8ms", "standardMSFamily", 8, 218.75, temp_mib=262144, cached_bytes=851477266432,
     tl_disabled=True, acus=160, mpm=False, iops=5000, bps=125000000, max_data=8, max_nics=2))
S(vm("Standard_M8-2ms", "standardMSFamily", 8, 218.75, temp_mib=262144, cached_bytes=851477266432,
     tl_disabled=True, acus=160, mpm=False, iops=5000, bps=125000000, max_data=8, max_nics=2, vcpus_avail=2,
     parent="Standard_M8ms", zones=["2", "3"]))

# --- GPU: NC A100 / H100 / T4 / V100, ND H100, NV A10 / V710 ------------------------
for n, mem, g, tmp, cache, nv in ((24, 220, 1, 65536, 256 * GIB, 915527),
                                  (48, 440, 2, 131072, 512 * GIB, 1831054),
                                  (96, 880, 4, 262144, 1024 * GIB, 3662108)):
    S(vm(f"Standard_NC{n}ads_A100_v4", "StandardNCADSA100v4Family", n, mem, hyperv="V2", gpus=g,
         temp_mib=tmp, cached_bytes=cache, nvme_mib=nv, placements="ResourceDisk,CacheDisk", per_core=1,
         mpm=False, zones=["1", "2"], max_data=8 * g, max_nics=2 * g, iops=30000 * g, bps=1024000000 * g))
S(vm("Standard_NC40ads_H100_v5", "standardNCadsH100v5Family", 40, 320, hyperv="V2", gpus=1, temp_mib=131072,
     nvme_mib=3576832, placements="ResourceDisk", per_core=1, mpm=False, max_data=12, iops=100000,
     bps=3000000000))
S(vm("Standard_NC80adis_H100_v5", "standardNCadsH100v5Family", 80, 640, hyperv="V2", gpus=2,
     temp_mib=262144, nvme_mib=7153664, placements="ResourceDisk", per_core=1, mpm=False, max_data=24,
     iops=200000, bps=6000000000))
for n, mem, g, tmp, cache in ((4, 28, 1, 180224, 40 * GIB), (8, 56, 1, 360448, 80 * GIB),
                              (16, 110, 1, 360448, 144 * GIB), (64, 440, 4, 2949120, 576 * GIB)):
    S(vm(f"Standard_NC{n}as_T4_v3", "Standard NCASv3_T4 Family", n, mem, gpus=g, temp_mib=tmp,
         cached_bytes=cache, per_core=1, mpm=False, iops=3000 * n, bps=46080000 * n))
S(vm("Standard_NC6s_v3", "standardNCSv3Family", 6, 112, zones=[], gpus=1, temp_mib=753664,
     cached_bytes=343597383680, per_core=1, mpm=False, iops=20000, bps=300000000, max_data=12))
S(vm("Standard_ND96isr_H100_v5", "standardNDSH100v5Family", 96, 1900, hyperv="V2", gpus=8,
     temp_mib=1024000, nvme_mib=29302784, placements="ResourceDisk", per_core=1, mpm=False, rdma=True,
     max_data=32, max_nics=8, iops=80000, bps=1200000000))
for n, mem, g, tmp in ((6, 55, 1, 184320), (36, 440, 1, 737280), (72, 880, 2, 1474560)):
    S(vm(f"Standard_NV{n}ads_A10_v5", "StandardNVADSA10v5Family", n, mem, gpus=g, temp_mib=tmp,
         per_core=1, mpm=False, iops=1600 * n, bps=24000000 * n))
for n, mem, tmp in ((4, 16, 0), (28, 160, 1024000)):
    name = "Standard_NV4ads_V710_v5" if n == 4 else "Standard_NV28adms_V710_v5"
    S(vm(name, "standardNVadsV710v5Family", n, mem, hyperv="V2", gpus=1, temp_mib=tmp, per_core=1,
         mpm=False, iops=1600 * n, bps=24000000 * n))

# --- Confidential (DC / EC) ------------------------------------------------------
S(vm("Standard_DC2as_v5", "standardDCASv5Family", 2, 8, hyperv="V2", cct="SNP", accel=False, ultra=False,
     iops=3750, bps=82000000))
S(vm("Standard_DC4ads_v5", "standardDCADSv5Family", 4, 16, hyperv="V2", cct="SNP", accel=False,
     temp_mib=153600, ultra=False, iops=6400, bps=144000000))
S(vm("Standard_EC4as_v5", "standardECASv5Family", 4, 32, hyperv="V2", cct="SNP", accel=False, ultra=False,
     iops=6400, bps=144000000))
S(vm("Standard_DC2es_v5", "standardDCESv5Family", 2, 8, hyperv="V2", cct="TDX", accel=False, ultra=False,
     iops=3750, bps=85000000))
S(vm("Standard_DC8s_v3", "standardDCSv3Family", 8, 64, hyperv="V2", per_core=1, ultra=False, zones=["1"],
     iops=12800, bps=201326592, max_nics=8, max_data=32))

# --- A size the pricing data does not know (synthetic name, see README) -----------
S(vm("Standard_D4as_v7", "standardDav7Family", 4, 16, hyperv="V2", disk_ctrl="NVMe", iops=8000,
     bps=180000000))

# --- Prices (USD/h, Linux pay-as-you-go). Values marked in README. -----------------
ON_DEMAND = {
    "Standard_A0": 0.02, "Standard_D13_v2_Promo": 0.741, "Standard_D2_v2": 0.146, "Standard_DS2_v2": 0.146,
    "Standard_D2s_v3": 0.096, "Standard_D4s_v3": 0.192, "Standard_D8s_v3": 0.384, "Standard_D16s_v3": 0.768,
    "Standard_D2_v3": 0.096, "Standard_D4_v3": 0.192, "Standard_D2s_v4": 0.096, "Standard_D4s_v4": 0.192,
    "Standard_D2as_v4": 0.096, "Standard_D4as_v4": 0.192,
    "Standard_D2s_v5": 0.096, "Standard_D4s_v5": 0.192, "Standard_D8s_v5": 0.384, "Standard_D16s_v5": 0.768,
    "Standard_D2_v5": 0.096, "Standard_D4_v5": 0.192, "Standard_D2ds_v5": 0.113, "Standard_D4ds_v5": 0.226,
    "Standard_D2as_v5": 0.086, "Standard_D4as_v5": 0.172, "Standard_D2ads_v5": 0.103,
    "Standard_D2ps_v5": 0.077, "Standard_D4ps_v5": 0.154, "Standard_D2pls_v5": 0.068, "Standard_D4pls_v5": 0.136,
    "Standard_D4pds_v5": 0.181, "Standard_D4plds_v5": 0.156, "Standard_D16plds_v5": 0.624,
    "Standard_D2s_v6": 0.101, "Standard_D4s_v6": 0.202, "Standard_D2as_v6": 0.091, "Standard_D4as_v6": 0.182,
    "Standard_D2als_v6": 0.077, "Standard_D4als_v6": 0.153, "Standard_D2ps_v6": 0.080, "Standard_D4ps_v6": 0.160,
    "Standard_D2pls_v6": 0.068, "Standard_D4pls_v6": 0.136, "Standard_D2ads_v6": 0.108, "Standard_D4ds_v6": 0.236,
    "Standard_D128ds_v6": 7.552,
    "Standard_E2s_v5": 0.126, "Standard_E4s_v5": 0.252, "Standard_E8s_v5": 0.504, "Standard_E2ds_v5": 0.144,
    "Standard_E4d_v5": 0.288, "Standard_E2as_v5": 0.113, "Standard_E2ps_v5": 0.101, "Standard_E4-2s_v5": 0.252,
    "Standard_F2s_v2": 0.085, "Standard_F4s_v2": 0.169, "Standard_F8s_v2": 0.338, "Standard_F16s_v2": 0.677,
    "Standard_B1s": 0.0104, "Standard_B2s": 0.0416, "Standard_B2ms": 0.0832, "Standard_B4ms": 0.166,
    "Standard_B20ms": 0.832, "Standard_B2s_v2": 0.0832, "Standard_B2pls_v2": 0.0336,
    "Standard_L8s_v3": 0.624, "Standard_L8as_v3": 0.552, "Standard_M8ms": 1.67, "Standard_M8-2ms": 1.67,
    "Standard_NC24ads_A100_v4": 3.673, "Standard_NC48ads_A100_v4": 7.346, "Standard_NC96ads_A100_v4": 14.692,
    "Standard_NC40ads_H100_v5": 6.98, "Standard_NC80adis_H100_v5": 13.96,
    "Standard_NC4as_T4_v3": 0.526, "Standard_NC8as_T4_v3": 0.752, "Standard_NC16as_T4_v3": 1.204,
    "Standard_NC64as_T4_v3": 4.352, "Standard_NC6s_v3": 3.06, "Standard_ND96isr_H100_v5": 98.32,
    "Standard_NV6ads_A10_v5": 0.454, "Standard_NV36ads_A10_v5": 3.2, "Standard_NV72ads_A10_v5": 6.52,
    "Standard_NV4ads_V710_v5": 0.35, "Standard_NV28adms_V710_v5": 2.45,
    "Standard_DC2as_v5": 0.086, "Standard_DC4ads_v5": 0.206, "Standard_EC4as_v5": 0.252,
    "Standard_DC2es_v5": 0.096, "Standard_DC8s_v3": 0.904,
}
# Synthetic spot discount per size-family letter (real spot prices float; these are stand-ins).
SPOT_FACTOR = {"A": None, "B": None, "D": 0.2, "E": 0.22, "F": 0.25, "L": 0.3, "M": 0.35, "N": 0.4}


def spot_price(sku: dict, od: float):
    caps = {c["name"]: c["value"] for c in sku["capabilities"]}
    f = SPOT_FACTOR.get(sku["size"][0])
    if f is None or caps.get("LowPriorityCapable") != "True":
        return None
    return round(od * f, 5)


def main() -> None:
    names = [s["name"] for s in SKUS]
    assert len(names) == len(set(names)), "duplicate SKU"
    (HERE / "skus" / f"{REGION}.json").write_text(json.dumps({
        "_meta": {"region": REGION, "source": "authored: see catalogs/README.md", "date": "2026-09-01"},
        "value": SKUS}, indent=1) + "\n")
    prices = {}
    for s in SKUS:
        od = ON_DEMAND.get(s["name"])
        if od is None:
            continue
        entry = {"on-demand": od}
        sp = spot_price(s, od)
        if sp is not None:
            entry["spot"] = sp
        prices[s["name"]] = entry
    (HERE / "prices" / f"{REGION}.json").write_text(json.dumps({
        "_meta": {"region": REGION, "currency": "USD", "unit": "1 Hour", "os": "Linux",
                  "source": "see catalogs/README.md", "date": "2026-09-01"},
        "prices": prices}, indent=1, sort_keys=False) + "\n")
    print(f"{len(SKUS)} SKUs, {len(prices)} prices")


if __name__ == "__main__":
    main()
