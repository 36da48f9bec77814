"""The provider's SKU tables, derived from its source by `python -m harness.model.sync`.

supported-gpus.yaml (provider v1.14.0 pkg/utils/supported-gpus.yaml, read by pkg/utils/gpu.go),
known-skus.txt (pkg/providers/instancetype/known_skus.yaml, IsKnownSKU) and restricted-skus.yaml
(pkg/providers/instancetype/skus.go AKSRestrictedVMSizes, karpenterRestrictedVMSKUs). A profile names
the directory (under harness/data) holding its tables with `derived`; upstream's are harness/data itself.
"""
from __future__ import annotations

import functools

import yaml

from harness.model.data import DATA_DIR


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
    """Known SKU name -> its quota family (known-skus.txt: `name family` per line)."""
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
    """SKU name -> drop reason for the AKS- and Karpenter-restricted sizes (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/skus.go IsRestrictedSKU; azure-provider.md §1.5)."""
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

