"""SKU catalogs as scenarios use them, read once per process (fakeazure/catalogs)."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=32)
def catalog(name: str) -> tuple[tuple[dict, ...], dict]:
    """(SKUs, {region: {sku: prices}}) of a catalog name or path. Callers copy before mutating."""
    from fakeazure.catalog import load_catalog_file, resolve_catalog
    skus: list[dict] = []
    prices: dict = {}
    for f in resolve_catalog(name):
        s, p = load_catalog_file(f)
        skus += s
        for region, table in p.items():
            prices.setdefault(region, {}).update(table)
    return tuple(skus), prices


@functools.lru_cache(maxsize=32)
def sku_names(name: str) -> frozenset[str]:
    return frozenset(s["name"] for s in catalog(name)[0])
