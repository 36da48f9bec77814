"""harness/runner/karpenterlog.py: a run's decisions written as its core's log, read back, and compared with
another log (a planted divergence found), at core v1.14.0, v1.6.2 and v1.0.6, whose wordings differ; and the
simulated writer's message sequence against the real controller's own log of the same scenario."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.runner import karpenterlog as kl
from harness.scenario.load import load_all

ROOT = Path(__file__).resolve().parents[2]
LOGS = Path(__file__).resolve().parent / "karpenterlogs"
CONSOLIDATION = ("scenarios/disruption/consolidation.scenario.yaml", "underutilized-node-deleted-when-pods-fit-elsewhere")
DRIFT = ("scenarios/disruption/drift.scenario.yaml", "nodepool-template-change-drifts-node")
# v0.7.x (core v1.0.6) serves the v1alpha2 AKSNodeClass only: the smoke set written in its API
CONSOLIDATION_V1ALPHA2 = ("scenarios/releases/smoke/v1-v1alpha2/consolidation.scenario.yaml",
                          "smoke-v1-v1alpha2-consolidation")
DRIFT_V1ALPHA2 = ("scenarios/releases/smoke/v1-v1alpha2/drift.scenario.yaml", "smoke-v1-v1alpha2-drift")

_RUNS: dict = {}


def run(where: tuple[str, str], profile: str):
    """The finished Outcome of a library scenario under `profile` (simulated, embedded), once per session."""
    key = (where, profile)
    if key not in _RUNS:
        from harness.backends.embedded import EmbeddedBackend
        from harness.runner.engines import run as run_scenario
        (sc,) = [s for s in load_all([str(ROOT / where[0])]) if s.name == where[1]]
        cluster = EmbeddedBackend().start()
        try:
            _RUNS[key] = run_scenario(sc, profile, cluster)
        finally:
            cluster.close()
    return _RUNS[key]


def messages(text: str) -> list[str]:
    return [json.loads(line)["message"] for line in text.splitlines()]


LIFE2 = ["found provisionable pod(s)", "computed new nodeclaim(s) to fit pod(s)", "created nodeclaim",
         "created nodeclaim", "launched nodeclaim", "launched nodeclaim", "registered nodeclaim",
         "registered nodeclaim", "initialized nodeclaim", "initialized nodeclaim"]
END = ["tainted node", "deleted node", "deleted nodeclaim"]


@pytest.mark.parametrize("where,profile,command", [
    (CONSOLIDATION, "upstream", "disrupting node(s)"),
    (CONSOLIDATION, "v1.6.2", "disrupting node(s)"),
    (CONSOLIDATION_V1ALPHA2, "v0.7.5", "disrupting nodeclaim(s) via delete, terminating 1 nodes (2 pods) aks-default-"),
])
def test_consolidation_sequence(where, profile, command):
    o = run(where, profile)
    text = kl.run_log(o)
    got = messages(text)
    assert got[:10] == LIFE2 and got[11:] == END, got
    assert got[10].startswith(command)
    rec = json.loads(text.splitlines()[10])
    if profile == "upstream":     # core v1.9+: the command as text, no reason key
        assert rec["command"].startswith("Underutilized/") and rec["decision"] == "delete" and "reason" not in rec
    elif profile == "v1.6.2":     # core v1.3-v1.8: command-id and the reason, lower-cased
        assert rec["reason"] == "underutilized" and "command" not in rec
        assert [d["NodeClaim"]["name"] for d in rec["disrupted-nodes"]] == [o.final.disruptions[0]["nodeClaim"]]
    else:                         # core v1.0: the candidates by Node in the message, the reason beside it
        assert rec["reason"] == "underutilized" and "decision" not in rec
    # core v1.0 finalizes a NodeClaim in nodeclaim.termination, v1.1+ in nodeclaim.lifecycle
    last = json.loads(text.splitlines()[-1])
    assert last["controller"] == ("nodeclaim.termination" if profile == "v0.7.5" else "nodeclaim.lifecycle")


@pytest.mark.parametrize("where,profile", [(DRIFT, "upstream"), (DRIFT, "v1.6.2"), (DRIFT_V1ALPHA2, "v0.7.5")])
def test_drift_sequence(where, profile):
    """A replace: the command, its replacement created by the disruption controller, the replacement's
    life, then the candidate's termination."""
    text = kl.run_log(run(where, profile))
    got = messages(text)
    assert got[:6] == ["found provisionable pod(s)", "computed new nodeclaim(s) to fit pod(s)", "created nodeclaim",
                       "launched nodeclaim", "registered nodeclaim", "initialized nodeclaim"]
    assert got[6].startswith("disrupting node(s)" if profile != "v0.7.5" else "disrupting nodeclaim(s) via replace")
    assert got[7:] == ["created nodeclaim", "launched nodeclaim", "registered nodeclaim", "initialized nodeclaim"] + END
    assert json.loads(text.splitlines()[7])["controller"] == "disruption"


def test_knative_wording():
    """Core v0.36 (provider v0.5/v0.6): knative's logger, lower-case keys, `disrupting via <method> ...`."""
    o = run(CONSOLIDATION_V1ALPHA2, "v0.7.5")
    recs = kl.lines(o.final, "v0.36.1")
    assert recs[2]["logger"] == "controller.provisioner" and recs[2]["nodeclaim"] and recs[2]["nodepool"] == "default"
    assert recs[10]["message"].startswith("disrupting via consolidation delete, terminating 1 nodes")
    (e,) = [e for e in kl.read(kl.dumps(recs)) if e.id == "disrupting"]
    assert e.facts["reason"] == "Underutilized" and e.facts["decision"] == "delete"


@pytest.mark.parametrize("where,profile", [(CONSOLIDATION, "upstream"), (CONSOLIDATION, "v1.6.2"),
                                           (CONSOLIDATION_V1ALPHA2, "v0.7.5"), (DRIFT, "upstream"),
                                           (DRIFT, "v1.6.2"), (DRIFT_V1ALPHA2, "v0.7.5")])
def test_reader_round_trips_the_writer(where, profile):
    o = run(where, profile)
    recs = kl.lines(o.final, kl.core_of(o))
    entries = kl.read(kl.dumps(recs))
    assert [e.message for e in entries] == [r["message"] for r in recs]
    assert [e.n for e in entries] == list(range(1, len(recs) + 1))
    for e, r in zip(entries, recs):
        assert e.t == pytest.approx(kl._time(r))
        for kind in ("NodeClaim", "Node", "NodePool"):
            if isinstance(r.get(kind), dict):
                assert e.facts[kind] == r[kind]["name"]
    (cmd,) = [e for e in entries if e.id == "disrupting"]
    (d, *_) = o.final.disruptions
    assert (cmd.facts["reason"], cmd.facts["decision"]) == (d["reason"], d["decision"])
    assert kl.compare(entries, entries) is None


def _renamed(text: str, suffix: str = "zz") -> str:
    """The same log with every generated NodeClaim/Node name changed (another cluster's names)."""
    out = text
    for e in kl.read(text):
        for kind in ("NodeClaim", "Node"):
            if e.facts.get(kind):
                name = e.facts[kind]
                out = out.replace(name, name[:-2] + suffix + name[-2:]) if suffix not in name else out
    return out


@pytest.mark.parametrize("where,profile", [(CONSOLIDATION, "upstream"), (CONSOLIDATION, "v1.6.2"),
                                           (CONSOLIDATION_V1ALPHA2, "v0.7.5")])
def test_against_log_finds_a_planted_divergence(where, profile):
    """Another cluster's log of the same decisions matches (names map by appearance); with its disrupting
    line removed, or the decision changed, the comparison parts there and shows both sides."""
    o = run(where, profile)
    ours = kl.read(kl.run_log(o))
    theirs_text = _renamed(kl.run_log(o))
    assert kl.read(theirs_text)[2].facts["NodeClaim"] != ours[2].facts["NodeClaim"]
    assert kl.compare(ours, kl.read(theirs_text)) is None

    lines = theirs_text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "disrupting" in line)
    removed = kl.compare(ours, kl.read("".join(lines[:at] + lines[at + 1:])))
    assert removed is not None and removed.matched == 10
    assert removed.left.id == "disrupting" and removed.right.id == "tainted"
    text = "\n".join(removed.render())
    # core v1.0 names the candidates by Node, and its `tainted node` has no NodeClaim key (core v1.3.0 added it)
    assert f"run message {at + 1}, log message {at + 1}" in text
    assert ("node-2" if profile == "v0.7.5" else "nodeclaim-2") in text

    changed_line = lines[at].replace('"decision":"delete"', '"decision":"replace"').replace(
        "via delete,", "via replace,")
    changed = kl.compare(ours, kl.read("".join(lines[:at] + [changed_line] + lines[at + 1:])))
    assert changed is not None and changed.matched == 10 and changed.differs == ["decision"]
    assert changed.left.n == changed.right.n == at + 1


def test_concurrent_lines_may_come_in_either_order():
    """Two NodeClaims' lifecycle lines interleave in any order in a real log; one NodeClaim's own don't."""
    o = run(CONSOLIDATION, "upstream")
    text = kl.run_log(o)
    lines = text.splitlines(keepends=True)
    swapped = lines[:4] + [lines[5], lines[4]] + lines[6:]          # the two `launched` lines
    assert kl.compare(kl.read(text), kl.read("".join(swapped))) is None
    wrong = lines[:4] + [lines[6], lines[4]] + [lines[5]] + lines[7:]   # `registered` before its `launched`
    d = kl.compare(kl.read(text), kl.read("".join(wrong)))
    assert d is not None and d.matched == 4


def test_read_skips_prefixes_and_other_lines():
    text = ('karpenter-6d5f/controller {"level":"INFO","time":"2026-01-01T00:00:00Z","logger":"controller",'
            '"message":"created nodeclaim","NodePool":{"name":"default"},"NodeClaim":{"name":"default-abcde"}}\n'
            'plain text\n{"level":"DEBUG","message":"something else"}\n')
    (e,) = kl.read(text)
    assert (e.id, e.facts["NodeClaim"], e.facts["NodePool"]) == ("created", "default-abcde", "default")


def _line(t: float, message: str, **keys) -> str:
    return json.dumps({"level": "INFO", "time": kl._iso(t), "logger": "controller", "message": message, **keys}) + "\n"


def test_new_takes_the_clock_and_a_step_from_the_log(tmp_path):
    """`harness new DUMP --log LOG`: the dump's time stays the start; the log's later decisions become an
    advance step, its NodeClaims' lives notes. With --replay (from an empty cluster) the clock starts when
    the log's first pods became provisionable."""
    import yaml

    from harness.model.kube.kubetime import parse_rfc3339
    from harness.dump.new import NewOptions, new_scenario, read_objects, split
    dump = ROOT / "tests/dump/dumps/real/expiring-node.yaml"
    t0 = parse_rfc3339(split(read_objects([str(dump)])).newest)
    log = tmp_path / "karpenter.log"
    log.write_text(_line(t0 - 61, "found provisionable pod(s)", Pods="default/web-x", duration="5ms")
                   + _line(t0 - 60, "created nodeclaim", NodePool={"name": "default"}, NodeClaim={"name": "default-abc"})
                   + "not json\n"
                   + _line(t0 - 30, "registered nodeclaim", NodeClaim={"name": "default-abc"}, Node={"name": "aks-default-abc"})
                   + _line(t0 + 540, "deleting expired nodeclaim", NodeClaim={"name": "default-abc"}))
    _, text, notes = new_scenario(NewOptions([str(dump)], "case-1", output=str(tmp_path / "a.scenario.yaml"),
                                               log=str(log)))
    doc = yaml.safe_load(text.split("\n", 1)[1])
    assert parse_rfc3339(doc["given"]["startTime"]) == t0
    assert doc["steps"] == [{"advance": "9m0s"}]
    assert "log: NodeClaim default-abc: created -1m, registered -30s, disrupted +9m" in notes
    _, text, notes = new_scenario(NewOptions([str(dump)], "case-1", output=str(tmp_path / "b.scenario.yaml"),
                                               log=str(log), replay=True))
    doc = yaml.safe_load(text.split("\n", 1)[1])
    assert parse_rfc3339(doc["given"]["startTime"]) == t0 - 61
    assert doc["steps"] == [{"advance": "10m1s"}]


def test_cli_writes_and_compares(tmp_path, capsys):
    """`harness run FILE --karpenter-log OUT`, then `--against-log` with the file and with a mutated copy."""
    from harness.cli import main as cli
    path, name = CONSOLIDATION
    out = tmp_path / "run.log"
    assert cli(["run", str(ROOT / path), "-k", name, "--karpenter-log", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert messages(out.read_text())[10] == "disrupting node(s)"
    assert cli(["run", str(ROOT / path), "-k", name, "--against-log", str(out)]) == 0
    assert "decision line(s) match" in capsys.readouterr().out
    mutated = tmp_path / "mutated.log"
    lines = out.read_text().splitlines(keepends=True)
    mutated.write_text("".join(lines[:4] + lines[5:]))          # the first `launched nodeclaim` removed
    assert cli(["run", str(ROOT / path), "-k", name, "--against-log", str(mutated), "--json"]) == 0
    err = capsys.readouterr().err
    assert "part after" in err and "'launched nodeclaim'" in err, err


def test_an_info_level_log_is_compared_without_debug_lines():
    """Expiration is a DEBUG line (core v1.14.0 nodeclaim/expiration): a customer's log at the default INFO
    level has none, and still matches the run's."""
    o = run(("scenarios/disruption/expiration.scenario.yaml", "node-expires-after-expire-after"), "upstream")
    text = kl.run_log(o)
    ours = kl.read(text)
    assert [e.id for e in ours].count("expired") == 1
    info = "".join(line for line in text.splitlines(keepends=True) if '"level":"DEBUG"' not in line)
    assert len(kl.read(info)) == len(ours) - 1
    assert kl.compare(ours, kl.read(info)) is None


# the real controllers' logs of library scenarios (tests/runner/karpenterlogs/): each file's first line says
# the command that produced it; the rest are its decision lines as the controller wrote them (karpenterlog.trim)
REAL = {
    "underutilized-node-deleted-when-pods-fit-elsewhere[upstream].log": CONSOLIDATION,
    "nodepool-template-change-drifts-node[upstream].log": DRIFT,
    "should-launch-in-the-nodepool-requested-zone[upstream].log":
        ("scenarios/upstream-tests/zone-aware-provisioning.scenario.yaml", "should-launch-in-the-nodepool-requested-zone"),
    # a VM that fails after the provider returned it: core logs its launch, then the NodeClaim's deletion
    "zonal-allocation-failure-moves-zone[upstream].log":
        ("scenarios/loop/create-faults.scenario.yaml", "zonal-allocation-failure-moves-zone"),
    # a seeded NodeClaim (the harness creates it, core launches it), drifted and still draining at the end
    "should-consider-do-not-disrupt-pods-with-tgp-for-eventual-disruption[upstream].log":
        ("scenarios/upstream-core/disruption/suite.scenario.yaml",
         "should-consider-do-not-disrupt-pods-with-tgp-for-eventual-disruption"),
    # provider v1.6.2 (core v1.6.2) built from the provider's history, timing upstream
    "underutilized-node-deleted-when-pods-fit-elsewhere[v1.6.2].log": CONSOLIDATION,
    "nodepool-template-change-drifts-node[v1.6.2].log": DRIFT,
    # provider v0.7.5 (core v1.0.6) built from its tag, timing upstream: its own API's smoke set
    "smoke-v1-v1alpha2-consolidation[v0.7.5].log": CONSOLIDATION_V1ALPHA2,
    "smoke-v1-v1alpha2-drift[v0.7.5].log": DRIFT_V1ALPHA2,
    "custom-requirement-labels[upstream].log":
        ("scenarios/loop/core-label-resolution.scenario.yaml", "custom-requirement-labels"),
    "fuzz-spot-prices-beyond-the-first-pages[upstream].log":
        ("scenarios/fuzz/spot-prices-beyond-the-first-pages.scenario.yaml", "fuzz-spot-prices-beyond-the-first-pages"),
    "compiled-in-prices-spot-costs-on-demand[upstream].log":
        ("scenarios/loop/compiled-in-prices.scenario.yaml", "compiled-in-prices-spot-costs-on-demand"),
}


# real logs the simulation is known to part from, and where
DIFFERS = {
    # two equal nodes (one small pod each): the real v0.7.5 controller consolidated the first-created one,
    # the simulation the second; core v1.0.6 takes its candidates from a Go map (state.Cluster.Nodes) and
    # sorts them by disruption cost with sort.Slice (disruption/consolidation.go sortCandidates), so the tie
    # has no fixed winner: the lines part at the command's candidates (message 11), the words agree
    "smoke-v1-v1alpha2-consolidation[v0.7.5].log": "core v1.0.6 breaks a disruption-cost tie between "
        "two equal candidates arbitrarily: the real controller deleted the other node (differ in: candidates)",
}


def _real_fixtures():
    names = sorted(p.name for p in LOGS.glob("*.log")) if LOGS.is_dir() else []
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=DIFFERS[n])) if n in DIFFERS else n
            for n in names]


@pytest.mark.parametrize("fixture", _real_fixtures())
def test_simulated_log_matches_the_real_controllers(fixture):
    """The simulated writer's decision lines against the real controller's own log of the same scenario."""
    text = (LOGS / fixture).read_text()
    assert text.startswith("# produced by: python -m harness run ") and "--engine real" in text.splitlines()[0]
    assert "/tmp/" not in text and "/root/" not in text and "/home/" not in text
    profile = fixture.rsplit("[", 1)[1].split("]", 1)[0]
    real = kl.read(text)
    assert real, "no decision line in the fixture"
    assert all("caller" in e.record for e in real)      # zap's caller: the controller wrote it, not our writer
    ours = kl.read(kl.run_log(run(REAL[fixture], profile)))
    # and in time: `--against-log`'s default tolerance (each side from its first line)
    d = kl.compare(ours, real, right_label="real", timing=kl.Timing(tolerance=kl.TOLERANCE))
    assert d is None, "\n".join(d.render())
    # and the planted divergence: the real log without its disruption command, or its first launch
    lines = text.splitlines(keepends=True)
    cut = next((i for i, line in enumerate(lines) if "disrupting" in line),
               next(i for i, line in enumerate(lines) if "launched nodeclaim" in line))
    d = kl.compare(ours, kl.read("".join(lines[:cut] + lines[cut + 1:])), right_label="real")
    # core v1.0 writes the command into the message (`disrupting nodeclaim(s) via delete, terminating ...
    # aks-<node>/...`), whose generated names differ between the runs: the same message by its id
    assert d is not None and d.left.n == d.matched + 1 and d.left.id == kl.read(lines[cut])[0].id


@pytest.mark.parametrize("core,single,multi", [
    ("v1.14.0", ("abandoning single-node consolidation due to timeout", {"candidates_evaluated": 4}),
     ("failed to find a multi-node consolidation after timeout", {"last_batch_size": 35})),
    ("v1.6.2", ("abandoning single-node consolidation due to timeout after evaluating 4 candidates", {}),
     ("failed to find a multi-node consolidation after timeout, last considered batch had 35", {})),
])
def test_consolidation_timeouts_are_written_as_the_core_logs_them(core, single, multi):
    """A `consolidation-timed-out` decision (harness/loop/disruption/consolidation.py) is core's DEBUG line of
    that release (sigs.k8s.io/karpenter v1.14.0 and v1.9.1 pkg/controllers/disruption/*nodeconsolidation.go)."""
    from types import SimpleNamespace
    decisions = [SimpleNamespace(t=10.0, action="consolidation-timed-out", data={"method": "single", "candidatesEvaluated": 4}),
                 SimpleNamespace(t=20.0, action="consolidation-timed-out", data={"method": "multi", "lastBatchSize": 35,
                                                                                 "logValues": None})]
    result = SimpleNamespace(nodes=[], started=0.0, disruptions=[], trace=[], nodeclaims=[], events=[], timeline=[],
                             instance_types={}, decisions=decisions)
    recs = kl.lines(result, core)
    assert [(r["level"], r["message"]) for r in recs] == [("DEBUG", single[0]), ("DEBUG", multi[0])]
    assert all(recs[i][k] == v for i, want in ((0, single[1]), (1, multi[1])) for k, v in want.items())
    assert [e.id for e in kl.read(kl.dumps(recs))] == (["single-node-timeout", "multi-node-timeout"]
                                                       if core == "v1.14.0" else [])


# -- error lines, the wording's release, pairing by name and time -----------------------------------------------
TICKETS = LOGS / "tickets"
_MULTI = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."


@pytest.mark.parametrize("record,pod", [
    # core v1.6.0+: the eviction queue reconciles pods; controller-runtime logs the error with the request
    ({"level": "ERROR", "logger": "controller", "message": "Reconciler error", "controller": "eviction-queue",
      "namespace": "shop", "name": "checkout-1", "error": _MULTI}, "shop/checkout-1"),
    # core v1.0.0-v1.5.x: its own line, the pod as klog.KRef
    ({"level": "ERROR", "logger": "controller", "message": "failed evicting pod", "controller": "eviction-queue",
      "Pod": {"name": "checkout-1", "namespace": "shop"}, "error": _MULTI}, "shop/checkout-1"),
    # core v0.36: knative's sugared Errorf, the error in the message
    ({"level": "ERROR", "logger": "controller.eviction-queue", "message": f"evicting pod, {_MULTI}",
      "pod": "shop/checkout-1"}, "shop/checkout-1"),
])
def test_failed_evictions_are_read_in_every_cores_words(record, pod):
    (e,) = kl.read(json.dumps({"time": "2026-03-09T10:15:31Z", **record}))
    assert (e.id, e.modeled, e.facts["Pod"], e.facts["refusal"]) == ("eviction-failed", False, pod, "multiple-pdbs")


def test_other_error_lines_are_read_by_their_controller():
    text = "".join(json.dumps({"level": "ERROR", "time": "2026-03-09T10:15:31Z", "logger": "controller", **r}) + "\n"
                   for r in ({"message": "Reconciler error", "controller": "nodeclaim.lifecycle",
                              "NodeClaim": {"name": "general-a"}, "error": "launching nodeclaim, creating instance, "
                              "AllocationFailed"},
                             {"message": "failed launching nodeclaim", "controller": "nodeclaim.lifecycle",
                              "NodeClaim": {"name": "general-b"}, "error": "insufficient capacity"},
                             {"message": "could not schedule pod", "controller": "provisioner",
                              "Pod": {"name": "web", "namespace": "default"}, "error": "all available instance "
                              "types exceed limits for nodepool"}))
    assert [(e.id, e.facts.get("NodeClaim") or e.facts.get("Pod")) for e in kl.read(text)] == [
        ("reconcile-failed", "general-a"), ("launch-failed", "general-b"), ("schedule-failed", "default/web")]


def test_refusal_texts_are_the_api_servers_and_cores():
    """karpenter-log.yaml `refusals` reads the eviction API's own texts (harness/loop/kube/pdb.py) and the words
    the termination controller's events give them (harness/loop/lifecycle/nodetermination.py)."""
    from harness.loop.kube.pdb import MULTIPLE_PDBS_ERROR, VIOLATES_PDB_ERROR
    assert kl.refusal_of(MULTIPLE_PDBS_ERROR)["id"] == "multiple-pdbs"
    assert kl.refusal_of(VIOLATES_PDB_ERROR)["id"] == "violates-pdb"
    assert kl.refusal_of("Failed to drain node, eviction does not support multiple PDBs (Pod=a/b)")["pdbs"] == 2
    assert kl.refusal_of("Failed to drain node, evicting pod violates a PDB (Pod=a/b)")["pdbs"] == 1
    assert kl.refusal_of("Failed to drain node, 2 pods are waiting to be evicted") is None


@pytest.mark.parametrize("fixture", sorted(p.name for p in LOGS.glob("*.log")))
def test_each_real_log_is_worded_as_its_release_writes(fixture):
    """The core versions a real controller's log could come from (karpenter-log.yaml's variants that fit
    each line) hold the core of the release that wrote it."""
    from harness.model.upstream.releases import modeled
    profile = fixture.rsplit("[", 1)[1].split("]", 1)[0]
    core = modeled(profile)["core"]
    (w,) = kl.wording(kl.read((LOGS / fixture).read_text()))
    assert w.covers(core), (w.text, core)
    assert kl.wording_notes(kl.read((LOGS / fixture).read_text()), core, fixture, profile)[0].startswith(
        f"{fixture}: its words are ")


def test_a_log_of_another_release_is_said():
    """The ticket said provider ~v1.10.2; its log's `disrupting node(s)` has command-id and reason (core
    v1.3-v1.8) and its `failed evicting pod` is core v1.0-v1.5's: v1.3.0 to v1.5.x, provider v1.4.1-v1.5.5."""
    entries = kl.read((TICKETS / "pdb-drain-core-v1.5.log").read_text())
    (w,) = kl.wording(entries)
    assert w.text == "core v1.3.0 to v1.5.x" and kl.releases_of(w) == ["v1.4.1", "v1.5.1", "v1.5.5"]
    (note,) = kl.wording_notes(entries, "v1.10.0", "karpenter.log", "profile v1.10.2")
    assert note == ("WARNING: karpenter.log is worded as core v1.3.0 to v1.5.x writes it, not as core v1.10.0 "
                    "(profile v1.10.2) does (line 14 'disrupting node(s)': core v1.3.0 to v1.8.x; line 20 'failed "
                    "evicting pod': core v1.0.0 to v1.5.x): the controller that wrote it is of provider v1.4.1, "
                    "v1.5.1, v1.5.5, not the release named")


def test_an_upgrade_in_the_middle_of_a_log_is_said():
    old = [ln for ln in (LOGS / "nodepool-template-change-drifts-node[v1.6.2].log").read_text().splitlines()
           if ln.startswith("{")]
    new = [ln for ln in (LOGS / "nodepool-template-change-drifts-node[upstream].log").read_text().splitlines()
           if ln.startswith("{")]
    parts = kl.wording(kl.read("\n".join(old + new)))
    assert [p.text for p in parts] == ["core v1.3.0 to v1.8.x", "core v1.9.0 and later"]
    assert "its words change in the middle" in kl.wording_notes(kl.read("\n".join(old + new)), "v1.14.0", "l", "p")[0]


def _cmd(t: float, claim: str, reason: str = "Underutilized") -> str:
    return _line(t, "disrupting node(s)", command=f"{reason}/x: delete: [aks-{claim}] (savings: $0.10)",
                 decision="delete", **{"disrupted-nodes": [{"Node": {"name": f"aks-{claim}"},
                                                             "NodeClaim": {"name": claim}}]})


def test_names_both_sides_hold_pair_with_themselves():
    """Another node's command is not this node's, however the lines line up (a scenario made from the log
    keeps its NodeClaims' names); generated names, on one side only, pair as they are met."""
    launched = _line(50, "launched nodeclaim", NodeClaim={"name": "general-x7k2p"}, **{"instance-type": "D4"})
    ours = kl.read(launched + _cmd(100, "general-x7k2p"))
    assert kl.compare(ours, kl.read(launched + _cmd(100, "general-x7k2p"))) is None
    d = kl.compare(ours, kl.read(launched + _cmd(100, "general-m4q9z")))
    assert d is not None and d.matched == 1 and d.differs == ["candidates"]
    assert d.right.facts["candidates"] == ("general-m4q9z",)
    assert kl.compare(kl.read(_cmd(100, "default-abcde")), kl.read(_cmd(100, "default-zzzzz"))) is None


def test_times_are_compared_within_a_tolerance():
    """A command hours later is not the run's command; within the tolerance it is."""
    ours = kl.read(_line(0, "found provisionable pod(s)", Pods="a/b") + _cmd(60, "default-abcde"))
    theirs = kl.read(_line(1000, "found provisionable pod(s)", Pods="a/b") + _cmd(1000 + 5 * 3600, "default-zzzzz"))
    assert kl.compare(ours, theirs) is None                                  # times not weighed
    d = kl.compare(ours, theirs, timing=kl.Timing(tolerance=kl.TOLERANCE))
    assert d is not None and d.matched == 1 and d.differs == ["time: more than 2m apart"]
    near = kl.read(_line(1000, "found provisionable pod(s)", Pods="a/b") + _cmd(1000 + 90, "default-zzzzz"))
    assert kl.compare(ours, near, timing=kl.Timing(tolerance=kl.TOLERANCE)) is None
    # each side's zero: the log from a time on
    assert kl.compare(ours[1:], near[1:], timing=kl.Timing(0, 1000, kl.TOLERANCE)) is None


def test_cli_against_log_from_a_time_with_a_tolerance(tmp_path, capsys):
    """`--against-log` on a scenario made from the log: compared from its given.startTime, the log's wording
    said when it is another release's; `--log-from` and `--log-tolerance` checked."""
    from harness.cli import main as cli
    from harness.dump.new import NewOptions, new_scenario
    out = tmp_path / "t.scenario.yaml"
    log = str(TICKETS / "pdb-drain-core-v1.5.log")
    _, text, _ = new_scenario(NewOptions([], "t", output=str(out), log=log, provider_version="1.10.2"))
    out.write_text(text)
    cli(["run", str(out), "--profile", "v1.5.5", "--no-deciding", "--against-log", log])
    said = capsys.readouterr().out
    assert ("t [v1.5.5]: the run's 6 decision line(s) match" in said and
            "(6 compared from 2026-03-09T10:13:05Z (the scenario's given.startTime), times within 2m" in said)
    assert "is worded as" not in said                          # core v1.5.0 writes these words
    cli(["run", str(out), "--profile", "v1.10.2", "--no-deciding", "--against-log", log, "--log-tolerance", "30s"])
    said = capsys.readouterr().out
    assert "is worded as core v1.3.0 to v1.5.x writes it, not as core v1.10.0 (profile v1.10.2)" in said
    assert "times within 30s" in said and "run: no further message, log message 13" in said
    assert cli(["run", str(out), "--against-log", log, "--log-from", "yesterday"]) == 2
    assert "--log-from 'yesterday' is not an RFC 3339 time" in capsys.readouterr().err
    assert cli(["run", str(out), "--log-tolerance", "1m"]) == 2
    assert "--log-tolerance without --against-log" in capsys.readouterr().err


def test_against_log_says_what_it_did_not_compare(tmp_path, capsys):
    """A log whose lines after the start are all errors the run does not write (core v1.0.6's unpriced-candidate
    `Reconciler error`, tests/runner/karpenterlogs/tickets/unpriced-candidate-core-v1.0.log): no vacuous "match",
    and the lines left out are counted."""
    from harness.cli import main as cli
    from harness.dump.new import NewOptions, new_scenario
    out = tmp_path / "t.scenario.yaml"
    log = str(TICKETS / "unpriced-candidate-core-v1.0.log")
    _, text, _ = new_scenario(NewOptions([], "t", output=str(out), log=log, provider_version="0.7.5"))
    out.write_text(text)
    cli(["run", str(out), "--profile", "v0.7.5", "--no-deciding", "--against-log", log])
    said = capsys.readouterr().out
    assert "t [v0.7.5]: nothing compared: " in said and "decision line(s) match" not in said
    assert "; not compared: 118 line(s) the run does not write ('Reconciler error' x118)" in said


def test_node_repair_writes_its_line_on_the_node():
    """Node repair's delete is core's node.health line about the Node, naming the NodeClaim (core v1.14.0
    node/health/controller.go deleteNodeClaim), read back as the run's record, not as garbage collection."""
    o = run(("scenarios/releases/core/node-repair.scenario.yaml", "core-node-repair"), "v1.14.2")
    text = kl.run_log(o)
    (line,) = [json.loads(x) for x in text.splitlines() if "unhealthy" in x]
    assert (line["message"], line["controller"], line["Node"], line["NodeClaim"]) == (
        "deleting unhealthy node", "node.health", {"name": "aks-default-sick1"}, {"name": "default-sick1"})
    assert "garbage collecting" not in text
    assert [e.id for e in kl.read(text)].count("unhealthy") == 1
