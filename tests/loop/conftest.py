"""The embedded API server the controller tests drive (tests/loop/loopkit.py builds the loop on it)."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedBackend


@pytest.fixture(scope="module")
def embedded():
    c = EmbeddedBackend().start()
    yield c
    c.close()
