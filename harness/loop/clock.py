"""Simulated time: scenarios advance a clock instead of sleeping (offering TTLs, timeouts, eviction)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

EPOCH = datetime(2026, 1, 1, tzinfo=timezone.utc)


class SimClock:
    def __init__(self, start: float = 0.0):
        self._t = float(start)

    def now(self) -> float:
        return self._t

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("time does not run backwards")
        self._t += seconds

    def timestamp(self) -> str:
        return (EPOCH + timedelta(seconds=self._t)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def __call__(self) -> float:      # usable wherever a `time.time`-like callable is expected
        return self._t
