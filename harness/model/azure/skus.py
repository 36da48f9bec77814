"""Reading an Azure ResourceSku the way the provider does.

Input SKUs are plain dicts in the ARM ResourceSku JSON shape (Resource Skus - List,
https://learn.microsoft.com/rest/api/compute/resource-skus/list): capability values
are strings, capability names are matched case-insensitively, `locationInfo[].zoneDetails[]` uses
`Name` (or `name`). The provider reads them through skewer (github.com/Azure/skewer v0.0.24 sku.go:
HasCapability, GetCapabilityIntegerQuantity, AvailabilityZones, HasLocationRestriction, ...) and its
own pkg/providers/instancetype/instancetypes.go FindMaxEphemeralSizeGBAndPlacement (provider v1.14.0).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from harness.model.values.gostrconv import go_div, parse_float64, parse_int64, wrap_int64
from harness.model.azure.overhead import MIB

# provider pkg/apis/v1beta1/labels.go AzureToKubeArchitectures (karpenter-provider-azure v1.14.0;
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements)
AZURE_TO_KUBE_ARCH = {"x64": "amd64", "Arm64": "arm64"}

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



# -- capability access (github.com/Azure/skewer@v0.0.24/sku.go, strings.go) --------
def capabilities(sku: Mapping) -> dict[str, str]:
    """Capabilities by lowercased name; the first of duplicate names wins (skewer scans in order)."""
    caps = sku.get("capabilities") or ()
    return {c["name"].lower(): c.get("value") for c in reversed(caps) if c.get("name") is not None}


def vcpus_of(sku: Mapping) -> int | None:
    """The SKU's vCPUs capability as the model counts them (Go ParseInt; None when it does not parse)."""
    return cap_int(capabilities(sku), "vCPUs")


def cap_true(caps: Mapping[str, str], name: str) -> bool:
    """skewer HasCapability: the value equals `True` case-insensitively."""
    v = caps.get(name.lower())
    return v is not None and v.lower() == "true"


def cap_int(caps: Mapping[str, str], name: str) -> int | None:
    """skewer GetCapabilityIntegerQuantity: `strconv.ParseInt(v, 10, 64)`, None on any error."""
    return parse_int64(caps.get(name.lower()))


def cap_float(caps: Mapping[str, str], name: str) -> float | None:
    """skewer GetCapabilityFloatQuantity: `strconv.ParseFloat(v, 64)`, None on any error."""
    return parse_float64(caps.get(name.lower()))


# Go's unicode.IsSpace (the Unicode White_Space property); Python's str.split() also splits on \x1c-\x1f.
_GO_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def normalize_location(s: str) -> str:
    """skewer normalizeLocation (strings.go): every unicode.IsSpace rune removed, then lowercased."""
    return _GO_SPACE.sub("", s).lower()


def cap_contains(caps: Mapping[str, str], name: str, value: str) -> bool:
    """skewer HasCapabilityWithSeparator: substring match after normalizing."""
    v = caps.get(name.lower())
    return v is not None and normalize_location(value) in normalize_location(v)


def _location_info(sku: Mapping, region: str) -> list[Mapping]:
    r = normalize_location(region)
    return [li for li in sku.get("locationInfo") or () if li.get("location") is not None and normalize_location(li["location"]) == r]


LOCATION_RESTRICTION = "Location"     # compute.Location; skewer compares the type exactly


def has_location_restriction(sku: Mapping, region: str) -> bool:
    """skewer SKU.HasLocationRestriction (github.com/Azure/skewer@v0.0.24/sku.go): a
    restriction whose type is exactly `Location` listing the region."""
    r = normalize_location(region)
    for res in sku.get("restrictions") or ():
        if res.get("type") == LOCATION_RESTRICTION and any(normalize_location(v) == r for v in res.get("values") or ()):
            return True
    return False


def availability_zones(sku: Mapping, region: str) -> list[str]:
    """skewer AvailabilityZones(region): zones listed for the region minus zone-restricted ones; none
    with a Location restriction (github.com/Azure/skewer@v0.0.24/sku.go SKU.AvailabilityZones;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go instanceTypeZones,
    pkg/utils/zones/zones.go)."""
    infos = _location_info(sku, region)
    if not infos:
        return []
    if has_location_restriction(sku, region):
        return []
    zones = {z for li in infos for z in li.get("zones") or ()}
    r = normalize_location(region)
    for res in sku.get("restrictions") or ():
        if any(normalize_location(v) == r for v in res.get("values") or ()):
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
    """The size half of `FindMaxEphemeralSizeGBAndPlacement` (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go), in bytes: 0 unless
    EphemeralOSDiskSupported; then NVMe (NvmeDiskSizeInMiB > 0 and placement NvmeDisk), cache
    (CachedDiskBytes > 0), resource disk (MaxResourceVolumeMB > 0, really MiB), first that applies."""
    if not cap_true(caps, "EphemeralOSDiskSupported"):
        return 0
    nvme = cap_int(caps, "NvmeDiskSizeInMiB") or 0
    if nvme > 0 and cap_contains(caps, "SupportedEphemeralOSDiskPlacements", "NvmeDisk"):
        return nvme * MIB
    cache = cap_int(caps, "CachedDiskBytes") or 0
    if cache > 0:
        return cache
    resource = cap_int(caps, "MaxResourceVolumeMB") or 0
    return resource * MIB if resource > 0 else 0


def ephemeral_gb(caps: Mapping[str, str]) -> int:
    """`FindMaxEphemeralSizeGBAndPlacement`'s size in int64 arithmetic (MiB * units.MiB / units.Gigabyte
    wraps like Go's for absurd values)."""
    if not cap_true(caps, "EphemeralOSDiskSupported"):
        return 0
    nvme = cap_int(caps, "NvmeDiskSizeInMiB") or 0
    if nvme > 0 and cap_contains(caps, "SupportedEphemeralOSDiskPlacements", "NvmeDisk"):
        return go_div(wrap_int64(nvme * MIB), 10**9)
    cache = cap_int(caps, "CachedDiskBytes") or 0
    if cache > 0:
        return cache // 10**9
    resource = cap_int(caps, "MaxResourceVolumeMB") or 0
    return go_div(wrap_int64(resource * MIB), 10**9) if resource > 0 else 0


def max_ephemeral_gb(sku: Mapping) -> int:
    """Max ephemeral OS disk size in decimal GB, integer division (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go FindMaxEphemeralSizeGBAndPlacement)."""
    return max_ephemeral_bytes(capabilities(canonical_sku(sku))) // 10**9


def go_float(f: float) -> str:
    """Go's `fmt.Sprint(float64)` for the values we print (shortest repr, no trailing `.0`)."""
    if f == int(f) and abs(f) < 1e21:
        return str(int(f))
    return repr(f)

