"""young_collections_only: full collections wait, the thresholds come back whatever happens."""
import gc

import pytest

from harness.loop.scheduling.collector import young_collections_only


def test_generation_two_waits_inside_and_is_restored_after():
    before = gc.get_threshold()
    with young_collections_only():
        inside = gc.get_threshold()
        assert inside[:2] == before[:2] and inside[2] > 10**6
    assert gc.get_threshold() == before


def test_restored_when_the_block_raises_and_when_nested():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError):
        with young_collections_only():
            with young_collections_only():
                pass
            assert gc.get_threshold()[2] > 10**6          # the outer block still holds
            raise RuntimeError
    assert gc.get_threshold() == before
