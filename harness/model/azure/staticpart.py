"""The per-SKU static part of an instance type: everything that does not depend on availability,
quota or prices, or the reason the SKU is dropped.

Provider v1.14.0 pkg/providers/instancetype/instancetypes.go (UpdateInstanceTypes, isSupported,
isInstanceTypeSupportedByFilters, the per-SKU part of List and createOfferings) and instancetype.go
(computeRequirements, computeCapacity); github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/instancetype/instancetype.go computeRequirements, pkg/providers/instancetype/instancetypes.go
createOfferings. Every profile difference comes from
the profile's switches (harness.model.azure.switches).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from harness.model.values.gostrconv import float_to_int64
from harness.model.azure.nodeimage import node_image_version_label, os_sku_from_image_family
from harness.model.azure.overhead import Overhead, max_pods, memory_capacity, node_overhead
from harness.model.azure.params import ClusterParams, NodeClassParams
from harness.model.labels.requirements import Requirement
from harness.model.azure.skus import (AZURE_TO_KUBE_ARCH, availability_zones, canonical_sku, cap_contains, cap_float, cap_int,
                                cap_true, capabilities, ephemeral_gb, go_float, has_capability_in_zone,
                                has_location_restriction, max_ephemeral_bytes, normalize_location)
from harness.model.upstream.factreads import NOT_KNOWN_REASON
from harness.model.upstream.skutables import gpu_info, restricted_skus
from harness.model.azure.switches import Switches, gpu_supported_by_image_family
from harness.model.azure.vmsize import VMSize, VMSizeParseError, parse_vm_size
from harness.model.labels.wellknown import (ACCELERATED, AKS_SKU_CPU, AKS_SKU_MEMORY, ARCH, CAPACITY_TYPE, CAPACITY_TYPES,
                                     CLUSTER, ENCRYPTION_AT_HOST, EPHEMERAL_MAX, FIPS_ENABLED, GPU_COUNT,
                                     GPU_MANUFACTURER, GPU_NAME, HYPERV, INSTANCE_TYPE, MODE, NODE_IMAGE_VERSION, OS,
                                     OS_SKU, PLACEMENT_SCOPE, PREMIUM, PRIORITY, REGION, SCALE_SET_PRIORITY, SKU_CPU,
                                     SKU_FAMILY, SKU_MEMORY, SKU_NAME, SKU_SERIES, SKU_VERSION, SPOT, ULTRA_SSD, ZONE,
                                     normalize_cluster_label)

if TYPE_CHECKING:
    from harness.model.azure.itcache import InstanceTypeCache


@dataclass
class ZoneOffer:
    """One offering zone of a SKU (a zone label or the regional value) and its requirement templates."""

    zone: str
    scope: str
    ultra: tuple[str, ...]
    reqs: dict[str, dict[str, Requirement]] = field(default_factory=dict)   # capacity type -> offering reqs

    def fill(self, sw: Switches, cache: "InstanceTypeCache") -> "ZoneOffer":
        """The offering requirements per capacity type (karpenter-provider-azure v1.14.0
        pkg/providers/instancetype/instancetypes.go createOfferings), each key
        single-valued except ultra-SSD."""
        key = (self.zone, self.scope, self.ultra, sw)
        hit = cache.offer_reqs(key)
        if hit is not None:
            self.reqs = hit
            return self
        req = cache.req
        for ct in CAPACITY_TYPES:
            r = {CAPACITY_TYPE: req(CAPACITY_TYPE, (ct,)), ZONE: req(ZONE, (self.zone,))}
            if sw.offer_placement_scope:
                r[PLACEMENT_SCOPE] = req(PLACEMENT_SCOPE, (self.scope,))
            prio = "spot" if ct == SPOT else "regular"
            if sw.offer_scale_set_priority:
                r[SCALE_SET_PRIORITY] = req(SCALE_SET_PRIORITY, (prio,))
            if sw.offer_priority:
                r[PRIORITY] = req(PRIORITY, (prio,))
            if sw.offer_ultra_ssd:
                r[ULTRA_SSD] = req(ULTRA_SSD, self.ultra)
            self.reqs[ct] = r
        cache.remember_offer_reqs(key, self.reqs)
        return self


@dataclass
class StaticPart:
    """One kept SKU before availability and prices: base requirements, zones, capacity, overhead."""

    name: str
    sku: Mapping
    vmsize: VMSize
    vcpus: int
    family: str
    zones: list[ZoneOffer]
    low_priority: bool
    unknown: bool
    base: dict[str, Requirement]
    capacity: dict[str, int]
    overhead: Overhead


def _drop_reason_supported(caps: Mapping[str, str], vcpus: int | None, mem_gib: float | None, gpus: int | None,
                           gpu: tuple[str, tuple[str, ...]] | None, vm: VMSize, sw: Switches,
                           cluster: ClusterParams) -> str | None:
    """`isSupported` (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
    UpdateInstanceTypes), in upstream's order."""
    if vcpus is None or vcpus < 2:
        return "fewer than 2 vCPUs" if vcpus is not None else "vCPUs capability missing or invalid"
    if mem_gib is None or not mem_gib >= 3.5:          # NaN fails `memGiB >= 3.5` too
        return "less than 3.5 GiB memory" if mem_gib is not None else "MemoryGB capability missing or invalid"
    if gpus is not None and gpus > 0 and gpu is None:
        return "unsupported GPU"
    if vm.constrained:
        return "constrained vCPU"
    if vm.size.startswith("DC") or vm.size.startswith("EC"):
        return "confidential"
    if sw.nvme_only_excluded_without_sig and not cluster.use_sig:
        # Azure/karpenter-provider-azure#943: SCSI declared, or nothing declared, unless SIG is used.
        scsi = cap_contains(caps, "DiskControllerTypes", "SCSI")
        nvme = cap_contains(caps, "DiskControllerTypes", "NVMe")
        if nvme and not scsi:
            return "NVMe-only disk controller without SIG"
    return None


def _gpu(name: str, sw: Switches) -> tuple[str, tuple[str, ...]] | None:
    """The GPU-table entry if its vendor is supported by the profile (`gpuVendors`; before AMD support
    only NVIDIA-enabled SKUs count as GPU SKUs)."""
    info = gpu_info(name, sw.tables)
    return info if info is not None and info[0] in sw.gpu_vendors else None


def _drop_reason_nodeclass(caps: Mapping[str, str], vcpus: int, memory_mib: int, arch: str,
                           gpu: tuple[str, tuple[str, ...]] | None, nc: NodeClassParams,
                           sw: Switches) -> str | None:
    """Per-NodeClass filters (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
    `isInstanceTypeSupportedByFilters`)."""
    if gpu is not None:
        vendor, oses = gpu
        # which families reach which GPU table is the release's own (Switches.gpu_image_family_os): at
        # v1.6.2 the generic `Ubuntu` reaches none, from v1.6.3 (#1147) it is one of UbuntuFamilies
        if not gpu_supported_by_image_family(sw, nc.image_family, oses):
            return f"GPU SKU not supported by image family {nc.image_family or 'Ubuntu'}"
        if nc.gpu_mode == "Driver" and vendor != "nvidia":
            return f"GPU mode Driver installs NVIDIA drivers only ({vendor} GPU)"
    if nc.encryption_at_host and not cap_true(caps, "EncryptionAtHostSupported"):
        return "encryption at host not supported"
    if nc.local_dns and (vcpus < 4 or memory_mib < 244):
        return "LocalDNS needs at least 4 vCPUs and 244 MiB memory"
    if nc.artifact_streaming and arch == "arm64":
        return "artifact streaming does not support arm64"
    if sw.trusted_launch_filter and nc.trusted_launch and (not cap_contains(caps, "HyperVGenerations", "V2")
                              or cap_contains(caps, "TrustedLaunchDisabled", "True")):
        return "trusted launch not supported"
    return None


@dataclass(frozen=True)
class SkuReading:
    """What `UpdateInstanceTypes`' filters read from one canonical SKU, kept so the static part
    does not parse the size and capabilities a second time."""

    sku: Mapping                  # canonical_sku(raw)
    caps: Mapping[str, str]
    vm: VMSize
    vcpus: int | None
    mem_gib: float | None
    gpus: int | None
    gpu: tuple[str, tuple[str, ...]] | None


def read_sku(sku: Mapping, cluster: ClusterParams, sw: Switches) -> SkuReading | str:
    """Why `UpdateInstanceTypes` (instancetypes.go) leaves a canonical SKU out, in its order, or what
    its filters read: the ARM location filter, `ResourceTypeFilter("virtualMachines")` (a SKU without
    a resourceType fails it), `IsRestrictedSKU`, `GetVMSize` of the SKU's `size` field,
    `HasLocationRestriction`, `isSupported`."""
    name = sku.get("name") or ""
    locations = sku.get("locations")
    # (harness assumption) ARM's `$filter=location eq '<region>'` returns SKUs listing the region;
    # a SKU without `locations` is passed through (the difftest's resource client does the same).
    if locations and not any(normalize_location(loc) == normalize_location(cluster.region) for loc in locations):
        return f"not offered in region {cluster.region}"
    rtype = sku.get("resourceType")
    if rtype is None or rtype.lower() != "virtualmachines":
        return f"not a virtualMachines SKU ({rtype})"
    restricted = restricted_skus(sw.tables).get(name)
    if restricted:
        return restricted
    if sku.get("size") is None:
        # GetVMSize("") fails and the "parsing VM size" log line dereferences the nil sku.Size: the
        # provider panics (instancetypes.go UpdateInstanceTypes, v1.14.0); the model drops the SKU.
        return "no size (the provider panics on such a SKU)"
    try:
        vm = parse_vm_size(sku["size"], fallback=sw.accelerator_fallback)
    except VMSizeParseError as e:
        return f"size does not parse: {e}"
    if has_location_restriction(sku, cluster.region):
        return "location restriction"
    caps = capabilities(sku)
    reading = SkuReading(sku, caps, vm, cap_int(caps, "vCPUs"), cap_float(caps, "MemoryGB"),
                         cap_int(caps, "GPUs"), _gpu(name, sw))
    reason = _drop_reason_supported(caps, reading.vcpus, reading.mem_gib, reading.gpus, reading.gpu, vm, sw,
                                    cluster)
    return reason if reason else reading


def static_part(raw: Mapping, nc: NodeClassParams, cluster: ClusterParams, sw: Switches,
                known: frozenset[str] | None, cache: "InstanceTypeCache",
                reading: SkuReading | str | None = None) -> StaticPart | str:
    """Everything about one SKU that does not depend on availability or prices, or a drop reason:
    `UpdateInstanceTypes`, then the per-SKU part of `List` (instancetypes.go). `reading`: what
    `read_sku` already made of `raw`, if the caller has it."""
    if reading is None:
        reading = read_sku(canonical_sku(raw), cluster, sw)
    if isinstance(reading, str):
        return reading
    sku, caps, vm = reading.sku, reading.caps, reading.vm
    vcpus, mem_gib, gpus, gpu = reading.vcpus, reading.mem_gib, reading.gpus, reading.gpu
    name = sku.get("name") or ""
    assert vcpus is not None and mem_gib is not None     # isSupported passed: vcpus >= 2, mem_gib >= 3.5
    arch_raw = caps.get("cpuarchitecturetype")
    if arch_raw is None:
        return "CPU architecture missing"
    unknown = known is not None and (name not in known or name in sw.unknown_skus)
    if unknown and sw.unknown_sku_policy == "exclude":
        return NOT_KNOWN_REASON
    mem_mib = float_to_int64(mem_gib * 1024)             # memoryMiB: int64(memoryGiB * 1024)
    arch = AZURE_TO_KUBE_ARCH.get(arch_raw, arch_raw)
    reason = _drop_reason_nodeclass(caps, vcpus, mem_mib, arch, gpu, nc, sw)
    if reason:
        return reason

    # -- zones (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go List and
    #    instanceTypeZones, skewer SKU.AvailabilityZones; github.com/Azure/karpenter-provider-azure v1.14.0
    #    pkg/utils/zones/zones.go) and ultra-SSD
    #    options per zone (createOfferings) --
    regional_ultra = ("true", "false") if cap_true(caps, "UltraSSDAvailable") else ("false",)
    zone_offers: list[ZoneOffer] = []
    sku_zones = availability_zones(sku, cluster.region)
    if sw.zonal_regions is not None and cluster.region.lower() not in sw.zonal_regions:
        sku_zones = []      # a static zonal-region list without this region: every SKU is non-zonal (R13)
    for z in sku_zones:
        label = cluster.zone_label(z)
        # ultraSSDOptions: the ARM zone is the label's last character (MakeARMZonesFromAKSLabelZone)
        ultra = ("true", "false") if has_capability_in_zone(sku, "UltraSSDAvailable", label[-1:]) else ("false",)
        zone_offers.append(ZoneOffer(label, "zonal", ultra).fill(sw, cache))
    if not sku_zones or sw.regional_for_zonal:
        zone_offers.append(ZoneOffer(sw.regional_value, "regional", regional_ultra).fill(sw, cache))

    # -- static requirements (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go
    #    computeRequirements) --
    reqs: dict[str, Requirement] = {}

    def put(key: str, *values: str) -> None:
        reqs[key] = cache.req(key, values)

    put(INSTANCE_TYPE, name)
    put(ARCH, arch)
    put(OS, "linux")
    put(REGION, cluster.region)
    put(SKU_CPU, str(vcpus))
    put(SKU_MEMORY, str(mem_mib))
    if sw.aks_cpu_memory:
        put(AKS_SKU_CPU, str(vcpus))
        put(AKS_SKU_MEMORY, str(mem_mib))
    gpus = gpus or 0
    put(GPU_COUNT, str(gpus if gpu is not None else 0))
    put(GPU_MANUFACTURER)                                   # DoesNotExist -> In [vendor]
    put(GPU_NAME)
    if gpu is not None:
        put(GPU_MANUFACTURER, gpu[0])
        if vm.accelerator:
            put(GPU_NAME, vm.accelerator)
    if sw.cluster:
        put(CLUSTER, normalize_cluster_label(cluster.node_resource_group))
    if sw.mode:
        put(MODE, "system", "user")
    if sw.scale_set_priority:
        put(SCALE_SET_PRIORITY, "regular", "spot")
    if sw.priority:
        put(PRIORITY, "regular", "spot")
    if sw.os_sku:
        put(OS_SKU, os_sku_from_image_family(nc.image_family))
    if sw.fips_enabled:
        put(FIPS_ENABLED, *(("true",) if nc.fips else ()))
    gen1 = cap_contains(caps, "HyperVGenerations", "V1")
    gen2 = cap_contains(caps, "HyperVGenerations", "V2")
    if sw.node_image_version:
        if cluster.node_image_version:
            put(NODE_IMAGE_VERSION, node_image_version_label(nc.image_family, cluster.kubernetes_version,
                                                             nc.fips_mode, nc.trusted_launch,
                                                             cluster.node_image_version, gen2, arch == "arm64"))
        else:
            put(NODE_IMAGE_VERSION)
    put(SKU_NAME, name)
    put(SKU_FAMILY, vm.family)
    if sw.sku_series:
        put(SKU_SERIES, vm.series)
    version = vm.version_label
    put(SKU_VERSION, *((version,) if version is not None else ()))
    if sw.ephemeral_format == "float":
        eph_bytes = max_ephemeral_bytes(caps)
        put(EPHEMERAL_MAX, *((go_float(eph_bytes / 1e9),) if eph_bytes > 0 else ()))
    else:
        gb = ephemeral_gb(caps)
        put(EPHEMERAL_MAX, *((str(gb),) if gb > 0 else ()))
    premium = cap_true(caps, "PremiumIO")
    accel = cap_true(caps, "AcceleratedNetworkingEnabled")
    if sw.boolean_values == "trueOnly":                      # before #912 (Azure/karpenter-provider-azure#912)
        put(PREMIUM, *(("true",) if premium else ()))
        put(ACCELERATED, *(("true",) if accel else ()))
    else:
        put(PREMIUM, "true" if premium else "false")
        put(ACCELERATED, "true" if accel else "false")
    if sw.encryption_at_host:
        # provider before v1.4.0 (#872): "true" for a SKU whose EncryptionAtHostSupported capability is True, else
        # DoesNotExist (github.com/Azure/karpenter-provider-azure v0.7.5 pkg/providers/instancetype/instancetype.go
        # setRequirementsEncryptionAtHostSupported); single-valued, so the NodeClaim and its Node carry it
        put(ENCRYPTION_AT_HOST, *(("true",) if cap_true(caps, "EncryptionAtHostSupported") else ()))
    if sw.hyperv:
        put(HYPERV, *((["1"] if gen1 else []) + (["2"] if gen2 else [])))

    # -- capacity and overhead (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go
    #    computeCapacity) --
    gpu_vendor = gpu[0] if gpu is not None else None
    capacity = {
        "cpu": vcpus * 1000,
        "memory": memory_capacity(mem_gib, cluster.vm_memory_overhead_percent),
        "ephemeral-storage": int(nc.os_disk_size_gb) * 10**9,
        "pods": max_pods(nc.max_pods, cluster.network_plugin, cluster.network_plugin_mode),
        "nvidia.com/gpu": gpus if gpu_vendor == "nvidia" else 0,
        "amd.com/gpu": gpus if gpu_vendor == "amd" else 0,
    }
    overhead = node_overhead(vcpus, mem_gib)
    return StaticPart(name=name, sku=raw, vmsize=vm, vcpus=vcpus, family=sku.get("family") or "",
                   zones=zone_offers, low_priority=cap_true(caps, "LowPriorityCapable"), unknown=unknown,
                   base=reqs, capacity=capacity, overhead=overhead)

def survivor(same_name: list[tuple[Mapping, Mapping]], cluster: ClusterParams,
             sw: Switches) -> tuple[Mapping, SkuReading | str | None]:
    """Of SKUs sharing a name, given as (raw, canonical) pairs, the one `UpdateInstanceTypes` keeps in
    its name-keyed map: the last that passes its filters (or the last one, to report why it was
    dropped); with its `read_sku`, when that was made on the way."""
    if len(same_name) == 1:
        return same_name[0][0], None
    last_reason = None
    for raw, canon in reversed(same_name):
        reading = read_sku(canon, cluster, sw)
        if not isinstance(reading, str):
            return raw, reading
        last_reason = reading if last_reason is None else last_reason
    return same_name[-1][0], last_reason

