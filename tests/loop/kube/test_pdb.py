"""harness/loop/kube/pdb.py: PDB status (k8s.io/kubernetes v1.36.3 pkg/controller/disruption/disruption.go),
the eviction API's check (pkg/registry/core/pod/storage/eviction.go) and Karpenter's pdb.Limits
(sigs.k8s.io/karpenter v1.14.0 pkg/utils/pdb/pdb.go)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness.loop.kube.pdb import (MULTIPLE_PDBS_ERROR, PDB, VIOLATES_PDB_ERROR, Limits, PDBIndex, PodInfo, compute_status,
                              compute_statuses)


def pdb(name="web", **spec) -> PDB:
    return PDB.from_manifest({"metadata": {"name": name, "namespace": "default"},
                              "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec}})


def pods(n: int, bound: int, controller: str | None = "Deployment/web") -> list[PodInfo]:
    return [PodInfo("default", f"web-{i}", {"app": "web"}, i < bound, controller) for i in range(n)]


@pytest.mark.parametrize("spec,n,bound,want", [
    ({"minAvailable": 2}, 3, 3, 1),
    ({"minAvailable": 3}, 3, 3, 0),
    ({"minAvailable": 2}, 3, 2, 0),
    ({"maxUnavailable": 1}, 3, 3, 1),
    ({"maxUnavailable": 1}, 3, 2, 0),          # one is already down
    ({"maxUnavailable": "50%"}, 4, 4, 2),
    ({"minAvailable": "50%"}, 3, 3, 1),        # 50% of 3 rounds up to 2 desired
    ({"maxUnavailable": 0}, 3, 3, 0),
])
def test_disruptions_allowed(spec, n, bound, want):
    assert compute_status(pdb(**spec), pods(n, bound)).disruptions_allowed == want


def test_unmanaged_pods_count_for_an_integer_min_available_only():
    assert compute_status(pdb(minAvailable=0), pods(2, 2, None)).disruptions_allowed == 2
    assert compute_status(pdb(maxUnavailable=1), pods(2, 2, None)).disruptions_allowed == 0   # no expected pods


def test_selector_and_namespace_must_match():
    p = compute_status(pdb(minAvailable=0), [PodInfo("other", "x", {"app": "web"}, True, None),
                                             PodInfo("default", "y", {"app": "db"}, True, None)])
    assert p.expected_pods == 0 and p.disruptions_allowed == 0


def test_fully_blocking():
    assert pdb(maxUnavailable=0).fully_blocking and pdb(maxUnavailable="0%").fully_blocking
    assert pdb(minAvailable="100%").fully_blocking
    assert not pdb(minAvailable=3).fully_blocking          # an integer is not "fully" blocking


def test_eviction_uses_up_the_allowance():
    limits = Limits([compute_status(pdb(maxUnavailable=1), pods(3, 3))])
    assert limits.evict("default", {"app": "web"}) is None
    assert limits.evict("default", {"app": "web"}) == VIOLATES_PDB_ERROR
    assert limits.evict("default", {"app": "db"}) is None


def test_two_pdbs_on_one_pod():
    limits = Limits([compute_status(pdb("a", maxUnavailable=1), pods(3, 3)),
                     compute_status(pdb("b", maxUnavailable=1), pods(3, 3))])
    assert limits.evict("default", {"app": "web"}) == MULTIPLE_PDBS_ERROR
    assert limits.is_evictable("default", {"app": "web"}) == (["default/a", "default/b"], False)


# -- the index: the same answers as a scan of every PDB ----------------------------------------------
def scan(pdbs: list[PDB], namespace: str, labels: dict) -> list[PDB]:
    return [p for p in pdbs if p.matches(namespace, labels)]


def selected(name: str, selector, namespace: str = "default") -> PDB:
    return PDB(namespace, name, selector, None, 1, False)


INDEX_PDBS = [
    selected("nil", None),                                                 # matches nothing
    selected("empty", {}),                                                 # every pod of the namespace
    selected("empty-lists", {"matchLabels": {}, "matchExpressions": []}),
    selected("web", {"matchLabels": {"app": "web"}}),
    selected("web-tier", {"matchLabels": {"tier": "front", "app": "web"}}),
    selected("not-db", {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}),
    selected("web-v2", {"matchLabels": {"app": "web"},
                        "matchExpressions": [{"key": "v", "operator": "In", "values": ["2"]}]}),
    selected("int-value", {"matchLabels": {"v": 2}}),                      # compared as "2"
    selected("other-web", {"matchLabels": {"app": "web"}}, "other"),
    selected("other-empty", {}, "other"),
]


@pytest.mark.parametrize("namespace,labels,want", [
    ("default", {}, ["empty", "empty-lists", "not-db"]),
    ("default", {"app": "web"}, ["empty", "empty-lists", "web", "not-db"]),
    ("default", {"app": "web", "tier": "front", "v": "2"},
     ["empty", "empty-lists", "web", "web-tier", "not-db", "web-v2", "int-value"]),
    ("default", {"app": "db"}, ["empty", "empty-lists"]),
    ("other", {"app": "web"}, ["other-web", "other-empty"]),
    ("none", {"app": "web"}, []),
])
def test_index_finds_what_a_scan_finds(namespace, labels, want):
    index = PDBIndex(INDEX_PDBS)
    assert [p.name for p in index.matching(namespace, labels)] == want
    assert index.matching(namespace, labels) == scan(INDEX_PDBS, namespace, labels)
    assert index.matching(namespace, dict(labels)) == scan(INDEX_PDBS, namespace, labels)   # the kept answer


def test_limits_name_every_pdb_of_a_pod_in_their_order():
    limits = Limits([selected("b", {"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
                     selected("a", {"matchLabels": {"app": "web"}})])
    assert limits.is_evictable("default", {"app": "web"}) == (["default/b", "default/a"], False)


def test_statuses_of_many_pdbs_in_one_pass_agree_with_one_at_a_time():
    pods_ = pods(4, 3) + [PodInfo("default", "db-0", {"app": "db"}, True, "Deployment/db"),
                          PodInfo("other", "web-0", {"app": "web"}, True, "Deployment/web")]
    statuses = [(p.expected_pods, p.current_healthy, p.disruptions_allowed)
                for p in compute_statuses([selected(p.name, p.selector, p.namespace) for p in INDEX_PDBS], pods_)]
    assert statuses == [(p.expected_pods, p.current_healthy, p.disruptions_allowed)
                        for p in (compute_status(selected(p.name, p.selector, p.namespace), pods_) for p in INDEX_PDBS)]
    assert statuses[3] == (4, 3, 0)                 # "web": maxUnavailable 1, one pod already down


KEYS, VALS = st.sampled_from(["app", "tier", "v"]), st.sampled_from(["web", "db", "2"])
LABELS = st.dictionaries(KEYS, VALS, max_size=3)
EXPRESSION = st.fixed_dictionaries({"key": KEYS, "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist",
                                                                              "Gt"]),
                                    "values": st.lists(VALS, max_size=2)})
SELECTOR = st.none() | st.fixed_dictionaries({}, optional={"matchLabels": LABELS | st.none(),
                                                           "matchExpressions": st.lists(EXPRESSION, max_size=2)})
NAMESPACES = st.sampled_from(["default", "other"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(NAMESPACES, SELECTOR), max_size=6), st.lists(st.tuples(NAMESPACES, LABELS), max_size=6))
def test_index_agrees_with_a_scan(specs, pods_):
    pdbs = [selected(f"p{i}", sel, ns) for i, (ns, sel) in enumerate(specs)]
    index = PDBIndex(pdbs)
    for ns, labels in pods_ + pods_:                # the second round reads the kept answers
        assert index.matching(ns, labels) == scan(pdbs, ns, labels)
