"""Core's NodeOverlay controller and the instance-type decorator that applies what it stored.

With the NodeOverlay feature gate on (given.featureGates) at a core that has the kind (core-behaviour.yaml
nodeOverlay: core v1.7.0 on):
- the controller (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeoverlay/controller.go Reconcile) orders the
  overlays by weight, highest first, equal weights by name from Z to A (pkg/apis/v1alpha1/nodeoverlay.go
  OrderByWeight); for every NodePool it matches each instance type's offerings against the overlay's
  requirements, plus the NodePool's name and template labels (getOverlaidOfferings), and stores a price change
  per offering and added capacity per instance type (store.go). An overlay that sets what an overlay of the
  same weight already set for the same offering or resource is a conflict: none of it applies, and its
  ValidationSucceeded condition says "Conflict". A higher weight wins over a lower one.
- the decorator (pkg/cloudprovider/overlay/cloudprovider.go GetInstanceTypes, store.go apply) hands every core
  reader the NodePool's instance types with the stored changes: `price` replaces an offering's price,
  `priceAdjustment` adds a signed amount or percentage, never below 0 (pkg/cloudprovider/types.go
  AdjustedPrice); `capacity` adds extended resources (ApplyCapacityOverlay). The provider's Create applies the
  same store before it picks the cheapest type (github.com/Azure/karpenter-provider-azure v1.14.2
  pkg/cloudprovider/cloudprovider.go resolveInstanceTypes), so price moves the launch choice, consolidation's
  prices and fit alike.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness.backends.base import KARPENTER, APIRejected
from harness.model.azure.instancetypes import InstanceTypeSet
from harness.model.labels.requirements import Requirement, Requirements
from harness.model.labels.wellknown import NODEPOOL
from harness.model.values.resources import parse_resource_list

if TYPE_CHECKING:
    from harness.loop.state import LoopState

GATE = "NodeOverlay"
CONDITION = "ValidationSucceeded"          # pkg/apis/v1alpha1/nodeoverlay_status.go ConditionTypeValidationSucceeded
CONFLICT = ("Conflict", "conflict with another overlay")   # controller.go updateOverlayStatuses


def adjusted_price(price: float, change: str) -> float:
    """core AdjustedPrice (sigs.k8s.io/karpenter v1.14.0 pkg/cloudprovider/types.go): a plain number replaces
    the price; `+x`/`-x` adds, `+x%`/`-x%` scales; never below 0."""
    if not change:
        return price
    if not change.startswith(("+", "-")):
        return float(change)
    if change.endswith("%"):
        out = price * (1 + float(change[:-1]) / 100)
    else:
        out = price + float(change)
    return out if out >= 0 else 0.0


@dataclass
class _Update:
    """store.go instanceTypeUpdate: the price change per offering (its requirements' text) with the lowest weight
    that touched it, and the added capacity with the lowest weight's own resources."""
    price: dict[str, list] = field(default_factory=dict)          # offering key -> [change, lowest weight]
    capacity: dict[str, str] = field(default_factory=dict)        # resource -> quantity text
    capacity_weight: int | None = None
    capacity_lowest: dict[str, str] = field(default_factory=dict)


def _weight(overlay: dict) -> int:
    return int(((overlay.get("spec") or {}).get("weight")) or 0)


def order_by_weight(overlays: list[dict]) -> list[dict]:
    """NodeOverlayList.OrderByWeight: larger weight first; equal weights, the name later in the alphabet first."""
    return sorted(overlays, key=lambda o: (-_weight(o), _reverse(o["metadata"]["name"])))


def _reverse(name: str) -> tuple:
    return tuple(-ord(c) for c in name) + (1,)      # "b" before "a", "ab" before "a" (Go's a > b)


def _offering_key(o) -> str:
    return str(o.requirements)


class OverlayStore:
    """The controller's result (store.go internalInstanceTypeStore): per NodePool and instance type the changes,
    and per overlay its ValidationSucceeded verdict."""

    def __init__(self, well_known: frozenset = frozenset()) -> None:
        self.well_known = well_known      # the profile's well-known labels (Offerings.Compatible allows them undefined)
        self.updates: dict[str, dict[str, _Update]] = {}
        self.verdicts: dict[str, tuple[bool, str, str]] = {}      # overlay -> (ok, reason, message)
        self._applied: dict[tuple, list] = {}

    def _offerings(self, np: dict, it, reqs: Requirements, sem) -> list:
        """getOverlaidOfferings: the offerings the overlay selects, none when the type itself is not selected."""
        labels = (((np.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
        own = Requirements([Requirement.new(NODEPOOL, "In", [np["metadata"]["name"]], sem)])
        own = own.add(*Requirements.from_labels(labels, sem).values()).add(*it.requirements.values())
        if not own.is_compatible(reqs):
            return []
        return [o for o in it.offerings if reqs.is_compatible(o.requirements, self.well_known)]

    def _conflicts(self, np_name: str, it_name: str, offerings: list, overlay: dict) -> bool:
        spec, w = overlay.get("spec") or {}, _weight(overlay)
        up = self.updates.get(np_name, {}).get(it_name)
        if up is None:
            return False
        # both checks assume descending weight order (store.go isOfferingUpdateConflicting, isCapacityUpdateConflicting)
        if (spec.get("price") is not None or spec.get("priceAdjustment") is not None) and any(
                (p := up.price.get(_offering_key(o))) is not None and p[1] == w for o in offerings):
            return True
        return bool(spec.get("capacity")) and up.capacity_weight == w and \
            any(r in up.capacity_lowest for r in spec["capacity"])

    def _store(self, np_name: str, it_name: str, offerings: list, overlay: dict) -> None:
        spec, w = overlay.get("spec") or {}, _weight(overlay)
        change = spec.get("price") if spec.get("price") is not None else spec.get("priceAdjustment")
        capacity = spec.get("capacity") or {}
        if change is None and not capacity:
            return
        up = self.updates.setdefault(np_name, {}).setdefault(it_name, _Update())
        if change is not None:                       # updateInstanceTypeOffering: the first (highest) weight's change
            for o in offerings:
                p = up.price.get(_offering_key(o))
                if p is not None:
                    p[1] = w
                else:
                    up.price[_offering_key(o)] = [str(change), w]
        if capacity:                                 # updateInstanceTypeCapacity: a resource set first is kept
            for r, q in capacity.items():
                up.capacity.setdefault(r, str(q))
            up.capacity_weight, up.capacity_lowest = w, dict(capacity)

    def apply(self, np_name: str, its):
        """store.go ApplyAll: the build (an InstanceTypeSet) with each selected type copied with its stored price and
        capacity changes; the build itself when the NodePool has none. Made once per build and NodePool."""
        ups = self.updates.get(np_name)
        if not ups:
            return its
        key = (np_name, id(its))
        hit = self._applied.get(key)
        if hit is not None and hit[0] is its:
            return hit[1]
        out = []
        for it in its:
            up = ups.get(it.name)
            if up is None:
                out.append(it)
                continue
            offerings = [dataclasses.replace(o, price=adjusted_price(o.price, up.price[_offering_key(o)][0]))
                         if _offering_key(o) in up.price else o for o in it.offerings]
            capacity = {**it.capacity, **parse_resource_list(up.capacity)} if up.capacity else it.capacity
            out.append(dataclasses.replace(it, offerings=offerings, capacity=capacity, _allocatable=None))
        built = InstanceTypeSet(out, its.dropped, its.profile)
        self._applied[key] = (its, built)
        return built


def evaluate(overlays: list[dict], nodepools: list[tuple[dict, list]], sem, well_known: frozenset) -> OverlayStore:
    """Reconcile: every overlay, by weight, against every NodePool's instance types (`nodepools`: each with its
    undecorated types). An overlay is validated for all NodePools before any of it is stored."""
    store = OverlayStore(well_known)
    for overlay in order_by_weight(overlays):
        reqs = Requirements.from_node_selector_terms((overlay.get("spec") or {}).get("requirements") or (), sem)
        matched = [(np, it, offs) for np, its in nodepools for it in its
                   if (offs := store._offerings(np, it, reqs, sem))]
        name = overlay["metadata"]["name"]
        if any(store._conflicts(np["metadata"]["name"], it.name, offs, overlay) for np, it, offs in matched):
            store.verdicts[name] = (False, *CONFLICT)
            continue
        for np, it, offs in matched:
            store._store(np["metadata"]["name"], it.name, offs, overlay)
        store.verdicts[name] = (True, CONDITION, "")
    return store


@dataclass
class NodeOverlays:
    """The store the loop reads, evaluated again when an overlay, a NodePool or an instance-type build changes."""
    key: str | None = None
    store: OverlayStore | None = None

    def enabled(self, s: "LoopState") -> bool:
        # core-behaviour.yaml nodeOverlay: the release's core has the kind and controller; the gate switches them on
        return bool((s.cfg.feature_gates or {}).get(GATE)) and s.core["nodeOverlay"]

    def instance_types(self, s: "LoopState", np_name: str, its):
        """The NodePool's instance types (the provider's InstanceTypeSet) as the decorated cloud provider returns
        them (GetInstanceTypes)."""
        overlays = s.cluster.list("NodeOverlay", shared=True) if s.core["nodeOverlay"] else []
        if not overlays or not self.enabled(s):
            return its
        s.touch_scope("nodeOverlay")
        s.provider.fact_reads.read_every_size()    # an overlay's status judges every size (upstream/factreads.py)
        return self._current(s, overlays).apply(np_name, its)

    def _current(self, s: "LoopState", overlays: list[dict]) -> OverlayStore:
        from harness.loop.provisioning.nodepool import nodeclass_params
        pools = []
        for np in s.cluster.list("NodePool", shared=True):
            ref = ((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
            params = nodeclass_params(s, ref.get("name", ""))
            if params is not None:           # a NodePool whose types cannot be listed is not evaluated
                pools.append((np, s.provider.instance_types(params)))
        key = json.dumps([[o["metadata"]["name"], o.get("spec")] for o in overlays], sort_keys=True, default=str) + \
            json.dumps([[np["metadata"]["name"], np.get("spec"), id(its)] for np, its in pools],
                       sort_keys=True, default=str)
        if key != self.key or self.store is None:
            self.store = evaluate(overlays, pools, s.sem, s.profile.well_known_labels)
            self.key = key
            _write_status(s, overlays, self.store)
        return self.store


def _write_status(s: "LoopState", overlays: list[dict], store: OverlayStore) -> None:
    """updateOverlayStatuses: ValidationSucceeded on each overlay, and the Ready condition operatorpkg derives from
    it (Ready, or UnhealthyDependents "ValidationSucceeded=False", as on an AKSNodeClass held back)."""
    for o in overlays:
        ok, reason, message = store.verdicts.get(o["metadata"]["name"], (True, CONDITION, ""))
        conds = [s.condition(CONDITION, ok, reason, message),
                 s.condition("Ready", ok, "Ready" if ok else "UnhealthyDependents", "" if ok else f"{CONDITION}=False")]
        current = s.cluster.get("NodeOverlay", o["metadata"]["name"])
        if current is None:
            continue
        current["status"] = {"conditions": conds}
        try:
            s.cluster.update_status(current, KARPENTER)
        except APIRejected:
            continue
        s.decide("nodeoverlay", "validated" if ok else "conflict", f"NodeOverlay/{o['metadata']['name']}",
                 "ValidationSucceeded" if ok else message)
