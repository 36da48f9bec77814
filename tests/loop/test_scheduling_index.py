"""The claim scan's index (harness/loop/scheduling.py ClaimOrder, topology hostname gates)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from harness.loop.scheduling import ClaimOrder
from harness.loop.topology import HOSTNAME, MAX_INT32, TopologyGroup
from harness.model.requirements import Requirement


@dataclass
class Claim:
    index: int
    pods: list = field(default_factory=list)


def test_claim_order_is_the_stable_sort_by_pod_count():
    rng = random.Random(7)
    order, claims = ClaimOrder(), []
    for step in range(400):
        if not claims or rng.random() < 0.3:
            c = Claim(len(claims), [object()])
            claims.append(c)
            order.add(c)
        else:
            c = rng.choice(claims)
            c.pods.append(object())
            order.grew(c)
        assert list(order) == sorted(claims, key=lambda c: len(c.pods))


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
