"""Where `given.existingNodes` disagree with the SKU catalog, the nodes win.

A bundled catalog is a snapshot; a customer's cluster (a dump `harness new` read, or the nodes a scenario
writes by hand) is the truth of its own day. Each disagreement becomes an amendment of the run's catalog
and one notice: the region has zones the catalog lacks (the region's sizes are offered in them), a size
the catalog lacks (synthesized from its name, harness/model/azure/skusynth.py), a zone the catalog does not
offer that size in (or restricts), a capacity type the size lacks (spot without LowPriorityCapable), a
size `given.skus` leaves out. A name no catalog holds and the synthesizer cannot read, or one a catalog
size nearly spells, stays an error at its line: a typo, not a fact of the cluster.
Why: docs/reproduce-a-ticket.md (The dump against the catalog).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harness.model.azure.skus import availability_zones, canonical_sku, cap_true, capabilities, normalize_location
from harness.model.azure.skusynth import SynthesisError, synthesize

REGION_ZONES, SIZE, SUBSET, ZONE, CAPACITY = "region-zones", "size", "subset", "zone", "capacity-type"
LOW_PRIORITY = "LowPriorityCapable"     # what spot offerings need (provider offerings.spotRequiresLowPriorityCapable)


@dataclass(frozen=True)
class Disagreement:
    """One fact of the cluster the catalog does not hold, where the scenario says it, and how the run
    amends the catalog (`sku`, `zones`: ARM zone numbers)."""

    kind: str
    path: tuple
    message: str
    sku: str = ""
    zones: tuple[str, ...] = ()
    synthesized: dict | None = None      # the ResourceSku made for a size the catalog lacks
    prices: dict | None = None


def arm_zone(label: str, region: str) -> str | None:
    """`westcentralus-2` -> `2` (the provider's MakeARMZonesFromAKSLabelZone); None for a regional or
    foreign value, which the seeding checks as it is."""
    m = re.fullmatch(re.escape(region.lower()) + r"-([0-9]+)", str(label or "").lower())
    return m.group(1) if m else None


def zones_of(entries, region: str) -> dict[str, tuple]:
    """The ARM zones the entries run in, each with the first entry's path that says it."""
    out: dict[str, tuple] = {}
    for i, e in enumerate(entries or []):
        z = arm_zone(str(e.get("zone") or ""), region) if isinstance(e, dict) else None
        if z is not None:
            out.setdefault(z, ("given", "existingNodes", i, "zone"))
    return dict(sorted(out.items(), key=lambda kv: (len(kv[0]), kv[0])))


def _close(name: str, available) -> str | None:
    squash = name.lower().replace("_", "")
    return next((a for a in sorted(available) if a.lower().replace("_", "") == squash), None)


def find(entries: list, skus, region: str, label: str, have: list[str] | None, zones_given: list[str] | None = None,
         subset: frozenset[str] | None = None, full=None) -> tuple[list[tuple[tuple, str]], list[Disagreement]]:
    """(errors as (path, reason), disagreements) of the entries against the catalog `skus` (what the
    scenario's catalog resolved to, synthesized sizes included). `have`: the zones the catalog itself
    offers in the region (None: no catalog there). `subset`: the names `given.skus` keeps, `full` the
    whole catalog they come from."""
    by_name = {s["name"]: s for s in skus}
    catalog_names = {s["name"] for s in full or skus}
    errors: list[tuple[tuple, str]] = []
    found: list[Disagreement] = []
    node_zones = zones_of(entries, region)
    zones: list[str] | None = have
    if have == [] and (zones_given or node_zones):
        zones = sorted(set(zones_given or node_zones), key=lambda z: (len(z), z))
        path = ("given", "zones") if zones_given else next(iter(node_zones.values()))
        said = "given.zones names" if zones_given else "the nodes of given.existingNodes run in"
        found.append(Disagreement(
            REGION_ZONES, path, f"catalog {label} (a snapshot) offers no zones in {region}, but {said} zones "
                                f"{', '.join(zones)}: the run offers every size of {region} in them", zones=tuple(zones)))
    seen: set[tuple] = set()
    for i, e in enumerate(entries or []):
        name = str(e.get("instanceType") or "") if isinstance(e, dict) else ""
        if not name:
            continue
        base = ("given", "existingNodes", i)
        who = f"given.existingNodes[{i}]"
        sku = by_name.get(name)
        if sku is None and subset is not None and name in catalog_names:
            sku = next(s for s in full if s["name"] == name)
            if (SUBSET, name) not in seen:
                seen.add((SUBSET, name))
                found.append(Disagreement(SUBSET, base + ("instanceType",),
                                          f"given.skus does not name {name}, but {who} runs it: the run offers it too",
                                          sku=name))
        elif sku is None:
            close = _close(name, catalog_names)
            if close:
                errors.append((base + ("instanceType",), f"unknown SKU {name!r} in catalog {label!r} (did you mean "
                                                         f"{close!r}?)"))
                continue
            try:
                synth = synthesize(name, region, zones)
            except SynthesisError as err:
                errors.append((base + ("instanceType",), f"unknown SKU {name!r} in catalog {label!r}: {err}"))
                continue
            sku = synth.sku
            found.append(Disagreement(SIZE, base + ("instanceType",),
                                      f"{name} is not in catalog {label} (a snapshot), but {who} runs it: {synth.note}",
                                      sku=name, synthesized=synth.sku, prices=dict(synth.prices)))
            seen.add((SIZE, name))
        by_name[name] = sku
        z = arm_zone(str(e.get("zone") or ""), region)
        probe = sku
        if have == [] and zones:              # as the region's zones amend it
            from fakeazure.catalog import normalize_sku
            probe = normalize_sku(sku)
            _offer(probe, region, tuple(zones), lift=False)
        offered = availability_zones(probe, region)
        if z is not None and z not in offered and (ZONE, name, z) not in seen:
            seen.add((ZONE, name, z))
            found.append(Disagreement(ZONE, base + ("zone",),
                                      f"catalog {label} does not offer {name} in zone {e['zone']}, but {who} runs "
                                      "there: the run offers it there", sku=name, zones=(z,)))
        if e.get("capacityType") == "spot" and not cap_true(capabilities(canonical_sku(sku)), LOW_PRIORITY) \
                and (CAPACITY, name) not in seen:
            seen.add((CAPACITY, name))
            found.append(Disagreement(CAPACITY, base + ("capacityType",),
                                      f"catalog {label} says {name} is not {LOW_PRIORITY} (no spot), but {who} is "
                                      "spot: the run offers it as spot", sku=name))
    return errors, found


def amend(skus: list[dict], region: str, found: list[Disagreement], full=None) -> list[dict]:
    """The catalog with the disagreements applied: copies of the SKUs they touch, the rest as they are."""
    if not found:
        return list(skus)
    from fakeazure.catalog import normalize_sku
    out = {s["name"]: s for s in skus}
    touched: dict[str, dict] = {}

    def own(name: str) -> dict:
        if name not in touched:
            touched[name] = normalize_sku(out[name])
            out[name] = touched[name]
        return touched[name]

    for d in found:
        if d.kind == SIZE:
            out[d.sku] = d.synthesized
        elif d.kind == SUBSET:
            out[d.sku] = next(s for s in full if s["name"] == d.sku)
    for d in found:
        if d.kind == REGION_ZONES:
            for name in list(out):
                if any(normalize_location(str(li.get("location", ""))) == normalize_location(region)
                       for li in out[name].get("locationInfo") or []):
                    _offer(own(name), region, d.zones, lift=False)
        elif d.kind == ZONE:
            _offer(own(d.sku), region, d.zones)
        elif d.kind == CAPACITY:
            caps = own(d.sku)["capabilities"]
            caps[:] = [c for c in caps if c["name"].lower() != LOW_PRIORITY.lower()] + [
                {"name": LOW_PRIORITY, "value": "True"}]
    return list(out.values())


def _offer(sku: dict, region: str, zones: tuple[str, ...], lift: bool = True) -> None:
    """Offer `sku` in `zones` of `region`: listed there and (`lift`) no zone or Location restriction on
    them. The region's zones (`lift` False) leave a restricted size restricted."""
    r = normalize_location(region)
    infos = [li for li in sku.setdefault("locationInfo", []) if normalize_location(str(li.get("location", ""))) == r]
    if not infos:
        infos = [{"location": region, "zones": [], "zoneDetails": []}]
        sku["locationInfo"].append(infos[0])
        sku.setdefault("locations", []).append(region)
    infos[0]["zones"] = sorted(set(infos[0].get("zones") or []) | set(zones), key=lambda z: (len(z), z))
    if not lift:
        return
    kept = []
    for res in sku.get("restrictions") or []:
        if not any(normalize_location(v) == r for v in res.get("values") or []):
            kept.append(res)
            continue
        if res.get("type") == "Location":
            continue
        info = dict(res.get("restrictionInfo") or {})
        info["zones"] = [z for z in info.get("zones") or [] if z not in zones]
        if info["zones"]:
            kept.append({**res, "restrictionInfo": info})
    sku["restrictions"] = kept


def say(text: str, notices: list, notes: list[str]) -> str:
    """The scenario text with each disagreement with the catalog (notices of kind `cluster`, and sizes
    synthesized) as a comment above the line it is about, and as a note `harness new` prints. The text is cut
    at those lines only (a 5,000-node scenario has 1.9 million)."""
    said = [n for n in notices if n.kind in ("cluster", "synthesized")]
    notes += [_said(n) for n in said]
    by_line: dict[int, list] = {}                       # line index -> its notices, the last to be written first
    for n in sorted(said, key=lambda n: -n.line):
        by_line.setdefault(max(n.line - 1, 0), []).append(n)
    pieces: list[str] = []
    prev = 0
    ats = sorted(by_line)
    for at, start in zip(ats, _line_starts(text, ats)):
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        indent = " " * (len(line) - len(line.lstrip(" -")))
        pieces.append(text[prev:start])
        pieces += [f"{indent}# {_said(n)}\n" for n in reversed(by_line[at])]
        prev = start
    pieces.append(text[prev:])
    return "".join(pieces)


def _said(n) -> str:
    return ("the cluster wins over the catalog: " if n.kind == "cluster" else "") + n.message


def _line_starts(text: str, indices: list[int]) -> list[int]:
    """Where each line of `text` starts, by index from 0, for indices in ascending order: the newlines counted
    a block at a time by str.count, then found one by one in the block that holds the line."""
    out: list[int] = []
    pos, line = 0, 0
    for want in indices:
        while line < want:
            block = min(pos + 65536, len(text))
            n = text.count("\n", pos, block)
            if line + n < want and block < len(text):
                pos, line = block, line + n
                continue
            while line < want:
                pos, line = text.index("\n", pos) + 1, line + 1
        out.append(pos)
    return out
