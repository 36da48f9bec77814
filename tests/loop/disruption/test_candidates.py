"""harness/loop/disruption/candidates.py: a state node that is not both a Node and a NodeClaim, at both sides of
core-behaviour.yaml unmanagedNodeBlockedEvent (the pair core-unmanaged-node-blocked-event shows the unmanaged
Node; a NodeClaim the disruption pass meets before its Node joins is this test's)."""
from __future__ import annotations

import pytest

from harness.loop.disruption.candidates import CandidateError, Cluster, StateNode
from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

BOTH = "state node doesn't contain both a node and a nodeclaim"


@pytest.mark.parametrize("profile, without_node, without_claim", [
    ("v0.7.5", (BOTH, True), (BOTH, True)),                      # core v1.0.6 statenode.go ValidateNodeDisruptable
    ("v1.4.1", ("nodeclaim does not have an associated node", True), ("node isn't managed by karpenter", False)),
])
def test_a_half_state_node_is_refused_with_the_release_s_reason(embedded, profile, without_node, without_claim):
    with simulation(embedded, profile=profile) as sim:
        sim.apply([{**nodeclass(), "apiVersion": "karpenter.azure.com/v1alpha2"}, nodepool(), pod("web")])
        sim.validate_nodepools()
        assert sim.provisioner.reconcile() and sim.launch.reconcile()
        (claim,) = sim.claims                       # launched, its Node not joined
        cluster = Cluster(sim.state)
        for sn, expect in ((StateNode("aks-web", claim, None), without_node),
                           (StateNode("byo", None, {"metadata": {"name": "byo"}}), without_claim)):
            with pytest.raises(CandidateError) as e:
                cluster.validate_node(sn)
            assert (e.value.message, e.value.event) == expect    # event: NewCandidate publishes DisruptionBlocked
