"""The garbage collector during one scheduling solve: young generations only. And after a large
seeding: what it made frozen until the next run.

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


# A seeding of this many entries or more freezes what it made (freeze_seeded): a customer dump's size (m5000:
# the run's collections 17.5 -> 8.8 CPU-s); the library's scenarios seed a few nodes, for which the thaw's
# full collection would cost more than the walks it saves.
FREEZE_SEEDS_FROM = 500
_frozen_by_seed = False


def freeze_seeded() -> None:
    """After a large seeding (FREEZE_SEEDS_FROM entries): its young garbage collected, everything alive is moved
    into the permanent generation (gc.freeze), so neither the young collections nor the full ones of the
    rest of the run walk the seeded Nodes, NodeClaims and pods again (they live as long as the run). Nothing a
    run computes depends on the collector, so results are identical. thaw_seeded undoes it."""
    global _frozen_by_seed
    gc.collect(1)
    gc.freeze()
    _frozen_by_seed = True


def thaw_seeded() -> None:
    """Where a process starts a run (runner/engines/simulated.py SimulatedRun): after a run whose seeding froze
    (freeze_seeded), everything is unfrozen, collected (that run's garbage, which the freeze kept from the
    collector) and what lives on frozen again, as the process's start left it (runner/heap.py
    freeze_long_lived). Nothing to do otherwise."""
    global _frozen_by_seed
    if _frozen_by_seed:
        _frozen_by_seed = False
        gc.unfreeze()
        gc.collect()
        gc.freeze()
