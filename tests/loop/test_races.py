"""harness/loop/races.py: the loop's timing races and what an exploration's runs add."""
from __future__ import annotations

import json
from pathlib import Path

from harness.loop import assumed, races

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "harness/data/scenario.schema.json").read_text())


def test_every_race_is_a_given_loop_option_whose_racing_value_the_schema_takes():
    loop = SCHEMA["properties"]["given"]["properties"]["loop"]["properties"]
    for r in races.RACES:
        assert r.key in loop, r.key
        if "enum" in loop[r.key]:
            assert {r.calm, r.racing} | ({r.alone} if r.alone is not None else set()) <= set(loop[r.key]["enum"]), r.key


def test_run_zero_is_the_scenario_run_one_all_races_then_each_alone():
    keys = [r.key for r in races.RACES]
    assert races.draw({}, 5, 0) == {}
    assert races.draw({}, 5, 1) == {r.key: r.racing for r in races.RACES}
    assert [list(races.draw({}, 5, k)) for k in range(2, 2 + len(keys))] == [[k] for k in keys]


def test_later_runs_draw_a_seeded_subset_and_never_a_key_the_scenario_sets():
    later = [races.draw({}, seed, 10) for seed in range(40)]
    assert later == [races.draw({}, seed, 10) for seed in range(40)]         # replayed by the seed
    assert len({tuple(sorted(d)) for d in later}) > 4
    pinned = {"nodesReady": "together", "nodeBoot": "15s"}
    for k in range(30):
        assert not set(races.draw(pinned, k, k)) & set(pinned)
    assert [r.key for r in races.open_races(pinned)] == ["podsArrive", "controllerPods", "launches", "rolloutPods",
                                                           "nextCommand", "replacementFailure"]


def test_a_race_named_alone_is_explored_on_its_own_unless_the_scenario_sets_it():
    # nodesReady with every other race calm (scenarios/fuzz/fuzz-aa6b692c6f.scenario.yaml)
    assert races.alone({}) == [{"nodesReady": "staggered"}]
    assert races.alone({"nodesReady": "spread"}) == []


def test_an_exploration_draws_the_timings_a_scenario_leaves_out_from_their_stream():
    loop = SCHEMA["properties"]["given"]["properties"]["loop"]["properties"]
    assert {t.key for t in assumed.TIMINGS} <= set(loop)
    assert all("0s" in t.explored for t in assumed.TIMINGS)                   # the default among them
    assert races.draw_timings({}, 5, 0) == {}                             # run 0: the scenario as written
    draws = [races.draw_timings({}, seed, 3) for seed in range(40)]
    assert draws == [races.draw_timings({}, seed, 7) for seed in range(40)]    # replayed by the seed
    for t in assumed.TIMINGS:
        seen = {d[t.key] for d in draws}
        assert seen <= set(t.explored) and len(seen) > 2
    assert races.draw_timings({"vmDelete": "1m"}, 3, 2).keys() == {"nodeBoot"}
