"""One NodeClaimTemplate's instance types as the bits of a Python int, for the scheduler's
instance-type filter (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go
filterInstanceTypesByRequirements: requirements compatible, enough resources, a compatible offering).

Bit i stands for `template.instance_types[i]`, so a set of types is an int and intersecting three
tests is `&`: the filter costs a few big-int operations per placement instead of a loop over every
type. The masks are exact: `compatible` is `InstanceType.requirements.intersects_ok` per key,
grouped by equal requirement; `offered` is `offering_compatible` per distinct offering requirement
set; `fits` is `room >= request` per resource from sorted thresholds. Lists are built from a mask
in template order (the order the filter always kept) and shared: never mutate one.
"""
from __future__ import annotations

import bisect

from harness.model.labels.requirements import NEGATIVE_OPERATORS, Requirement, Requirements

Mask = int


class TypeIndex:
    """A template's instance types, indexed once per Solve."""

    __slots__ = ("types", "all", "rooms", "_pos", "_lists", "_thresholds", "_by_key", "_key_masks",
                 "_offer_groups", "_offer_prices", "_room_keys")

    def __init__(self, types: list, rooms: list[dict[str, int]]):
        """types: the template's instance types; rooms: per type, allocatable minus the template's
        daemon overhead, per resource."""
        self.types = types
        self.all: Mask = (1 << len(types)) - 1
        self.rooms = rooms
        self._pos = {id(it): i for i, it in enumerate(types)}
        self._lists: dict[Mask, list] = {0: []}
        self._thresholds: dict[str, tuple[list[int], list[Mask]]] = {}
        self._by_key: dict[str, tuple[Mask, dict[Requirement, Mask]]] = {}
        self._key_masks: dict[Requirement, Mask] = {}
        self._offer_groups: list[tuple[Requirements, Mask]] | None = None
        self._offer_prices: list[list[tuple[int, float]]] = []     # per type: (group, price) available
        self._room_keys: dict[str, Mask] | None = None              # resource -> types whose room has it

    # -- masks and lists -------------------------------------------------------------------------
    def mask_of(self, its) -> Mask:
        pos = self._pos
        m = 0
        for it in its:
            m |= 1 << pos[id(it)]
        return m

    def list(self, mask: Mask) -> list:
        """The types of `mask` in template order (memoized: claims narrow to the same sets again
        and again; the list is shared, never mutate it)."""
        got = self._lists.get(mask)
        if got is None:
            types, got, i, m = self.types, [], 0, mask
            while m:
                low = m & -m
                i = low.bit_length() - 1
                got.append(types[i])
                m ^= low
            self._lists[mask] = got
        return got

    # -- requirements ----------------------------------------------------------------------------
    def compatible(self, reqs: Requirements) -> Mask:
        """The types whose requirements intersect `reqs` on every key both define (core
        Requirements.Intersects: both sides negative never conflict)."""
        m = self.all
        key_masks = self._key_masks
        for r in reqs.values():
            km = key_masks.get(r)
            if km is None:
                km = key_masks[r] = self._key_mask(r)
            m &= km
            if not m:
                break
        return m

    def _key_mask(self, r: Requirement) -> Mask:
        by = self._by_key.get(r.key)
        if by is None:
            groups: dict[Requirement, Mask] = {}
            undefined = 0
            for i, it in enumerate(self.types):
                tr = it.requirements[r.key] if r.key in it.requirements else None
                if tr is None:
                    undefined |= 1 << i
                else:
                    groups[tr] = groups.get(tr, 0) | 1 << i
            by = self._by_key[r.key] = (undefined, groups)
        undefined, groups = by
        negative = r.operator in NEGATIVE_OPERATORS
        m = undefined
        for tr, gm in groups.items():
            if tr.has_intersection(r) or (negative and tr.operator in NEGATIVE_OPERATORS):
                m |= gm
        return m

    def offering_groups(self, reqs: Requirements, well_known: frozenset[str]) -> Mask:
        """The distinct offering requirement sets compatible with `reqs` (offering_compatible), as
        bits over the groups: the answer for every offering of every type at once."""
        if self._offer_groups is None:
            groups: dict[frozenset, tuple[int, Requirements]] = {}
            masks: list[Mask] = []
            for i, it in enumerate(self.types):
                prices = []
                for o in it.offerings:
                    if o.available:
                        sig = o.requirements.signature()
                        g = groups.get(sig)
                        if g is None:
                            g = groups[sig] = (len(masks), o.requirements)
                            masks.append(0)
                        masks[g[0]] |= 1 << i
                        prices.append((g[0], o.price))
                self._offer_prices.append(prices)
            self._offer_groups = [(rep, masks[g]) for g, rep in groups.values()]
        m = 0
        for g, (rep, _) in enumerate(self._offer_groups):
            if reqs.is_compatible(rep, well_known):
                m |= 1 << g
        return m

    def offered(self, groups: Mask) -> Mask:
        """The types with an available offering in one of `groups` (offering_groups)."""
        m = 0
        for g, (_, types) in enumerate(self._offer_groups or ()):
            if groups >> g & 1:
                m |= types
        return m

    def cheapest_price(self, it, groups: Mask) -> float:
        """The lowest price of the type's available offerings in `groups` (inf without one)."""
        prices = [p for g, p in self._offer_prices[self._pos[id(it)]] if groups >> g & 1]
        return min(prices) if prices else float("inf")

    # -- resources -------------------------------------------------------------------------------
    def fits(self, requests: dict[str, int]) -> Mask:
        """The types with room for `requests`: cpu, memory and pods always (a negative room fails a
        zero request), any other resource when requested."""
        m = self._at_least("cpu", requests.get("cpu", 0))
        m &= self._at_least("memory", requests.get("memory", 0))
        m &= self._at_least("pods", requests.get("pods", 0))
        for k, v in requests.items():
            if v > 0 and k not in ("cpu", "memory", "pods"):
                m &= self._at_least(k, v)
        return m

    def _at_least(self, resource: str, amount: int) -> Mask:
        t = self._thresholds.get(resource)
        if t is None:
            t = self._thresholds[resource] = _thresholds([(r.get(resource, 0), i) for i, r in enumerate(self.rooms)])
        values, masks = t
        j = bisect.bisect_left(values, amount)
        return masks[j] if j < len(masks) else 0

    def max_room(self, mask: Mask) -> dict[str, int]:
        """The most room any type of `mask` offers, per resource: cpu, memory and pods read as 0
        where a type has none; another resource only over the types that have it. A binary search
        over each resource's thresholds (the masks only shrink as the amount grows)."""
        if self._room_keys is None:
            keys: dict[str, Mask] = {}
            for i, r in enumerate(self.rooms):
                for k in r:
                    keys[k] = keys.get(k, 0) | 1 << i
            self._room_keys = keys
        room: dict[str, int] = {}
        for k in ("cpu", "memory", "pods"):
            room[k] = self._most(k, mask, self.all)
        for k, has in self._room_keys.items():
            if k not in room and has & mask:
                room[k] = self._most(k, mask, has)
        return room

    def _most(self, resource: str, mask: Mask, has: Mask) -> int:
        """The largest room for `resource` among the types of `mask` (`has`: the types counted)."""
        key = resource if has == self.all else (resource, "has")
        t = self._thresholds.get(key)
        if t is None:
            t = self._thresholds[key] = _thresholds(
                [(r.get(resource, 0), i) for i, r in enumerate(self.rooms) if has >> i & 1])
        values, masks = t
        lo, hi = 0, len(values) - 1          # masks[lo] & mask is non-empty; find the last such j
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if masks[mid] & mask:
                lo = mid
            else:
                hi = mid - 1
        return values[lo]


def _thresholds(room: list[tuple[int, int]]) -> tuple[list[int], list[Mask]]:
    """(values ascending, masks): masks[j] holds the types (bit i) with at least values[j]."""
    values = sorted({v for v, _ in room})
    by_value: dict[int, Mask] = {}
    for v, i in room:
        by_value[v] = by_value.get(v, 0) | 1 << i
    masks, acc = [0] * len(values), 0
    for j in range(len(values) - 1, -1, -1):
        acc |= by_value[values[j]]
        masks[j] = acc
    return values, masks
