"""The conformance judge simulates a run at the release the real engine's run answered at, and says how
complete the outcome set it judged against was."""
from pathlib import Path

from harness.judge.conformance import answering_profile, status_text, unseen_share
from harness.scenario.load import load_scenarios

ROOT = Path(__file__).resolve().parents[2]


def _scenario(name: str, path: str):
    return next(sc for sc in load_scenarios(ROOT / path) if sc.name == name)


def test_a_knob_replay_is_simulated_at_the_release_holding_its_knobs():
    # the knobs are provider v1.10.0-v1.10.2's own zone facts: the real engine runs v1.10.2's controller
    sc = _scenario("r01-before-v1-12-tsc-unsatisfiable", "scenarios/bugs/r01-empty-zone-tsc.scenario.yaml")
    assert answering_profile(sc, "upstream") == "v1.10.2"


def test_a_scenario_without_knobs_keeps_its_profile():
    sc = _scenario("r01-upstream-no-empty-zone", "scenarios/bugs/r01-empty-zone-tsc.scenario.yaml")
    assert answering_profile(sc, "upstream") == "upstream"


def test_the_unseen_share_is_the_runs_whose_outcome_no_other_run_reached():
    # fuzz-aa6b692c6f under 96 seeds: 87 outcomes, 78 of them in one run only: 0.81
    assert unseen_share(["a", "a", "b", "c"]) == 0.5
    assert unseen_share(["a", "a", "b", "b"]) == 0.0
    assert unseen_share(["a", "b", "c"]) == 1.0


def test_a_miss_says_how_complete_the_outcome_set_was():
    entry = {"status": "unexplained", "simRuns": 96, "simOutcomes": 87, "simUnseen": 0.81}
    assert status_text(entry) == ("unexplained (none of 87 outcomes in 96 runs; 81% of the runs reached an "
                                  "outcome no other run reached)")
    assert status_text({"status": "unexplained", "simRuns": 1, "simOutcomes": 1}) == "unexplained"


def test_stale_sees_a_skip_for_the_scenarios_input_come_or_go():
    # dump-notready-budget was skipped for a node seeded not Ready; once the engine played it, `stale` said nothing
    from harness.judge.conformance import _input_skip_changed
    from harness.runner.engines.real.engine import UNPLAYABLE_INPUTS
    was = "given.existingNodes[3].ready: a Karpenter node seeded not Ready is not played"
    assert _input_skip_changed(was, None, UNPLAYABLE_INPUTS).startswith("the real engine now plays it (the report")
    assert _input_skip_changed(was, was, UNPLAYABLE_INPUTS) is None
    assert _input_skip_changed(None, "given.loop.binding: nominated ...", UNPLAYABLE_INPUTS) == \
        "the real engine now skips it: given.loop.binding: nominated ..."
    # a skip that depends on the build or the cluster is not judged again without them
    assert _input_skip_changed("a disruption budget with a schedule ...", None, UNPLAYABLE_INPUTS) is None
