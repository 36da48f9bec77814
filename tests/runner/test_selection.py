"""The selection messages `harness run`, the pytest plugin and `harness parity` share."""
from __future__ import annotations

from harness.runner.selection import no_scenario, unknown_profile


def test_unknown_profile_names_the_flag_and_the_known_profiles():
    assert unknown_profile("upstrem", ["before-0006", "upstream"]) == \
        "--profile upstrem: unknown profile; known profiles: before-0006, upstream"
    assert unknown_profile("x", ["upstream"], "--diff") == "--diff x: unknown profile; known profiles: upstream"


def test_no_scenario_names_paths_or_the_collection():
    assert no_scenario(["a", "b"], 3, {"upstream", "before-0006"}, "scenarios/x") == (
        "--profile a --profile b selects no scenario: none of the 3 scenario(s) in scenarios/x declares it "
        "in given.profiles (they declare: before-0006, upstream)")
    assert no_scenario(["a"], 2, ["upstream"]) == (
        "--profile a selects no scenario: none of the 2 collected scenario(s) declares it in given.profiles "
        "(they declare: upstream)")
