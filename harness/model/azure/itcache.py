"""What instance-type building remembers between builds, in one object that can be named and cleared.

The provider lists SKUs once and caches the built instance types by the hash of
`instanceTypeParameters` (provider v1.14.0 pkg/providers/instancetype/instancetypes.go List;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go UpdateInstanceTypes);
availability, quota and prices are applied on every call. The harness does
the same: the per-SKU static part is cached; its offerings are kept only for the prices and quota verdict
they were made with, while no offering is unavailable (`offered`).

Entries are keyed by object identity (the SKU list, each SKU dict, the Profile, the known-SKU set) plus
the NodeClass and cluster values; each entry holds the keyed object, so an id cannot be reused while
cached. Call `invalidate` after mutating a SKU list or a SKU dict in place.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from harness.model.azure.params import ClusterParams, NodeClassParams
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirement
from harness.model.azure.skus import canonical_sku, vcpus_of
from harness.model.upstream.skutables import known_skus
from harness.model.azure.staticpart import StaticPart, read_sku, static_part, survivor
from harness.model.azure.switches import Switches


@dataclass
class StaticEntry:
    """The static parts built from one SKU list, and the SKUs dropped on the way."""

    skus: Sequence[Mapping]          # held so id(skus) cannot be reused while cached
    statics: list[StaticPart]
    dropped: dict[str, str]


def _held(table: dict, obj, make, bound: int):
    """make(obj), kept in `table` by the object's identity with the object held (so its id is not reused while
    the entry lives); the table is emptied when it holds `bound` entries."""
    hit = table.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    value = make(obj)
    if len(table) >= bound:
        table.clear()
    table[id(obj)] = (obj, value)
    return value


class InstanceTypeCache:
    """Built static parts (per SKU list and per SKU), resolved profile switches, known-SKU sets, and
    the interned requirements offerings share (cheap builds, cheap intersections)."""

    LISTS_MAX = 64
    SKUS_MAX = 50_000
    SWITCHES_MAX = 256
    KNOWN_MAX = 64
    REQS_MAX = 200_000
    OFFER_REQS_MAX = 10_000
    OFFERED_MAX = 20_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lists: "OrderedDict[tuple, StaticEntry]" = OrderedDict()
        self._skus: dict[tuple, tuple[Mapping, StaticPart | str]] = {}
        self._canon: dict[int, tuple[Mapping, dict]] = {}
        self._vcpus: dict[int, tuple[Mapping, int | None]] = {}
        self._switches: dict[int, tuple[Profile, Switches]] = {}
        self._known: dict[int, tuple[object, frozenset[str]]] = {}
        self._reqs: dict[tuple, Requirement] = {}
        self._offer_reqs: dict[tuple, dict[str, dict[str, Requirement]]] = {}
        self._offered: dict[tuple, tuple[StaticPart, tuple]] = {}
        self.hits = 0
        self.misses = 0

    # -- housekeeping -------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget everything, interned values included."""
        with self._lock:
            for table in (self._lists, self._skus, self._canon, self._vcpus, self._switches, self._known,
                          self._reqs, self._offer_reqs, self._offered):
                table.clear()
            self.hits = self.misses = 0

    def invalidate(self, skus: Sequence[Mapping] | None = None) -> None:
        """Drop the built static parts: all of them, or those built from this SKU list and its SKU dicts."""
        with self._lock:
            if skus is None:
                self._lists.clear()
                self._skus.clear()
                self._canon.clear()
                self._vcpus.clear()
                self._offered.clear()
                return
            for key in [k for k, e in self._lists.items() if e.skus is skus]:
                del self._lists[key]
            ids = {id(s) for s in skus}
            for key in [k for k, v in self._skus.items() if k[0] in ids and any(v[0] is s for s in skus)]:
                del self._skus[key]
            for key in [k for k, v in self._offered.items() if any(v[0].sku is s for s in skus)]:
                del self._offered[key]
            for table in (self._canon, self._vcpus):
                for key in [k for k in table if k in ids]:
                    del table[key]

    def info(self) -> dict[str, int]:
        with self._lock:
            return {"entries": len(self._lists), "sku_entries": len(self._skus),
                    "hits": self.hits, "misses": self.misses}

    # -- small memos --------------------------------------------------------------------------
    def switches(self, profile: Profile) -> Switches:
        """Switches per Profile object (by identity: Profile equality ignores its raw data)."""
        return _held(self._switches, profile, Switches.of, self.SWITCHES_MAX)

    def canonical(self, sku: Mapping, use_cache: bool = True) -> dict:
        """canonical_sku(sku), per SKU dict (by identity, the dict held): the operator's start and every
        static-part build read the same SKU dicts run after run (harness/loop/azure/sdk.py _read_pages), and
        folding one SKU's fields was ~1 % of a small run. The result is shared: read it, never change it."""
        if not use_cache:
            return canonical_sku(sku)
        return _held(self._canon, sku, canonical_sku, self.SKUS_MAX)

    def vcpus(self, sku: Mapping) -> int | None:
        """vcpus_of(sku), per SKU dict (by identity, the dict held): the provider's quota check asks it of
        every SKU at every instance-type build (harness/loop/azure/provider.py has_quota), the same SKU dicts run
        after run; reading the capabilities was ~1 % of a small run."""
        return _held(self._vcpus, sku, vcpus_of, self.SKUS_MAX)

    def known_set(self, names: Iterable[str] | None, tables: str = ".") -> frozenset[str]:
        """The known-SKU names as a frozenset (the profile's table when `names` is None)."""
        if names is None:
            return known_skus(tables)
        if isinstance(names, frozenset):
            return names
        return _held(self._known, names, frozenset, self.KNOWN_MAX)

    def req(self, key: str, values) -> Requirement:
        """An `In values` requirement (empty reads as DoesNotExist), interned by (key, values)."""
        k = (key, values if isinstance(values, tuple) else tuple(values))
        r = self._reqs.get(k)
        if r is None:
            r = Requirement(key, False, frozenset(values))
            if len(self._reqs) < self.REQS_MAX:
                self._reqs[k] = r
        return r

    def offer_reqs(self, key: tuple) -> dict[str, dict[str, Requirement]] | None:
        return self._offer_reqs.get(key)

    def remember_offer_reqs(self, key: tuple, reqs: dict[str, dict[str, Requirement]]) -> None:
        if len(self._offer_reqs) < self.OFFER_REQS_MAX:
            self._offer_reqs[key] = reqs

    def offered(self, st: StaticPart, applied: tuple) -> tuple | None:
        """(offerings, requirements) an earlier build made of the static part `st` (by identity, held) with
        the same `applied` (its prices and quota verdict) while no offering was unavailable, or None. Shared
        between runs: read them, never change them. Making them was most of a small run's build, and its
        requirement sets are then the same objects run after run (their signatures worked out once)."""
        hit = self._offered.get((id(st), applied))
        return hit[1] if hit is not None and hit[0] is st else None

    def remember_offered(self, st: StaticPart, applied: tuple, made: tuple) -> None:
        if len(self._offered) >= self.OFFERED_MAX:
            self._offered.clear()
        self._offered[(id(st), applied)] = (st, made)

    # -- the static parts ---------------------------------------------------------------------
    def statics(self, skus: Sequence[Mapping], nc: NodeClassParams, cluster: ClusterParams, profile: Profile,
                known: frozenset[str] | None, use_cache: bool = True) -> StaticEntry:
        """The static part of every SKU that survives, by name (`UpdateInstanceTypes` keys its map by
        name), and the drop reason of every other."""
        key = (id(skus), len(skus), nc, cluster, profile.name, id(profile), None if known is None else id(known))
        if use_cache:
            with self._lock:
                entry = self._lists.get(key)
                if entry is not None and entry.skus is skus:
                    self._lists.move_to_end(key)
                    self.hits += 1
                    return entry
        sw = self.switches(profile)
        by_name: dict[str, list[tuple[Mapping, Mapping]]] = {}
        for sku in skus:
            canon = self.canonical(sku, use_cache)      # once per SKU: survivor and static_part reuse it
            by_name.setdefault(canon.get("name") or "", []).append((sku, canon))
        statics: list[StaticPart] = []
        dropped: dict[str, str] = {}
        ctx = (nc, cluster, profile.name, id(profile), None if known is None else id(known))
        for name in sorted(by_name):
            sku, reading = survivor(by_name[name], cluster, sw)
            result = None
            if use_cache:
                hit = self._skus.get((id(sku), ctx))
                if hit is not None and hit[0] is sku:
                    result = hit[1]
            if result is None:
                if reading is None:
                    canon = next(c for raw, c in by_name[name] if raw is sku)
                    reading = read_sku(canon, cluster, sw)
                result = static_part(sku, nc, cluster, sw, known, self, reading)
                if use_cache:
                    if len(self._skus) >= self.SKUS_MAX:
                        self._skus.clear()
                    self._skus[(id(sku), ctx)] = (sku, result)
            if isinstance(result, str):
                dropped[name] = result
            else:
                statics.append(result)
        entry = StaticEntry(skus, statics, dropped)
        if use_cache:
            with self._lock:
                self.misses += 1
                self._lists[key] = entry
                while len(self._lists) > self.LISTS_MAX:
                    self._lists.popitem(last=False)
        return entry


# The cache build_instance_types uses when its caller passes none.
DEFAULT_CACHE = InstanceTypeCache()
