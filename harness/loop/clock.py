"""Simulated time: scenarios advance a clock instead of sleeping (offering TTLs, timeouts, eviction).

The same clock drives fakeazure (it has the `time()/advance()/sleep()` shape fakeazure's clock
has), so an LRO's progress, a spot eviction and an unavailable-offering TTL share one timeline.
"""
from __future__ import annotations

from harness.model.kube.kubetime import parse_rfc3339, rfc3339

EPOCH = parse_rfc3339("2026-01-01T00:00:00Z")


def start_of(given: dict) -> float:
    """Where a scenario's clock starts: given.startTime (a dump's time), else EPOCH."""
    return parse_rfc3339(given["startTime"]) if given.get("startTime") else EPOCH


class SimClock:
    def __init__(self, start: float = EPOCH):
        self._t = float(start)
        self.start = float(start)
        self.slept = 0.0
        self._stamp: tuple[float, str] | None = None        # (an instant, its timestamp)

    def now(self) -> float:
        return self._t

    time = now

    def elapsed(self) -> float:
        return self._t - self.start

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("time does not run backwards")
        self._t += float(seconds)
        return self._t

    def sleep(self, seconds: float) -> None:
        """fakeazure's simulated latency: move time, never block."""
        self.slept += float(seconds)
        self.advance(seconds)

    def timestamp(self) -> str:
        """Now as an RFC 3339 timestamp, formatted once per instant: a pass stamps many conditions and
        events at one instant, and strftime was ~0.5 % of a small run."""
        if self._stamp is None or self._stamp[0] != self._t:
            self._stamp = (self._t, rfc3339(self._t))
        return self._stamp[1]
