"""The Resource SKU catalog the compute model serves and checks VM sizes against
(ResourceSkus_List, https://learn.microsoft.com/rest/api/compute/resource-skus/list).
Stored per region, keyed by lowercased size name."""
from __future__ import annotations

from typing import Iterable

from .. import catalog as cat


class SkuCatalog:
    def __init__(self) -> None:
        self.by_region: dict[str, dict[str, dict]] = {}

    def add(self, skus: Iterable[dict], default_region: str) -> list[dict]:
        """Add (or replace, by region and name) ResourceSku dicts; a SKU without
        ``locations`` belongs to ``default_region``.  Returns the normalized copies."""
        out = []
        for raw in skus:
            sku = cat.normalize_sku(raw)
            regions = [r.lower() for r in sku.get("locations") or []] or [default_region.lower()]
            for region in regions:
                self.by_region.setdefault(region, {})[sku["name"].lower()] = sku
            out.append(sku)
        return out

    def list(self, region: str | None) -> list[dict]:
        """One region's SKUs, or every region's (``None``)."""
        if region is None:
            return [s for r in self.by_region for s in self.by_region[r].values()]
        return list(self.by_region.get(region.lower(), {}).values())

    def find(self, region: str, size: str) -> dict | None:
        return self.by_region.get(region.lower(), {}).get(size.lower())

    def regions(self) -> list[str]:
        return list(self.by_region)

    def zonal(self, region: str) -> bool:
        """Whether any SKU of the region lists zones (a non-zonal region refuses zones)."""
        return any((li.get("zones") for s in self.by_region.get(region.lower(), {}).values()
                    for li in s.get("locationInfo") or []))

    def families(self, region: str) -> dict[str, str]:
        """lowercased size name -> VM family, for the region's SKUs."""
        return {name: cat.sku_family(s) for name, s in self.by_region.get(region.lower(), {}).items()}

    def counts(self) -> dict[str, int]:
        return {r: len(v) for r, v in self.by_region.items()}
