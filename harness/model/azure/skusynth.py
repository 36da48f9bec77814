"""A ResourceSku synthesized from a VM size name, for SKUs a scenario names but no catalog holds.

The name grammar is skewer's `GetVMSize` (github.com/Azure/skewer@v0.0.24/vmsize.go, as
`harness.model.azure.vmsize.parse_vm_size` reads it): family, subfamily, vCPUs, additive feature
letters, accelerator,
version. Memory per vCPU comes from a per-series table (harness/data/vm-series.yaml); everything else
is a documented default from that file. The result
has the ARM wire shape the fake serves (string capability values), so the provider path computes
requirements and offerings from it exactly as from a real SKU. A synthesized SKU is an approximation:
`Synthesized.note` says so and every output that used one repeats it.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from harness.model.data import DATA_DIR, load_yaml
from harness.model.azure.vmsize import VMSize, VMSizeParseError, parse_vm_size, size_from_name

OS_VHD_SIZE_MB = 1047552          # the OSVhdSizeMB every size of the captured catalogs reports (fakeazure/catalogs)


class SynthesisError(ValueError):
    """The name is not a VM size the grammar can read (e.g. `Standard_Foo`)."""


@dataclass(frozen=True)
class Synthesized:
    sku: dict                     # the ResourceSku (ARM wire shape)
    prices: dict[str, float]      # {"on-demand": x, "spot": y}
    note: str                     # what was assumed, for warnings


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    return load_yaml((DATA_DIR / "vm-series.yaml").read_text())


def _row_matches(row: dict, v: VMSize) -> bool:
    if "family" in row and row["family"] != v.family:
        return False
    if "subfamily" in row and row["subfamily"] != v.subfamily:
        return False
    if "features" in row and not set(row["features"]) <= set(v.additive_features):
        return False
    if "versions" in row and v.version not in row["versions"]:
        return False
    if "accelerator" in row and (v.accelerator or "") != row["accelerator"]:
        return False
    return True


def memory_per_vcpu(v: VMSize) -> tuple[float, bool]:
    """GiB per vCPU for the series, and whether a table row (not the default) gave it."""
    for row in _table()["series"]:
        if _row_matches(row, v):
            return float(row["gibPerVCPU"]), True
    return float(_table()["defaults"]["gibPerVCPU"]), False


def _version_number(v: VMSize) -> int:
    digits = v.version[1:] if v.version[:1] in ("v", "V") else ""
    return int(digits) if digits.isdigit() else 1


def _family_name(v: VMSize) -> str:
    """The quota family in ARM's spelling, e.g. standardDSv3Family, standardDDSv5Family (a guess
    for unknown series: the letters of the series, upper case, then the version)."""
    letters = (v.family + v.subfamily + v.additive_features).upper()
    return f"standard{letters}{v.version.lower()}Family" if v.version else f"standard{letters}Family"


def synthesize(name: str, region: str, zones: list[str] | None = None) -> Synthesized:
    """A ResourceSku for `name` (`Standard_D8ds_v5`) in `region`; `zones` None means the default."""
    if not name.startswith("Standard_"):
        raise SynthesisError(f"{name!r} is not a VM size name (expected Standard_<size>)")
    size = size_from_name(name)
    try:
        v = parse_vm_size(size)
    except VMSizeParseError as e:
        raise SynthesisError(f"{name!r} is not a VM size the size grammar can read ({e})") from None
    if v.constrained:
        raise SynthesisError(f"{name!r} is a constrained-vCPU size; synthesis needs its parent size")
    d = _table()["defaults"]
    disk = _table()["tempDisk"]
    n = int(v.cpus)
    gib, from_table = memory_per_vcpu(v)
    mem = round(n * gib, 2)
    ver = _version_number(v)
    feats = v.additive_features
    arm = "p" in feats
    nvme = "d" in feats and ver >= int(disk["nvmeFromVersion"])
    temp = 0
    if "d" in feats and not nvme:
        temp = int(disk["withD"]) * n
    elif ver < 4 and v.family in "ADEFGLM":
        temp = int(disk["beforeV4"]) * n
    cached = int(disk["cacheBytesPerVCPU"]) * n if (temp and ver < 4 and "s" in feats) else 0
    nvme_mib = int(disk["nvmePerVCPU"]) * n if nvme else 0
    placements = ",".join(p for p, on in (("ResourceDisk", temp), ("CacheDisk", cached), ("NvmeDisk", nvme_mib)) if on)
    hyperv = "V2" if (arm or ver >= 6) else str(d["hyperVGenerations"])
    caps: list[tuple[str, object]] = [
        ("MaxResourceVolumeMB", temp), ("OSVhdSizeMB", OS_VHD_SIZE_MB), ("vCPUs", n), ("HyperVGenerations", hyperv),
        ("MemoryGB", mem), ("MaxDataDiskCount", d["maxDataDiskCount"]), ("CpuArchitectureType", "Arm64" if arm else "x64"),
        ("LowPriorityCapable", d["lowPriorityCapable"]), ("PremiumIO", "s" in feats), ("VMDeploymentTypes", "IaaS"),
        ("vCPUsAvailable", n), ("vCPUsPerCore", 1 if arm else 2),
    ]
    if ver >= 6:
        caps.append(("DiskControllerTypes", "SCSI,NVMe" if arm else "NVMe"))
    if placements:
        caps.append(("SupportedEphemeralOSDiskPlacements", placements))
    if cached:
        caps.append(("CachedDiskBytes", cached))
    if nvme_mib:
        caps.append(("NvmeDiskSizeInMiB", nvme_mib))
    gpus = int(d["gpusPerSKU"]) if v.family == "N" else 0
    if gpus:
        caps.append(("GPUs", gpus))
    caps += [("EphemeralOSDiskSupported", bool(placements)), ("EncryptionAtHostSupported", d["encryptionAtHost"]),
             ("AcceleratedNetworkingEnabled", d["acceleratedNetworking"]), ("RdmaEnabled", "r" in feats),
             ("MaxNetworkInterfaces", 2 if n <= 4 else 4 if n <= 8 else 8), ("UltraSSDAvailable", False)]
    zone_list = list(d["zones"]) if zones is None else list(zones)
    sku = {
        "resourceType": "virtualMachines", "name": name, "tier": "Standard", "size": size,
        "family": _family_name(v), "locations": [region],
        "locationInfo": [{"location": region, "zones": zone_list, "zoneDetails": []}],
        "capabilities": [{"name": k, "value": _wire(val)} for k, val in caps],
        "restrictions": [],
    }
    prices = estimate_prices(n, mem)
    od = prices["on-demand"]
    assumed = [f"{gib:g} GiB/vCPU" + ("" if from_table else " (default: no series row)"),
               f"zones {','.join(zone_list) or 'none'}" + (" (default)" if zones is None else ""),
               f"${od}/h on-demand"]
    if gpus:
        assumed.append(f"{gpus} GPU (default)")
    note = (f"{name} is synthesized from its name ({n} vCPU, {mem:g} GiB; " + ", ".join(assumed) +
            "): give the customer's `az vm list-skus` output as given.catalog {file: ...} for real values")
    return Synthesized(sku, prices, note)


def estimate_prices(vcpus: int, memory_gib: float) -> dict[str, float]:
    """A stated-default price (vm-series.yaml defaults) for a size no price table holds."""
    d = _table()["defaults"]
    od = round(float(d["onDemandPricePerVCPU"]) * vcpus + float(d["pricePerExtraGiB"]) * max(memory_gib - 4 * vcpus, 0), 5)
    return {"on-demand": od, "spot": round(od * float(d["spotFraction"]), 5)}


def _wire(value: object) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(value)


__all__ = ["Synthesized", "SynthesisError", "synthesize", "memory_per_vcpu", "estimate_prices"]
