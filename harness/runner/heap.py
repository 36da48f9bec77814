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


def freeze_long_lived() -> None:
    """Collect the garbage made so far (it would otherwise be frozen with the rest), then freeze
    every object left. Safe to call more than once: each call freezes what was made since."""
    gc.collect()
    gc.freeze()
