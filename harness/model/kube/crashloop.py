"""When the kubelet starts a crashed container again (CrashLoopBackOff), as the Karpenter controller's pod lives it
when its process exits: one rule both engines read (a `crash` step on either, and an exit of the real controller,
harness/runner/engines/real/engine.py RealRun).

k8s.io/kubernetes v1.36.3: pkg/kubelet/kubelet.go builds the back-off (newCrashLoopBackOff: initialCrashLoopBackOff
10 s, at most MaxCrashLoopBackOff = the KubeletConfiguration's crashLoopBackOff.maxContainerRestartPeriod, whose
default is pkg/kubelet/apis/config/v1beta1 MaxContainerBackOff, 300 s; ReduceDefaultCrashLoopBackOffDecay, alpha
and off, would make them 1 s and 60 s) and forgets a container's back-off once an exit comes more than 600 s after
its last restart (HasExpiredFunc); pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff holds a restart while
the exit is younger than the back-off (client-go util/flowcontrol/backoff.go IsInBackOffSince), then doubles it
(Backoff.Next, no jitter). So the first exit, and any exit 10 minutes after the last restart, restarts at once; the
next ones wait 10 s, 20 s, 40 s ... up to 5 minutes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

INITIAL_SECONDS = 10.0      # pkg/kubelet/kubelet.go initialCrashLoopBackOff
MAX_SECONDS = 300.0         # pkg/kubelet/apis/config/v1beta1/defaults.go MaxContainerBackOff
RESET_SECONDS = 600.0       # pkg/kubelet/kubelet.go crashLoopBackOff.HasExpiredFunc


@dataclass(frozen=True)
class Exit:
    """One exit of the container and its restart: when (the run's clock, epoch seconds), why (a `crash` step, or
    the process's own exit code), whether a scenario step asked for it, and the kubelet's restart time."""
    at: float
    why: str
    planned: bool
    restart_at: float
    log: str = ""           # the process's last log lines (the real engine's)


@dataclass
class CrashLoop:
    """The kubelet's back-off entry for the controller's container (flowcontrol.Backoff's per-item entry) and the
    exits since it was made: `chain` is the exits the entry has seen since it was last (re)made."""
    backoff: float | None = None        # the entry's back-off; None: no entry yet
    updated: float | None = None        # the entry's lastUpdate: the last restart
    exits: list[Exit] = field(default_factory=list)
    chain: list[Exit] = field(default_factory=list)

    def exited(self, at: float, why: str, planned: bool, log: str = "") -> Exit:
        """The container exited at `at`: when the kubelet starts it again (doBackOff, then Backoff.Next)."""
        if self.backoff is not None and at - self.updated <= RESET_SECONDS:
            restart = at + self.backoff
            self.backoff = min(self.backoff * 2, MAX_SECONDS)
        else:
            restart = at
            self.backoff = INITIAL_SECONDS
            self.chain = []
        self.updated = restart
        e = Exit(at, why, planned, restart, log)
        self.exits.append(e)
        self.chain.append(e)
        return e

    def looping(self, exits: int) -> list[Exit] | None:
        """The last `exits` exits when none was a step's and each came before the back-off entry expired (the
        kubelet's CrashLoopBackOff: the container keeps exiting by itself), else None."""
        last = self.chain[-exits:]
        return last if len(last) == exits and not any(e.planned for e in last) else None
