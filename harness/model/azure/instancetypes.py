"""Instance types and offerings from Azure Resource SKUs.

`build_instance_types` turns SKUs (ResourceSku dicts, harness.model.azure.skus) into `InstanceType`s whose
requirements, offerings, capacity and overhead follow the provider's List/createOfferings (provider
v1.14.0 pkg/providers/instancetype/instancetypes.go) and computeRequirements/computeCapacity
(instancetype.go), and records every SKU it drops with the reason (for `explain`);
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements,
pkg/providers/instancetype/instancetypes.go createOfferings, pkg/fake/zz_generated.sku.southcentralus.go,
pkg/providers/instancetype/instancetypes.go. The per-SKU part lives in harness.model.azure.staticpart, what is kept between
builds in
harness.model.azure.itcache; here availability, quota and prices are applied on every build.

Every profile difference comes from the profile data (`provider.requirements`, `provider.zones`,
`provider.unknownSKUPolicy`, ...); switches missing from a profile default to upstream's behaviour.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from harness.model.upstream.factreads import ProviderReads
from harness.model.azure.itcache import DEFAULT_CACHE, InstanceTypeCache
from harness.model.azure.overhead import Overhead
from harness.model.azure.params import ClusterParams, NodeClassParams
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirements
from harness.model.values.resources import subtract
from harness.model.azure.staticpart import StaticPart
from harness.model.azure.switches import Switches, resolve_profile
from harness.model.azure.vmsize import VMSize
from harness.model.labels.wellknown import CAPACITY_TYPE, CAPACITY_TYPES, ON_DEMAND, PLACEMENT_SCOPE, SPOT, ULTRA_SSD, ZONE

# pricing.MissingPrice (provider v1.14.0 pkg/providers/pricing/pricing.go)
MISSING_PRICE = 999.0
# an instance type's requirements that follow its available offerings (_offered), not the SKU alone
OFFERING_KEYS = frozenset({ZONE, CAPACITY_TYPE, PLACEMENT_SCOPE, ULTRA_SSD})


@dataclass(eq=False)
class Offering:
    """core cloudprovider.Offering (sigs.k8s.io/karpenter v1.14.0 pkg/cloudprovider/types.go): one zone
    and capacity type of an instance type, its price and whether it can be launched now."""

    zone: str
    capacity_type: str
    price: float
    available: bool
    requirements: Requirements

    @property
    def placement_scope(self) -> str | None:
        r = self.requirements.get(PLACEMENT_SCOPE)
        return r.single_value() if PLACEMENT_SCOPE in self.requirements else None

    def __repr__(self) -> str:
        return (f"Offering({self.zone!r}, {self.capacity_type!r}, price={self.price}, "
                f"available={self.available})")


@dataclass(eq=False)
class InstanceType:
    """core cloudprovider.InstanceType (pkg/cloudprovider/types.go), plus the SKU it came from."""

    name: str
    requirements: Requirements
    offerings: list[Offering]
    capacity: dict[str, int]           # cpu millicores; memory/ephemeral-storage bytes; pods; gpus
    overhead: Overhead
    vcpus: int
    family: str                        # the SKU's quota family, e.g. standardDSv3Family
    vmsize: VMSize
    sku: Mapping = field(repr=False)
    _allocatable: dict[str, int] | None = field(default=None, repr=False)

    def allocatable(self) -> dict[str, int]:
        """capacity minus kube-reserved, system-reserved and eviction threshold (core `Allocatable`)."""
        if self._allocatable is None:
            self._allocatable = subtract(self.capacity, self.overhead.total())
        return dict(self._allocatable)

    def available_offerings(self) -> list[Offering]:
        return [o for o in self.offerings if o.available]

    def __repr__(self) -> str:
        return f"InstanceType({self.name!r}, offerings={len(self.offerings)})"


class InstanceTypeSet(Sequence[InstanceType]):
    """The instance types of one build, sorted by name, plus every dropped SKU and why."""

    def __init__(self, instance_types: list[InstanceType], dropped: dict[str, str], profile: str):
        self.instance_types = instance_types
        self.dropped = dropped
        self.profile = profile
        self._by_name = {it.name: it for it in instance_types}

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, str):
            return self._by_name[i]
        return self.instance_types[i]

    def __len__(self) -> int:
        return len(self.instance_types)

    def __iter__(self) -> Iterator[InstanceType]:
        return iter(self.instance_types)

    def __contains__(self, name) -> bool:  # type: ignore[override]
        return name in self._by_name if isinstance(name, str) else name in self.instance_types

    def get(self, name: str) -> InstanceType | None:
        return self._by_name.get(name)

    def names(self) -> list[str]:
        return [it.name for it in self.instance_types]

    def explain(self, name: str) -> str:
        if name in self._by_name:
            it = self._by_name[name]
            avail = [f"{o.zone}/{o.capacity_type}" for o in it.offerings if o.available]
            return f"{name}: kept; available offerings: {', '.join(avail) or 'none'}"
        if name in self.dropped:
            return f"{name}: dropped ({self.dropped[name]})"
        return f"{name}: not in the SKU list"

    def __repr__(self) -> str:
        return f"InstanceTypeSet({len(self)} kept, {len(self.dropped)} dropped, profile={self.profile!r})"



# -- pricing (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go createOfferings,
#    pkg/providers/pricing/pricing.go) --
PriceSource = Mapping[str, Mapping[str, float]] | Callable[[str, str], "float | None"] | None


def _price_lookup(prices: PriceSource) -> Callable[[str, str], float | None]:
    if prices is None:
        return lambda name, ct: None
    if callable(prices):
        return prices
    table = prices.get("prices") if isinstance(prices.get("prices"), Mapping) else prices

    def lookup(name: str, ct: str) -> float | None:
        entry = table.get(name)
        if entry is None:
            return None
        if isinstance(entry, (int, float)):
            return float(entry) if ct == ON_DEMAND else None
        v = entry.get(ct)
        return float(v) if v is not None else None
    return lookup


def size_taken(takers: Iterable[Requirements], held: Iterable[str]) -> Callable[[StaticPart], bool]:
    """Whether a NodePool's or NodeClaim's requirements (`takers`) take a static part, or a Node holds its size
    (`held`, their names): the takers intersect its own requirements (core Requirements.Intersects). Its zones,
    capacity types and the rest of OFFERING_KEYS follow its available offerings, so they are not its own and keep
    no size out (harness/model/upstream/factreads.py ProviderReads.consulted)."""
    takers, held = list(takers), frozenset(held)

    def taken(st: StaticPart) -> bool:
        return st.name in held or any(Requirements.of(dict(st.base)).intersects_ok(r) for r in takers)
    return taken


# -- the build ----------------------------------------------------------------------------------
def build_instance_types(
    skus: Sequence[Mapping],
    nodeclass: NodeClassParams | None = None,
    cluster: ClusterParams | None = None,
    profile: Profile | str | None = None,
    *,
    prices: PriceSource = None,
    unavailable: Callable[[str, str, int, str, str], bool] | None = None,
    has_quota: Callable[[Mapping], bool] | None = None,
    known_skus: Iterable[str] | None = None,
    use_cache: bool = True,
    cache: InstanceTypeCache | None = None,
    reads: ProviderReads | None = None,
) -> InstanceTypeSet:
    """Instance types for `skus` under one NodeClass, cluster and profile (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go DefaultProvider.List; github.com/Azure/karpenter-provider-azure
    v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements).

    prices: `{sku: {"on-demand": p, "spot": p}}` (the catalog shape, optionally under "prices") or a
      callable `(sku_name, capacity_type) -> price | None`. Missing -> MissingPrice 999; a missing
      spot price falls back to the on-demand price (static pricing, pkg/providers/pricing/pricing.go;
      github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/pricing/pricing.go).
    unavailable(sku_name, family, vcpus, zone, capacity_type) -> bool: the unavailable-offerings cache
      (provider pkg/cache/unavailableofferings.go UnavailableOfferings.IsUnavailable); None =
      everything available (each static part's offerings then kept between builds: InstanceTypeCache.offered).
    has_quota(sku) -> bool: quota for on-demand (provider pkg/providers/quota/quota.go
      DefaultProvider.HasQuotaFor; github.com/Azure/karpenter-provider-azure v1.14.0
      pkg/providers/instancetype/instancetypes.go createOfferings; spot ignores quota); None = quota
      everywhere.
    known_skus: names priced normally; others get 999 (`unknownSKUPolicy: price999`) or are dropped
      (`exclude`). Default: the profile's known-skus.txt (none before provider v1.4: every SKU is known).
    cache: what to remember between builds (default: DEFAULT_CACHE); use_cache=False builds every
      static part afresh (the interned requirements are still shared).
    reads: where the facts whose other value would answer otherwise are noted (harness/model/upstream/factreads.py).
    """
    nc = nodeclass or NodeClassParams()
    cl = cluster or ClusterParams()
    store = DEFAULT_CACHE if cache is None else cache
    prof = resolve_profile(profile)
    sw = store.switches(prof)
    known = store.known_set(known_skus, sw.tables)
    entry = store.statics(skus, nc, cl, prof, known, use_cache)
    req = store.req
    price_of = _price_lookup(prices)

    instance_types: list[InstanceType] = []
    dropped = dict(entry.dropped)
    if reads is not None:
        reads.dropped(entry.dropped)
    for st in entry.statics:
        gated = has_quota is not None and sw.quota_gates_on_demand
        applied = (_prices_for(st, price_of, sw), bool(has_quota(st.sku)) if gated else True)
        if reads is not None:
            reads.static(st, applied[0], applied[1] if gated else None)
        # with nothing unavailable, a static part's offerings follow from its prices and quota verdict alone
        shared = unavailable is None and use_cache
        made = store.offered(st, applied) if shared else None
        if made is None:
            made = _offered(st, *applied, unavailable, sw, req)
            if shared:
                store.remember_offered(st, applied, made)
        offerings, reqs = made
        # provider v1.14.0 pkg/providers/instancetype/instancetypes.go List skips it
        if not offerings:
            dropped[st.name] = "no offerings"
            continue
        instance_types.append(InstanceType(
            name=st.name, requirements=reqs, offerings=list(offerings), capacity=dict(st.capacity),
            overhead=st.overhead, vcpus=st.vcpus, family=st.family, vmsize=st.vmsize, sku=st.sku))
    return InstanceTypeSet(instance_types, dropped, prof.name)


def _offered(st: StaticPart, prices: tuple[float, float, bool, bool], quota_ok: bool,
             unavailable: Callable[[str, str, int, str, str], bool] | None, sw: Switches,
             req: Callable) -> tuple[list[Offering], Requirements | None]:
    """One static part's offerings (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
    createOfferings) and the instance type's requirements with the zones, capacity types, placement scopes
    and ultra SSD values of its available offerings (None without an offering)."""
    od_price, spot_price, od_priced, spot_priced = prices
    od_ok = quota_ok and (od_priced or not sw.availability_requires_price)
    spot_ok = (st.low_priority or not sw.spot_requires_low_priority) and (
        spot_priced or not sw.availability_requires_price)
    offerings: list[Offering] = []
    zones_avail: list[str] = []
    cts_avail: list[str] = []
    scopes_avail: list[str] = []
    ultra_avail: set[str] = set()
    for zo in st.zones:
        for ct in CAPACITY_TYPES:
            ok, price = (od_ok, od_price) if ct == ON_DEMAND else (spot_ok, spot_price)
            available = ok and not (unavailable and unavailable(st.name, st.family, st.vcpus, zo.zone, ct))
            offerings.append(Offering(zo.zone, ct, price, available, Requirements.of(dict(zo.reqs[ct]))))
            if available:
                if zo.zone not in zones_avail:
                    zones_avail.append(zo.zone)
                if ct not in cts_avail:
                    cts_avail.append(ct)
                if zo.scope not in scopes_avail:
                    scopes_avail.append(zo.scope)
                ultra_avail.update(zo.ultra)
    if not offerings:
        return offerings, None
    reqs = dict(st.base)
    # an empty In reads as DoesNotExist (core v1.14.0 pkg/scheduling/requirement.go; sigs.k8s.io/karpenter v1.14.0
    # pkg/apis/v1/labels.go NormalizedLabels)
    reqs[ZONE] = req(ZONE, zones_avail)
    reqs[CAPACITY_TYPE] = req(CAPACITY_TYPE, cts_avail)
    if sw.placement_scope:
        reqs[PLACEMENT_SCOPE] = req(PLACEMENT_SCOPE, scopes_avail)
    if sw.ultra_ssd:
        reqs[ULTRA_SSD] = req(ULTRA_SSD, ultra_avail)
    return offerings, Requirements.of(reqs)




def _prices_for(st: StaticPart, price_of: Callable[[str, str], float | None],
                sw: Switches) -> tuple[float, float, bool, bool]:
    """Prices (karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go createOfferings,
    pkg/providers/pricing/pricing.go): unknown SKUs 999
    for both; missing on-demand 999; spot defaults to the on-demand price.
    Also whether each price was found (for `offerings.availabilityRequiresPrice`)."""
    if st.unknown and sw.unknown_sku_policy == "price999":
        return MISSING_PRICE, MISSING_PRICE, True, True
    od = price_of(st.name, ON_DEMAND)
    spot = price_of(st.name, SPOT)
    od_price = MISSING_PRICE if od is None else od
    spot_price = spot if spot is not None else od_price
    return od_price, spot_price, od is not None, spot is not None or od is not None


__all__ = [
    "NodeClassParams", "ClusterParams", "Offering", "Overhead", "InstanceType", "InstanceTypeSet",
    "InstanceTypeCache", "DEFAULT_CACHE", "build_instance_types", "MISSING_PRICE",
]
