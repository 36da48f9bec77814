"""NodeClaim liveness (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/liveness.go
Reconcile): a launched NodeClaim whose Node has not registered within registrationTimeout is deleted.
The launch timeout is checked by launch.py before each Create. `next_deadline` tells the
orchestrator how far to jump the clock when nothing else would change."""
from __future__ import annotations

from harness.loop.controllers.launch import LAUNCH_TIMEOUT
from harness.loop.controllers.state import LoopState
from harness.loop.controllers.termination import Termination

# liveness.go registrationTimeout = 15m. Upstream counts from the Registered condition's last
# transition; the harness counts from the launch.
REGISTRATION_TIMEOUT = 900.0
REGISTRATION_TIMEOUT_REASON = "registration_timeout"      # liveness.go registrationTimeoutReason


class Liveness:
    def __init__(self, state: LoopState, termination: Termination):
        self.state = state
        self.termination = termination

    def reconcile(self) -> bool:
        s = self.state
        progress = False
        for c in s.claims:
            if c.done or c.launched is None or c.registered:
                continue
            if s.clock.now() - (c.launched_at or 0) >= REGISTRATION_TIMEOUT:
                self.termination.delete_claim(c, REGISTRATION_TIMEOUT_REASON)
                progress = True
        return progress

    def next_deadline(self) -> float | None:
        """The earliest launch or registration timeout of a live NodeClaim, or None."""
        s = self.state
        deadlines = [(c.launched_at or 0) + REGISTRATION_TIMEOUT for c in s.claims
                     if not c.done and c.launched is not None and not c.registered]
        deadlines += [c.created_at + LAUNCH_TIMEOUT for c in s.claims if not c.done and c.launched is None]
        return min(deadlines) if deadlines else None
