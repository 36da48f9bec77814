"""The conformance report: body comparison (names and ids normalized, real differences kept), each
difference explained or not, entries joined from parallel runs, and the staleness check."""
import json

from harness.judge.conformance import assemble, body_diff, main, render_markdown, stale, write_entry


def _vm(name, size, zone, tags):
    return {"name": name, "id": f"/subscriptions/0/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/{name}",
            "zones": [zone], "tags": tags,
            "properties": {"hardwareProfile": {"vmSize": size}, "provisioningState": "Succeeded",
                           "networkProfile": {"networkInterfaces": [
                               {"id": f"/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/{name}"}]}}}


def test_same_shape_under_different_names_agrees():
    assert body_diff(_vm("aks-a-1", "Standard_D2s_v3", "1", {"x": "y"}),
                     _vm("aks-b-2", "Standard_D2s_v3", "1", {"x": "y"}), ["aks-a-1"], ["aks-b-2"]) == []


def test_real_differences_are_listed():
    d = body_diff(_vm("a", "Standard_D2s_v3", "1", {"x": "y"}), _vm("b", "Standard_D2s_v3", "2", {"x": "z", "w": "1"}),
                  ["a"], ["b"])
    assert {x["field"]: (x["simulated"], x["real"]) for x in d} == {
        "zones[0]": ("1", "2"), "tags.x": ("y", "z"), "tags.w": (None, "1")}


def test_markdown_has_the_totals_and_a_row_per_run():
    totals = {"runs": 1, "ranOnReal": 1, "skippedOnReal": 0, "agree": 0, "differ": 1, "realPass": 0, "realFail": 1,
              "seconds": 3.0, "generated": "now"}
    entry = {"scenario": "s", "profile": "upstream", "file": "f", "simulated": "pass", "real": "FAIL",
             "realSkipped": None, "realMismatches": ["expect.nodeCount: expected 1, got 2"], "notApplicable": [],
             "seconds": {"simulated": 0.1, "real": 20.0},
             "differences": [{"field": "nodes", "simulated": 1, "real": 2}], "vmBodies": [], "nicBodies": []}
    md = render_markdown(totals, [entry])
    assert "1 agree" not in md and "0 agree, 1 differ" in md
    assert "| s | upstream | pass | FAIL |  | 1 | 20.0 |" in md
    assert "| nodes | 1 | 2 |" in md


def _entry(name, status, explanation=None):
    return {"scenario": name, "profile": "upstream", "file": "scenarios/x.scenario.yaml", "simulated": "pass",
            "real": "pass" if status == "agree" else "FAIL", "realSkipped": None, "realMismatches": [],
            "notApplicable": [], "seconds": {"simulated": 0.01, "real": 5.0}, "status": status,
            "explanation": explanation, "differences": [] if status == "agree" else [{"field": "nodes", "simulated": 1, "real": 2}],
            "vmBodies": [], "nicBodies": [], "scenarioDigest": "d", "simDigest": "s"}


def test_entries_from_parallel_runs_join_into_one_report_and_check_fails_only_on_unexplained(tmp_path):
    write_entry(tmp_path, _entry("a", "agree"))
    write_entry(tmp_path, _entry("b", "explained", "engine: real - core v1.14.0 ... decides"))
    md, js = assemble(tmp_path)
    report = json.loads(js.read_text())
    assert [e["scenario"] for e in report["entries"]] == ["a", "b"]
    assert (report["totals"]["agree"], report["totals"]["explained"], report["totals"]["unexplained"]) == (1, 1, 0)
    assert "Explained (the scenario's xfail): engine: real" in md.read_text()
    assert not (tmp_path / "entries").exists()
    assert main(["check", str(tmp_path)]) == 0
    write_entry(tmp_path, _entry("c", "unexplained"))
    write_entry(tmp_path, _entry("a", "agree"))
    assemble(tmp_path)
    assert main(["check", str(tmp_path)]) == 1


def test_stale_names_what_changed(tmp_path):
    from types import SimpleNamespace
    sc = SimpleNamespace(file="scenarios/x.scenario.yaml", name="a", profiles=["upstream"],
                         doc=SimpleNamespace(data={"k": 1}))
    from harness.judge import conformance
    report = {"entries": [{**_entry("a", "agree"), "scenarioDigest": conformance.digest({"k": 1}), "simDigest": "old"},
                          _entry("gone", "agree")]}
    ended = SimpleNamespace(nodes=[], nodeclaims=[], azure={}, runaway=False, pods={}, nodepools={})
    sim = SimpleNamespace(scenario=sc, profile="upstream", mismatches=[], skipped=None, error=None, engine="simulated",
                          step_results=[], result=ended, final=ended, passed=True)
    sc.xfail_reason = lambda profile, real=False: None
    found = stale(report, [sc], lambda s, p, v: sim)
    assert found == ["scenarios/x.scenario.yaml::gone [upstream]: in the report, not in the library",
                     "scenarios/x.scenario.yaml::a [upstream]: the simulated outcome changed"]


def test_runs_are_compared_where_the_real_run_ended():
    """The simulation returns one result object it keeps updating, the real engine one per settle:
    both sides are compared after their last step, and a real run that stopped early (a step it cannot
    play) is compared with the simulation of the steps it played."""
    from harness.loop.result import RunResult
    from harness.judge.conformance import played_only
    from harness.runner.engines.base import Outcome
    from harness.scenario.load import load_scenarios
    first, last = (RunResult("s", "upstream", "local", seed) for seed in (1, 2))
    sc = load_scenarios("scenarios/loop/in-place-updates.scenario.yaml")[0]
    assert Outcome(sc, "upstream", "local", first).final is first
    assert Outcome(sc, "upstream", "local", first, step_results=[first, last]).final is last
    sc = next(s for s in load_scenarios("scenarios/loop/in-place-updates.scenario.yaml") if len(s.steps) > 1)
    cut = played_only(sc, 1)
    assert len(cut.steps) == len(cut.step_manifests) == 1 and len(sc.steps) > 1 and cut.name == sc.name


def test_a_step_the_runs_state_did_not_allow_is_compared_with_the_whole_simulation():
    """Found by the fuzzer: a `during: launch` step after a phase that launched nothing fails on both
    engines (StepFailed); comparing the real run with the simulation of no step at all made a pass
    and a FAIL of the same outcome. Only a step the real engine cannot play cuts the simulation."""
    from types import SimpleNamespace

    from harness.judge.conformance import compared_as
    from harness.scenario.load import load_scenarios
    sc = next(s for s in load_scenarios("scenarios/loop/in-place-updates.scenario.yaml") if len(s.steps) > 1)
    failed = SimpleNamespace(step_results=[], skipped=None, skipped_steps=[])
    assert compared_as(sc, failed) is sc
    cannot = SimpleNamespace(step_results=[object()], skipped=None, skipped_steps=["steps[1]: why"])
    assert len(compared_as(sc, cannot).steps) == 1


def test_a_partial_rerun_is_merged_into_the_report(tmp_path, monkeypatch):
    """`merge NEW DIR` replaces the rerun entries, keeps the others and drops a scenario the library
    no longer holds (`regen-conformance.sh --stale`)."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "scenarios" / "x"
    folder.mkdir(parents=True)
    doc = "apiVersion: harness.karpenter.azure.com/v1alpha1\nkind: Scenario\nmetadata: {{name: {}}}\nexpect: {{nodeCount: 0}}\n"
    (folder / "a.scenario.yaml").write_text(doc.format("a") + "---\n" + doc.format("b"))
    old, new = tmp_path / "old", tmp_path / "new"
    file = "scenarios/x/a.scenario.yaml"
    for d, entries in ((old, [_entry("a", "unexplained"), _entry("b", "agree"), _entry("gone", "agree")]),
                       (new, [_entry("a", "agree")])):
        for e in entries:
            write_entry(d, {**e, "file": file})
        assemble(d)
    assert main(["merge", str(new), str(old)]) == 0
    report = json.loads((old / "conformance.json").read_text())
    assert {e["scenario"]: e["status"] for e in report["entries"]} == {"a": "agree", "b": "agree"}
    assert main(["check", str(old)]) == 0


def test_a_deleted_nodes_termination_marks_are_not_its_outcome():
    """The real engine's last poll sees a deleted Node mid-termination (core's disrupted taint and
    load-balancer exclusion, kube-controller-manager's unreachable taint), the simulation as it was
    disrupted: the marks say when the record was taken. A Node still there keeps them."""
    from harness.loop.result import NodeResult
    from harness.judge.outcome import node_view

    def node(deleted):
        return NodeResult(name="n", index=0, nodeclaim="c", nodepool="p", instance_type="Standard_D2s_v3", zone="1",
                          capacity_type="on-demand", vm_name="v", deleted=deleted,
                          labels={"a": "b", "node.kubernetes.io/exclude-from-external-load-balancers": "karpenter"},
                          taints=[{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
                                  {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
                                  {"key": "team", "value": "x", "effect": "NoSchedule"}])
    gone, there = node_view(node("Empty")), node_view(node(None))
    assert gone["labels"] == {"a": "b"} and gone["taints"] == ["team=x:NoSchedule"]
    assert len(there["labels"]) == 2 and len(there["taints"]) == 3


def test_when_both_runs_ran_away_their_counts_are_noise():
    """A runaway run is stopped: how many NodeClaims each engine launched first says when it was stopped."""
    from types import SimpleNamespace

    from harness.loop.result import NodeResult
    from harness.judge.conformance import _pair

    def run(n, runaway):
        nodes = [NodeResult(name=f"n{i}", index=i, nodeclaim=f"c{i}", nodepool="p", instance_type="Standard_D2s_v3",
                            zone="", capacity_type="on-demand", vm_name=f"v{i}") for i in range(n)]
        r = SimpleNamespace(nodes=nodes, nodeclaims=[SimpleNamespace(launched=True)] * n, runaway=runaway,
                            azure={"vms": [1] * n, "nics": [1] * n}, pods={}, nodepools={})
        return SimpleNamespace(result=r, final=r, step_results=[], vm_bodies={}, nic_bodies={})
    both = _pair(run(3, True), run(5, True))
    assert both["differences"] == [] and {d["field"] for d in both["noise"]} >= {"nodes", "vms", "nodes[3]", "nodes[4]"}
    one = _pair(run(3, False), run(5, True))
    assert {d["field"] for d in one["differences"]} >= {"nodes", "runaway", "nodes[3]"}


def test_report_drift_names_what_a_fresh_run_says_otherwise(tmp_path):
    """The nightly's `compare`: another real verdict or status, a run one side lacks inside the folders
    both cover, and a folder only the fresh run covers; nothing for two reports that say the same."""
    from harness.judge.conformance import report_drift
    other = {**_entry("z", "agree"), "file": "scenarios/other/y.scenario.yaml"}
    checked_in = {"entries": [_entry("a", "agree"), _entry("b", "agree"), _entry("gone", "agree")]}
    fresh = {"entries": [_entry("a", "agree"), _entry("b", "unexplained"), _entry("new", "agree"), other]}
    assert report_drift(checked_in, checked_in) == []
    assert report_drift(checked_in, fresh) == [
        "scenarios/x.scenario.yaml::new [upstream]: only in the fresh run",
        "scenarios/x.scenario.yaml::gone [upstream]: only in the checked-in report",
        "scenarios/x.scenario.yaml::b [upstream]: checked in real pass (agree), now real FAIL (unexplained)",
        "scenarios/other: in the fresh run, not covered by the checked-in report"]
    for d, report in (("old", checked_in), ("new", fresh)):
        (tmp_path / d).mkdir()
        (tmp_path / d / "conformance.json").write_text(json.dumps(report))
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "old")]) == 0
    assert main(["compare", str(tmp_path / "old"), str(tmp_path / "new")]) == 1


def test_when_both_runs_ran_away_a_nodes_termination_marks_are_noise():
    """The real controller consolidates a runaway's empty nodes while it goes on launching: whether the
    first node carried core's termination marks when each run was stopped says when, not what. Any other
    taint still differs, and so do the marks when only one run ran away."""
    from types import SimpleNamespace

    from harness.loop.result import NodeResult
    from harness.judge.conformance import _pair

    def run(runaway, taints=(), labels=None):
        nodes = [NodeResult(name="n0", index=0, nodeclaim="c0", nodepool="p", instance_type="Standard_D2s_v3",
                            zone="", capacity_type="on-demand", vm_name="v0", labels=dict(labels or {}),
                            taints=[{"key": k, "effect": "NoSchedule"} for k in taints])]
        r = SimpleNamespace(nodes=nodes, nodeclaims=[SimpleNamespace(launched=True)], runaway=runaway,
                            azure={"vms": [1], "nics": [1]}, pods={}, nodepools={})
        return SimpleNamespace(result=r, final=r, step_results=[], vm_bodies={}, nic_bodies={})
    leaving = {"taints": ("karpenter.sh/disrupted",),
               "labels": {"node.kubernetes.io/exclude-from-external-load-balancers": "karpenter"}}
    both = _pair(run(True), run(True, **leaving))
    assert both["differences"] == []
    assert {d["field"] for d in both["noise"]} == {"nodes[0].taints",
                                                   "nodes[0].labels.node.kubernetes.io/exclude-from-external-load-balancers"}
    other = _pair(run(True), run(True, taints=("karpenter.sh/disrupted", "team")))
    assert [d["field"] for d in other["differences"]] == ["nodes[0].taints"]
    one = _pair(run(False), run(True, **leaving))
    assert {d["field"] for d in one["differences"]} >= {"runaway", "nodes[0].taints"}


def test_a_retried_launchs_nic_is_noise():
    """A launch the fake keeps refusing has its NIC while an attempt runs (created before the VM PUT,
    deleted by the cleanup after it): one NIC more or less per such launch says when the run was read.
    Without a launch being retried the NIC count still differs."""
    from types import SimpleNamespace

    from harness.judge.conformance import _pair

    def run(nics, retrying):
        claims = [SimpleNamespace(launched=True, deleted=None, rejected=None, failures=[])]
        claims += [SimpleNamespace(launched=False, deleted=None, rejected=None, failures=[{"reason": "TooManyRequests"}])
                   ] if retrying else []
        r = SimpleNamespace(nodes=[], nodeclaims=claims, runaway=False, azure={"vms": [1], "nics": [1] * nics},
                            pods={}, nodepools={})
        return SimpleNamespace(result=r, final=r, step_results=[], vm_bodies={}, nic_bodies={})
    retried = _pair(run(1, True), run(2, True))
    assert retried["differences"] == [] and [d["field"] for d in retried["noise"]] == ["nics"]
    assert [d["field"] for d in _pair(run(1, False), run(2, False))["differences"]] == ["nics"]
    # a Failed VM left beside the launched one brings its NIC: no retried launch's
    other = run(2, True)
    other.final.azure["vms"] = [1, 2]
    assert {d["field"] for d in _pair(run(1, True), other)["differences"]} == {"vms", "nics"}


def test_stale_names_a_step_the_real_engine_now_plays(tmp_path):
    """A report made before the controller's clock moved says an `advance: 22h` was not played; once the
    engine plays it, the entry no longer describes what a real run does."""
    from types import SimpleNamespace
    from harness.judge import conformance
    sc = SimpleNamespace(file="scenarios/x.scenario.yaml", name="a", profiles=["upstream"],
                         doc=SimpleNamespace(data={"k": 1}), steps=[{"advance": "22h"}], given={})
    ended = SimpleNamespace(nodes=[], nodeclaims=[], azure={}, runaway=False, pods={}, nodepools={})
    sim = SimpleNamespace(scenario=sc, profile="upstream", mismatches=[], skipped=None, error=None, engine="simulated",
                          step_results=[], result=ended, final=ended, passed=True)
    sc.xfail_reason = lambda profile, real=False: None
    unplayed = ("steps[0]: not applicable on the real engine (advance: 22h would be 79200s of wall-clock time; the "
                "controller's timers are real and the real engine waits at most 120s (HARNESS_REAL_MAX_ADVANCE))")
    entry = {**_entry("a", "agree"), "scenarioDigest": conformance.digest({"k": 1}),
             "simDigest": conformance.sim_digest(sim), "notApplicable": [unplayed]}
    found = stale({"entries": [entry]}, [sc], lambda s, p, v: sim)
    assert found == ["scenarios/x.scenario.yaml::a [upstream]: the real engine now plays every step (the report: "
                     "steps[0]: advance: 22h would be 79200s of wall-clock time; the controller's timers are real and "
                     "the real engine waits at most 120s (HARNESS_REAL_MAX_ADVANCE))"]
    sc.steps = [{"cluster": {"useSIG": True}}]
    entry["notApplicable"] = []
    assert "the real engine now stops at steps[0]: cluster: useSIG: " in stale(
        {"entries": [entry]}, [sc], lambda s, p, v: sim)[0]


def test_outcomes_too_many_to_sample_are_compared_as_counts(monkeypatch):
    """Issue 65's 100-node dump: which of its equal nodes consolidation keeps, and where kube-scheduler puts the
    evicted pods, are ties upstream breaks at random, so nearly every run's node-by-node outcome is its own. A
    real outcome none of them is agrees as counts (as many nodes of each kind, kept and deleted, the pods in
    the same states) when most runs were unique; not otherwise, nor where the counts differ, nor for a scenario
    that declares a disagreement."""
    from types import SimpleNamespace

    from harness.loop.result import NodeResult
    from harness.judge import conformance
    from harness.judge.conformance import compare, status_text
    monkeypatch.setattr(conformance, "_agreeing_up_to_zones", lambda *a: [])     # (its nodes name their zones)

    def node(i, zone, deleted=None):
        pin = [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]
        return NodeResult(name=f"n{i}", index=i, nodeclaim=f"c{i}", nodepool="p", instance_type="Standard_D4s_v5",
                          zone=zone, capacity_type="on-demand", vm_name=f"v{i}", deleted=deleted,
                          labels={"topology.kubernetes.io/zone": zone}, nodeclaim_requirements=pin)

    def run(zones, kept, seed=1, xfail=None):
        nodes = [node(i, z, None if i < kept else "Underutilized") for i, z in enumerate(zones)]
        r = SimpleNamespace(nodes=nodes, nodeclaims=[SimpleNamespace(launched=True)] * len(nodes), runaway=False,
                            azure={}, pods={}, nodepools={}, seed=seed)
        sc = SimpleNamespace(file="scenarios/x.scenario.yaml", name="x", doc=SimpleNamespace(data={}), given={},
                             xfail={"upstream": xfail} if xfail else {}, xfail_reason=lambda p, real=False: None)
        return SimpleNamespace(scenario=sc, profile="upstream", result=r, final=r, mismatches=[], skipped=None,
                               error=None, engine="simulated", passed=True, seconds=0.1, step_results=[],
                               vm_bodies={}, nic_bodies={}, exploration=None, not_applicable=[])

    zones = ["eastus-1", "eastus-2", "eastus-3"]
    samples = [run([zones[(i + k) % 3] for i in range(4)], kept=2, seed=k) for k in range(3)]
    real = run(["eastus-2", "eastus-2", "eastus-2", "eastus-1"], kept=2)        # zones no run has
    assert compare(samples[0], real, samples[1:])["status"] == "unexplained"
    entry = compare(samples[0], real, samples[1:], as_counts=True)
    assert entry["status"] == "agree" and entry["comparedAs"] == "counts" and entry["differences"] == []
    assert status_text(entry) == "agree as counts (one of 1 outcomes as counts; node by node 3 outcomes in 3 runs)"
    assert all("ties upstream breaks at random" in d["why"] for d in entry["noise"] if "zone" in d["field"])
    one_more_kept = run(["eastus-2", "eastus-2", "eastus-2", "eastus-1"], kept=3)
    assert compare(samples[0], one_more_kept, samples[1:], as_counts=True)["status"] == "unexplained"
    twice = [samples[0], samples[0], samples[1]]               # 1 of 3 runs unique: the set is well sampled
    assert compare(twice[0], real, twice[1:], as_counts=True)["status"] == "unexplained"
    declared = run(zones + ["eastus-1"], kept=2, xfail="model: why")
    assert compare(declared, real, samples[1:], as_counts=True)["status"] == "explained"
