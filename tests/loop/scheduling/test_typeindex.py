"""Instance types as bitsets (harness/loop/scheduling/typeindex.py TypeIndex) against the per-type checks they
replace: Requirements.intersects_ok, offering_compatible, room >= request, the largest room and
the cheapest compatible offering, on Azure instance types built by the model."""
from __future__ import annotations

import random
from functools import lru_cache

from hypothesis import given, settings
from hypothesis import strategies as st

from fakeazure.catalog import synthetic_prices, synthetic_skus
from harness.loop.scheduling.nodeclaim import offering_compatible
from harness.loop.scheduling.typeindex import TypeIndex
from harness.model.azure.instancetypes import ClusterParams, NodeClassParams, build_instance_types
from harness.model.upstream.profile import load_profile
from harness.model.labels.requirements import DOES_NOT_EXIST, EXISTS, IN, NOT_IN, Requirement, Requirements
from harness.model.labels.semantics import semantics_for

KEYS = ["topology.kubernetes.io/zone", "kubernetes.io/arch", "karpenter.sh/capacity-type",
        "karpenter.azure.com/sku-family", "karpenter.azure.com/sku-cpu", "example.com/custom"]


@lru_cache(maxsize=1)
def _world():
    profile = load_profile("upstream")
    sem = semantics_for(profile)
    skus = synthetic_skus(60, seed=3, region="eastus")
    its = list(build_instance_types(skus, NodeClassParams(image_family="Ubuntu2204"), ClusterParams(region="eastus"),
                                    profile, prices=synthetic_prices(skus, seed=3)))
    rng = random.Random(5)
    for it in its[::7]:                       # some offerings unavailable, as after an ICE
        for o in it.offerings[::3]:
            o.available = False
    rooms = []
    for it in its:
        room = dict(it.allocatable())
        room["cpu"] -= rng.choice([0, 100, 4000])          # a daemon overhead, some beyond allocatable
        rooms.append(room)
    return profile, sem, its, rooms


def _values(key: str, its) -> list[str]:
    seen = sorted({v for it in its if key in it.requirements for v in it.requirements[key].values}
                  | {v for it in its for o in it.offerings if key in o.requirements
                     for v in o.requirements[key].values})
    return seen + ["nope"]


@st.composite
def requirement_sets(draw):
    _, sem, its, _ = _world()
    reqs = []
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True)):
        op = draw(st.sampled_from([IN, NOT_IN, EXISTS, DOES_NOT_EXIST]))
        values = draw(st.lists(st.sampled_from(_values(key, its)), max_size=3, unique=True))
        if op == IN and not values:
            continue
        reqs.append(Requirement.new(key, op, values, sem))
    return Requirements(reqs)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(requirement_sets())
def test_compatible_and_offered_are_the_per_type_checks(reqs):
    profile, _, its, rooms = _world()
    ix = TypeIndex(its, rooms)
    wk = profile.well_known_labels
    compatible = ix.compatible(reqs)
    groups = ix.offering_groups(reqs, wk)
    offered = ix.offered(groups)
    for i, it in enumerate(its):
        assert bool(compatible >> i & 1) == it.requirements.intersects_ok(reqs), (it.name, reqs)
        has = any(offering_compatible(o, reqs, wk) for o in it.offerings)
        assert bool(offered >> i & 1) == has, (it.name, reqs)
        prices = [o.price for o in it.offerings if offering_compatible(o, reqs, wk)]
        assert ix.cheapest_price(it, groups) == (min(prices) if prices else float("inf"))
    assert ix.list(compatible & offered) == [it for i, it in enumerate(its) if (compatible & offered) >> i & 1]


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(-5000, 70000), st.integers(0, 2**36), st.integers(0, 300), st.integers(0, 2**64))
def test_fits_and_max_room_are_the_per_type_comparisons(cpu, memory, pods, pick):
    _, _, its, rooms = _world()
    ix = TypeIndex(its, rooms)
    requests = {"cpu": cpu, "memory": memory, "pods": pods}
    fit = ix.fits(requests)
    for i, room in enumerate(rooms):
        want = all(room.get(k, 0) >= v for k, v in requests.items())
        assert bool(fit >> i & 1) == want
    mask = pick % ix.all or 1
    chosen = [rooms[i] for i in range(len(rooms)) if mask >> i & 1]
    room = ix.max_room(mask)
    for k in ("cpu", "memory", "pods"):
        assert room[k] == max(r.get(k, 0) for r in chosen)
    for k in {k for r in chosen for k in r} - {"cpu", "memory", "pods"}:
        assert room[k] == max(r[k] for r in chosen if k in r)
