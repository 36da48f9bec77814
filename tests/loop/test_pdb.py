"""harness/loop/pdb.py: PDB status (k8s.io/kubernetes v1.36.3 pkg/controller/disruption/disruption.go),
the eviction API's check (pkg/registry/core/pod/storage/eviction.go) and Karpenter's pdb.Limits
(sigs.k8s.io/karpenter v1.14.0 pkg/utils/pdb/pdb.go)."""
from __future__ import annotations

import pytest

from harness.loop.pdb import MULTIPLE_PDBS_ERROR, PDB, VIOLATES_PDB_ERROR, Limits, PodInfo, compute_status


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
