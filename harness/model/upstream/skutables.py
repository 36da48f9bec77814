"""The provider's SKU tables, derived from its source by `python -m harness.model.sync`.

supported-gpus.yaml (provider v1.14.0 pkg/utils/supported-gpus.yaml, read by pkg/utils/gpu.go),
known-skus.txt (pkg/providers/instancetype/known_skus.yaml, IsKnownSKU) and restricted-skus.yaml
(pkg/providers/instancetype/skus.go AKSRestrictedVMSizes, karpenterRestrictedVMSKUs), and the compiled-in price
table (pkg/providers/pricing/zz_generated.pricing.go). A profile names the directory (under harness/data) holding
its tables with `derived`: each release profile's are harness/data/releases/<profile>/ (derived from that
release's source; upstream reads the newest's).
"""
from __future__ import annotations

import functools


from harness.model.data import DATA_DIR, load_yaml


def _table(tables: str, name: str):
    return DATA_DIR / tables / name


@functools.lru_cache(maxsize=None)
def supported_gpus(tables: str = ".") -> dict[str, tuple[str, tuple[str, ...]]]:
    """Lowercased SKU name -> (vendor, os list), from supported-gpus.yaml."""
    data = load_yaml(_table(tables, "supported-gpus.yaml").read_text()) or {}
    return {k.lower(): (v["vendor"], tuple(v.get("os") or ())) for k, v in (data.get("skus") or {}).items()}


@functools.lru_cache(maxsize=None)
def known_skus(tables: str = ".") -> frozenset[str] | None:
    """Known SKU names (known-skus.txt); None for a release with no known-SKU list (provider before v1.4:
    every SKU the API lists is a candidate)."""
    families = known_sku_families(tables)
    return None if families is None else frozenset(families)


known_skus_or_none = known_skus


@functools.lru_cache(maxsize=None)
def known_sku_families(tables: str = ".") -> dict[str, str] | None:
    """Known SKU name -> its quota family (known-skus.txt: `name family` per line; "" when the release
    recorded none); None without a list."""
    path = _table(tables, "known-skus.txt")
    if not path.exists():
        return None
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, family = line.partition(" ")
        out[name] = family.strip()
    return out


@functools.lru_cache(maxsize=None)
def restricted_skus(tables: str = ".") -> dict[str, str]:
    """SKU name -> drop reason for the AKS- and Karpenter-restricted sizes (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/skus.go IsRestrictedSKU; github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go UpdateInstanceTypes)."""
    data = load_yaml(_table(tables, "restricted-skus.yaml").read_text()) or {}
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



@functools.lru_cache(maxsize=8)
def compiled_price_table(table: str) -> dict[str, dict[str, float]]:
    """region -> {VM size: on-demand price} of a release's compiled-in table (harness/data/releases/prices/*.txt,
    derived from the release's pkg/providers/pricing/zz_generated.pricing.go initialOnDemandPrices)."""
    regions: list[str] = []
    out: dict[str, dict[str, float]] = {}
    for line in (DATA_DIR / table).read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, prices = line.partition("\t")
        if name == "regions":
            regions = prices.split()
            out = {r: {} for r in regions}
            continue
        for region, price in zip(regions, prices.split()):
            if price != "-":
                out[region][name] = float(price)
    return out


def compiled_prices(profile, region: str) -> dict[str, float]:
    """The on-demand prices the profile's release compiled in for `region` ({} when the release has no table
    or the region is not in it). `profile`: a Profile (harness.model.upstream.profile)."""
    ref = (profile.raw.get("provider") or {}).get("compiledPrices") or {}
    if not ref.get("table"):
        return {}
    return dict(compiled_price_table(str(ref["table"])).get(region.lower(), {}))
