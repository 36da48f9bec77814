"""harness/runner/heap.py: what exists when scenarios are about to run leaves the collector's walks."""
import gc
import weakref

from harness.runner.heap import YOUNG_THRESHOLD, freeze_long_lived


def test_freeze_long_lived_freezes_what_exists_and_collects_garbage_first():
    class Cycle:
        pass

    kept = [object() for _ in range(10)]
    garbage = Cycle()
    garbage.me = garbage                 # a cycle nothing refers to: collected, not frozen with the rest
    gone = weakref.ref(garbage)
    del garbage
    before = gc.get_freeze_count()
    freeze_long_lived()
    assert gc.get_freeze_count() >= before + len(kept)
    assert gone() is None


def test_freeze_long_lived_raises_the_young_threshold_and_keeps_the_others():
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        freeze_long_lived()
        assert gc.get_threshold() == (YOUNG_THRESHOLD, 10, 10)
        gc.set_threshold(YOUNG_THRESHOLD * 2, 10, 10)
        freeze_long_lived()
        assert gc.get_threshold() == (YOUNG_THRESHOLD * 2, 10, 10)     # never lowered
    finally:
        gc.set_threshold(*before)
