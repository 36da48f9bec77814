"""The claim scan's index (harness/loop/scheduling/scheduler.py ClaimOrder, topology hostname gates)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.loop.scheduling.gosort import slice_sort
from harness.loop.scheduling.scheduler import ClaimOrder
from harness.loop.scheduling.topology import HOSTNAME, MAX_INT32, TopologyGroup
from harness.model.labels.requirements import Requirement


@dataclass(eq=False)
class Claim:
    index: int
    pods: list = field(default_factory=list)
    slack: dict = field(default_factory=dict)


def test_claim_order_is_gos_sort_slice_by_pod_count_before_each_pod():
    """Core sorts newNodeClaims by pod count before each pod (sort.Slice: stable over the list's current
    order up to 12 claims, Go's pdqsort beyond) and appends new claims; the order's buckets and places
    must give the same scan as sorting the list itself (tests/loop/scheduling/test_gosort.py pins slice_sort to Go)."""
    for seed in (7, 8, 9):
        rng = random.Random(seed)
        order, claims, listed = ClaimOrder(), [], []
        for step in range(400):
            if not claims or rng.random() < 0.3:
                c = Claim(len(claims), [object()])
                claims.append(c)
                listed.append(c)
                order.add(c)
            else:
                c = rng.choice(claims)
                c.pods.append(object())
                order.grew(c)
            slice_sort(listed, lambda a, b: len(a.pods) < len(b.pods))
            order.sort()
            assert list(order) == listed, (seed, step, len(claims))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 2**32), st.sampled_from([0.05, 0.15, 0.3]), st.integers(1, 8))
def test_claim_order_matches_the_full_replay_with_parking(seed, p_add, front):
    """The shortcut (move one claim) against sort.Slice replayed over Go's whole list before every pod,
    through lists long enough for pdqsort (>= 50 claims), long runs of ties, and parked claims; the
    grown claim is mostly one of the first `front` in the scan, as the scheduler's is."""
    rng = random.Random(seed)
    order, claims, listed, parked = ClaimOrder(), [], [], set()
    for _ in range(900):
        scan = list(order)
        r = rng.random()
        if r < p_add or not scan:
            c = Claim(len(claims), [object()], {"cpu": rng.randrange(5)})
            claims.append(c)
            listed.append(c)
            order.add(c)
        elif r < 0.9:
            c = scan[rng.randrange(min(len(scan), front))] if rng.random() < 0.9 else rng.choice(scan)
            c.pods.append(object())
            c.slack = {"cpu": rng.randrange(5)}
            order.grew(c)
        elif r < 0.95:
            c = rng.choice(scan)
            order.park(c)
            parked.add(c.index)
        else:
            need = rng.randrange(5)
            order.unpark(need)
            parked -= {c.index for c in claims if c.slack["cpu"] >= need}
        slice_sort(listed, lambda a, b: len(a.pods) < len(b.pods))
        order.sort()
        assert list(order) == [c for c in listed if c.index not in parked]
        assert sorted(list(order), key=order.key) == list(order)


def test_a_claim_that_grows_into_a_tie_is_scanned_first():
    order = ClaimOrder()
    a, b = Claim(0, [object()] * 3), Claim(1, [object()])
    order.add(a)
    order.add(b)
    assert list(order) == [b, a]                      # sorted: [B(1), A(3)]
    for _ in range(2):
        b.pods.append(object())
        order.grew(b)
    assert list(order) == [b, a]                      # B reached 3 from ahead of A: it stays ahead


def group(kind: str, key: str = HOSTNAME, skew: int = 1) -> TopologyGroup:
    return TopologyGroup(kind, key, frozenset({"default"}), {}, skew, None)


def test_hostname_thresholds_close_only_permanent_rejections():
    assert group("topology spread", skew=1).hostname_threshold(True) == 1     # count+1 > 1 from count 1
    assert group("topology spread", skew=2).hostname_threshold(False) == 3
    assert group("pod anti-affinity", skew=MAX_INT32).hostname_threshold(True) == 1
    assert group("pod affinity").hostname_threshold(True) is None             # can become satisfiable
    assert group("topology spread", key="topology.kubernetes.io/zone").hostname_threshold(True) is None


def test_threshold_matches_next_domain_at_a_claims_hostname():
    for skew in (1, 2, 3):
        for selfsel in (True, False):
            g = group("topology spread", skew=skew)
            node = Requirement(HOSTNAME, False, frozenset({"h"}))
            for count in range(5):
                g.domains["h"] = count
                rejected = len(g.next_domain(selfsel, Requirement(HOSTNAME, True, frozenset()), node)) == 0
                assert rejected == (count >= g.hostname_threshold(selfsel))


def test_topology_error_snapshots_counts_only_when_explained():
    g = group("pod anti-affinity", skew=MAX_INT32)
    g.domains["h"] = 1
    pod_d, node_d = Requirement(HOSTNAME, True, frozenset()), Requirement(HOSTNAME, False, frozenset({"h"}))
    explained = g.error(pod_d, node_d)
    g.domains["h"] = 2
    assert "counts = h: 1," in str(explained)
    assert g.error(pod_d, node_d, explain=False).counts is None
