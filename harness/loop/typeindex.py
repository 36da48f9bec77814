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

from harness.model.requirements import NEGATIVE_OPERATORS, Requirement, Requirements

Mask = int


class TypeIndex:
    """A template's instance types, indexed once per Solve."""

    __slots__ = ("types", "all", "rooms", "_pos", "_lists", "_thresholds", "_by_key", "_key_masks",
                 "_offer_groups")

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
                tr = it.requirements._reqs.get(r.key)
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

    def offered(self, reqs: Requirements, well_known: frozenset[str]) -> Mask:
        """The types with an available offering compatible with `reqs` (offering_compatible)."""
        if self._offer_groups is None:
            groups: dict[frozenset, tuple[Requirements, Mask]] = {}
            for i, it in enumerate(self.types):
                for o in it.offerings:
                    if o.available:
                        sig = o.requirements.signature()
                        rep, gm = groups.get(sig, (o.requirements, 0))
                        groups[sig] = (rep, gm | 1 << i)
            self._offer_groups = list(groups.values())
        m = 0
        for rep, gm in self._offer_groups:
            if gm & ~m and reqs.is_compatible(rep, well_known):
                m |= gm
        return m

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
            # masks[j]: the types with at least values[j] of the resource (values ascending)
            room = [r.get(resource, 0) for r in self.rooms]
            values = sorted(set(room))
            masks, acc = [0] * len(values), 0
            by_value: dict[int, Mask] = {}
            for i, v in enumerate(room):
                by_value[v] = by_value.get(v, 0) | 1 << i
            for j in range(len(values) - 1, -1, -1):
                acc |= by_value[values[j]]
                masks[j] = acc
            t = self._thresholds[resource] = (values, masks)
        values, masks = t
        j = bisect.bisect_left(values, amount)
        return masks[j] if j < len(masks) else 0

    def max_room(self, mask: Mask) -> dict[str, int]:
        """The most room any type of `mask` offers, per resource (cpu, memory and pods read as 0
        where a type has none)."""
        room: dict[str, int] = {}
        rooms = self.rooms
        m = mask
        while m:
            low = m & -m
            r = rooms[low.bit_length() - 1]
            for k in ("cpu", "memory", "pods"):
                v = r.get(k, 0)
                if v > room.get(k, v - 1):
                    room[k] = v
            for k, v in r.items():
                if v > room.get(k, v - 1):
                    room[k] = v
            m ^= low
        return room
