"""Outcomes up to a relabeling of the zones a scenario cannot tell apart.

Where several zones are equally good upstream picks one at random: core's topology breaks a spread's tie by
map order (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/topologygroup.go
nextDomainTopologySpread) and leaves every empty domain open to anti-affinity (nextDomainAntiAffinity), and
the provider shuffles offerings tied on price, capacity type and placement scope before it ranks them
(v1.14.0 pkg/providers/allocationstrategy/stages/offering_rank.go rankOfferings). When nothing in the
scenario tells zones apart - every SKU offered in all of them or none, no zonal restriction, prices per
region, and no manifest, step or `given` field that names one zone without naming the others alike - two
outcomes that differ only by which zone got which node are one outcome, drawn twice. A run with three nodes
in three zones has 6 such relabelings; exploring seeds until each one shows up would take many more runs
than conformance makes (tools/fuzz_engines.py fuzz-fc2d879e48, drawn by generator 1 at 14904fd: 127
outcomes in 256 seeds).

The regional zone "0" is never relabeled: its offerings and its domain differ from the physical zones'.
"""
from __future__ import annotations

import itertools
import json

from harness.judge.outcome import owners, seen, summary, digest

GIVEN_CATALOG_KEYS = ("skus", "catalog", "prices", "seed", "explore", "profiles")


def symmetric_zones(sc, skus: list[dict]) -> list[str]:
    """The zone labels (`<region>-<n>`) the scenario treats alike, or [] when they can be told apart.
    `skus`: the SKUs the fake serves for it (harness/scenario/catalogs.py scenario_catalog)."""
    region = sc.region.lower()
    zones: set[str] | None = None
    for sku in skus:
        here = [li for li in sku.get("locationInfo") or [] if str(li.get("location", "")).lower() == region]
        offered = frozenset(str(z) for li in here for z in li.get("zones") or [])
        if any((r.get("type") or "").lower() == "zone" for r in sku.get("restrictions") or []):
            return []
        if not offered:
            continue
        if zones is None:
            zones = set(offered)
        elif offered != zones:
            return []
    if not zones or len(zones) < 2:
        return []
    labels = sorted(f"{region}-{z}" for z in zones)
    inputs = _inputs(sc)
    text = _normal(inputs)
    for perm in itertools.permutations(labels):
        if _normal(_relabel(inputs, dict(zip(labels, perm)))) != text:
            return []
    return labels


def canonical_digest(r, zones: list[str]) -> str:
    """The digest of the outcome `r` (a run's final result) that is the same for every relabeling of
    `zones`: the least, over the relabelings, of the outcome's digest (its summary and its nodes as the
    comparison sees them, each with the workloads it carries and its NodePool, in sorted order)."""
    base = summary(r)
    nodes = [(owners(r, n), n.nodepool, seen(n)) for n in r.nodes]

    def relabeled(perm) -> str:
        mapping = dict(zip(zones, perm))
        rows = sorted(json.dumps([o, np, _relabel(view, mapping)], sort_keys=True) for o, np, view in nodes)
        return digest({**base, "nodes": rows})
    return min(relabeled(perm) for perm in itertools.permutations(zones))


def _inputs(sc) -> dict:
    given = {k: v for k, v in sc.given.items() if k not in GIVEN_CATALOG_KEYS}
    return {"given": given, "manifests": [m.obj for m in sc.manifests],
            "steps": [[m.obj for m in ms] for ms in sc.step_manifests],
            "stepOther": [{k: v for k, v in s.items() if k not in ("apply", "expect", "expectByProfile", "description")}
                          for s in sc.steps]}


def _relabel(obj, mapping: dict[str, str]):
    if isinstance(obj, str):
        return mapping.get(obj, obj)
    if isinstance(obj, list):
        return [_relabel(v, mapping) for v in obj]
    if isinstance(obj, dict):
        return {k: _relabel(v, mapping) for k, v in obj.items()}
    return obj


def _normal(obj) -> str:
    """JSON with every list of scalars sorted (requirement values, zone lists: sets in meaning)."""
    def walk(o):
        if isinstance(o, dict):
            return {k: walk(v) for k, v in o.items()}
        if isinstance(o, list):
            items = [walk(v) for v in o]
            if all(not isinstance(v, (dict, list)) for v in items):
                return sorted(items, key=lambda v: json.dumps(v))
            return items
        return o
    return json.dumps(walk(obj), sort_keys=True, default=str)
