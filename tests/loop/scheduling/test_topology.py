"""Karpenter's topology groups (nextDomainTopologySpread / affinity / anti-affinity)."""
from __future__ import annotations

from harness.loop.scheduling.topology import TopologyGroup, selector_matches
from harness.model.labels.requirements import Requirement


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
    """Azure/karpenter-provider-azure#1384: a regional domain "" with the minimum count makes the spread unsatisfiable."""
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


# -- issue 22: core v1.14.0's topology groups ------------------------------------------------------------
from harness.loop.scheduling.pods import PodView, Taint  # noqa: E402
from harness.loop.scheduling.topology import (DomainGroup, NodeFilter, TiePicker, merge_label_keys,  # noqa: E402
                                   term_namespaces)
from harness.model.labels.requirements import Requirements  # noqa: E402

H = "kubernetes.io/hostname"


def test_ties_are_picked_with_the_seed_and_the_same_question_gets_the_same_answer():
    """nextDomainTopologySpread takes the first least-loaded domain in Go map order (core v1.14.0
    topologygroup.go): a random one. TiePicker answers with the seed, independent of how often it is asked."""
    zones = ["z-1", "z-2", "z-3"]
    assert TiePicker(None).pick(zones) == "z-1"
    picks = {TiePicker(seed).pick(zones, "default/p", "g") for seed in range(40)}
    assert picks == set(zones)
    assert TiePicker(7).pick(zones, "default/p", "g") == TiePicker(7).pick(list(reversed(zones)), "default/p", "g")
    g = group({"z-1": 0, "z-2": 0, "z-3": 0})
    g.picker = TiePicker(3)
    first = g.next_domain(True, exists(Z), exists(Z), "default/p")
    assert first == g.next_domain(True, exists(Z), exists(Z), "default/p") and len(first) == 1



def test_a_tie_is_drawn_anew_for_each_node_the_pod_is_tried_on():
    """Core draws a fresh Go map order on every TopologyGroup.Get (v1.14.0 topologygroup.go), so a pod
    that drew an unusable zone on an in-flight NodeClaim can draw another on the next one it is tried
    on (fuzz-00753375cd): the question is (pod, node); one node asked twice gets one answer."""
    from harness.loop.scheduling.topology import Topology
    from harness.model.labels.semantics import semantics_for

    sem = semantics_for("upstream")
    spread = [{"maxSkew": 2, "topologyKey": Z, "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "a"}}}]
    pod = PodView({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}},
                   "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": spread}}, 1)
    zones = {"0", "z-1", "z-2", "z-3"}

    def zone_on(seed, host):
        topo = Topology({Z: zones}, {}, [], sem=sem, seed=seed)
        topo.prepare([pod])
        out = topo.add_requirements(pod, pod.requirements(sem, strict=True), Requirements([in_(H, host)]),
                                    allow_undefined=frozenset({Z}))
        return next(iter(out[Z].values))

    assert all(zone_on(s, "claim-1") == zone_on(s, "claim-1") for s in range(8))
    assert any(zone_on(s, "claim-1") != zone_on(s, "claim-2") for s in range(8))

def test_self_affinity_on_hostname_opens_only_the_first_domain():
    """nextDomainAffinity's hostname special case (core v1.14.0 topologygroup.go): a self-selecting pod may
    open a new hostname only while no pod it may join exists (anyCompatiblePodDomain); then only that one."""
    g = TopologyGroup("pod affinity", H, frozenset({"default"}), {"matchLabels": {"app": "a"}}, 2**31 - 1, None,
                      {"placeholder-1": 0})
    assert g.next_domain_affinity(True, in_(H, "placeholder-1")).values == {"placeholder-1"}
    g.record("placeholder-1")
    assert g.next_domain_affinity(True, in_(H, "placeholder-2")).operator == "DoesNotExist"
    assert g.next_domain_affinity(True, in_(H, "placeholder-1")).values == {"placeholder-1"}
    # the existing pod is in a domain this pod may not use: it may bootstrap its own
    assert g.next_domain_affinity(True, in_(H, "placeholder-2"), in_(H, "placeholder-2")).values == {"placeholder-2"}
    # a pod that does not select itself never bootstraps (no matching pod anywhere: no domain)
    empty = TopologyGroup("pod affinity", Z, frozenset({"default"}), {"matchLabels": {"app": "a"}}, 2**31 - 1, None,
                          {"z-1": 0, "z-2": 0})
    assert empty.next_domain_affinity(False, exists(Z)).operator == "DoesNotExist"


def test_spread_node_filter_honors_node_affinity_and_optionally_taints():
    """TopologyNodeFilter (core v1.14.0 topologynodefilter.go): nodeAffinityPolicy Honor (default) counts
    only nodes compatible with the pod's nodeSelector / required terms; nodeTaintsPolicy Honor only nodes
    whose every taint the pod tolerates (PreferNoSchedule included: pkg/scheduling/taints.go Tolerates)."""
    pv = PodView({"metadata": {"name": "p", "labels": {}}, "spec": {"nodeSelector": {Z: "z-1"}}}, 0)
    honor = NodeFilter.for_pod(pv, "Ignore", "Honor", None)
    assert honor.matches([], Requirements([in_(Z, "z-1")]))
    assert not honor.matches([], Requirements([in_(Z, "z-2")]))
    assert NodeFilter.for_pod(pv, "Ignore", "Ignore", None).matches([], Requirements([in_(Z, "z-2")]))
    taints = [Taint("k", "v", "PreferNoSchedule")]
    assert NodeFilter.for_pod(pv, "Ignore", "Honor", None).matches(taints, Requirements([in_(Z, "z-1")]))
    assert not NodeFilter.for_pod(pv, "Honor", "Honor", None).matches(taints, Requirements([in_(Z, "z-1")]))


def test_domain_groups_remember_the_taints_of_the_nodepools_offering_them():
    """TopologyDomainGroup (core v1.14.0 topologydomaingroup.go): with nodeTaintsPolicy Honor a domain
    counts only if some NodePool offering it has taints the pod tolerates; an untainted offer wins."""
    g = DomainGroup()
    g.insert("foo", [Taint("k", "a")])
    g.insert("bar", [Taint("k", "a")])
    g.insert("foo", [])
    assert sorted(g.domains_for([], "Ignore")) == ["bar", "foo"]
    assert g.domains_for([], "Honor") == ["foo"]
    assert sorted(g.domains_for([{"key": "k", "operator": "Exists"}], "Honor")) == ["bar", "foo"]


def test_match_label_keys_and_namespace_selectors():
    """The API server merges matchLabelKeys (In) and mismatchLabelKeys (NotIn) into the selector
    (k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/strategy.go applyLabelKeysToLabelSelector); a key the
    pod lacks adds nothing; a nil selector stays nil. buildNamespaceList (core topology.go): an empty
    namespaceSelector selects every namespace."""
    sel = merge_label_keys({"matchLabels": {"app": "a"}}, {"rev": "1", "tier": "x"}, ["rev", "absent"], ["tier"])
    assert sel["matchExpressions"] == [{"key": "rev", "operator": "In", "values": ["1"]},
                                       {"key": "tier", "operator": "NotIn", "values": ["x"]}]
    assert merge_label_keys(None, {"rev": "1"}, ["rev"]) is None
    pv = PodView({"metadata": {"name": "p", "namespace": "a"}, "spec": {}}, 0)
    nss = {"a": {}, "b": {"team": "t"}, "c": {}}
    assert term_namespaces(pv, {}, nss) == {"a"}
    assert term_namespaces(pv, {"namespaceSelector": {}}, nss) == {"a", "b", "c"}
    assert term_namespaces(pv, {"namespaces": ["c"], "namespaceSelector": {"matchLabels": {"team": "t"}}}, nss) == {"b", "c"}


def test_a_pods_cached_groups_belong_to_one_topology_even_when_an_address_is_reused(monkeypatch):
    """PodView.topology_cache outlives a pass's Topology. It was keyed by id(Topology): when a freed
    Topology's address went to the next one (a consolidation simulation after another), the pod got
    the old Topology's groups and its inverse anti-affinity was never registered in the new one (1 run
    in 30 of a fuzzed consolidation scenario differed from the others in one process). The reuse is
    made certain here: every object has the same id."""
    from harness.loop.scheduling import topology
    from harness.loop.scheduling.pods import PodView
    from harness.model.labels.semantics import semantics_for

    anti = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": Z, "labelSelector": {"matchLabels": {"app": "a"}}}]}
    pod = PodView({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "a"}},
                   "spec": {"containers": [{"name": "c"}], "affinity": {"podAntiAffinity": anti}}}, 1)
    monkeypatch.setattr(topology, "id", lambda obj: 1, raising=False)
    first = topology.Topology({Z: {"z-1", "z-2"}}, {}, [], sem=semantics_for("upstream"))
    first.pod_groups(pod)
    second = topology.Topology({Z: {"z-1", "z-2"}}, {}, [], sem=semantics_for("upstream"))
    second.pod_groups(pod)
    assert second.inverse, "the pod's required anti-affinity is registered in the new Topology"


def test_domain_gates_name_the_domains_a_zonal_affinity_can_still_use():
    """Topology.domain_gates (harness/loop/scheduling/scheduler.py Scheduler._scan skips claims outside them):
    none while the pod may bootstrap; once a matching pod is in z-2, only z-2; a pod pinned to z-1
    may bootstrap there again (anyCompatiblePodDomain), so it has no gate."""
    from harness.loop.scheduling.pods import PodView
    from harness.loop.scheduling.topology import Topology
    from harness.model.labels.semantics import semantics_for

    sem = semantics_for("upstream")
    affinity = {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": Z, "labelSelector": {"matchLabels": {"app": "a"}}}]}

    def pod(name, zone=None):
        spec = {"containers": [{"name": "c"}], "affinity": {"podAffinity": affinity}}
        if zone:
            spec["nodeSelector"] = {Z: zone}
        return PodView({"metadata": {"name": name, "namespace": "default", "labels": {"app": "a"}}, "spec": spec}, 1)

    topo = Topology({Z: {"z-1", "z-2", "z-3"}}, {}, [], sem=sem)
    first, second, pinned = pod("p1"), pod("p2"), pod("p3", "z-1")
    topo.prepare([first, second, pinned])
    assert topo.domain_gates(second, second.requirements(sem, strict=True)) == []
    topo.record(first, Requirements([in_(Z, "z-2")]))
    assert topo.domain_gates(second, second.requirements(sem, strict=True)) == [(Z, frozenset({"z-2"}))]
    assert topo.domain_gates(pinned, pinned.requirements(sem, strict=True)) == []


def test_before_core_v1_3_spreads_read_neither_policy_nor_discover_domains_from_nodes():
    """core-behaviour.yaml topologySpreadPolicies: sigs.k8s.io/karpenter v1.0.6 scheduling/topologygroup.go
    NewTopologyGroup takes every domain of the universe (a tainted NodePool's too) and its node filter honours
    node affinity only; topology.go countDomains finds domains only where counted pods run. From v1.3.0 (#852)
    nodeTaintsPolicy Honor leaves out a domain only untolerated NodePools offer, and a registered Node the filter
    admits adds its domain."""
    from harness.loop.scheduling.topology import Topology
    from harness.model.labels.semantics import semantics_for

    sem = semantics_for("upstream")
    universe = DomainGroup()
    universe.insert("rack-a")
    universe.insert("rack-c", [Taint("dedicated", "batch")])
    tsc = {"topologyKey": "rack", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "Honor",
           "nodeAffinityPolicy": "Ignore", "labelSelector": {"matchLabels": {"app": "web"}}}
    pv = PodView({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"}},
                  "spec": {"containers": [{"name": "c"}], "topologySpreadConstraints": [tsc]}}, 0)
    nodes = {"n1": {"rack": "rack-d"}}
    for policies, domains, taint_policy, affinity_policy in ((True, {"rack-a", "rack-d"}, "Honor", "Ignore"),
                                                             (False, {"rack-a", "rack-c"}, "Ignore", "Honor")):
        topo = Topology({"rack": universe}, nodes, [], sem=sem, spread_policies=policies)
        (g,) = topo.pod_groups(pv)
        assert set(g.domains) == domains
        assert (g.node_filter.taint_policy, g.node_filter.affinity_policy) == (taint_policy, affinity_policy)


def test_has_term_without_selector():
    """Which terms core v1.7.0 hashes with a nil selector (core-behaviour.yaml nilLabelSelectorTopology): a
    pending pod's spreads and pod (anti-)affinity terms, required or preferred; a running pod's required
    anti-affinity terms only."""
    from harness.loop.scheduling.topology import has_term_without_selector
    sel = {"matchLabels": {"app": "a"}}
    term = {"topologyKey": "kubernetes.io/hostname"}
    assert not has_term_without_selector({})
    assert has_term_without_selector({"topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 1}]})
    assert not has_term_without_selector({"topologySpreadConstraints": [{"topologyKey": "z", "labelSelector": sel}]})
    preferred = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 1, "podAffinityTerm": term}]}}}
    assert has_term_without_selector(preferred)
    assert not has_term_without_selector(preferred, inverse=True)
    anti = {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}
    assert has_term_without_selector(anti) and has_term_without_selector(anti, inverse=True)
    anti["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] = [{**term, "labelSelector": sel}]
    assert not has_term_without_selector(anti)
