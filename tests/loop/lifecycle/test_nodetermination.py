"""harness/loop/lifecycle/nodetermination.py: the parts that differ per core release (the end-to-end pins are
scenarios/releases/core/eviction-priority-groups and drain-conditions)."""
from __future__ import annotations

from types import SimpleNamespace

from harness.loop.lifecycle.nodetermination import termination_conditions
from harness.loop.disruption.memory import ClaimDisruption


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


def test_a_pod_terminating_past_the_nodes_deadline_is_deleted_again_from_core_v1_6():
    """core v1.6.0 (#2316): Drain hands DeleteExpiringPods a pod not yet terminating, and one terminating with a
    deletionTimestamp after the node's deadline (IsPodEligibleForForcedEviction); before, only the former
    (core-behaviour.yaml forcedEvictionAfterNodeDeadline)."""
    from harness.loop.lifecycle.nodetermination import NodeTermination, rfc3339
    from harness.loop.scheduling.pods import PodView
    deadline = 1_800_000_000.0

    def pv(deleted=None):
        meta = {"name": "p", **({"deletionTimestamp": rfc3339(deleted)} if deleted is not None else {})}
        return PodView({"metadata": meta, "spec": {"containers": []}}, 0)
    claim = _claim(termination_time=deadline)
    for forced in (True, False):
        nt = NodeTermination(SimpleNamespace(core={"forcedEvictionAfterNodeDeadline": forced}), None)
        assert nt._expiring(claim, pv())
        assert nt._expiring(claim, pv(deadline + 1)) is forced
        assert not nt._expiring(claim, pv(deadline))


def test_a_commands_nodes_terminate_together_calm_and_one_by_one_raced(embedded):
    """given.loop.nextCommand: a command's drained nodes ask for their instance's deletion in the same pass
    (afterDrain), or each after its own seeded TERMINATION_SPREAD (raced), so they leave the budget one by one."""
    from harness.loop.lifecycle.nodetermination import TERMINATION_SPREAD
    from tests.loop.test_simulation import _consolidated

    def spreads(next_command):
        r, _, _ = _consolidated(embedded, 2, next_command)
        at = {e["nodeClaim"]: e["t"] for e in r.timeline if e["action"] == "instance terminating"}
        first = {}
        for d in r.disruptions:
            first.setdefault(d["commandIndex"], []).append(at[d["nodeClaim"]])
        return [max(ts) - min(ts) for ts in first.values()]
    assert set(spreads("afterDrain")) == {0}
    raced = spreads("raced")
    assert any(s > 0 for s in raced) and max(raced) <= max(TERMINATION_SPREAD)


def test_a_vm_deletion_holds_instance_terminating_until_azure_is_done(embedded):
    """given.loop.vmDelete: the provider's Delete waits for Azure to delete the VM, and only then is the NodeClaim
    InstanceTerminating (out of its NodePool's budget); the VM stays in the fake until then."""
    from harness.loop.lifecycle.nodetermination import INSTANCE_REQUEUE
    from tests.loop.loopkit import nodeclass, nodepool, pod, simulation

    def deleted(vm_delete):
        with simulation(embedded) as sim:
            sim.cfg.vm_delete = vm_delete
            sim.run([nodeclass(), nodepool(), pod("web")])
            (c,) = sim.claims
            sim.kubectl.delete("NodeClaim", c.result.name)
            sim.converge()
            at = {e["action"]: e["t"] for e in sim.result.timeline if e["nodeClaim"] == c.result.name}
            return at["instance terminating"] - at["drained"], c.result.at["deleted"] - at["instance terminating"]
    asked, gone = deleted(0.0)
    assert gone >= INSTANCE_REQUEUE
    held, gone_after = deleted(90.0)
    assert 90.0 <= held - asked <= 100.0 and gone_after == gone
