"""Karpenter's topology groups (nextDomainTopologySpread / affinity / anti-affinity)."""
from __future__ import annotations

from harness.loop.topology import TopologyGroup, selector_matches
from harness.model.requirements import Requirement


def exists(key):
    return Requirement(key, True, frozenset())


def in_(key, *values):
    return Requirement(key, False, frozenset(values))


Z = "topology.kubernetes.io/zone"


def group(domains, skew=1, min_domains=None, key=Z):
    return TopologyGroup("topology spread", key, frozenset({"default"}), {"matchLabels": {"app": "a"}}, skew,
                         min_domains, dict(domains))


def test_spread_picks_the_least_loaded_domain_within_skew():
    g = group({"z-1": 2, "z-2": 1, "z-3": 1})
    assert g.next_domain(True, exists(Z), exists(Z)).values == {"z-2"}
    assert g.next_domain(True, exists(Z), in_(Z, "z-1")).operator == "DoesNotExist"   # 3 - 1 > 1


def test_empty_string_domain_is_the_no_domain_sentinel():
    """reported-bugs.md R01: a regional domain "" with the minimum count makes the spread unsatisfiable."""
    g = group({"": 0, "eastus-1": 2, "eastus-2": 1, "eastus-3": 1})
    chosen = g.next_domain(True, exists(Z), exists(Z))
    assert chosen.operator == "DoesNotExist"
    err = str(g.error(exists(Z), exists(Z)))
    assert err.startswith("unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone "
                          "(counts = : 0, eastus-1: 2, eastus-2: 1, eastus-3: 1, podDomains = ")


def test_min_domains_forces_a_zero_minimum():
    g = group({"z-1": 1}, min_domains=3)
    assert g.min_count(exists(Z)) == 0
    assert g.next_domain(True, exists(Z), exists(Z)).operator == "DoesNotExist"      # 1 + 1 - 0 > 1


def test_hostname_spread_always_has_room_on_a_new_node():
    h = "kubernetes.io/hostname"
    g = group({"node-a": 1}, key=h)
    assert g.next_domain(True, exists(h), in_(h, "placeholder-1")).values == {"placeholder-1"}
    assert g.next_domain(True, exists(h), in_(h, "node-a")).operator == "DoesNotExist"


def test_affinity_bootstraps_and_anti_affinity_needs_empty_domains():
    g = TopologyGroup("pod affinity", Z, frozenset({"default"}), {}, 1, None, {"z-1": 0, "z-2": 0})
    assert g.next_domain_affinity(True, exists(Z)).values == {"z-1"}
    g.domains["z-2"] = 1
    assert g.next_domain_affinity(False, exists(Z)).values == {"z-2"}
    a = TopologyGroup("pod anti-affinity", Z, frozenset({"default"}), {}, 1, None, {"z-1": 1, "z-2": 0})
    assert a.next_domain_anti_affinity(exists(Z)).values == {"z-2"}


def test_selector_semantics():
    assert selector_matches({"matchLabels": {"a": "1"}}, {"a": "1", "b": "2"})
    assert not selector_matches(None, {"a": "1"})
    assert selector_matches({}, {"a": "1"})
    assert selector_matches({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["2"]}]}, {})
    assert not selector_matches({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {})
