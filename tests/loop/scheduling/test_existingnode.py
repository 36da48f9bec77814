"""harness/loop/scheduling/existingnode.py: an existing node's requirements are its labels plus its hostname
(core v1.14.0 scheduling/existingnode.go NewExistingNode), memoized per profile."""
from __future__ import annotations

from harness.loop.scheduling.existingnode import ExistingNode
from harness.loop.scheduling.topology import HOSTNAME
from harness.model.labels.semantics import semantics_for


def test_requirements_are_labels_plus_hostname():
    sem = semantics_for("upstream")
    node = ExistingNode("n1", {"topology.kubernetes.io/zone": "eastus-1"}, [], {"cpu": 2000}, {})
    reqs = node.requirements(sem)
    assert reqs.get("topology.kubernetes.io/zone").values == {"eastus-1"}
    assert reqs.get(HOSTNAME).values == {"n1"}          # no hostname label: the node's name
    assert node.requirements(sem) is reqs
