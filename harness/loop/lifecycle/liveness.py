"""NodeClaim liveness (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/liveness.go
Reconcile): a NodeClaim not launched within launchTimeout, or launched but not registered within
registrationTimeout, is deleted. Before core v1.7.0 (#2349; sigs.k8s.io/karpenter v1.6.2 same file) only
the registration TTL applied, to launched and unlaunched NodeClaims alike, and every such deletion was
counted under the reason `liveness` (core-behaviour.yaml launchTimeout). Launch (launch.py) asks
`unlaunched_timeout` before each Create; `next_deadline` tells the orchestrator how far to jump the
clock when nothing else would change."""
from __future__ import annotations

from harness.loop.state import Claim, LoopState
from harness.loop.lifecycle.termination import Termination
from harness.loop.history import offset_text

# liveness.go launchTimeout = 5m, registrationTimeout = 15m (registrationTTL before v1.7.0). Upstream counts
# both from their condition's last transition, which for Launched is its first (Unknown) at creation;
# the harness counts the registration timeout of a launched NodeClaim from the launch.
LAUNCH_TIMEOUT = 300.0
REGISTRATION_TIMEOUT = 900.0
# the reason label of karpenter_nodeclaims_disrupted_total (liveness.go launchTimeoutReason,
# registrationTimeoutReason; before v1.7.0 the one label "liveness")
LAUNCH_TIMEOUT_REASON = "launch_timeout"
REGISTRATION_TIMEOUT_REASON = "registration_timeout"
LIVENESS_REASON = "liveness"


def unlaunched_timeout(s: LoopState, c: Claim) -> tuple[float, str]:
    """When an unlaunched NodeClaim is deleted, and the reason."""
    if s.core["launchTimeout"]:
        return c.created_at + LAUNCH_TIMEOUT, LAUNCH_TIMEOUT_REASON
    # sigs.k8s.io/karpenter v1.6.2 liveness.go Reconcile: Registered stays Unknown from creation
    return c.created_at + REGISTRATION_TIMEOUT, LIVENESS_REASON


def registration_timeout(s: LoopState, c: Claim) -> tuple[float, str]:
    """When a launched NodeClaim that has not registered is deleted, and the reason."""
    return ((c.launched_at or 0) + REGISTRATION_TIMEOUT,
            REGISTRATION_TIMEOUT_REASON if s.core["launchTimeout"] else LIVENESS_REASON)


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
            at, why = registration_timeout(s, c)
            if s.clock.now() >= at:
                if s.decisions.enabled:
                    s.decide("lifecycle", why.replace("_", "-"), f"NodeClaim/{c.result.name}",
                             f"launched at {offset_text((c.launched_at or 0) - s.clock.start)} as "
                             f"{c.launched.vm_name}, its Node did not register within "
                             f"{REGISTRATION_TIMEOUT / 60:.0f}m (registration timeout): the NodeClaim is deleted "
                             f"({why})", (), {"reason": why})
                self.termination.delete_claim(c, why)
                progress = True
        return progress

    def next_deadline(self, skip: frozenset[str] = frozenset()) -> float | None:
        """The earliest launch or registration timeout of a live NodeClaim not named in `skip`, or None."""
        s = self.state
        live = [c for c in s.claims if not c.done and c.result.name not in skip]
        deadlines = [registration_timeout(s, c)[0] for c in live if c.launched is not None and not c.registered]
        deadlines += [unlaunched_timeout(s, c)[0] for c in live if c.launched is None]
        return min(deadlines) if deadlines else None
