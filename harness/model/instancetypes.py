"""Instance types and offerings from Azure Resource SKUs (azure-provider.md §1, §2, §6, §9).

Input SKUs are plain dicts in the ARM ResourceSku JSON shape (fake-azure.md §1.2): capability values
are strings, capability names are matched case-insensitively, `locationInfo[].zoneDetails[]` uses
`Name` (or `name`). `build_instance_types` turns them into `InstanceType`s whose requirements,
offerings, capacity and overhead follow the provider's `computeRequirements`/`createOfferings`, and
records every SKU it drops with the reason (for `explain`).

Every profile difference comes from the profile data (`provider.requirements`, `provider.zones`,
`provider.unknownSKUPolicy`, ...); switches missing from a profile default to upstream's behaviour.
"""
from __future__ import annotations

import functools
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import yaml

from harness.model.data import DATA_DIR
from harness.model.gostrconv import MAX_INT64, float_to_int64, parse_float64, parse_int64
from harness.model.profile import Profile, load_profile
from harness.model.requirements import Requirement, Requirements
from harness.model.resources import add, subtract
from harness.model.versions import version_at_least
from harness.model.vmsize import VMSize, VMSizeParseError, parse_vm_size

# -- label keys (azure-provider.md §1.2) ------------------------------------------------------------
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
ARCH = "kubernetes.io/arch"
OS = "kubernetes.io/os"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
PLACEMENT_SCOPE = "karpenter.azure.com/placement-scope"
ULTRA_SSD = "karpenter.azure.com/sku-storage-ultra-ssd"
SKU_CPU = "karpenter.azure.com/sku-cpu"
SKU_MEMORY = "karpenter.azure.com/sku-memory"
AKS_SKU_CPU = "kubernetes.azure.com/sku-cpu"
AKS_SKU_MEMORY = "kubernetes.azure.com/sku-memory"
GPU_COUNT = "karpenter.azure.com/sku-gpu-count"
GPU_MANUFACTURER = "karpenter.azure.com/sku-gpu-manufacturer"
GPU_NAME = "karpenter.azure.com/sku-gpu-name"
CLUSTER = "kubernetes.azure.com/cluster"
MODE = "kubernetes.azure.com/mode"
SCALE_SET_PRIORITY = "kubernetes.azure.com/scalesetpriority"
PRIORITY = "kubernetes.azure.com/priority"
OS_SKU = "kubernetes.azure.com/os-sku"
FIPS_ENABLED = "kubernetes.azure.com/fips_enabled"
NODE_IMAGE_VERSION = "kubernetes.azure.com/node-image-version"
SKU_NAME = "karpenter.azure.com/sku-name"
SKU_FAMILY = "karpenter.azure.com/sku-family"
SKU_SERIES = "karpenter.azure.com/sku-series"
SKU_VERSION = "karpenter.azure.com/sku-version"
EPHEMERAL_MAX = "karpenter.azure.com/sku-storage-ephemeralos-maxsize"
PREMIUM = "karpenter.azure.com/sku-storage-premium-capable"
ACCELERATED = "karpenter.azure.com/sku-networking-accelerated"
HYPERV = "karpenter.azure.com/sku-hyperv-generation"

ON_DEMAND, SPOT = "on-demand", "spot"
CAPACITY_TYPES = (ON_DEMAND, SPOT)
MISSING_PRICE = 999.0                          # azure-provider.md §2.4 MissingPrice
GIB = 1 << 30
MIB = 1 << 20
EVICTION_MEMORY_AVAILABLE = 750 * MIB          # §1.2 eviction memory.available=750Mi
AZURE_TO_KUBE_ARCH = {"x64": "amd64", "Arm64": "arm64"}   # §1.2 AzureToKubeArchitectures

# §1.2 kube-reserved tax brackets: (upper bound, rate); memory in GiB, CPU in cores.
_MEMORY_TAX = ((4.0, 0.25), (8.0, 0.20), (16.0, 0.10), (128.0, 0.06), (math.inf, 0.02))
_CPU_TAX = ((1.0, 0.06), (2.0, 0.04), (4.0, 0.02), (math.inf, 0.01))

UBUNTU_FAMILIES = frozenset({"", "Ubuntu", "Ubuntu2204", "Ubuntu2404"})
AZURE_LINUX_FAMILY = "AzureLinux"


# == data files =====================================================================================
# Derived from the provider by `python -m harness.model.sync`. A profile names the directory (under
# harness/data) holding its tables with `derived`; upstream's are harness/data itself.
def _table(tables: str, name: str):
    return DATA_DIR / tables / name


@functools.lru_cache(maxsize=None)
def supported_gpus(tables: str = ".") -> dict[str, tuple[str, tuple[str, ...]]]:
    """Lowercased SKU name -> (vendor, os list), from supported-gpus.yaml."""
    data = yaml.safe_load(_table(tables, "supported-gpus.yaml").read_text()) or {}
    return {k.lower(): (v["vendor"], tuple(v.get("os") or ())) for k, v in (data.get("skus") or {}).items()}


@functools.lru_cache(maxsize=None)
def known_skus(tables: str = ".") -> frozenset[str]:
    """Known SKU names (known-skus.txt)."""
    return frozenset(known_sku_families(tables))


@functools.lru_cache(maxsize=None)
def known_sku_families(tables: str = ".") -> dict[str, str]:
    out: dict[str, str] = {}
    for line in _table(tables, "known-skus.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, family = line.partition(" ")
        out[name] = family.strip()
    return out


@functools.lru_cache(maxsize=None)
def restricted_skus(tables: str = ".") -> dict[str, str]:
    """SKU name -> drop reason for the AKS- and Karpenter-restricted sizes (§1.5)."""
    data = yaml.safe_load(_table(tables, "restricted-skus.yaml").read_text()) or {}
    out = {n: "AKS-restricted size" for n in data.get("aksRestricted") or ()}
    out.update({n: "Karpenter-restricted size" for n in data.get("karpenterRestricted") or ()})
    return out


def gpu_info(sku_name: str, tables: str = ".") -> tuple[str, tuple[str, ...]] | None:
    """(vendor, os list) if the SKU is in the GPU table: lookup by the lowercased name with a trailing
    `_promo` trimmed (utils normalizeVMSize, pkg/utils/gpu.go)."""
    key = sku_name.lower()
    if key.endswith("_promo"):
        key = key[: -len("_promo")]
    return supported_gpus(tables).get(key)


# == label helpers shared with the label writers ====================================================
def normalize_cluster_label(node_resource_group: str) -> str:
    """`NormalizeClusterResourceGroupNameForLabel` (§1.2 kubernetes.azure.com/cluster): replace `(`
    and `)` with `-`, truncate to 63, and if the result ends in `-`, `_` or `.` append `z` (or replace
    the last character with `z` when the length is over 62)."""
    s = (node_resource_group or "").replace("(", "-").replace(")", "-")[:63]
    if s and s[-1] in "-_.":
        s = s[:-1] + "z" if len(s) > 62 else s + "z"
    return s


def os_sku_from_image_family(image_family: str | None) -> str:
    """`GetOSSKUFromImageFamily` (§1.2): Ubuntu families -> Ubuntu, AzureLinux -> AzureLinux, else unchanged."""
    fam = image_family or ""
    if fam in UBUNTU_FAMILIES:
        return "Ubuntu"
    if fam == AZURE_LINUX_FAMILY:
        return "AzureLinux"
    return fam


def os_sku_effective(image_family: str | None, k8s_version: str, fips: bool | str | None = False,
                     trusted_launch: bool = False) -> str:
    """The resolved image family written as `kubernetes.azure.com/os-sku-effective` (§4.1).

    Generic Ubuntu -> Ubuntu2404 on Kubernetes >= 1.34, else Ubuntu2204; with FIPS -> `Ubuntu` (the
    20.04 FIPS image) or Ubuntu2204 with trusted launch; trusted launch alone -> Ubuntu2204.
    AzureLinux -> AzureLinux3 on Kubernetes >= 1.32, else AzureLinux2. Others pass through."""
    fam = image_family or ""
    is_fips = fips is True or fips == "FIPS"
    if fam in ("", "Ubuntu"):
        if is_fips:
            return "Ubuntu2204" if trusted_launch else "Ubuntu"
        if trusted_launch:
            return "Ubuntu2204"
        return "Ubuntu2404" if version_at_least(k8s_version, (1, 34)) else "Ubuntu2204"
    if fam == AZURE_LINUX_FAMILY:
        return "AzureLinux3" if version_at_least(k8s_version, (1, 32)) else "AzureLinux2"
    return fam


def node_image_version_label(image_family: str | None, k8s_version: str, fips: bool | str | None,
                             trusted_launch: bool, version: str, gen2: bool, arm64: bool) -> str:
    """MODELED value for `kubernetes.azure.com/node-image-version` (not computed upstream, §1.2/§5;
    only profiles with `nodeImageVersion: true` use it). Shaped like AKS's own label values, e.g.
    `AKSUbuntu-2204gen2containerd-202409.30.0` (reported-bugs.md §4): `AKSUbuntu-<2204|2404|2004fips>
    [gen2][arm64]containerd-<version>` or `AKSAzureLinux-V<2|3>[gen2][arm64]-<version>`."""
    eff = os_sku_effective(image_family, k8s_version, fips, trusted_launch)
    g = "gen2" if gen2 else ""
    a = "arm64" if arm64 else ""
    if eff.startswith("AzureLinux"):
        return f"AKSAzureLinux-V{eff[len('AzureLinux'):] or '3'}{g}{a}-{version}"
    if eff == "Ubuntu":
        return f"AKSUbuntu-2004fips{g}{a}containerd-{version}"
    if eff.startswith("Ubuntu"):
        return f"AKSUbuntu-{eff[len('Ubuntu'):]}{g}{a}containerd-{version}"
    return f"AKS{eff}{g}{a}-{version}"


def max_pods(nodeclass_max_pods: int | None, network_plugin: str, network_plugin_mode: str) -> int:
    """§1.2 pods: the NodeClass value, else none -> 250, azure+overlay -> 250, azure -> 30, else 110."""
    if nodeclass_max_pods is not None:
        return int(nodeclass_max_pods)
    plugin = (network_plugin or "").lower()
    if plugin == "none":
        return 250
    if plugin == "azure":
        return 250 if (network_plugin_mode or "").lower() == "overlay" else 30
    return 110


def _tax(brackets, amount: float) -> float:
    """`TaxBrackets.Calculate` (same float operations as upstream)."""
    tax = 0.0
    lower = 0.0
    for upper_bound, rate in brackets:
        if lower > amount:
            continue
        upper = amount if upper_bound > amount else upper_bound
        tax += (upper - lower) * rate
        lower = upper_bound
    return tax


def kube_reserved(vcpus: int, memory_gib: float) -> dict[str, int]:
    """§1.2 kubeReserved: {cpu: millicores, memory: bytes}. 2/8 -> 100m/1843Mi; 4/7 -> 140m/1638Mi;
    3/64 -> 120m/5611Mi. Float-to-int64 conversions as Go's (KubeReservedResources, instancetype.go)."""
    mem_mi = float_to_int64(1024 * _tax(_MEMORY_TAX, memory_gib))
    cpu_milli = float_to_int64(1000 * _tax(_CPU_TAX, float(vcpus)))
    return {"cpu": cpu_milli, "memory": _wrap64(mem_mi * MIB)}       # reservedMemoryMi*1024*1024 in int64


def memory_capacity(memory_gib: float, overhead_percent: float) -> int:
    """§1.2 memory: floor(MemoryGB) Gi minus ceil(bytes x VMMemoryOverheadPercent), in bytes."""
    # CalculateMemoryWithoutOverhead: the quantity "<int64(skuMemoryGiB)>Gi"; resource.ParseQuantity caps a
    # binary-suffixed amount at MaxInt64 in magnitude (apimachinery quantity.go), absurd sizes included.
    base = float_to_int64(memory_gib) * GIB
    if abs(base) > MAX_INT64:
        base = MAX_INT64 if base > 0 else -MAX_INT64
    return base - float_to_int64(math.ceil(float(base) * overhead_percent))


# == the SKU as Go decodes it ======================================================================
# The provider decodes ResourceSku JSON with encoding/json into the compute 2022-08-01 types
# (skewer v0.0.24 sku.go `SKU compute.ResourceSku`): object keys match field names case-insensitively
# (`Name`, `name` and `NAME` all fill ZoneDetails.Name) and a later key overwrites an earlier one.
# `canonical_sku` gives a SKU dict those exact field names, so every reader below sees what Go sees.
_CAP_FIELDS = ("name", "value")
_SKU_SCHEMA: dict[str, Any] = {
    "resourceType": None, "name": None, "tier": None, "size": None, "family": None, "kind": None,
    "locations": None,
    "locationInfo": [{"location": None, "zones": None,
                      "zoneDetails": [{"name": None, "capabilities": [dict.fromkeys(_CAP_FIELDS)]}]}],
    "capabilities": [dict.fromkeys(_CAP_FIELDS)],
    "restrictions": [{"type": None, "values": None, "reasonCode": None,
                      "restrictionInfo": {"locations": None, "zones": None}}],
}


def _fold(value: Any, schema: Any) -> Any:
    if isinstance(schema, list):
        return [_fold(v, schema[0]) for v in value] if isinstance(value, (list, tuple)) else value
    if isinstance(schema, dict):
        if not isinstance(value, Mapping):
            return value
        fields = {k.lower(): k for k in schema}
        out: dict[str, Any] = {}
        for key, v in value.items():
            field_name = fields.get(key.lower()) if isinstance(key, str) else None
            if field_name is not None:
                out[field_name] = _fold(v, schema[field_name])
        return out
    return value


def canonical_sku(sku: Mapping) -> dict:
    """The SKU with Go's field names (case-insensitive keys, last one wins); unknown keys dropped."""
    return _fold(sku, _SKU_SCHEMA)


# == SKU capability access (skewer semantics, fake-azure.md §1.4) ===================================
def _caps(sku: Mapping) -> dict[str, str]:
    """Capabilities by lowercased name; the first of duplicate names wins (skewer scans in order)."""
    caps = sku.get("capabilities") or ()
    return {c["name"].lower(): c.get("value") for c in reversed(caps) if c.get("name") is not None}


def sku_capability(sku: Mapping, name: str) -> str | None:
    """A capability value by case-insensitive name (first match), or None."""
    return _caps(canonical_sku(sku)).get(name.lower())


def _cap_true(caps: Mapping[str, str], name: str) -> bool:
    """skewer HasCapability: the value equals `True` case-insensitively."""
    v = caps.get(name.lower())
    return v is not None and v.lower() == "true"


def _cap_int(caps: Mapping[str, str], name: str) -> int | None:
    """skewer GetCapabilityIntegerQuantity: `strconv.ParseInt(v, 10, 64)`, None on any error."""
    return parse_int64(caps.get(name.lower()))


def _cap_float(caps: Mapping[str, str], name: str) -> float | None:
    """skewer GetCapabilityFloatQuantity: `strconv.ParseFloat(v, 64)`, None on any error."""
    return parse_float64(caps.get(name.lower()))


# Go's unicode.IsSpace (the Unicode White_Space property); Python's str.split() also splits on \x1c-\x1f.
_GO_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _norm(s: str) -> str:
    """skewer normalizeLocation (strings.go): every unicode.IsSpace rune removed, then lowercased."""
    return _GO_SPACE.sub("", s).lower()


def _cap_contains(caps: Mapping[str, str], name: str, value: str) -> bool:
    """skewer HasCapabilityWithSeparator: substring match after normalizing."""
    v = caps.get(name.lower())
    return v is not None and _norm(value) in _norm(v)


def _location_info(sku: Mapping, region: str) -> list[Mapping]:
    r = _norm(region)
    return [li for li in sku.get("locationInfo") or () if li.get("location") is not None and _norm(li["location"]) == r]


LOCATION_RESTRICTION = "Location"     # compute.Location; skewer compares the type exactly


def has_location_restriction(sku: Mapping, region: str) -> bool:
    """skewer HasLocationRestriction (fake-azure.md §1.3): a restriction whose type is exactly
    `Location` listing the region."""
    r = _norm(region)
    for res in sku.get("restrictions") or ():
        if res.get("type") == LOCATION_RESTRICTION and any(_norm(v) == r for v in res.get("values") or ()):
            return True
    return False


def availability_zones(sku: Mapping, region: str) -> list[str]:
    """skewer AvailabilityZones(region): zones listed for the region minus zone-restricted ones; none
    with a Location restriction (§2.1)."""
    infos = _location_info(sku, region)
    if not infos:
        return []
    if has_location_restriction(sku, region):
        return []
    zones = {z for li in infos for z in li.get("zones") or ()}
    r = _norm(region)
    for res in sku.get("restrictions") or ():
        if any(_norm(v) == r for v in res.get("values") or ()):
            zones -= set((res.get("restrictionInfo") or {}).get("zones") or ())
    return sorted(zones, key=lambda z: (len(z), z))


def has_capability_in_zone(sku: Mapping, name: str, zone: str) -> bool:
    """skewer HasCapabilityInZone: some zoneDetails entry, in *any* locationInfo (skewer does not look
    at the location), names `zone` (case-insensitively) and lists capability `name`=True."""
    lname = name.lower()
    for li in sku.get("locationInfo") or ():
        for zd in li.get("zoneDetails") or ():
            if not zd.get("capabilities"):
                continue
            if not any(zone.lower() == (n or "").lower() for n in zd.get("name") or ()):
                continue
            if any((c.get("name") or "").lower() == lname and (c.get("value") or "").lower() == "true"
                   for c in zd.get("capabilities") or ()):
                return True
    return False


def max_ephemeral_bytes(caps: Mapping[str, str]) -> int:
    """The size half of `FindMaxEphemeralSizeGBAndPlacement` (§1.4), in bytes: 0 unless
    EphemeralOSDiskSupported; then NVMe (NvmeDiskSizeInMiB > 0 and placement NvmeDisk), cache
    (CachedDiskBytes > 0), resource disk (MaxResourceVolumeMB > 0, really MiB), first that applies."""
    if not _cap_true(caps, "EphemeralOSDiskSupported"):
        return 0
    nvme = _cap_int(caps, "NvmeDiskSizeInMiB") or 0
    if nvme > 0 and _cap_contains(caps, "SupportedEphemeralOSDiskPlacements", "NvmeDisk"):
        return nvme * MIB
    cache = _cap_int(caps, "CachedDiskBytes") or 0
    if cache > 0:
        return cache
    resource = _cap_int(caps, "MaxResourceVolumeMB") or 0
    return resource * MIB if resource > 0 else 0


def _wrap64(n: int) -> int:
    """Go int64 arithmetic wraps around."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def _go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def ephemeral_gb(caps: Mapping[str, str]) -> int:
    """`FindMaxEphemeralSizeGBAndPlacement`'s size in int64 arithmetic (MiB * units.MiB / units.Gigabyte
    wraps like Go's for absurd values)."""
    if not _cap_true(caps, "EphemeralOSDiskSupported"):
        return 0
    nvme = _cap_int(caps, "NvmeDiskSizeInMiB") or 0
    if nvme > 0 and _cap_contains(caps, "SupportedEphemeralOSDiskPlacements", "NvmeDisk"):
        return _go_div(_wrap64(nvme * MIB), 10**9)
    cache = _cap_int(caps, "CachedDiskBytes") or 0
    if cache > 0:
        return cache // 10**9
    resource = _cap_int(caps, "MaxResourceVolumeMB") or 0
    return _go_div(_wrap64(resource * MIB), 10**9) if resource > 0 else 0


def max_ephemeral_gb(sku: Mapping) -> int:
    """§1.4 max ephemeral OS disk size in decimal GB (integer division)."""
    return max_ephemeral_bytes(_caps(canonical_sku(sku))) // 10**9


def _go_float(f: float) -> str:
    """Go's `fmt.Sprint(float64)` for the values we print (shortest repr, no trailing `.0`)."""
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    return repr(f)


# == parameters =====================================================================================
def _get(d: Mapping | None, *path, default=None):
    cur: Any = d
    for p in path:
        if not isinstance(cur, Mapping) or p not in cur:
            return default
        cur = cur[p]
    return cur


def _truthy(v) -> bool:
    if isinstance(v, str):
        return v.lower() in ("true", "enabled", "yes", "on")
    return bool(v)


@dataclass(frozen=True)
class NodeClassParams:
    """The AKSNodeClass fields that shape instance types (§1.5 `instanceTypeParameters` hash)."""

    image_family: str | None = None
    os_disk_size_gb: int = 128
    max_pods: int | None = None
    encryption_at_host: bool = False
    trusted_launch: bool = False
    gpu_mode: str = "Driver"                 # default when spec.gpu/mode is unset (§1.5)
    artifact_streaming: bool = False
    fips_mode: str | None = None             # "FIPS" | "Disabled" | None
    local_dns: bool = False

    @staticmethod
    def from_manifest(manifest: Mapping | None) -> "NodeClassParams":
        """From an AKSNodeClass manifest (or just its spec). Field shapes: spec.imageFamily,
        spec.osDiskSizeGB, spec.maxPods, spec.fipsMode, spec.security.encryptionAtHost,
        spec.localDNS.mode (Required/Preferred = enabled; Preferred is modeled as enabled),
        spec.gpu.mode, spec.security.trustedLaunch|enableTrustedLaunch / spec.trustedLaunch,
        spec.artifactStreaming.mode|enabled / spec.artifactStreaming (bool)."""
        m = manifest or {}
        spec = m.get("spec") if isinstance(m.get("spec"), Mapping) else m
        spec = spec or {}
        security = spec.get("security") or {}
        trusted = security.get("trustedLaunch", security.get("enableTrustedLaunch", spec.get("trustedLaunch")))
        if isinstance(trusted, Mapping):
            trusted = trusted.get("mode", trusted.get("enabled"))
        streaming = spec.get("artifactStreaming")
        if isinstance(streaming, Mapping):
            streaming = streaming.get("mode", streaming.get("enabled"))
        local_dns = _get(spec, "localDNS", "mode")
        gpu_mode = _get(spec, "gpu", "mode") or "Driver"
        osd = spec.get("osDiskSizeGB")
        mp = spec.get("maxPods")
        return NodeClassParams(
            image_family=spec.get("imageFamily"),
            os_disk_size_gb=int(osd) if osd is not None else 128,
            max_pods=int(mp) if mp is not None else None,
            encryption_at_host=_truthy(security.get("encryptionAtHost", False)),
            trusted_launch=_truthy(trusted) if trusted is not None else False,
            gpu_mode=str(gpu_mode),
            artifact_streaming=_truthy(streaming) if streaming is not None else False,
            fips_mode=spec.get("fipsMode"),
            local_dns=str(local_dns) in ("Required", "Preferred") if local_dns is not None else False,
        )

    @property
    def fips(self) -> bool:
        return self.fips_mode == "FIPS"


@dataclass(frozen=True)
class ClusterParams:
    """Operator options that shape instance types and labels (azure-provider.md §7 test defaults)."""

    region: str = "southcentralus"
    node_resource_group: str = "test-resourceGroup"
    network_plugin: str = "azure"
    network_plugin_mode: str = "overlay"
    network_policy: str = "cilium"
    network_dataplane: str = "cilium"
    kubernetes_version: str = "1.33.0"
    kubelet_identity_client_id: str = ""
    vnet_guid: str = ""
    subnet_name: str = ""
    vm_memory_overhead_percent: float = 0.075
    node_image_version: str | None = None     # modeled node-image-version (profiles with nodeImageVersion)
    use_sig: bool = False
    cluster_name: str = "harness-cluster"     # the karpenter.azure.com_cluster VM tag
    provision_mode: str = "aksscriptless"     # aksscriptless | bootstrappingclient (base label `mode` in before-0006)

    _KEYS = {
        "region": "region", "location": "region",
        "nodeResourceGroup": "node_resource_group", "node_resource_group": "node_resource_group",
        "networkPlugin": "network_plugin", "network_plugin": "network_plugin",
        "networkPluginMode": "network_plugin_mode", "network_plugin_mode": "network_plugin_mode",
        "networkPolicy": "network_policy", "network_policy": "network_policy",
        "networkDataplane": "network_dataplane", "network_dataplane": "network_dataplane",
        "kubernetesVersion": "kubernetes_version", "kubernetes_version": "kubernetes_version",
        "kubeletIdentityClientID": "kubelet_identity_client_id", "kubeletIdentityClientId": "kubelet_identity_client_id",
        "kubelet_identity_client_id": "kubelet_identity_client_id",
        "vnetGUID": "vnet_guid", "vnetGuid": "vnet_guid", "vnet_guid": "vnet_guid",
        "subnetName": "subnet_name", "subnet_name": "subnet_name",
        "vmMemoryOverheadPercent": "vm_memory_overhead_percent",
        "vm_memory_overhead_percent": "vm_memory_overhead_percent",
        "nodeImageVersion": "node_image_version", "node_image_version": "node_image_version",
        "useSIG": "use_sig", "useSig": "use_sig", "use_sig": "use_sig",
        "clusterName": "cluster_name", "cluster_name": "cluster_name",
        "provisionMode": "provision_mode", "provision_mode": "provision_mode",
    }

    @staticmethod
    def from_dict(d: Mapping | None) -> "ClusterParams":
        """camelCase (nodeResourceGroup, networkPlugin, ...) or snake_case keys; unknown keys raise."""
        kwargs: dict[str, Any] = {}
        for k, v in (d or {}).items():
            attr = ClusterParams._KEYS.get(k)
            if attr is None:
                raise ValueError(f"unknown cluster setting {k!r}; known: {', '.join(sorted(set(ClusterParams._KEYS)))}")
            kwargs[attr] = v
        if "vm_memory_overhead_percent" in kwargs:
            kwargs["vm_memory_overhead_percent"] = float(kwargs["vm_memory_overhead_percent"])
        if "use_sig" in kwargs:
            kwargs["use_sig"] = _truthy(kwargs["use_sig"])
        for key in ("kubernetes_version", "node_image_version"):
            if kwargs.get(key) is not None:
                kwargs[key] = str(kwargs[key])
        return ClusterParams(**kwargs)

    def zone_label(self, zone: str) -> str:
        """`<lowercase region>-<n>` (§2.1)."""
        return f"{self.region.lower()}-{zone}"


# == results ========================================================================================
@dataclass(eq=False)
class Offering:
    zone: str
    capacity_type: str
    price: float
    available: bool
    requirements: Requirements

    @property
    def placement_scope(self) -> str | None:
        r = self.requirements.get(PLACEMENT_SCOPE)
        return r.single_value() if PLACEMENT_SCOPE in self.requirements else None

    def __repr__(self) -> str:
        return (f"Offering({self.zone!r}, {self.capacity_type!r}, price={self.price}, "
                f"available={self.available})")


@dataclass(frozen=True)
class Overhead:
    kube_reserved: dict[str, int]
    system_reserved: dict[str, int]
    eviction_threshold: dict[str, int]

    def total(self) -> dict[str, int]:
        return add(add(self.kube_reserved, self.system_reserved), self.eviction_threshold)


@dataclass(eq=False)
class InstanceType:
    name: str
    requirements: Requirements
    offerings: list[Offering]
    capacity: dict[str, int]           # cpu millicores; memory/ephemeral-storage bytes; pods; gpus
    overhead: Overhead
    vcpus: int
    family: str                        # the SKU's quota family, e.g. standardDSv3Family
    vmsize: VMSize
    sku: Mapping = field(repr=False)
    _allocatable: dict[str, int] | None = field(default=None, repr=False)

    def allocatable(self) -> dict[str, int]:
        """capacity minus kube-reserved, system-reserved and eviction threshold (core `Allocatable`)."""
        if self._allocatable is None:
            self._allocatable = subtract(self.capacity, self.overhead.total())
        return dict(self._allocatable)

    def available_offerings(self) -> list[Offering]:
        return [o for o in self.offerings if o.available]

    def __repr__(self) -> str:
        return f"InstanceType({self.name!r}, offerings={len(self.offerings)})"


class InstanceTypeSet(Sequence[InstanceType]):
    """The instance types of one build, sorted by name, plus every dropped SKU and why."""

    def __init__(self, instance_types: list[InstanceType], dropped: dict[str, str], profile: str):
        self.instance_types = instance_types
        self.dropped = dropped
        self.profile = profile
        self._by_name = {it.name: it for it in instance_types}

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, str):
            return self._by_name[i]
        return self.instance_types[i]

    def __len__(self) -> int:
        return len(self.instance_types)

    def __iter__(self) -> Iterator[InstanceType]:
        return iter(self.instance_types)

    def __contains__(self, name) -> bool:  # type: ignore[override]
        return name in self._by_name if isinstance(name, str) else name in self.instance_types

    def get(self, name: str) -> InstanceType | None:
        return self._by_name.get(name)

    def names(self) -> list[str]:
        return [it.name for it in self.instance_types]

    def explain(self, name: str) -> str:
        if name in self._by_name:
            it = self._by_name[name]
            avail = [f"{o.zone}/{o.capacity_type}" for o in it.offerings if o.available]
            return f"{name}: kept; available offerings: {', '.join(avail) or 'none'}"
        if name in self.dropped:
            return f"{name}: dropped ({self.dropped[name]})"
        return f"{name}: not in the SKU list"

    def __repr__(self) -> str:
        return f"InstanceTypeSet({len(self)} kept, {len(self.dropped)} dropped, profile={self.profile!r})"


# == switches =======================================================================================
@dataclass(frozen=True)
class _Switches:
    """The profile data this module reads (values a profile lacks are upstream.yaml's)."""

    sku_series: bool
    ultra_ssd: bool
    placement_scope: bool
    cluster: bool
    mode: bool
    scale_set_priority: bool
    priority: bool
    os_sku: bool
    fips_enabled: bool
    hyperv: bool
    aks_cpu_memory: bool
    boolean_values: str
    ephemeral_format: str
    node_image_version: bool
    regional_value: str
    regional_for_zonal: bool
    unknown_sku_policy: str
    unknown_skus: frozenset[str]             # names not yet on the replayed known-SKU list (R17)
    nvme_only_excluded_without_sig: bool
    accelerator_fallback: bool
    zonal_regions: frozenset[str] | None     # before #825/#1105: a static list decided zonality (R13)
    gpu_vendors: frozenset
    tables: str                              # the profile's table directory under harness/data
    trusted_launch_filter: bool
    offer_placement_scope: bool
    offer_scale_set_priority: bool
    offer_priority: bool
    offer_ultra_ssd: bool
    spot_requires_low_priority: bool
    quota_gates_on_demand: bool
    availability_requires_price: bool

    @staticmethod
    def of(profile: Profile) -> "_Switches":
        setting = profile.provider_setting

        def sw(name):
            return setting("requirements", name)
        offer_keys = set(setting("offerings", "keys"))          # capacityType and zone always
        zonal_regions = setting("zones", "zonalRegions")
        return _Switches(
            sku_series=bool(sw("skuSeries")),
            ultra_ssd=bool(sw("ultraSSD")),
            placement_scope=bool(sw("placementScope")),
            cluster=bool(sw("cluster")),
            mode=bool(sw("mode")),
            scale_set_priority=bool(sw("scaleSetPriority")),
            priority=bool(sw("priority")),
            os_sku=bool(sw("osSku")),
            fips_enabled=bool(sw("fipsEnabled")),
            hyperv=bool(sw("hypervGeneration")),
            aks_cpu_memory=bool(sw("kubernetesAzureSkuCpuMemory")),
            boolean_values=str(sw("booleanValues")),
            ephemeral_format=str(sw("ephemeralFormat")),
            node_image_version=bool(sw("nodeImageVersion")),
            regional_value=str(setting("zones", "regionalValue")),
            regional_for_zonal=bool(setting("zones", "regionalOfferingForZonalSKUs")),
            unknown_sku_policy=str(setting("unknownSKUPolicy")),
            unknown_skus=frozenset(setting("unknownSKUs") or ()),
            nvme_only_excluded_without_sig=bool(setting("nvmeOnlyExcludedWithoutSIG")),
            accelerator_fallback=bool(setting("vmSizeAcceleratorFallback")),
            zonal_regions=frozenset(r.lower() for r in zonal_regions) if zonal_regions is not None else None,
            gpu_vendors=frozenset(sw("gpuVendors")),
            tables=str(profile.raw.get("derived") or "."),
            trusted_launch_filter=bool(setting("trustedLaunchFilter")),
            offer_placement_scope="placementScope" in offer_keys,
            offer_scale_set_priority="scaleSetPriority" in offer_keys,
            offer_priority="priority" in offer_keys,
            offer_ultra_ssd="ultraSSD" in offer_keys,
            spot_requires_low_priority=bool(setting("offerings", "spotRequiresLowPriorityCapable")),
            quota_gates_on_demand=bool(setting("offerings", "quotaGatesOnDemand")),
            availability_requires_price=bool(setting("offerings", "availabilityRequiresPrice")),
        )


def _profile(profile: Profile | str | None) -> Profile:
    if profile is None:
        return load_profile()
    return load_profile(profile) if isinstance(profile, str) else profile


# Interned single requirements: offerings share them (cheap builds, cheap intersections).
_REQ_INTERN: dict[tuple, Requirement] = {}


def _req(key: str, values) -> Requirement:
    """An `In values` requirement (empty reads as DoesNotExist), interned by (key, values)."""
    k = (key, values if isinstance(values, tuple) else tuple(values))
    r = _REQ_INTERN.get(k)
    if r is None:
        r = Requirement(key, False, frozenset(values))
        if len(_REQ_INTERN) < 200_000:
            _REQ_INTERN[k] = r
    return r


def _requirements(reqs: dict[str, Requirement]) -> Requirements:
    out = Requirements()
    out._reqs = reqs  # noqa: SLF001 - same construction as Requirements.copy()
    return out


# == the per-SKU static part (independent of availability and prices) ===============================
@dataclass
class _ZoneOffer:
    zone: str
    scope: str
    ultra: tuple[str, ...]
    reqs: dict[str, dict[str, Requirement]] = field(default_factory=dict)   # capacity type -> offering reqs

    def fill(self, sw: "_Switches") -> "_ZoneOffer":
        """The offering requirements per capacity type (§2.2), each key single-valued except ultra-SSD."""
        key = (self.zone, self.scope, self.ultra, sw)
        hit = _OFFER_REQS.get(key)
        if hit is not None:
            self.reqs = hit
            return self
        for ct in CAPACITY_TYPES:
            r = {CAPACITY_TYPE: _req(CAPACITY_TYPE, (ct,)), ZONE: _req(ZONE, (self.zone,))}
            if sw.offer_placement_scope:
                r[PLACEMENT_SCOPE] = _req(PLACEMENT_SCOPE, (self.scope,))
            prio = "spot" if ct == SPOT else "regular"
            if sw.offer_scale_set_priority:
                r[SCALE_SET_PRIORITY] = _req(SCALE_SET_PRIORITY, (prio,))
            if sw.offer_priority:
                r[PRIORITY] = _req(PRIORITY, (prio,))
            if sw.offer_ultra_ssd:
                r[ULTRA_SSD] = _req(ULTRA_SSD, self.ultra)
            self.reqs[ct] = r
        if len(_OFFER_REQS) < 10_000:
            _OFFER_REQS[key] = self.reqs
        return self


_OFFER_REQS: dict[tuple, dict[str, dict[str, Requirement]]] = {}


@dataclass
class _Static:
    name: str
    sku: Mapping
    vmsize: VMSize
    vcpus: int
    family: str
    zones: list[_ZoneOffer]
    low_priority: bool
    unknown: bool
    base: dict[str, Requirement]
    capacity: dict[str, int]
    overhead: Overhead


def _drop_reason_supported(caps: Mapping[str, str], vcpus: int | None, mem_gib: float | None, gpus: int | None,
                           gpu: tuple[str, tuple[str, ...]] | None, vm: VMSize, sw: _Switches,
                           cluster: ClusterParams) -> str | None:
    """`isSupported` (§1.5), in upstream's order."""
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
        # reported-bugs.md R08: SCSI declared, or nothing declared, unless SIG is used.
        scsi = _cap_contains(caps, "DiskControllerTypes", "SCSI")
        nvme = _cap_contains(caps, "DiskControllerTypes", "NVMe")
        if nvme and not scsi:
            return "NVMe-only disk controller without SIG"
    return None


def _gpu(name: str, sw: "_Switches") -> tuple[str, tuple[str, ...]] | None:
    """The GPU-table entry if its vendor is supported by the profile (`gpuVendors`; before AMD support
    only NVIDIA-enabled SKUs count as GPU SKUs)."""
    info = gpu_info(name, sw.tables)
    return info if info is not None and info[0] in sw.gpu_vendors else None


def _drop_reason_nodeclass(caps: Mapping[str, str], vcpus: int, memory_mib: int, arch: str,
                           gpu: tuple[str, tuple[str, ...]] | None, nc: NodeClassParams,
                           sw: "_Switches") -> str | None:
    """Per-NodeClass filters (`isInstanceTypeSupportedByFilters`, §1.5)."""
    if gpu is not None:
        vendor, oses = gpu
        fam = nc.image_family or ""
        if fam in UBUNTU_FAMILIES:
            ok = "ubuntu" in oses
        elif fam == AZURE_LINUX_FAMILY:
            ok = "azurelinux" in oses or "azurelinux3" in oses
        else:
            ok = False
        if not ok:
            return f"GPU SKU not supported by image family {fam or 'Ubuntu'}"
        if nc.gpu_mode == "Driver" and vendor != "nvidia":
            return f"GPU mode Driver installs NVIDIA drivers only ({vendor} GPU)"
    if nc.encryption_at_host and not _cap_true(caps, "EncryptionAtHostSupported"):
        return "encryption at host not supported"
    if nc.local_dns and (vcpus < 4 or memory_mib < 244):
        return "LocalDNS needs at least 4 vCPUs and 244 MiB memory"
    if nc.artifact_streaming and arch == "arm64":
        return "artifact streaming does not support arm64"
    if sw.trusted_launch_filter and nc.trusted_launch and (not _cap_contains(caps, "HyperVGenerations", "V2")
                              or _cap_contains(caps, "TrustedLaunchDisabled", "True")):
        return "trusted launch not supported"
    return None


def _update_drop_reason(sku: Mapping, cluster: ClusterParams, sw: _Switches) -> str | None:
    """Why `UpdateInstanceTypes` (instancetypes.go) leaves a canonical SKU out, in its order, or None:
    the ARM location filter, `ResourceTypeFilter("virtualMachines")` (a SKU without a resourceType
    fails it), `IsRestrictedSKU`, `GetVMSize` of the SKU's `size` field, `HasLocationRestriction`,
    `isSupported`."""
    name = sku.get("name") or ""
    locations = sku.get("locations")
    # (harness assumption) ARM's `$filter=location eq '<region>'` returns SKUs listing the region;
    # a SKU without `locations` is passed through (the difftest's resource client does the same).
    if locations and not any(_norm(loc) == _norm(cluster.region) for loc in locations):
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
    caps = _caps(sku)
    return _drop_reason_supported(caps, _cap_int(caps, "vCPUs"), _cap_float(caps, "MemoryGB"),
                                  _cap_int(caps, "GPUs"), _gpu(name, sw), vm, sw, cluster)


def _static_for(raw: Mapping, nc: NodeClassParams, cluster: ClusterParams, sw: _Switches,
                known: frozenset[str] | None) -> _Static | str:
    """Everything about one SKU that does not depend on availability or prices, or a drop reason:
    `UpdateInstanceTypes`, then the per-SKU part of `List` (instancetypes.go)."""
    sku = canonical_sku(raw)
    reason = _update_drop_reason(sku, cluster, sw)
    if reason:
        return reason
    name = sku.get("name") or ""
    vm = parse_vm_size(sku.get("size") or "", fallback=sw.accelerator_fallback)
    caps = _caps(sku)
    vcpus = _cap_int(caps, "vCPUs")
    mem_gib = _cap_float(caps, "MemoryGB")
    gpus = _cap_int(caps, "GPUs")
    gpu = _gpu(name, sw)
    assert vcpus is not None and mem_gib is not None     # isSupported passed: vcpus >= 2, mem_gib >= 3.5
    arch_raw = caps.get("cpuarchitecturetype")
    if arch_raw is None:
        return "CPU architecture missing"
    unknown = known is not None and (name not in known or name in sw.unknown_skus)
    if unknown and sw.unknown_sku_policy == "exclude":
        return "not in known SKUs"
    mem_mib = float_to_int64(mem_gib * 1024)             # memoryMiB: int64(memoryGiB * 1024)
    arch = AZURE_TO_KUBE_ARCH.get(arch_raw, arch_raw)
    reason = _drop_reason_nodeclass(caps, vcpus, mem_mib, arch, gpu, nc, sw)
    if reason:
        return reason

    # -- zones (§2.1) and ultra-SSD options per zone (§2.3) --
    regional_ultra = ("true", "false") if _cap_true(caps, "UltraSSDAvailable") else ("false",)
    zone_offers: list[_ZoneOffer] = []
    sku_zones = availability_zones(sku, cluster.region)
    if sw.zonal_regions is not None and cluster.region.lower() not in sw.zonal_regions:
        sku_zones = []      # a static zonal-region list without this region: every SKU is non-zonal (R13)
    for z in sku_zones:
        label = cluster.zone_label(z)
        # ultraSSDOptions: the ARM zone is the label's last character (MakeARMZonesFromAKSLabelZone)
        ultra = ("true", "false") if has_capability_in_zone(sku, "UltraSSDAvailable", label[-1:]) else ("false",)
        zone_offers.append(_ZoneOffer(label, "zonal", ultra).fill(sw))
    if not sku_zones or sw.regional_for_zonal:
        zone_offers.append(_ZoneOffer(sw.regional_value, "regional", regional_ultra).fill(sw))

    # -- static requirements (§1.2) --
    reqs: dict[str, Requirement] = {}

    def put(key: str, *values: str) -> None:
        reqs[key] = _req(key, values)

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
    gen1 = _cap_contains(caps, "HyperVGenerations", "V1")
    gen2 = _cap_contains(caps, "HyperVGenerations", "V2")
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
        put(EPHEMERAL_MAX, *((_go_float(eph_bytes / 1e9),) if eph_bytes > 0 else ()))
    else:
        gb = ephemeral_gb(caps)
        put(EPHEMERAL_MAX, *((str(gb),) if gb > 0 else ()))
    premium = _cap_true(caps, "PremiumIO")
    accel = _cap_true(caps, "AcceleratedNetworkingEnabled")
    if sw.boolean_values == "trueOnly":                      # before #912 (reported-bugs.md R25)
        put(PREMIUM, *(("true",) if premium else ()))
        put(ACCELERATED, *(("true",) if accel else ()))
    else:
        put(PREMIUM, "true" if premium else "false")
        put(ACCELERATED, "true" if accel else "false")
    if sw.hyperv:
        put(HYPERV, *((["1"] if gen1 else []) + (["2"] if gen2 else [])))

    # -- capacity and overhead (§1.2) --
    gpu_vendor = gpu[0] if gpu is not None else None
    capacity = {
        "cpu": vcpus * 1000,
        "memory": memory_capacity(mem_gib, cluster.vm_memory_overhead_percent),
        "ephemeral-storage": int(nc.os_disk_size_gb) * 10**9,
        "pods": max_pods(nc.max_pods, cluster.network_plugin, cluster.network_plugin_mode),
        "nvidia.com/gpu": gpus if gpu_vendor == "nvidia" else 0,
        "amd.com/gpu": gpus if gpu_vendor == "amd" else 0,
    }
    overhead = Overhead(kube_reserved(vcpus, mem_gib), {"cpu": 0, "memory": 0},
                        {"memory": EVICTION_MEMORY_AVAILABLE})
    return _Static(name=name, sku=raw, vmsize=vm, vcpus=vcpus, family=sku.get("family") or "",
                   zones=zone_offers, low_priority=_cap_true(caps, "LowPriorityCapable"), unknown=unknown,
                   base=reqs, capacity=capacity, overhead=overhead)


# == caching ========================================================================================
@dataclass
class _StaticEntry:
    skus: Sequence[Mapping]          # held so id(skus) cannot be reused while cached
    statics: list[_Static]
    dropped: dict[str, str]


_CACHE: "OrderedDict[tuple, _StaticEntry]" = OrderedDict()
_CACHE_MAX = 64
_SKU_CACHE: dict[tuple, tuple[Mapping, "_Static | str"]] = {}
_SKU_CACHE_MAX = 50_000
_LOCK = threading.Lock()
_STATS = {"hits": 0, "misses": 0}


def invalidate_cache(skus: Sequence[Mapping] | None = None) -> None:
    """Explicit invalidation: everything, or what was built from this SKU list and its SKU dicts.

    Caches are keyed by object identity (the list, each SKU dict) plus NodeClass, cluster, profile and
    known-SKU set; availability, quota and prices are never cached. Call this after mutating a SKU
    list or a SKU dict in place."""
    with _LOCK:
        if skus is None:
            _CACHE.clear()
            _SKU_CACHE.clear()
            return
        for key in [k for k, e in _CACHE.items() if e.skus is skus]:
            del _CACHE[key]
        ids = {id(s) for s in skus}
        for key in [k for k, v in _SKU_CACHE.items() if k[0] in ids and any(v[0] is s for s in skus)]:
            del _SKU_CACHE[key]


def cache_info() -> dict[str, int]:
    with _LOCK:
        return {"entries": len(_CACHE), "sku_entries": len(_SKU_CACHE), **_STATS}


def _survivor(same_name: list[Mapping], cluster: ClusterParams, sw: _Switches) -> Mapping:
    """Of SKUs sharing a name, the one `UpdateInstanceTypes` keeps in its name-keyed map: the last
    that passes its filters (or the last one, to report why it was dropped)."""
    if len(same_name) == 1:
        return same_name[0]
    for sku in reversed(same_name):
        if _update_drop_reason(canonical_sku(sku), cluster, sw) is None:
            return sku
    return same_name[-1]


def _statics(skus: Sequence[Mapping], nc: NodeClassParams, cluster: ClusterParams, profile: Profile,
             known: frozenset[str] | None, use_cache: bool) -> _StaticEntry:
    key = (id(skus), len(skus), nc, cluster, profile.name, id(profile), None if known is None else id(known))
    if use_cache:
        with _LOCK:
            entry = _CACHE.get(key)
            if entry is not None and entry.skus is skus:
                _CACHE.move_to_end(key)
                _STATS["hits"] += 1
                return entry
    sw = _switches_cached(profile)
    by_name: dict[str, list[Mapping]] = {}
    for sku in skus:
        by_name.setdefault(canonical_sku(sku).get("name") or "", []).append(sku)
    statics: list[_Static] = []
    dropped: dict[str, str] = {}
    ctx = (nc, cluster, profile.name, id(profile), None if known is None else id(known))
    for name in sorted(by_name):
        sku = _survivor(by_name[name], cluster, sw)
        result = None
        if use_cache:
            hit = _SKU_CACHE.get((id(sku), ctx))
            if hit is not None and hit[0] is sku:
                result = hit[1]
        if result is None:
            result = _static_for(sku, nc, cluster, sw, known)
            if use_cache:
                if len(_SKU_CACHE) >= _SKU_CACHE_MAX:
                    _SKU_CACHE.clear()
                _SKU_CACHE[(id(sku), ctx)] = (sku, result)
        if isinstance(result, str):
            dropped[name] = result
        else:
            statics.append(result)
    entry = _StaticEntry(skus, statics, dropped)
    if use_cache:
        with _LOCK:
            _STATS["misses"] += 1
            _CACHE[key] = entry
            while len(_CACHE) > _CACHE_MAX:
                _CACHE.popitem(last=False)
    return entry


# == pricing ========================================================================================
PriceSource = Mapping[str, Mapping[str, float]] | Callable[[str, str], "float | None"] | None


def _price_lookup(prices: PriceSource) -> Callable[[str, str], float | None]:
    if prices is None:
        return lambda name, ct: None
    if callable(prices):
        return prices
    table = prices.get("prices") if isinstance(prices.get("prices"), Mapping) else prices

    def lookup(name: str, ct: str) -> float | None:
        entry = table.get(name)
        if entry is None:
            return None
        if isinstance(entry, (int, float)):
            return float(entry) if ct == ON_DEMAND else None
        v = entry.get(ct)
        return float(v) if v is not None else None
    return lookup


# == the build ======================================================================================
def build_instance_types(
    skus: Sequence[Mapping],
    nodeclass: NodeClassParams | None = None,
    cluster: ClusterParams | None = None,
    profile: Profile | str | None = None,
    *,
    prices: PriceSource = None,
    unavailable: Callable[[str, str, int, str, str], bool] | None = None,
    has_quota: Callable[[Mapping], bool] | None = None,
    known_skus: Iterable[str] | None = None,
    use_cache: bool = True,
) -> InstanceTypeSet:
    """Instance types for `skus` under one NodeClass, cluster and profile (§1, §2).

    prices: `{sku: {"on-demand": p, "spot": p}}` (the catalog shape, optionally under "prices") or a
      callable `(sku_name, capacity_type) -> price | None`. Missing -> MissingPrice 999; a missing
      spot price falls back to the on-demand price (static pricing, §2.4).
    unavailable(sku_name, family, vcpus, zone, capacity_type) -> bool: the unavailable-offerings cache
      (§2.6); None = everything available.
    has_quota(sku) -> bool: quota for on-demand (§2.2; spot ignores quota); None = quota everywhere.
    known_skus: names priced normally; others get 999 (`unknownSKUPolicy: price999`) or are dropped
      (`exclude`). Default: harness/data/known-skus.txt.
    """
    nc = nodeclass or NodeClassParams()
    cl = cluster or ClusterParams()
    prof = _profile(profile)
    sw = _switches_cached(prof)
    known = _known_set(known_skus, sw.tables)
    entry = _statics(skus, nc, cl, prof, known, use_cache)
    price_of = _price_lookup(prices)

    instance_types: list[InstanceType] = []
    dropped = dict(entry.dropped)
    for st in entry.statics:
        od_price, spot_price, od_priced, spot_priced = _prices_for(st, price_of, sw)
        quota_ok = True if (has_quota is None or not sw.quota_gates_on_demand) else bool(has_quota(st.sku))
        od_ok = quota_ok and (od_priced or not sw.availability_requires_price)
        spot_ok = (st.low_priority or not sw.spot_requires_low_priority) and (
            spot_priced or not sw.availability_requires_price)
        offerings: list[Offering] = []
        zones_avail: list[str] = []
        cts_avail: list[str] = []
        scopes_avail: list[str] = []
        ultra_avail: set[str] = set()
        for zo in st.zones:
            for ct in CAPACITY_TYPES:
                ok, price = (od_ok, od_price) if ct == ON_DEMAND else (spot_ok, spot_price)
                available = ok and not (unavailable and unavailable(st.name, st.family, st.vcpus, zo.zone, ct))
                offerings.append(Offering(zo.zone, ct, price, available, _requirements(dict(zo.reqs[ct]))))
                if available:
                    if zo.zone not in zones_avail:
                        zones_avail.append(zo.zone)
                    if ct not in cts_avail:
                        cts_avail.append(ct)
                    if zo.scope not in scopes_avail:
                        scopes_avail.append(zo.scope)
                    ultra_avail.update(zo.ultra)
        if not offerings:                                   # §1.5: skipped with zero offerings
            dropped[st.name] = "no offerings"
            continue
        reqs = dict(st.base)
        reqs[ZONE] = _req(ZONE, zones_avail)                 # empty In reads as DoesNotExist (§1.1)
        reqs[CAPACITY_TYPE] = _req(CAPACITY_TYPE, cts_avail)
        if sw.placement_scope:
            reqs[PLACEMENT_SCOPE] = _req(PLACEMENT_SCOPE, scopes_avail)
        if sw.ultra_ssd:
            reqs[ULTRA_SSD] = _req(ULTRA_SSD, ultra_avail)
        instance_types.append(InstanceType(
            name=st.name, requirements=_requirements(reqs), offerings=offerings, capacity=dict(st.capacity),
            overhead=st.overhead, vcpus=st.vcpus, family=st.family, vmsize=st.vmsize, sku=st.sku))
    return InstanceTypeSet(instance_types, dropped, prof.name)


_SWITCHES: dict[int, tuple[Profile, _Switches]] = {}


def _switches_cached(profile: Profile) -> _Switches:
    """Switches per Profile object (by identity: Profile equality ignores its raw data)."""
    hit = _SWITCHES.get(id(profile))
    if hit is not None and hit[0] is profile:
        return hit[1]
    sw = _Switches.of(profile)
    if len(_SWITCHES) > 256:
        _SWITCHES.clear()
    _SWITCHES[id(profile)] = (profile, sw)
    return sw


_KNOWN_CACHE: dict[int, tuple[object, frozenset[str]]] = {}


def _known_set(names: Iterable[str] | None, tables: str = ".") -> frozenset[str]:
    if names is None:
        return known_skus(tables)
    if isinstance(names, frozenset):
        return names
    hit = _KNOWN_CACHE.get(id(names))
    if hit is not None and hit[0] is names:
        return hit[1]
    fs = frozenset(names)
    if len(_KNOWN_CACHE) > 64:
        _KNOWN_CACHE.clear()
    _KNOWN_CACHE[id(names)] = (names, fs)
    return fs


def _prices_for(st: _Static, price_of: Callable[[str, str], float | None],
                sw: _Switches) -> tuple[float, float, bool, bool]:
    """§2.4: unknown SKUs 999 for both; missing on-demand 999; spot defaults to the on-demand price.
    Also whether each price was found (for `offerings.availabilityRequiresPrice`)."""
    if st.unknown and sw.unknown_sku_policy == "price999":
        return MISSING_PRICE, MISSING_PRICE, True, True
    od = price_of(st.name, ON_DEMAND)
    spot = price_of(st.name, SPOT)
    od_price = MISSING_PRICE if od is None else od
    spot_price = spot if spot is not None else od_price
    return od_price, spot_price, od is not None, spot is not None or od is not None


__all__ = [
    "NodeClassParams", "ClusterParams", "Offering", "Overhead", "InstanceType", "InstanceTypeSet",
    "build_instance_types", "invalidate_cache", "cache_info", "normalize_cluster_label", "os_sku_from_image_family",
    "os_sku_effective", "node_image_version_label", "max_pods", "kube_reserved", "memory_capacity",
    "max_ephemeral_gb", "availability_zones", "has_location_restriction", "gpu_info", "supported_gpus",
    "known_skus", "known_sku_families", "restricted_skus", "sku_capability", "MISSING_PRICE",
]
