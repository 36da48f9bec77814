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
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


@dataclass
class RunClock:
    """`offset` seconds ahead of the wall clock; written to `file` (the cluster's clock file) when set."""
    offset: float = 0.0
    file: Path | None = None

    def now(self) -> float:
        """The run's instant, seconds since the epoch."""
        return time.time() + self.offset

    def bind(self, file: Path | None) -> None:
        """A new run on a cluster whose API server reads `file` (None: one on the wall clock): offset 0."""
        self.file = file
        self.set(0.0)

    def set(self, offset: float) -> None:
        self.offset = float(offset)
        if self.file is not None:
            tmp = self.file.with_name(self.file.name + ".tmp")
            tmp.write_text(f"{self.offset:.6f}\n")
            tmp.replace(self.file)          # a reader never sees a half-written number

    def advance(self, seconds: float) -> None:
        self.set(self.offset + float(seconds))

    def stamp(self) -> str:
        """A metav1.Time at the run's instant (RFC 3339, UTC, whole seconds)."""
        return datetime.fromtimestamp(self.now(), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


CLOCK = RunClock()
