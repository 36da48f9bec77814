"""harness/heap.py: what exists when scenarios are about to run leaves the collector's walks."""
import gc
import weakref

from harness.heap import YOUNG_THRESHOLD, freeze_long_lived


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


def test_run_collections_walks_only_the_young_within_and_collects_what_came_due_after():
    from harness.heap import run_collections

    class Cycle:
        pass

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 1, 1)
        with run_collections():
            assert gc.get_threshold()[2] > 1_000_000        # no full collection within the run
            garbage = Cycle()
            garbage.me = garbage
            gone = weakref.ref(garbage)
            gc.collect(1)                       # alive: promoted to the oldest generation
            del garbage                         # garbage there waits for a full collection
            gc.collect(1)
            assert gone() is not None
        assert gc.get_threshold() == (700, 1, 1)
        assert gone() is None                   # generation 2's count passed 1: collected after the run
    finally:
        gc.set_threshold(*before)


def test_no_collections_pauses_the_collector_freezes_what_was_read_and_keeps_it_off_when_it_was():
    from harness.heap import LARGE_READ, no_collections

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with no_collections(1024):
        assert not gc.isenabled()
    assert gc.isenabled()
    # a small read freezes nothing: its cycles are the collector's to free (<=: frozen objects an earlier test of
    # this worker left may be freed meanwhile, which lowers the count)
    assert gc.get_freeze_count() <= frozen
    try:
        with no_collections(LARGE_READ):
            read = [{"data": i} for i in range(10)]
            before = gc.get_freeze_count()
        assert gc.get_freeze_count() >= before + len(read)      # what a large read made leaves the walks
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with no_collections():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_exit_follows_leaves_the_runs_garbage_and_freezes_the_heap():
    from harness import heap

    class Cycle:
        pass

    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    try:
        gc.set_threshold(700, 1, 1)
        with heap.exit_follows():
            with heap.run_collections():
                garbage = Cycle()
                garbage.me = garbage
                gone = weakref.ref(garbage)
                gc.collect(1)
                del garbage
                gc.collect(1)
            assert gone() is not None           # not collected after the run: the process ends
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold() == (700, 1, 1)
    finally:
        gc.unfreeze()        # the test process goes on: what was frozen goes back to the collector
        gc.set_threshold(*before)
