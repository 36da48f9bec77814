"""Which provider facts an instance-type build reads where their other value answers otherwise
(harness/model/upstream/factreads.py): a SKU that is LowPriorityCapable, priced and known, with quota to spare, notes none;
each one that lacks one of those notes the fact that would treat it otherwise, the facts of a size's offerings only
where a NodePool or NodeClaim of the run can take the size."""
from __future__ import annotations

from harness.model.labels.requirements import Requirements
from harness.model.labels.semantics import semantics_for
from harness.model.upstream.factreads import (NOTED, PRICE_GATES, QUOTA_GATES, SPOT_NEEDS_LOW_PRIORITY, UNKNOWN_SKUS,
                                              ProviderReads)
from harness.model.azure.instancetypes import InstanceTypeCache, build_instance_types, size_taken
from harness.model.azure.params import NodeClassParams
from tests.model.azure.test_instancetypes import CLUSTER, F, make_sku

PRICED = {"Standard_D2s_v3": {"on-demand": 0.1, "spot": 0.02}, "Standard_D4s_v3": {"on-demand": 0.2, "spot": 0.04}}


def _reads(skus, prices=PRICED, quota=lambda sku: True, known=None, profile="upstream", has_quota=None):
    reads = ProviderReads(quota)
    build_instance_types(skus, NodeClassParams(), CLUSTER, profile, prices=prices, has_quota=has_quota,
                         known_skus=known or [s["name"] for s in skus], cache=InstanceTypeCache(), reads=reads)
    return reads


def _noted(skus, **kw):
    """The facts noted with every size held by a Node of the run."""
    return _reads(skus, **kw).consulted(size_taken((), [s["name"] for s in skus]))[0]


def _taking(reads, *terms):
    """The facts noted, and listed only, when one NodePool with requirements `terms` is the run's one taker."""
    reads.take("np", Requirements.from_node_selector_terms(terms, semantics_for("upstream")))
    return reads.consulted(size_taken(reads.takers.values(), ()))


def test_a_sku_every_release_treats_alike_notes_nothing():
    skus = [make_sku("Standard_D2s_v3"), make_sku("Standard_D4s_v3", vcpus="4", memory="16")]
    assert _noted(skus) == []
    assert _noted(skus, profile="v1.12.0") == []


def test_each_fact_is_noted_by_the_sku_it_would_treat_otherwise():
    assert _noted([make_sku("Standard_D2s_v3", low_priority=F)]) == [SPOT_NEEDS_LOW_PRIORITY]
    assert _noted([make_sku("Standard_D2s_v3")], prices={"Standard_D2s_v3": {"on-demand": 0.1}}) == []
    assert _noted([make_sku("Standard_D2s_v3")], prices={}) == [PRICE_GATES]
    assert _noted([make_sku("Standard_D2s_v3")], quota=lambda sku: False) == [QUOTA_GATES]
    # the quota cannot be seen without the read the release does not make: taken as read
    assert _noted([make_sku("Standard_D2s_v3")], quota=lambda sku: None) == [QUOTA_GATES]


def test_a_release_that_gates_on_quota_notes_what_the_quota_refuses():
    skus = [make_sku("Standard_D2s_v3")]
    assert _noted(skus, has_quota=lambda sku: True) == []
    assert _noted(skus, has_quota=lambda sku: False) == [QUOTA_GATES]
    # a fault rule the read could meet: the read made or not made may matter
    assert _noted(skus, has_quota=lambda sku: True, quota=lambda sku: None) == [QUOTA_GATES]


def test_an_unknown_sku_is_noted_under_either_policy():
    skus = [make_sku("Standard_D2s_v3"), make_sku("Standard_D4s_v3", vcpus="4", memory="16")]
    known = ["Standard_D2s_v3"]
    assert _noted(skus, known=known, profile="upstream") == [UNKNOWN_SKUS]        # price999: priced 999
    assert _noted(skus, known=known, profile="v1.12.0") == [UNKNOWN_SKUS]         # exclude: dropped


def test_the_noted_facts_are_provider_probes():
    from harness.model.upstream.factchange import all_facts
    assert set(NOTED) <= set(all_facts())


def test_a_size_no_nodepool_takes_is_not_noted():
    # not LowPriorityCapable and unpriced: its spot and on-demand offerings differ at the two values of both facts,
    # but the one NodePool takes only E sizes: what differs is the run's list of instance types, not its answer
    skus = [make_sku("Standard_D2s_v3", low_priority=F), make_sku("Standard_E2s_v3", memory="16")]
    prices = {"Standard_E2s_v3": {"on-demand": 0.1, "spot": 0.02}}
    family = {"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["E"]}
    assert _taking(_reads(skus, prices=prices), family) == ([], [SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES])
    # the zone and capacity type follow the offerings these facts change: they do not keep a size out
    spot = {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}
    zone = {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eastus-9"]}
    assert _taking(_reads(skus, prices=prices), spot, zone)[0] == [SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES]
    d_family = {**family, "values": ["D"]}
    assert _taking(_reads(skus, prices=prices), d_family)[0] == [SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES]
    # a Node holding the size, or a reader of every size (a NodeOverlay), notes them too
    held = size_taken((), ["Standard_D2s_v3"])
    assert _reads(skus, prices=prices).consulted(held)[0] == [SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES]
    reads = _reads(skus, prices=prices)
    reads.read_every_size()
    assert reads.consulted(size_taken((), ()))[0] == [SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES]
