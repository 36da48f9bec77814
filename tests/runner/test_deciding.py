"""Which release decided (harness/runner/deciding.py): the counterfactual runs find the switch whose value at
a customer's release changed the outcome, name it, and stay quiet where the release changed nothing."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner import deciding
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.runner.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "scenarios" / "releases" / "core"


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
