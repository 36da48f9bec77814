"""SKU catalogs and prices as data, SKU helpers, and synthetic SKUs for property tests.

Catalog files live in ``fakeazure/catalogs``:

* ``skus/<region>.json``: ``{"value": [ResourceSku, ...]}`` in the ARM wire shape
  (https://learn.microsoft.com/rest/api/compute/resource-skus/list): every
  capability value is a string, zone details use the capital ``"Name"`` key the SDK reads
  (https://learn.microsoft.com/rest/api/compute/resource-skus/list).
* ``prices/<region>.json``: ``{"prices": {"Standard_D2s_v3": {"on-demand": 0.11, "spot": 0.022}}}``
  (USD per hour, Linux).

``load_catalog`` also accepts a path to such a file, a directory of them, or one
file that holds both ``value`` and ``prices``.
"""
from __future__ import annotations

import copy
import functools
import json
import pathlib
import random
from typing import Iterable

from .arm import clone_json

CATALOG_DIR = pathlib.Path(__file__).resolve().parent / "catalogs"

__all__ = [  # noqa: F822 (AzureSkuProvider and sku_faker come from __getattr__, lazily)
    "CATALOG_DIR", "available_catalogs", "load_catalog_file", "resolve_catalog", "capabilities", "capability",
    "sku_vcpus", "sku_family", "family_core", "available_zones", "location_restricted", "restricted_zones",
    "normalize_sku", "synthetic_skus", "vm_skus", "skus_from_document", "is_retail_prices", "prices_from_retail",
    "catalog_regions", "synthetic_prices", "AzureSkuProvider", "sku_faker",
]


def __getattr__(name: str):
    """`AzureSkuProvider` and `sku_faker` live in fakeazure/skufaker.py, imported on first use: Faker
    imports every locale it has (~0.3 s), which a process serving the bundled catalogs never needs."""
    if name in ("AzureSkuProvider", "sku_faker"):
        from . import skufaker
        return getattr(skufaker, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def available_catalogs() -> list[str]:
    """Names of the bundled catalogs (``southcentralus``, ``westcentralus``, ``eastus``)."""
    return sorted(p.stem for p in (CATALOG_DIR / "skus").glob("*.json"))


def resolve_catalog(name_or_path: str | pathlib.Path) -> list[pathlib.Path]:
    """Files to load for a catalog name or path (SKU file first, then its prices)."""
    p = pathlib.Path(name_or_path)
    try:
        p.stat()
    except FileNotFoundError:
        pass
    except OSError as e:        # a name no file system can hold (ENAMETOOLONG, ...): not a path, not a catalog
        raise FileNotFoundError(f"unknown catalog {str(name_or_path)[:80]!r}: {e.strerror}") from None
    if p.is_dir():
        files = sorted(p.rglob("*.json"))
        return [f for f in files if "prices" not in f.parts] + [f for f in files if "prices" in f.parts]
    if p.suffix == ".json" or p.exists():
        if not p.exists():
            raise FileNotFoundError(f"catalog file not found: {p}")
        files = [p]
        sibling = p.parent.parent / "prices" / p.name
        if p.parent.name == "skus" and sibling.exists():
            files.append(sibling)
        return files
    name = str(name_or_path)
    sku_file = CATALOG_DIR / "skus" / f"{name}.json"
    if not sku_file.exists():
        raise FileNotFoundError(
            f"unknown catalog {name!r}: not a file and not one of {available_catalogs()}")
    files = [sku_file]
    price_file = CATALOG_DIR / "prices" / f"{name}.json"
    if price_file.exists():
        files.append(price_file)
    return files


def load_catalog_file(path: str | pathlib.Path) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    """Read one catalog file -> (skus, {region: {sku: {"on-demand": x, "spot": y}}}).
    The result is a fresh copy; parsing is cached per (path, mtime)."""
    return copy.deepcopy(load_catalog_file_shared(path))


def load_catalog_file_shared(path: str | pathlib.Path) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    """Like :func:`load_catalog_file` but returns the cached objects: do not mutate them."""
    path = pathlib.Path(path).resolve()
    return _parse_cached(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _parse_cached(path_s: str, mtime: int) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    path = pathlib.Path(path_s)
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    skus: list[dict] = []
    prices: dict[str, dict[str, dict]] = {}
    if is_retail_prices(data):
        return [], prices_from_retail(data)
    if not isinstance(data, (list, dict)):
        raise ValueError(f"{path}: expected a JSON object or list")
    skus = skus_from_document(data)
    if isinstance(data, dict) and "prices" in data:
        region = (data.get("_meta") or {}).get("region") or data.get("region") or path.stem
        prices[str(region).lower()] = {k: dict(v) for k, v in data["prices"].items()}
    for i, s in enumerate(skus):
        if not isinstance(s, dict) or "name" not in s:
            raise ValueError(f"{path}: value[{i}] is not a ResourceSku object with a name")
    return skus, prices


# --------------------------------------------------------------------------- customer files

def vm_skus(skus: list[dict]) -> list[dict]:
    """The virtual-machine entries of a resourceSkus list. `az vm list-skus` (without
    `--resource-type`) and an unfiltered ARM `GET .../providers/Microsoft.Compute/skus` also list
    disks, availabilitySets, snapshots, ...; an entry without `resourceType` is taken as a VM."""
    return [s for s in skus if (s.get("resourceType") or "virtualMachines").lower() == "virtualmachines"]


def skus_from_document(data) -> list[dict]:
    """ResourceSkus from any of the shapes a support engineer gets: `az vm list-skus --output json`
    (a list; zone details under lowercase `name`), a raw ARM list response (`{"value": [...],
    "nextLink": ...}`), a list of such pages, or a bundled catalog file. Not normalized
    (`normalize_sku` does that when the fake stores them)."""
    if isinstance(data, dict):
        return vm_skus(list(data.get("value") or []))
    if isinstance(data, list):
        if data and all(isinstance(d, dict) and "value" in d and "name" not in d for d in data):
            return vm_skus([s for page in data for s in page.get("value") or []])
        return vm_skus([s for s in data if isinstance(s, dict)])
    raise ValueError("expected a JSON list of ResourceSkus or an object with `value`")


def is_retail_prices(data) -> bool:
    """An Azure Retail Prices API response (`{"Items": [...], "NextPageLink": ...}`), a list of
    such pages, or a bare list of price items."""
    if isinstance(data, dict):
        return "Items" in data
    if isinstance(data, list) and data:
        first = data[0]
        return isinstance(first, dict) and ("Items" in first or "armSkuName" in first)
    return False


def prices_from_retail(data) -> dict[str, dict[str, dict]]:
    """{region: {sku: {"on-demand": x, "spot": y}}} from Retail Prices API JSON, classified the way
    the provider's FetchPricing does (Azure/karpenter-provider-azure v1.14.0
    pkg/providers/pricing/pricing.go: `processPage` drops productName ending " Windows" and meterName
    ending " Low Priority", `categorizePrices` files skuName ending " Spot" as spot), keeping the
    items its query filters for: type Consumption, USD, serviceName "Virtual Machines"."""
    if isinstance(data, dict):
        items = list(data.get("Items") or [])
    elif data and isinstance(data[0], dict) and "Items" in data[0]:
        items = [i for page in data for i in page.get("Items") or []]
    else:
        items = list(data or [])
    out: dict[str, dict[str, dict]] = {}
    for it in items:
        if not isinstance(it, dict) or not it.get("armSkuName"):
            continue
        if (it.get("type") or "Consumption") != "Consumption" or (it.get("currencyCode") or "USD") != "USD":
            continue
        if (it.get("serviceName") or "Virtual Machines") != "Virtual Machines":
            continue
        if str(it.get("productName") or "").endswith(" Windows") or str(it.get("meterName") or "").endswith(" Low Priority"):
            continue
        region = str(it.get("armRegionName") or "").lower()
        kind = "spot" if str(it.get("skuName") or "").endswith(" Spot") else "on-demand"
        out.setdefault(region, {}).setdefault(str(it["armSkuName"]), {})[kind] = float(it.get("retailPrice") or 0)
    return out


def catalog_regions(skus: list[dict]) -> list[str]:
    """The regions a SKU list covers (from `locations` / `locationInfo`)."""
    regions = set()
    for s in skus:
        regions.update(str(r).lower() for r in s.get("locations") or [])
        regions.update(str(li.get("location", "")).lower() for li in s.get("locationInfo") or [] if li.get("location"))
    return sorted(regions)


# --------------------------------------------------------------------------- SKU helpers


def capabilities(sku: dict) -> dict[str, str]:
    return {c.get("name"): c.get("value") for c in (sku.get("capabilities") or [])}


def capability(sku: dict, name: str, default: str | None = None) -> str | None:
    for c in sku.get("capabilities") or []:
        if c.get("name") == name:
            return c.get("value")
    return default


def sku_vcpus(sku: dict) -> int:
    """vCPUs counted against quota: the hardware vCPUs (constrained sizes count fully)."""
    try:
        return int(capability(sku, "vCPUs", "0") or 0)
    except ValueError:
        return 0


def sku_family(sku: dict) -> str:
    return sku.get("family") or ""


def family_core(family: str) -> str:
    """The quota family without its ``standard`` prefix and ``Family`` suffix (case-insensitive):
    ``"standardDSv3Family"`` -> ``"DSv3"`` (the ResourceSku ``family`` field,
    https://learn.microsoft.com/rest/api/compute/resource-skus/list)."""
    core = family
    if core.lower().startswith("standard"):
        core = core[len("standard"):]
    if core.lower().endswith("family"):
        core = core[: -len("family")]
    return core


def location_info(sku: dict, region: str) -> dict:
    for li in sku.get("locationInfo") or []:
        if (li.get("location") or "").lower() == region.lower():
            return li
    return {}


def location_restricted(sku: dict, region: str) -> bool:
    """A Location restriction listing the region makes the SKU unusable (skewer SKU.HasLocationRestriction,
    github.com/Azure/skewer@v0.0.24/sku.go)."""
    for r in sku.get("restrictions") or []:
        if (r.get("type") or "").lower() == "location" and region.lower() in [
                v.lower() for v in r.get("values") or []]:
            return True
    return False


def restricted_zones(sku: dict, region: str) -> set[str]:
    out: set[str] = set()
    for r in sku.get("restrictions") or []:
        if (r.get("type") or "").lower() == "zone" and region.lower() in [v.lower() for v in r.get("values") or []]:
            out.update((r.get("restrictionInfo") or {}).get("zones") or [])
    return out


def available_zones(sku: dict, region: str) -> list[str]:
    """skewer's AvailabilityZones: listed zones minus restricted ones; none if location-restricted
    (github.com/Azure/skewer@v0.0.24/sku.go SKU.AvailabilityZones, github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go instanceTypeZones, pkg/utils/zones/zones.go)."""
    if location_restricted(sku, region):
        return []
    bad = restricted_zones(sku, region)
    return [z for z in location_info(sku, region).get("zones") or [] if z not in bad]


def normalize_sku(sku: dict) -> dict:
    """Copy a SKU into the exact wire shape the real service returns: string capability
    values, zone details under capital ``"Name"`` (https://learn.microsoft.com/rest/api/compute/resource-skus/list;
    https://learn.microsoft.com/rest/api/compute/resource-skus/list), ``restrictions``
    present (``[]`` when unrestricted). The copy is arm.clone_json's (JSON-shaped data, without
    copy.deepcopy's memo: a run's fake normalizes every SKU of its catalog)."""
    s = clone_json(sku)
    s.setdefault("resourceType", "virtualMachines")
    if "size" not in s and "_" in s.get("name", ""):
        s["size"] = s["name"].split("_", 1)[1]
    s.setdefault("tier", "Standard")
    caps = []
    for c in s.get("capabilities") or []:
        v = c.get("value")
        if isinstance(v, bool):
            v = "True" if v else "False"
        caps.append({"name": str(c.get("name")), "value": "" if v is None else str(v)})
    s["capabilities"] = caps
    for li in s.get("locationInfo") or []:
        li.setdefault("zones", [])
        details = []
        for zd in li.get("zoneDetails") or []:
            zd = dict(zd)
            if "Name" not in zd and "name" in zd:
                zd["Name"] = zd.pop("name")
            details.append(zd)
        li["zoneDetails"] = details
    if not s.get("locations") and s.get("locationInfo"):
        s["locations"] = [li["location"] for li in s["locationInfo"]]
    s["restrictions"] = list(s.get("restrictions") or [])
    return s


# --------------------------------------------------------------------------- synthetic SKUs

# Series the generator draws from: (family letter, subfamily, features, versions, GiB per vCPU,
# quota family template, arm64?).  Names follow the size grammar skewer parses
# (GetVMSize, github.com/Azure/skewer@v0.0.24/vmsize.go).
_SERIES = [
    ("D", "", "s", (3, 4, 5, 6), 4, "standardDS{v}Family", False),
    ("D", "", "ds", (4, 5, 6), 4, "standardDDS{v}Family", False),
    ("D", "", "as", (4, 5, 6), 4, "standardDAS{v}Family", False),
    ("D", "", "ads", (5, 6), 4, "standardDADS{v}Family", False),
    ("D", "", "ls", (5, 6), 2, "standardDLS{v}Family", False),
    ("D", "", "ps", (5, 6), 4, "standardDPS{v}Family", True),
    ("D", "", "pls", (5, 6), 2, "standardDPLS{v}Family", True),
    ("D", "", "plds", (5, 6), 2, "standardDPLDS{v}Family", True),
    ("E", "", "s", (3, 4, 5, 6), 8, "standardES{v}Family", False),
    ("E", "", "ds", (4, 5, 6), 8, "standardEDS{v}Family", False),
    ("E", "", "as", (4, 5, 6), 8, "standardEAS{v}Family", False),
    ("E", "", "ps", (5, 6), 8, "standardEPS{v}Family", True),
    ("F", "", "s", (2,), 2, "standardFS{v}Family", False),
    ("F", "", "als", (6,), 2, "standardFALS{v}Family", False),
    ("L", "", "s", (3,), 8, "standardLS{v}Family", False),
    ("L", "", "as", (3,), 8, "standardLAS{v}Family", False),
]
_VCPUS = (2, 4, 8, 16, 32, 48, 64, 96)


def synthetic_skus(n: int, seed: int = 0, region: str = "eastus", zonal: bool = True) -> list[dict]:
    """``n`` distinct, valid, internally consistent synthetic SKUs (same seed -> same list)."""
    from .skufaker import sku_faker
    fake = sku_faker(seed)
    out: dict[str, dict] = {}
    capacity = sum(len(s[3]) for s in _SERIES) * len(_VCPUS)
    if n > capacity:
        raise ValueError(f"synthetic_skus: at most {capacity} distinct sizes, asked for {n}")
    while len(out) < n:
        sku = fake.azure_resource_sku(region=region, zonal=zonal)
        out.setdefault(sku["name"], sku)
    return list(out.values())


def synthetic_prices(skus: Iterable[dict], seed: int = 0) -> dict[str, dict[str, float]]:
    """Plausible prices for synthetic SKUs: ~$0.045 per vCPU-hour, memory-heavy series dearer."""
    rng = random.Random(seed)
    out = {}
    for s in skus:
        caps = capabilities(s)
        n = int(caps.get("vCPUs", "1"))
        mem = float(caps.get("MemoryGB", "1"))
        od = round(0.03 * n + 0.004 * mem * (0.9 + 0.2 * rng.random()), 4)
        entry = {"on-demand": od}
        if caps.get("LowPriorityCapable") == "True":
            entry["spot"] = round(od * (0.1 + 0.3 * rng.random()), 5)
        out[s["name"]] = entry
    return out
