"""Repeated trace lines and events fold with a count (harness/scenario/expect/fold.py)."""
from harness.scenario.expect.fold import fold_counts, fold_trace


def test_fold_trace_ignores_the_time_and_keeps_order():
    lines = [f"[t={t}s] launch of a failed: CreateInstanceFailed: x" for t in (10, 20, 30)]
    lines += ["[t=40s] deleted NodeClaim a: launch_timeout", "[t=50s] launch of b failed: y", "plain", "plain"]
    assert fold_trace(lines) == ["[t=10s..30s] launch of a failed: CreateInstanceFailed: x  (x3)",
                                 "[t=40s] deleted NodeClaim a: launch_timeout", "[t=50s] launch of b failed: y",
                                 "plain  (x2)"]
    assert fold_trace([]) == []


def test_fold_counts_anywhere():
    assert fold_counts(["a", "b", "a", "c", "a"]) == ["a  (x3)", "b", "c"]
