"""SKU catalogs as scenarios use them, read once per process (fakeazure/catalogs)."""
from __future__ import annotations

import functools


@functools.lru_cache(maxsize=32)
def catalog(name: str) -> tuple[tuple[dict, ...], dict]:
    """(SKUs, {region: {sku: prices}}) of a catalog name or path, merged the way
    FakeAzure.load_catalog merges its files. Shared: callers must not mutate them (FakeAzure
    stores its own copies)."""
    from fakeazure import FakeAzure
    fake = FakeAzure(skus=[])            # empty: load only this catalog
    skus = fake.load_catalog(name)
    return tuple(skus), fake.prices


@functools.lru_cache(maxsize=32)
def sku_names(name: str) -> frozenset[str]:
    return frozenset(s["name"] for s in catalog(name)[0])
