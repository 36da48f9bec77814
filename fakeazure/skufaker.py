"""Synthetic ResourceSkus drawn by a seeded Faker provider (fakeazure.catalog.synthetic_skus): valid
VM size names following the size grammar, with capabilities consistent with the series rules in
catalog.py (_SERIES). Apart from catalog.py because importing Faker costs more than a whole scenario
run, and only the synthetic generator needs it."""
from __future__ import annotations

from faker import Faker
from faker.providers import BaseProvider

from .catalog import _SERIES, _VCPUS


class AzureSkuProvider(BaseProvider):
    """Faker provider for valid Azure VM sizes and ResourceSku objects."""

    def azure_vm_size(self) -> tuple[str, dict]:
        fam, sub, feat, versions, gib, qfam, arm = self.random_element(_SERIES)
        v = self.random_element(versions)
        n = self.random_element(_VCPUS)
        size = f"{fam}{sub}{n}{feat}_v{v}"
        return size, {"letter": fam, "features": feat, "version": v, "vcpus": n, "gib_per_vcpu": gib,
                      "family": qfam.format(v=f"v{v}"), "arm64": arm}

    def azure_vm_size_name(self) -> str:
        return "Standard_" + self.azure_vm_size()[0]

    def azure_resource_sku(self, region: str = "eastus", zonal: bool = True) -> dict:
        size, info = self.azure_vm_size()
        return _build_synthetic(self.generator, size, info, region, zonal)


def _build_synthetic(fake: Faker, size: str, info: dict, region: str, zonal: bool) -> dict:
    n = info["vcpus"]
    feat = info["features"]
    v = info["version"]
    arm = info["arm64"]
    has_disk = "d" in feat or info["letter"] in ("F", "L") or (v <= 3 and info["letter"] in "DE")
    nvme_only = v >= 6 and not arm
    mem = n * info["gib_per_vcpu"]
    temp_mib = 0 if (not has_disk or nvme_only) else 38400 * n
    nvme_mib = 56320 * n if (nvme_only and "d" in feat) else 0
    cached = 25 * 1024 ** 3 * n if (has_disk and not nvme_only and v <= 3) else 0
    placements = ("NvmeDisk" if nvme_mib else "ResourceDisk,CacheDisk" if cached and temp_mib
                  else "ResourceDisk" if temp_mib else "")
    lowpri = fake.random.random() > 0.1
    hyperv = "V2" if (arm or v >= 6) else fake.random.choice(["V1,V2", "V1,V2", "V2"])
    caps = [
        ("MaxResourceVolumeMB", temp_mib), ("OSVhdSizeMB", 1047552), ("vCPUs", n),
        ("MemoryPreservingMaintenanceSupported", "True"), ("HyperVGenerations", hyperv),
    ]
    if v >= 6:
        caps.append(("DiskControllerTypes", "SCSI,NVMe" if arm else "NVMe"))
    if placements:
        caps.append(("SupportedEphemeralOSDiskPlacements", placements))
    caps += [
        ("MemoryGB", mem), ("MaxDataDiskCount", min(64, max(4, 2 * n))), ("CpuArchitectureType",
                                                                            "Arm64" if arm else "x64"),
        ("LowPriorityCapable", "True" if lowpri else "False"), ("PremiumIO", "True" if "s" in feat else "False"),
        ("VMDeploymentTypes", "IaaS"), ("vCPUsAvailable", n), ("vCPUsPerCore", 1 if arm else 2),
    ]
    if cached:
        caps.append(("CachedDiskBytes", cached))
    caps += [("UncachedDiskIOPS", 1600 * n), ("UncachedDiskBytesPerSecond", 24000000 * n)]
    if nvme_mib:
        caps.append(("NvmeDiskSizeInMiB", nvme_mib))
    caps += [("EphemeralOSDiskSupported", "True" if placements else "False"),
             ("EncryptionAtHostSupported", "True"), ("CapacityReservationSupported", "False")]
    if arm:
        caps.append(("TrustedLaunchDisabled", "True"))
    caps += [("AcceleratedNetworkingEnabled", "True"), ("RdmaEnabled", "False"),
             ("MaxNetworkInterfaces", 2 if n <= 4 else 4 if n <= 8 else 8),
             ("UltraSSDAvailable", "True" if fake.random.random() > 0.3 else "False")]
    zones = sorted(fake.random.sample(["1", "2", "3"], fake.random.randint(1, 3))) if zonal else []
    restrictions = []
    if zonal and zones and fake.random.random() < 0.05:
        bad = [fake.random.choice(zones)]
        restrictions.append({"type": "Zone", "values": [region],
                             "restrictionInfo": {"locations": [region], "zones": bad},
                             "reasonCode": "NotAvailableForSubscription"})
    return {
        "resourceType": "virtualMachines", "name": f"Standard_{size}", "tier": "Standard", "size": size,
        "family": info["family"], "locations": [region],
        "locationInfo": [{"location": region, "zones": zones, "zoneDetails": []}],
        "capabilities": [{"name": k, "value": str(val)} for k, val in caps],
        "restrictions": restrictions,
    }


def sku_faker(seed: int = 0) -> Faker:
    """A seeded Faker with :class:`AzureSkuProvider` registered."""
    fake = Faker()
    fake.add_provider(AzureSkuProvider)
    fake.seed_instance(seed)
    return fake
