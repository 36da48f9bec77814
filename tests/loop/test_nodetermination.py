"""harness/loop/controllers/nodetermination.py: the parts that differ per core release (the end-to-end pins are
scenarios/releases/core/eviction-priority-groups and drain-conditions)."""
from __future__ import annotations

from types import SimpleNamespace

from harness.loop.controllers.nodetermination import termination_conditions
from harness.loop.disruptionstate import ClaimDisruption


def _claim(**dis) -> SimpleNamespace:
    return SimpleNamespace(dis=ClaimDisruption(**dis))


def test_drain_conditions_from_core_v1_6():
    """core v1.6.0 (#1876): Drained is Unknown from the drain's start and True once drained, VolumesDetached True
    once drained (no VolumeAttachment is modeled); InstanceTerminating at every core; before v1.6.0 no drain
    condition (core-behaviour.yaml drainConditions)."""
    assert termination_conditions(_claim(), True) == {}
    assert termination_conditions(_claim(drain_started=1.0), True) == {"Drained": "Unknown"}
    done = _claim(drain_started=1.0, drained=True, instance_terminating=True)
    assert termination_conditions(done, True) == {"Drained": "True", "VolumesDetached": "True",
                                                  "InstanceTerminating": "True"}
    assert termination_conditions(_claim(drain_started=1.0), False) == {}
    assert termination_conditions(done, False) == {"InstanceTerminating": "True"}
