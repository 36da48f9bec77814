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
from collections.abc import Iterator
from contextlib import contextmanager

from harness.loop.scheduling.collector import young_collections_only


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


# an input this large (bytes) is read once per process, and the objects it makes are frozen after the read
LARGE_READ = 16 * 1024 * 1024


@contextmanager
def no_collections(size: int = 0) -> Iterator[None]:
    """No automatic collection while an input file of `size` bytes is read: its data is plain dicts and
    lists that hold no cycle, so a collection within the read walks millions of live objects and frees
    nothing (a 58 MB scenario: ~2 CPU-s of walks). From LARGE_READ, what exists after the read is frozen,
    as freeze_long_lived does, or the first young collection after it walks all of it again (~1 CPU-s);
    a smaller read is left to the collector, which frees the cycles the rest of a load may leave (a frozen
    cycle never is: validating the library again and again would grow the heap). Collection resumes on
    exit if it was on."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if size >= LARGE_READ:
            gc.freeze()
        if was:
            gc.enable()


@contextmanager
def run_collections() -> Iterator[None]:
    """One scenario's run: young collections only while it runs, then the full collection that came due
    meanwhile, if one did (automatic collection on and generation 2's count past its threshold). A run
    builds a cluster that lives until it ends, so a full collection within it walks all of it and frees
    little: at 5,000 nodes and 50,000 pods (~2 GB) each walk was ~2 CPU-s, 8-10 of them a run. Within
    `exit_follows` none comes due (generation 2's threshold is out of reach there): it is left to the
    process's end."""
    with young_collections_only():
        yield
    threshold, count = gc.get_threshold(), gc.get_count()
    if threshold[0] and count[2] > threshold[2]:
        gc.collect()


@contextmanager
def exit_follows() -> Iterator[None]:
    """The process ends after the block (`harness run`'s last scenario): young collections only, no full
    one after a run, and the heap frozen at the end, so no full collection walks what the process frees by
    ending (at 5,000 nodes ~4 CPU-s after the run, again at the interpreter's exit)."""
    try:
        with young_collections_only():
            yield
    finally:
        gc.freeze()
