"""The conformance judge simulates a run at the release the real engine's run answered at."""
from pathlib import Path

from harness.runner.conformance import answering_profile
from harness.runner.scenario import load_scenarios

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
