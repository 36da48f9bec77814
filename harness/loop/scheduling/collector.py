"""The garbage collector during one scheduling solve: young generations only.

A solve keeps what it plans (NodeClaims, their requirements, the topology's counts) until it ends,
so the heap grows by ~5 objects per pod. CPython's full collections walk the whole tracked heap and
run several times while it grows: at 100,000 pods about 7 of them took ~30% of the solve's CPU
(bench/bench_scheduling.py, docs/benchmarks/scheduling.md). The cycles a solve throws away die
young, so the young generations still collect them on their own schedule; only the full passes
wait until the solve ends. Peak RSS was unchanged at 10k and 100k pods. Nothing a solve computes
depends on the collector, so results are identical.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_NEVER = 1 << 30    # generation 2's threshold: no full collection is triggered while it holds


@contextmanager
def young_collections_only() -> Iterator[None]:
    """Within the block, automatic collections stop at generation 1; the thresholds in force
    before it (the process's own, or an enclosing block's) come back on exit, raised or not."""
    before = gc.get_threshold()
    gc.set_threshold(before[0], before[1], _NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*before)
