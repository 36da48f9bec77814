"""Which release decided (harness/why/deciding.py): the counterfactual runs find the switch whose value at
a customer's release changed the outcome, name it, and stay quiet where the release changed nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.model.upstream.factreads import LABEL_VALUES, NOTED, SIMULATION_KEYS
from harness.why import deciding
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.scenario.load import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "scenarios" / "releases" / "core"
BUGS = ROOT / "scenarios" / "bugs"


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _decide(cluster, file: Path, profile: str, name: str | None = None):
    sc = next(s for s in load_scenarios(file) if name is None or s.name == name)
    engine = get_engine("simulated")
    outcome = execute(engine, sc, profile, cluster)
    return outcome, deciding.decide(engine, sc, profile, cluster, outcome)


def test_drift_empty_candidates_decides_at_v161(cluster):
    outcome, d = _decide(cluster, CORE / "drift-empty-node.scenario.yaml", "v1.6.1")
    assert "driftEmptyCandidates" in outcome.final.core_consulted
    facts = {x.fact: x for x in d.deciders}
    assert "core.behaviour.driftEmptyCandidates" in facts
    decider = facts["core.behaviour.driftEmptyCandidates"]
    assert decider.effect == "outcome"
    assert "#2180" in decider.sentence and "#2459" in decider.sentence and "v1.6.2" in decider.sentence
    # nothing else decided it: every other differing switch the run read leaves the outcome as it is
    assert [x.fact for x in d.deciders if x.effect == "outcome"] == ["core.behaviour.driftEmptyCandidates"]
    assert d.runs <= 2 + 2 * len(d.suspects)


def test_the_nodepool_hash_fields_are_named_where_drift_compared_them(cluster):
    """The hash switches are read through the profile's hash functions; drift reads them where it compares, so a
    template field v0.36's hash leaves out (expireAfter) is named as what kept the node at v0.5.5."""
    outcome, d = _decide(cluster, CORE / "nodepool-hash.scenario.yaml", "v0.5.5", "core-nodepool-hash-expire-after")
    assert "nodePoolHashedFields" in outcome.final.core_consulted
    assert "core.behaviour.nodePoolHashedFields" in {x.fact for x in d.deciders if x.effect == "outcome"}


def test_no_decider_where_the_release_behaves_as_the_newest(cluster):
    _, d = _decide(cluster, CORE / "drift-empty-node.scenario.yaml", "v1.6.8")
    assert [x for x in d.deciders if x.effect == "outcome"] == []


def test_upstream_is_not_compared(cluster):
    _, d = _decide(cluster, CORE / "drift-empty-node.scenario.yaml", "upstream")
    assert d.skipped and d.runs == 0


def test_narrow_finds_each_single_and_a_pair():
    facts = [f"f{i}" for i in range(20)]
    # f3 alone changes it; f10 and f11 only together
    def differs(group):
        g = set(group)
        return "f3" in g or {"f10", "f11"} <= g
    failed = []
    found = deciding._narrow(facts, differs, failed)
    assert ["f3"] in found
    assert any({"f10", "f11"} <= set(grp) for grp in found)
    assert failed == []


def test_a_group_found_together_is_shrunk_to_what_decides():
    """Provider v0.5's drift checks and hash version decide only together (no hash check, no hash stamped): the
    group names those two, not the other facts flipped beside them."""
    facts = ["checks", "imageReason", "hashVersion", "ignored", "fipsRequiresSIG"]
    def differs(group):
        return {"checks", "hashVersion"} <= set(group)
    assert deciding._narrow(facts, differs, []) == [["checks", "hashVersion"]]


def test_narrow_sets_aside_what_cannot_run():
    facts = [f"f{i}" for i in range(12)]
    # f5 alone (and any group holding it) makes a run that cannot start; f7 changes the outcome
    def differs(group):
        return None if "f5" in group else "f7" in group
    failed = []
    assert deciding._narrow(facts, differs, failed) == [["f7"]]
    assert failed == ["f5"]


def test_first_parting():
    from harness.loop.decisions import Decision
    a = [Decision(0.0, "provisioner", "x", "Pod/default/a", "r"), Decision(10.0, "disruption", "kept", "NodeClaim/n", "r1")]
    b = [Decision(0.0, "provisioner", "x", "Pod/default/a", "r"), Decision(10.0, "disruption", "taken", "NodeClaim/n", "r2")]
    ours, theirs = deciding.first_parting(a, b)
    assert ours.action == "kept" and theirs.action == "taken"
    assert deciding.first_parting(a, a) == (None, None)
    assert deciding.first_parting(a[:1], a)[1] is a[1]


def test_with_knobs_merges_over_the_scenarios_own(cluster):
    sc = load_scenarios(CORE / "drift-empty-node.scenario.yaml")[0]
    out = deciding.with_knobs(sc, {"core.behaviour.driftEmptyCandidates": "first"})
    assert out.given["knobs"] == {"core": {"behaviour": {"driftEmptyCandidates": "first"}}}
    assert "knobs" not in sc.given


# -- what the user asked about, and the reasons -----------------------------------------------------------
SAME_OUTCOME = CORE / "drifted-empty-node-same-outcome.scenario.yaml"


def test_same_outcome_for_another_reason_is_said(cluster):
    # disruptionMethodOrder at core v1.4.0 removes the empty drifted node by Drift, the newest by Emptiness: the
    # scenario asks only that it is gone, so that is not "decided", and not "nothing" either
    outcome, d = _decide(cluster, SAME_OUTCOME, "v1.4.1")
    assert outcome.passed
    assert [x for x in d.deciders if x.effect == "outcome"] == []
    (order,) = [x for x in d.deciders if x.fact == "core.behaviour.disruptionMethodOrder"]
    assert order.effect == "reasons"
    assert "disrupted as Drifted (Drift) x1" in order.detail and "disrupted as Empty (Emptiness) x1" in order.detail
    lines = d.render(outcome.final.started)
    assert lines[0].startswith("the release reaches the same outcome for other reasons")
    assert not any("decided nothing" in line for line in lines)


def test_the_verdict_is_what_decides(cluster):
    # the same change, where the scenario's expectations name the reason: deciding
    outcome, d = _decide(cluster, CORE / "disruption-method-order.scenario.yaml", "v1.4.1")
    (order,) = [x for x in d.deciders if x.fact == "core.behaviour.disruptionMethodOrder"]
    assert order.effect == "outcome"
    assert order.newest_verdict.startswith("fail: ")
    assert "the scenario's expectations with the newest behaviour: fail: " in "\n".join(order.render())


def _result(**kw):
    from harness.loop.result import RunResult
    r = RunResult("s", "v1.4.1", "embedded", 1, started=0.0)
    for k, v in kw.items():
        setattr(r, k, v)
    return r


class _Outcome:
    def __init__(self, result, mismatches=(), error=None):
        self.final, self.mismatches, self.error = result, list(mismatches), error


def test_a_change_on_the_way_only_is_not_deciding():
    # a counterfactual that moves when a NodeClaim goes, with the same outcome line and verdict, is "behaviour"
    from harness.loop.result import NodeClaimResult
    def claim(deleted_at):
        return NodeClaimResult("c", "default", [], [], {}, launched=True, deleted="Empty",
                               at={"created": 0.0, "deleted": deleted_at})
    base = deciding.Trial.of(_Outcome(_result(nodeclaims=[claim(30.0)])))
    later = deciding.Trial.of(_Outcome(_result(nodeclaims=[claim(90.0)])))
    effect = next(e for e, a, b in zip(deciding.EFFECTS, later.views, base.views) if a != b)
    assert effect == "behaviour"
    assert later.summary == base.summary and later.verdict == base.verdict


def test_the_verdict_counts_as_the_outcome():
    from harness.scenario.expect.match import Mismatch
    ok = deciding.Trial.of(_Outcome(_result()))
    failing = deciding.Trial.of(_Outcome(_result(), [Mismatch("expect.nodeCount", 1, 2)]))
    assert failing.views[0] != ok.views[0] and failing.views[1:] == ok.views[1:]
    assert failing.verdict_text() == "fail: expect.nodeCount: expected 1, got 2"


def test_reasons_compare_by_count_not_by_generated_name():
    a = _result(disruptions=[{"nodeClaim": "default-abc", "reason": "Drifted", "method": "drift"}])
    b = _result(disruptions=[{"nodeClaim": "default-xyz", "reason": "Drifted", "method": "drift"}])
    c = _result(disruptions=[{"nodeClaim": "default-abc", "reason": "Empty", "method": "empty"}])
    ta, tb, tc = (deciding.Trial.of(_Outcome(r)) for r in (a, b, c))
    assert ta.views[1] == tb.views[1] and ta.views[1] != tc.views[1]
    assert deciding.reasons_text(ta.reasons, tc.reasons) == (
        "here disrupted as Drifted (Drift) x1 (NodeClaim/default-abc); with the newest behaviour disrupted as "
        "Empty (Emptiness) x1 (NodeClaim/default-abc)")


def test_narrow_follows_the_record_first():
    # the record points at f2 (read where the runs part): f2 alone, then the rest as one group, which changes
    # nothing: 3 runs where one by one took 6
    units = [(f"f{i}",) for i in range(6)]
    runs = []
    def differs(group):
        runs.append(tuple(group))
        return ("f2",) in group
    found = deciding._narrow(units, differs, [], hot=lambda group: [u for u in group if u == ("f2",)])
    assert found == [[("f2",)]]
    assert len(set(runs)) == 3


def test_not_judged_is_cut_at_a_word():
    text = "run raised SeedError: given.existingNodes[0]: Standard_D16s_v5 has no available offering in zone 2 " * 3
    cut = deciding.clip(text)
    assert len(cut) <= deciding.NOT_JUDGED_CHARS and cut.endswith("...")
    kept = cut[:-3]
    assert text.startswith(kept) and not text[len(kept)].isalnum()      # never inside a word
    assert deciding.clip("short enough") == "short enough"


def test_a_long_run_says_what_deciding_costs(cluster):
    sc = load_scenarios(CORE / "drift-empty-node.scenario.yaml")[0]
    engine = get_engine("simulated")
    outcome = execute(engine, sc, "v1.6.1", cluster)
    outcome.seconds = 120.0
    said = deciding.estimate(engine, sc, "v1.6.1", outcome)
    assert "once if none did" in said and "(120s)" in said and " min" in said
    assert deciding.estimate(engine, sc, "upstream", execute(engine, sc, "upstream", cluster)) is None
    # the units of facts no instance-type build read are left out, as decide clears them without a run
    units = deciding.units_of("v1.6.1", deciding.suspects_of(outcome))
    unread = deciding.unread_facts(sc, outcome)
    counted = [u for u in units if not set(u) <= unread]
    assert len(counted) < len(units)
    assert said.startswith(f"{len(counted)} switch(es) and fact(s)")


@pytest.mark.parametrize("switch,file,profile", [
    ("hostPortsPerNodeClaim", "host-ports-per-nodeclaim.scenario.yaml", "v1.12.2"),
    ("daemonSetInstanceTypeRequirements", "daemonset-instance-type-requirements.scenario.yaml", "v1.13.1"),
    ("emptinessByEvictionCost", "emptiness-by-eviction-cost.scenario.yaml", "v1.13.1"),
])
def test_a_switch_is_read_only_where_it_decides(cluster, switch, file, profile):
    # read at every provisioning pass or candidate, these made a suspect (and a whole counterfactual run) of
    # every run at an older release; now a run reads them only where their value changes the answer
    engine = get_engine("simulated")
    plain = execute(engine, load_scenarios(CORE / "drift-empty-node.scenario.yaml")[0], profile, cluster)
    assert switch not in plain.final.core_consulted
    where = execute(engine, load_scenarios(CORE / file)[0], profile, cluster)
    assert where.passed and switch in where.final.core_consulted


def test_the_rest_is_not_run_when_the_pointed_units_do_it_all():
    # f2 alone runs exactly as all six: the other five add nothing, and no run is made of them
    units = [(f"f{i}",) for i in range(6)]
    runs = []
    def differs(group):
        runs.append(tuple(group))
        return ("f2",) in group
    found = deciding._narrow(units, differs, [], hot=lambda group: [u for u in group if u == ("f2",)],
                             same=lambda a, b: ("f2",) in a and ("f2",) in b)
    assert found == [[("f2",)]]
    assert set(runs) == {tuple(units), (("f2",),)}


def test_a_group_that_cannot_run_is_halved_not_run_one_by_one():
    # f0 and f1 break any run they are in (a provider fact set alone: SeedError); the other four change nothing:
    # halving isolates the two and clears the four in one run, where one by one ran each of them
    units = [(f"f{i}",) for i in range(6)]
    full = []
    def differs(group):
        if {("f0",), ("f1",)} & set(group):
            return None
        full.append(tuple(group))
        return False
    failed = []
    assert deciding._narrow(units, differs, failed) == []
    assert sorted(failed) == [("f0",), ("f1",)]
    assert set(full) == {(("f2",),), (("f3",), ("f4",), ("f5",))}       # two whole runs, not four


def _dotted(knobs: dict, prefix: str = "") -> set[str]:
    out: set[str] = set()
    for k, v in knobs.items():
        if isinstance(v, dict) and v and f"{prefix}{k}" not in NOTED:
            out |= _dotted(v, f"{prefix}{k}.")
        else:
            out.add(f"{prefix}{k}")
    return out


@pytest.mark.parametrize("fact,file,name", [
    # a DaemonSet requiring karpenter.sh/registered In [true]: counted on a new node only where the template
    # carries the simulation keys (kubernetes-sigs/karpenter#2161)
    (SIMULATION_KEYS, "r20-daemonset-registered-overhead.scenario.yaml", "r20-core-v1-14-overhead-counted"),
    # an Azure Disk PV on the CSI driver's unzoned "": the regional offering's "0" only where "" reads as "0"
    (LABEL_VALUES, "r07-unzoned-disk-pv.scenario.yaml", "r07-unzoned-disk-pv-regional-node-since-v1-14"),
])
def test_a_core_probe_a_requirement_names_is_noted_and_decides(cluster, fact, file, name):
    outcome, d = _decide(cluster, BUGS / file, "v1.12.0", name)
    assert fact in outcome.final.facts_consulted
    assert fact in {x.fact for x in d.deciders if x.effect == "outcome"}


def test_facts_no_run_noted_are_cleared_without_a_run(cluster, monkeypatch):
    # at v1.12.0 the four facts an instance-type build notes all differ from the newest release's, and so do core's
    # two probes; the scenario's SKUs are LowPriorityCapable, priced and known, with quota to spare, and nothing in
    # it names a simulation key or the CSI driver's unzoned "": no run notes any of them
    import harness.judge.explore  # noqa: F401 - imported before the patch below, or it binds the counting one
    from harness.runner.engines import base
    sc = load_scenarios(CORE / "drift-empty-node.scenario.yaml")[0]
    engine = get_engine("simulated")
    outcome = execute(engine, sc, "v1.12.0", cluster)
    assert outcome.final.facts_consulted == []
    unread = deciding.unread_facts(sc, outcome)
    assert unread == set(NOTED)
    ran: list[set[str]] = []
    real = base.execute_guarded

    def counted(engine_, scenario, profile, cluster_):
        ran.append(_dotted(scenario.given.get("knobs") or {}))
        return real(engine_, scenario, profile, cluster_)
    monkeypatch.setattr(base, "execute_guarded", counted)
    d = deciding.decide(engine, sc, "v1.12.0", cluster, outcome)
    assert d.runs == len(ran)
    assert not [facts for facts in ran if facts & unread]        # left out of every run, alone or with others
    assert not {x.fact for x in d.deciders} & unread and not any(f in u for u in d.unjudged for f in unread)
