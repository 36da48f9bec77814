"""The unavailable-offerings cache and the create-error handlers (karpenter-provider-azure v1.14.0
pkg/cache/unavailableofferings.go, pkg/providers/instance/offerings/*.go; github.com/Azure/karpenter-provider-azure
v1.14.0 pkg/providers/instance/offerings/resperrorhandlers.go).

Entries expire on the simulated clock, never on wall time, so a scenario can advance an hour and
see an offering come back.
"""
from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from importlib import resources

import yaml

from harness.model.values.durations import scenario_duration

# UnavailableOfferingsTTL, 3 min (karpenter-provider-azure v1.14.0 pkg/cache/cache.go;
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/cache/unavailableofferings.go)
DEFAULT_TTL = 180.0


@functools.lru_cache(maxsize=1)
def error_handlers() -> list[dict]:
    text = (resources.files("harness") / "data" / "azure-create-errors.yaml").read_text()
    return yaml.safe_load(text)


@dataclass
class Entry:
    expires: float
    threshold: int | None = None      # family blocks: vCPU threshold
    ttl: float = 0.0                  # the TTL it was marked with


class UnavailableOfferings:
    """Keys follow upstream: "<capacityType>:<sku>:<zone>", "spot::", and lowercase
    "skufamily:<family>:<zone>:<capacityType>" with a vCPU threshold."""

    def __init__(self, clock):
        self.clock = clock
        self.entries: dict[str, Entry] = {}
        self.seq = 0
        self._held: list[tuple[str, Entry]] | None = None    # marks of concurrent launches (concurrent())

    @contextlib.contextmanager
    def concurrent(self):
        """Launches running side by side: each chose its offering from the cache as it was when they all
        started, so a failure's marks take effect when the batch is done (core v1.14.0
        pkg/controllers/nodeclaim/lifecycle runs its launches in parallel workers)."""
        self._held = []
        try:
            yield self
        finally:
            self.release()
            self._held = None

    def held(self) -> bool:
        """Marks of concurrent launches wait to take effect (concurrent())."""
        return bool(self._held)

    def release(self) -> None:
        """The concurrent launches so far are done: their marks take effect, for the ones that start now too."""
        held, self._held = self._held or [], None
        try:
            for key, entry in held:
                self._put(key, entry)
        finally:
            self._held = []

    def _put(self, key: str, entry: Entry) -> None:
        if self._held is not None:
            self._held.append((key, entry))
            return
        if key.startswith("skufamily:"):
            old = self._live(key)
            if old is not None and old.threshold is not None and entry.threshold is not None:
                entry.threshold = min(old.threshold, entry.threshold)
        self.entries[key] = entry
        self.seq += 1

    def _live(self, key: str) -> Entry | None:
        e = self.entries.get(key)
        if e is None:
            return None
        if e.expires <= self.clock.now():
            del self.entries[key]
            self.seq += 1
            return None
        return e

    def forget(self) -> None:
        """The controller restarted: the cache lives in its memory (provider v1.14.0
        pkg/cache/unavailableofferings.go), so every entry is gone."""
        if self.entries:
            self.entries.clear()
            self.seq += 1

    def expire(self) -> None:
        """Drop the entries whose TTL has passed (the upstream cache forgets them by itself), so a
        build cached under the old `seq` is not reused after they expire."""
        now = self.clock.now()
        for key in [k for k, e in self.entries.items() if e.expires <= now]:
            del self.entries[key]
            self.seq += 1

    def next_expiry(self) -> float | None:
        """When the next entry expires (an offering is available to the next provisioning round again)."""
        now = self.clock.now()
        return min((e.expires for e in self.entries.values() if e.expires > now), default=None)

    def is_unavailable(self, sku: str, family: str, vcpus: int, zone: str, capacity_type: str) -> bool:
        if capacity_type == "spot" and self._live("spot::"):
            return True
        if self._live(f"{capacity_type}:{sku}:{zone}"):
            return True
        fam = self._live(f"skufamily:{family}:{zone}:{capacity_type}".lower())
        return bool(fam and (fam.threshold == -1 or vcpus >= (fam.threshold or 0)))

    def mark(self, sku: str, family: str, vcpus: int, zone: str, capacity_type: str, ttl: float) -> None:
        """MarkUnavailableWithTTL: the offering and the family at this vCPU count (karpenter-provider-azure
        v1.14.0 pkg/cache/unavailableofferings.go)."""
        now = self.clock.now()
        self._put(f"{capacity_type}:{sku}:{zone}", Entry(now + ttl, ttl=ttl))
        self._put(f"skufamily:{family}:{zone}:{capacity_type}".lower(), Entry(now + ttl, vcpus, ttl))

    def mark_spot(self, ttl: float) -> None:
        self._put("spot::", Entry(self.clock.now() + ttl, ttl=ttl))

    def snapshot(self) -> list[dict]:
        out = []
        for key in sorted(list(self.entries)):
            e = self._live(key)
            if e is None:
                continue
            parts = key.split(":")
            row = {"key": key, "ttl": e.ttl, "expiresIn": round(e.expires - self.clock.now(), 3)}
            if key == "spot::":
                row.update(capacityType="spot", scope="all")
            elif parts[0] == "skufamily":
                row.update(family=parts[1], zone=parts[2], capacityType=parts[3], minVCPUs=e.threshold)
            else:
                row.update(capacityType=parts[0], size=parts[1], zone=parts[2])
            out.append(row)
        return out


@dataclass
class Classified:
    error_kind: str              # CreateError | InsufficientCapacity | Unhandled
    reason: str
    message: str
    # what the handler marked unavailable, for the decision record: its name, the (zone, capacity type)
    # offerings of the instance type (and its family at that vCPU count), every spot offering, for how long
    handler: str = ""
    marked: tuple = ()
    all_spot: bool = False
    ttl: float = 0.0


def classify_and_mark(code: str, text: str, *, cache: UnavailableOfferings, instance_type, zone: str,
                      capacity_type: str, all_zones: list[str], enabled: list[str] | None = None,
                      path: str = "vm") -> Classified:
    """Run the handler table over an ARM error (code + full text) and apply its cache marks.
    `enabled` names the handlers a provider version has (profile `provider.createErrorHandlers`;
    default all): e.g. before #892 (v1.4.0) the three allocation handlers did not exist (R15).
    `path`: the handlers' table (an entry's `path`, default vm): machineBeginCreate for the Machine API's
    refused PUT."""
    for h in error_handlers():
        if h.get("path", "vm") != path:
            continue
        if enabled is not None and h["name"] not in enabled:
            continue
        if h["code"] != code or ("contains" in h and h["contains"] not in text):
            continue
        ttl = scenario_duration(h.get("ttl", DEFAULT_TTL))
        for needle, t in (h.get("ttlWhenContains") or {}).items():
            if needle in text:
                ttl = scenario_duration(t)
        if "ttlByCapacityType" in h:
            ttl = scenario_duration(h["ttlByCapacityType"][capacity_type])
        regional = zone in ("0", "")
        scope = [z for z in all_zones if (z in ("0", "")) == regional]
        both = ["on-demand", "spot"]
        marks = {
            "spot-global": [],
            "all-zones-capacity-type": [(z, capacity_type) for z in all_zones],
            "scope-capacity-type": [(z, capacity_type) for z in scope],
            "zone-both": [(zone, c) for c in both],
            "scope-both": [(z, c) for z in scope for c in both],
            "zone-capacity-type": [(zone, capacity_type)],
            "all-zones-both": [(z, c) for z in all_zones for c in both],
            "none": [],
        }[h["mark"]]
        if h["mark"] == "spot-global":
            cache.mark_spot(ttl)
        for z, c in marks:
            cache.mark(instance_type.name, instance_type.family, instance_type.vcpus, z, c, ttl)
        msg = h["message"].format(instanceType=instance_type.name, zone=zone, capacityType=capacity_type)
        return Classified(h["error"], h["reason"], msg[:1200], h["name"], tuple(marks), h["mark"] == "spot-global", ttl)
    return Classified("Unhandled", "CreateInstanceFailed", text[:1200])
