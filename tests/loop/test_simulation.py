"""harness/loop/simulation.py: the orchestrator (reconcile order, steady state, runaway, finish) and
the API the runner, the why view and the benches use."""
from __future__ import annotations

import pytest

from harness.loop.lifecycle.liveness import LAUNCH_TIMEOUT
from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation


def test_run_reaches_a_steady_state_with_every_pod_bound(embedded):
    with simulation(embedded) as sim:
        result = sim.run([nodeclass(), nodepool(), deployment("web", replicas=2)])
        assert result is sim.result and result.steady and not result.runaway
        assert all(pr.state == "scheduled" for pr in result.pods.values())
        (nr,) = result.nodes
        assert nr.registered and nr.initialized and sorted(nr.pods) == sorted(result.pods)
        assert nr.labels["karpenter.sh/initialized"] == "true"       # _finish reads the Node's labels
        assert set(result.instance_types) == {"Standard_D2s_v3", "Standard_D4s_v3"}
        assert {v["name"] for v in result.azure["vms"]} == {nr.vm_name}
        assert "run" in result.timings


def test_converge_again_after_a_step_keeps_the_state(embedded):
    with simulation(embedded) as sim:
        sim.run([nodeclass(), nodepool(), pod("a")])
        first = sim.result.iterations
        sim.apply([pod("b")])
        sim.validate_nodepools()
        sim.converge()
        assert sim.result.iterations > first
        assert sim.result.pods["default/b"].state == "scheduled"
        assert len(sim.result.nodes) == 1                 # b fit on a's node


def test_a_pod_that_keeps_causing_claims_is_runaway(embedded, monkeypatch):
    with simulation(embedded) as sim:
        monkeypatch.setattr(sim.cluster, "register_kubelet", lambda *a: "kubelet exited")
        result = sim.run([nodeclass(), nodepool(), pod("web")])
        assert result.runaway and not result.steady
        assert result.runaway_reason.startswith("pod default/web caused 3 NodeClaims and never bound")
        assert sim.state.launches_for == {"default/web": 3}
        assert all(c.refused for c in sim.claims)
        assert result.pods["default/web"].state == "pending"
        assert result.trace[-1].split("] ", 1)[1].startswith("runaway provisioning: pod default/web")


def test_when_nothing_changes_the_clock_jumps_to_the_next_deadline(embedded, monkeypatch):
    """A NodeClaim that cannot launch: no controller changes anything until its launch timeout, so
    the clock jumps there instead of ticking; launch then deletes it."""
    with simulation(embedded) as sim:
        real = sim.launch.reconcile
        monkeypatch.setattr(sim.launch, "reconcile", lambda: real() if any(
            sim.clock.now() - c.created_at > LAUNCH_TIMEOUT for c in sim.claims if not c.done) else False)
        t0 = sim.clock.now()
        sim.cfg.max_iterations = 4
        sim.run([nodeclass(), nodepool(), pod("web")])
        first = sim.claims[0]
        assert first.result.deleted == "launch_timeout"
        assert sim.clock.now() - t0 > LAUNCH_TIMEOUT
        assert sim.result.iterations == 4 and not sim.result.steady


def test_the_api_others_use(embedded):
    """harness/runner/engines/simulated.py, harness/loop/scheduling/why.py and bench/soak_faults.py read these."""
    with simulation(embedded, [nodeclass(), nodepool(), pod("web")]) as sim:
        for name in ("cfg", "profile", "sem", "cluster", "fake", "clock", "provider", "result", "claims",
                     "pod_views", "nodes", "unavailable"):
            assert getattr(sim, name) is not None, name
        assert list(sim.pod_views) == ["default/web"]
        (t,) = sim.templates(record=False)
        assert t.name == "default" and sim.result.instance_types == {}
        sim.trace("hello")
        assert sim.result.trace[-1].endswith("hello")
        sim.set_cluster(sim.cfg.cluster)
        assert sim.provider.cluster is sim.cfg.cluster


def _spread_run(embedded, seed: int, nodes_ready: str):
    """Two 3-CPU pods: two NodeClaims in one launch, whose Nodes turn Ready one at a time."""
    with simulation(embedded, seed=seed) as sim:
        sim.cfg.nodes_ready = nodes_ready
        result = sim.run([nodeclass(), nodepool(), pod("a", "3"), pod("b", "3")])
        mid = [t for t in result.trace if "a round while" in t]
        return len(result.nodes), mid, {k: pr.node for k, pr in result.pods.items()}


def test_spread_ready_lets_a_provisioning_round_run_between_two_nodes_of_a_launch(embedded):
    """nodesReady: spread - as staggered, and in a seeded choice Karpenter plans the pod still pending
    while the rest of the launch is in flight (onto that NodeClaim: no new one)."""
    runs = {seed: _spread_run(embedded, seed, "spread") for seed in range(1, 7)}
    assert any(mid for _, mid, _ in runs.values()) and any(not mid for _, mid, _ in runs.values())
    assert all(nodes == 2 and all(pods.values()) for nodes, _, pods in runs.values())
    for seed, (_, mid, pods) in runs.items():
        staggered = _spread_run(embedded, seed, "staggered")
        assert not staggered[1]
        if not mid:         # no round between: the run is staggered's (the round's draws are their own stream)
            assert staggered[2] == pods


def test_a_restart_before_the_first_pass_lists_the_skus_anew(embedded):
    """given.restrict after the existing nodes launched (SimulatedRun.restrict_at_start): the controller's
    start lists the SKUs again, so a size taken away since is no instance type at the first pass."""
    from harness.model.azure.params import NodeClassParams
    with simulation(embedded) as sim:
        sim.apply([nodeclass(), nodepool()])
        sim.validate_nodepools()
        names = lambda: {it.name for it in sim.provider.instance_types(NodeClassParams()).instance_types}  # noqa: E731
        assert "Standard_D2s_v3" in names()
        sim.fake.restrict_sku("Standard_D2s_v3")
        assert "Standard_D2s_v3" in names()          # the SKU list read at the start, kept 23 h
        sim.restarted()
        assert "Standard_D2s_v3" not in names() and sim.exited is None


NEXT_COMMAND = "scenarios/disruption/next-command-race.scenario.yaml"


def _consolidated(embedded, seed: int, next_command: str):
    """next-command-after-drain (20 nodes, two 500m pods each, budget 4) under `seed` and given.loop.nextCommand:
    its result, each command's candidates, and whether a command started while an earlier one's node was still
    terminating."""
    from harness.runner.engines import run
    from harness.judge.explore import with_races, with_seed
    from harness.scenario.load import load_scenarios
    sc = next(s for s in load_scenarios(NEXT_COMMAND) if s.name == "next-command-after-drain")
    r = run(with_seed(with_races(sc, {"nextCommand": next_command}), seed), "upstream", embedded).final
    commands: dict[int, list[dict]] = {}
    for d in r.disruptions:
        commands.setdefault(d["commandIndex"], []).append(d)
    gone = {e["nodeClaim"]: e["t"] for e in r.timeline if e["action"] == "terminated"}
    started = [min(d["at"] for d in ds) for _, ds in sorted(commands.items())]
    overlapped = any(gone.get(d["nodeClaim"], float("inf")) > started[i + 1]
                     for i, (_, ds) in enumerate(sorted(commands.items())[:-1]) for d in ds)
    return r, [len(ds) for _, ds in sorted(commands.items())], overlapped


def test_next_command_after_drain_runs_one_command_after_the_other(embedded):
    """nextCommand: afterDrain (default) - the next pass runs once the last command's nodes are gone and their
    pods placed: commands of the budget's 4, one after the other, and no pass before kube-scheduler placed the
    evicted pods."""
    r, sizes, overlapped = _consolidated(embedded, 1, "afterDrain")
    assert sizes == [4, 4, 3, 2, 1] and not overlapped
    assert len(r.nodes) == 20 and sum(1 for n in r.nodes if not n.deleted) == 6
    assert not [t for t in r.trace if "nextCommand: raced" in t]


def test_next_command_raced_passes_while_a_command_drains_in_seeded_choices(embedded):
    """nextCommand: raced - a pass also runs while a command's nodes terminate (one by one, each at its own seeded
    time): a command starts before the last one's nodes are gone, within what the budget left (commands in
    pairs); a pass right after a drain's evictions does not see their replacements (kube-scheduler has not tried
    them), and when its command goes ahead Karpenter launches a node for the pods left without room. Every seed
    replays exactly, and the cluster ends at six nodes either way."""
    runs = {seed: _consolidated(embedded, seed, "raced") for seed in range(1, 7)}
    assert all(sum(1 for n in r.nodes if not n.deleted) == 6 for r, _, _ in runs.values())
    assert any(overlapped for _, _, overlapped in runs.values())
    assert all(max(sizes) <= 4 for _, sizes, _ in runs.values())                 # never over the budget
    launched = [seed for seed, (r, _, _) in runs.items() if len(r.nodes) == 21]
    assert launched and len(launched) < len(runs)
    r, sizes, _ = runs[launched[0]]
    assert sum(sizes) == 15 and any("before kube-scheduler tried" in t for t in r.trace)
    again, again_sizes, _ = _consolidated(embedded, launched[0], "raced")
    assert again_sizes == sizes and len(again.nodes) == len(r.nodes)


def test_next_command_raced_last_pass_within_a_commands_nominations(embedded):
    """nextCommand: raced - a delete command's nodes may be gone before the nominations its start set end (a seeded
    choice per command): the pass right after sees its destination nodes nominated, single-node consolidation
    marks itself consolidated over the others, and the nominations ending is no change to look again for, so the
    nodes left that were nominated then carry no Unconsolidatable event (issue 65's real run: 11 of 29 had one).
    afterDrain looks again once they end: every node left has one."""
    def silent(r):
        said = {e["name"] for e in r.events if e["kind"] == "Node" and e["reason"] == "Unconsolidatable"}
        return [n.name for n in r.nodes if not n.deleted and n.name not in said]

    calm, _, _ = _consolidated(embedded, 8, "afterDrain")
    assert silent(calm) == []
    r, _, _ = _consolidated(embedded, 8, "raced")
    left = silent(r)
    assert left and sum(1 for n in r.nodes if not n.deleted) == 6
    assert all(any(p["node"] == n and p["by"] == "nominated" for p in r.protected) for n in left)
    assert any("while its nominations hold" in t for t in r.trace)
    again, _, _ = _consolidated(embedded, 8, "raced")
    assert silent(again) == left


def _with_budgets(budgets, **disruption) -> dict:
    np = nodepool()
    np["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": budgets, **disruption}
    return np


def test_an_advance_fires_a_pass_where_a_budget_window_opens(embedded):
    """Disruption allowed from 04:00 to 04:10 only: an advance from 00:00 to 05:00 deletes the empty node at
    04:00 (plus the command's 15 s validation), where a look at the step's end finds the window closed."""
    with simulation(embedded) as sim:
        t0 = sim.clock.now()
        sim.run([nodeclass(), _with_budgets([{"nodes": "0", "schedule": "10 4 * * *", "duration": "23h50m"}]),
                 pod("web")])
        sim.workloads.delete("Pod", "web")
        sim.converge()
        assert sim.result.disruptions == []
        sim.advance(5 * 3600)
        (d,) = sim.result.disruptions
        assert d["reason"] == "Empty" and d["at"] - t0 == 4 * 3600 + 16


def test_an_advance_fires_a_pass_where_a_do_not_disrupt_duration_ends(embedded):
    """A pod protected for 10 minutes on an oversized node; disruption blocked from 00:20: an advance to 00:30
    replaces the node at 00:10, once the annotation ends."""
    guarded = pod("report", cpu="1")
    guarded["metadata"]["annotations"] = {"karpenter.sh/do-not-disrupt": "10m"}
    with simulation(embedded) as sim:
        big = _with_budgets([{"nodes": "0", "schedule": "20 0 * * *", "duration": "1h"}])
        big["spec"]["template"]["spec"]["requirements"].append(
            {"key": "karpenter.azure.com/sku-cpu", "operator": "In", "values": ["4"]})
        sim.run([nodeclass(), big, guarded])
        assert sim.result.disruptions == []
        big["spec"]["template"]["spec"]["requirements"].pop()       # a smaller size is allowed again
        sim.apply([big])
        sim.converge()
        assert sim.result.disruptions == []                            # the annotation still holds
        started = sim.state.disruption.pod_started["default/report"]
        sim.advance(30 * 60)
        d = sim.result.disruptions[0]                  # then the replacement, empty: its pod was bare
        # validated 15 s on, and its replacement initialized 10 s after that
        assert d["reason"] == "Underutilized" and d["at"] == started + 10 * 60 + 26


def test_an_advance_retries_a_pending_pod_when_its_offerings_come_back(embedded):
    """Every offering marked unavailable: the pod waits; core's provisioner looks every 10 s for a pending pod,
    so the offering's return (the unavailable-offerings TTL) is a timer of the advance."""
    with simulation(embedded) as sim:
        sim.run([nodeclass(), nodepool()])
        for z in ("1", "2", "3", "0"):
            for size, vcpus in (("Standard_D2s_v3", 2), ("Standard_D4s_v3", 4)):
                sim.unavailable.mark(size, "standardDSv3Family", vcpus, f"southcentralus-{z}" if z != "0" else "0",
                                     "on-demand", 180)
        back = sim.unavailable.next_expiry()
        sim.apply([pod("web")])
        sim.converge()
        assert not sim.result.pods["default/web"].node
        sim.advance(3600)
        (c,) = sim.claims
        assert c.created_at == back and sim.result.pods["default/web"].node


def test_an_advance_fires_where_a_spot_eviction_rule_comes_due(embedded):
    with simulation(embedded) as sim:
        spot = nodepool()
        spot["spec"]["template"]["spec"]["requirements"][2]["values"] = ["spot"]
        sim.run([nodeclass(), spot, deployment("web", replicas=1)])
        sim.fake.add_fault({"code": "SpotEviction", "after_seconds": 600, "times": 1})
        sim.advance(3600)
        first = sim.claims[0]
        assert first.result.deleted == "instance terminated"
        assert first.result.at["deleted"] == pytest.approx(first.launched_at + 600, abs=1)
        assert sim.result.pods[next(k for k in sim.result.pods if sim.result.pods[k].node)].node


def test_an_advance_fires_where_the_skus_are_read_again_and_where_an_hourly_type_check_comes_due(embedded):
    """Provider v1.6.1 reads the SKU list every 23 h and core v1.6 checks a NodeClaim's instance type from an hour
    after its creation: a size Azure took away is gone from the instance types at the 23 h read (only because the
    catalog changed: an unchanged one is no timer), and a node created at 22.5 h drifts at its first check,
    23.5 h + 1 s, inside an advance to 24 h."""
    with simulation(embedded, profile="v1.6.1") as sim:
        t0 = sim.clock.now()
        sim.run([nodeclass(), nodepool(), pod("first", cpu="1500m")])
        assert sim.provider.next_sku_read() is None                   # the fake's catalog is as read
        sim.advance(22.5 * 3600)
        sim.apply([pod("web", cpu="1500m")])
        sim.converge()
        young = sim.claims[-1]
        sim.fake.restrict_sku(young.launched.instance_type.name)
        assert sim.provider.next_sku_read() == t0 + 23 * 3600
        sim.advance(1.5 * 3600)
        assert young.dis.drifted == "InstanceTypeNotFound" or young.done
        drifted = next(d for d in sim.result.disruptions if d["nodeClaim"] == young.result.name)
        assert drifted["reason"] == "Drifted" and drifted["at"] - young.created_at < 3600 + 60
