"""The real engine says the timings a run assumed as the simulation does (RealRun._say_assumed,
harness/loop/assumed.py): kubelet stand-ins register at once and the fake deletes VMs at once unless
given.loop says otherwise."""
from __future__ import annotations

from types import SimpleNamespace

from harness.loop.result import NodeClaimResult, RunResult
from harness.runner.engines.real.engine import RealRun


def _run(loop=None):
    return SimpleNamespace(claims_seen=set(), boot_overlapped=False,
                           scenario=SimpleNamespace(given={"loop": loop or {}}))


def _claim(name, launched, deleted=None):
    c = NodeClaimResult(name, "default", [], [], {}, launched=True, deleted=deleted)
    c.at["launched"] = launched
    return c


def _settle(run, claims, disruptions=()):
    r = RunResult("s", "upstream", "local", 1)
    r.nodeclaims, r.disruptions = list(claims), list(disruptions)
    RealRun._say_assumed(run, r)
    return r.assumed


def test_one_round_of_launches_assumes_nothing():
    run = _run()
    assert _settle(run, [_claim("a", 100.0), _claim("b", 100.4)]) == []


def test_launches_in_two_rounds_name_the_boot_time():
    run = _run()
    said = _settle(run, [_claim("a", 100.0), _claim("b", 140.0)])
    assert len(said) == 1 and "nodeBoot 0s" in said[0] and "given.loop.nodeBoot" in said[0]
    # the scenario that gives it is not told again
    assert _settle(_run({"nodeBoot": "45s"}), [_claim("a", 100.0), _claim("b", 140.0)]) == []


def test_a_launched_claim_deleted_in_the_same_settle_is_churn():
    assert _settle(_run(), [_claim("a", 100.0, deleted="Empty")])


def test_disruptions_at_two_instants_name_the_vm_deletion():
    said = _settle(_run(), [], [{"at": 10.0}, {"at": 70.0}])
    assert len(said) == 1 and "vmDelete 0s" in said[0]
