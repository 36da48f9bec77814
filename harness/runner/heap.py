"""The garbage collector's view of a process that runs many scenarios.

A scenario run leaves reference cycles (the simulation, its controllers and state point at each
other), so CPython's cyclic collector runs full collections while the library runs, and a full
collection walks every tracked object of the process: the imported modules (the Azure SDK's model
and operation classes are most of them), the parsed scenario library and the caches. Measured on
the library (bench/bench_scenarios.py, 969 runs): ~17% of the runs' CPU went to those walks.

`freeze_long_lived()` moves what exists once the scenarios are loaded into the collector's permanent
generation (`gc.freeze`, https://docs.python.org/3/library/gc.html#gc.freeze): those objects live
for the whole process anyway, and a full collection then walks only what the runs made. Nothing a
run computes depends on it (the fingerprint of every run is unchanged); it is called where a
process is about to run scenarios (the pytest plugin after collecting them, `harness run`, the
benchmarks), never on import.
"""
from __future__ import annotations

import gc


# Generation 0's threshold while scenarios run (CPython's default is 700): a typical run allocates a
# few thousand tracked objects, most of them in cycles that live as long as the run (the simulation,
# its controllers and state), and at 700 they are walked in several young collections and promoted
# before they die. Measured (valgrind instruction counts, 30 runs from the library's 30th-70th
# percentile): 0.9 % fewer instructions a run at 10,000; the collector's share of a library round
# (gc.callbacks) 1.8 -> 1.35 CPU-s at 20,000. Generations 1 and 2 keep their thresholds.
YOUNG_THRESHOLD = 10_000


def freeze_long_lived() -> None:
    """Collect the garbage made so far (it would otherwise be frozen with the rest), then freeze
    every object left, and raise generation 0's threshold to YOUNG_THRESHOLD (never lower it). Safe
    to call more than once: each call freezes what was made since."""
    gc.collect()
    gc.freeze()
    threshold = gc.get_threshold()
    if threshold[0] and threshold[0] < YOUNG_THRESHOLD:      # 0: automatic collection is off
        gc.set_threshold(YOUNG_THRESHOLD, *threshold[1:])
