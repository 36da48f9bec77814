"""The Resource SKU catalog the compute model serves and checks VM sizes against
(ResourceSkus_List, https://learn.microsoft.com/rest/api/compute/resource-skus/list).
Stored per region, keyed by lowercased size name.

The stored SKU dicts are never changed in place (a restriction replaces the dict: `replace`), so one
normalized copy of a catalog's SKU serves every fake of the process (`NormalizedSkus`), and a page of
them encodes to the same bytes run after run (`EncodedPages`)."""
from __future__ import annotations

import json
import threading
from typing import Iterable

from .. import catalog as cat


class NormalizedSkus:
    """normalize_sku(raw) per raw SKU dict (by identity, the raw dict held): a run's fake adds its
    catalog's SKUs, which are the same dicts run after run (harness/scenario/catalogs.py resolves each
    catalog once), and normalizing them was ~1 % of a small run. Callers never change what it returns."""

    MAX = 50_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_id: dict[int, tuple[dict, dict]] = {}

    def clear(self) -> None:
        with self._lock:
            self._by_id.clear()

    def of(self, raw: dict) -> dict:
        with self._lock:
            hit = self._by_id.get(id(raw))
            if hit is not None and hit[0] is raw:
                return hit[1]
        sku = cat.normalize_sku(raw)
        with self._lock:
            if len(self._by_id) >= self.MAX:
                self._by_id.clear()
            self._by_id[id(raw)] = (raw, sku)
        return sku


class EncodedPages:
    """The JSON bytes of a SKU list page, by the identity of its SKU dicts and its nextLink (each entry
    holds its dicts): encoding a catalog's SKUs was the largest C cost of a small run's requests."""

    MAX = 256

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pages: dict[tuple, tuple[list, bytes]] = {}

    def clear(self) -> None:
        with self._lock:
            self._pages.clear()

    def of(self, page: dict) -> bytes:
        items = page["value"]
        key = (tuple(map(id, items)), page.get("nextLink"), tuple(k for k in page if k not in ("value", "nextLink")))
        with self._lock:
            hit = self._pages.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], items)):
                return hit[1]
        body = json.dumps(page, separators=(",", ":")).encode("utf-8")
        with self._lock:
            if len(self._pages) >= self.MAX:
                self._pages.clear()
            self._pages[key] = (list(items), body)
        return body


NORMALIZED = NormalizedSkus()
ENCODED_PAGES = EncodedPages()


class SkuCatalog:
    def __init__(self) -> None:
        self.by_region: dict[str, dict[str, dict]] = {}
        self.changes = 0          # counts every add and replace: whether a SKU list read before is still the list

    def add(self, skus: Iterable[dict], default_region: str) -> list[dict]:
        """Add (or replace, by region and name) ResourceSku dicts; a SKU without
        ``locations`` belongs to ``default_region``.  Returns the normalized copies (shared: read only)."""
        out = []
        self.changes += 1
        for raw in skus:
            sku = NORMALIZED.of(raw)
            regions = [r.lower() for r in sku.get("locations") or []] or [default_region.lower()]
            for region in regions:
                self.by_region.setdefault(region, {})[sku["name"].lower()] = sku
            out.append(sku)
        return out

    def replace(self, old: dict, new: dict) -> None:
        """Put `new` wherever `old` is stored (every region that lists it): how a SKU changes, since the
        stored dicts are shared between fakes."""
        self.changes += 1
        for table in self.by_region.values():
            for name, sku in table.items():
                if sku is old:
                    table[name] = new

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
