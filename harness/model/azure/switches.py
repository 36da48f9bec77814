"""The profile data instance-type building reads, resolved once per profile.

A profile (harness/data/profiles/*.yaml) records which upstream behaviour a provider version has:
which requirement keys exist, how zones and offerings are built, which SKUs are dropped. Values a
profile lacks are upstream.yaml's (the provider v1.14.0).
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.model.upstream.profile import Profile, load_profile


@dataclass(frozen=True)
class Switches:
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
    encryption_at_host: bool
    ephemeral_format: str
    node_image_version: bool
    regional_value: str
    regional_for_zonal: bool
    unknown_sku_policy: str
    unknown_skus: frozenset[str]             # names not yet on the replayed known-SKU list
                                             # (Azure/karpenter-provider-azure#1604;
                                             # Azure/karpenter-provider-azure#1604)
    nvme_only_excluded_without_sig: bool
    accelerator_fallback: bool
    zonal_regions: frozenset[str] | None     # before #825/#1105: a static list decided zonality
                                             # (Azure/karpenter-provider-azure#731;
                                             # Azure/karpenter-provider-azure#731)
    gpu_vendors: frozenset
    # (imageFamily, the GPU table's OS names its GPU check reads) pairs (probe provider.gpuImageFamilies): a
    # family missing here drops every GPU size (isInstanceTypeSupportedByImageFamily's `default: return false`)
    gpu_image_family_os: tuple[tuple[str, tuple[str, ...]], ...]
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
    def of(profile: Profile) -> "Switches":
        setting = profile.provider_setting

        def sw(name):
            return setting("requirements", name)
        offer_keys = set(setting("offerings", "keys"))          # capacityType and zone always
        zonal_regions = setting("zones", "zonalRegions")
        return Switches(
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
            encryption_at_host=bool(sw("encryptionAtHostSupported")),
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
            gpu_image_family_os=gpu_image_family_os(setting("gpuImageFamilies") or {}),
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


# the GPU table's OS names each check of isInstanceTypeSupportedByImageFamily reads (pkg/utils/gpu.go: the
# NVIDIA map / IsGPUSKUSupportedOnOS(sku, "ubuntu"); the Mariner map / "azurelinux" or "azurelinux3")
_GPU_TABLE_OS = {"ubuntu": ("ubuntu",), "azureLinux": ("azurelinux", "azurelinux3")}


def gpu_image_family_os(families: dict) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(imageFamily, OS names) pairs from the derived provider.gpuImageFamilies ({ubuntu: [...], azureLinux: [...]})."""
    out: dict[str, tuple[str, ...]] = {}
    for check, names in families.items():
        for fam in names or ():
            out[str(fam)] = _GPU_TABLE_OS.get(check, ())
    return tuple(out.items())


def gpu_supported_by_image_family(sw: "Switches", image_family: str | None, oses: tuple[str, ...]) -> bool:
    """isInstanceTypeSupportedByImageFamily (github.com/Azure/karpenter-provider-azure v1.6.2
    pkg/providers/instancetype/instancetypes.go) for a GPU size whose table lists `oses`."""
    return any(os in oses for os in dict(sw.gpu_image_family_os).get(defaulted_image_family(sw, image_family), ()))


def defaulted_image_family(sw: "Switches", image_family: str | None) -> str:
    """The family itself, or for an unset one the first Ubuntu family the GPU check knows (harness
    assumption: the CRD default, Ubuntu2204 or Ubuntu, which admission normally fills in)."""
    return image_family or next((f for f, o in sw.gpu_image_family_os if "ubuntu" in o), "Ubuntu")


def resolve_profile(profile: Profile | str | None) -> Profile:
    """A Profile object from a name, an object, or None (upstream)."""
    if profile is None:
        return load_profile()
    return load_profile(profile) if isinstance(profile, str) else profile
