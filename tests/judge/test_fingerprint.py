"""harness/judge/fingerprint.py, and what it is for: scenarios run one after another in one process
(bench/bench_scenarios.py, `harness run`, one pytest worker) behave as each does alone. The outcome-set
scenarios among them once looked order-dependent in bench/bench_scenarios.py; the cause was that the
bench ran them under one seed where pytest explores them under several (harness/judge/explore.py)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import get_engine
from harness.judge.explore import run_scenario
from harness.judge.fingerprint import fingerprint
from harness.scenario.load import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
FILES = ["scenarios/fuzz/fuzz-62d93f468d.scenario.yaml", "scenarios/loop/outcome-sets.scenario.yaml"]


def test_run_order_in_one_process_changes_no_fingerprint():
    jobs = [(sc, p) for f in FILES for sc in load_scenarios(ROOT / f) for p in sc.profiles[:1]]
    assert {"fuzz-62d93f468d", "flaky-capacity-outcome-set", "staggered-nodes-planned-pod-loses-its-room",
            "concurrent-launches-race-for-one-allocation-failure"} <= {sc.name for sc, _ in jobs}
    engine, cluster = get_engine("simulated"), EmbeddedBackend().start()
    try:
        prints = []
        for order in (jobs, jobs[::-1]):
            prints.append({f"{sc.name}[{p}]": fingerprint(run_scenario(engine, sc, p, cluster, explore_seeds=2))
                           for sc, p in order})
    finally:
        cluster.close()
    assert prints[0] == prints[1]


def test_fingerprint_leaves_out_timings_and_covers_every_explored_run():
    (sc,) = load_scenarios(ROOT / FILES[0])
    cluster = EmbeddedBackend().start()
    try:
        one = run_scenario(get_engine("simulated"), sc, sc.profiles[0], cluster, explore_seeds=1)
        two = run_scenario(get_engine("simulated"), sc, sc.profiles[0], cluster, explore_seeds=2)
    finally:
        cluster.close()
    assert fingerprint(one) == fingerprint(dataclasses.replace(one, seconds=99.0))
    first = fingerprint(dataclasses.replace(two, exploration=None))
    assert fingerprint(two).startswith(first + "-") and len(fingerprint(two)) > len(first)


def test_the_decision_record_moves_no_digest():
    """A reason worded differently is no behaviour change (harness/judge/fingerprint.py result_digest)."""
    from harness.loop.decisions import Decision
    from harness.loop.result import RunResult
    from harness.judge.fingerprint import result_digest
    plain, said = RunResult("s", "upstream", "embedded", 1), RunResult("s", "upstream", "embedded", 1)
    said.decisions.append(Decision(0.0, "disruption", "candidate-kept", "NodeClaim/x", "why"))
    assert result_digest(plain) == result_digest(said)
    said.trace.append("something else happened")
    assert result_digest(plain) != result_digest(said)


def test_a_field_added_empty_moves_no_digest():
    """A result type that gains a field (NodeResult.not_sent_to_aks, empty off the Machine API path) keeps every
    digest of the runs that leave it empty; a value in it moves the digest."""
    from harness.judge.fingerprint import result_digest

    @dataclasses.dataclass
    class Before:
        name: str = "n"
        labels: dict = dataclasses.field(default_factory=lambda: {"a": "1"})

    @dataclasses.dataclass
    class After(Before):
        not_sent: dict = dataclasses.field(default_factory=dict)
        note: str | None = None

    assert result_digest(After()) == result_digest(Before())
    assert result_digest(After(not_sent={"k": "why"})) != result_digest(Before())
