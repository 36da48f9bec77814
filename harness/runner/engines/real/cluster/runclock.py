"""The run's clock on the real engine: the wall clock plus an offset that `advance` steps move. A fast build's
controller reads the offset from the cluster's clock file (harness/data/controller-timing.yaml, kind
`clock`), and so does the timing's API server, so every time core compares with its clock - its own, a
condition's transition, an object's creationTimestamp or deletionTimestamp - is on this clock; the
stand-in kubelets stamp their pods' startTime and their nodes' conditions with it (kubelet.py), and the
checks read windows at its instant (windows.py).

One clock per process: a worker plays one run at a time, as it keeps one controller (keeper.KEEPER).
Why it is built this way: docs/architecture/real-engine.md "The controller's clock"."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.model.kube.kubetime import rfc3339


@dataclass
class RunClock:
    """`offset` seconds ahead of the wall clock; written to `file` (the cluster's clock file) when set."""
    offset: float = 0.0
    file: Path | None = None
    moves: list = field(default_factory=list)   # (wall time, offset from then on), this run's

    def at(self, wall: float) -> float:
        """The run's instant when the wall clock read `wall` (a log line's time: the controller's logger stamps
        the wall clock), by the offset in effect then."""
        offset = 0.0
        for since, value in self.moves:
            if since > wall:
                break
            offset = value
        return wall + offset

    def now(self) -> float:
        """The run's instant, seconds since the epoch."""
        return time.time() + self.offset

    def bind(self, file: Path | None) -> None:
        """A new run on a cluster whose API server reads `file` (None: one on the wall clock): offset 0."""
        self.file = file
        self.moves = []
        self.set(0.0)

    def set(self, offset: float) -> None:
        self.offset = float(offset)
        self.moves.append((time.time(), self.offset))
        if self.file is not None:
            tmp = self.file.with_name(self.file.name + ".tmp")
            tmp.write_text(f"{self.offset:.6f}\n")
            tmp.replace(self.file)          # a reader never sees a half-written number

    def advance(self, seconds: float) -> None:
        self.set(self.offset + float(seconds))

    def stamp(self) -> str:
        """A metav1.Time at the run's instant (RFC 3339, UTC, whole seconds)."""
        return rfc3339(self.now())


CLOCK = RunClock()


class FakeAzureClock:
    """The fake's clock on the real engine: it starts where the simulation's fake starts (`start`, 2026-01-01)
    and runs at the run's pace (the wall clock plus the jumps `advance` steps make), so what Azure does in time
    - an accepted operation finishing whether or not its client polls (fakeazure/lro.py), a Spot VM's eviction
    rule coming due - happens while the controller runs. Its start keeps every VM's timeCreated months before
    the wall clock, which the provider's instance garbage collection reads (provider v1.14.0
    instance_garbagecollection.go: `time.Since`, not on the moved clock), as in the simulation. Moved only
    through CLOCK: `advance` is a no-op, and a simulated latency really waits (fakeazure/arm.py RealClock)."""

    slept = 0.0

    def __init__(self, start: float):
        self.start, self.since = float(start), CLOCK.now()

    def time(self) -> float:
        return self.start + CLOCK.now() - self.since

    def rebase(self, at: float) -> None:
        """Read `at` now and run on from there: the run's clock was placed at the scenario's start (a move of
        months, not time passing), which this clock does not follow (without it the fake read 2025-02)."""
        self.start, self.since = float(at), CLOCK.now()

    def advance(self, seconds: float) -> float:
        return self.time()

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        time.sleep(seconds)
