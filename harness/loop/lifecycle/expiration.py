"""NodeClaim expiration (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/expiration/controller.go
Reconcile): a NodeClaim older than its spec.expireAfter is deleted - forcefully: no budget, no
replacement launched first, no DisruptionTerminating event; its pods are evicted by termination and
provisioned for again. expireAfter comes from the NodePool template when the NodeClaim is created
(default 720h; Never disables it).
"""
from __future__ import annotations

from harness.loop.disruption import record as disruptionwhy
from harness.loop.disruption.budgets import expire_after
from harness.loop.lifecycle.nodetermination import NodeTermination
from harness.loop.disruption.orchestration import disruption_record
from harness.loop.state import LoopState

EXPIRED = "Expired"


class Expiration:
    def __init__(self, state: LoopState, termination: NodeTermination):
        self.state = state
        self.termination = termination
        self._ttl: dict[str, float | None] = {}        # claim -> its expireAfter (the spec does not change)

    def _expire_after(self, c) -> float | None:
        ttl = self._ttl.get(c.result.name, -1.0)
        if ttl == -1.0:
            ttl = self._ttl[c.result.name] = expire_after(c.obj.get("spec") or {})
        return ttl

    def next_deadline(self) -> float | None:
        """When the next live NodeClaim expires (None: none will)."""
        s = self.state
        out = []
        for c in s.claims:
            if c.done or c.refused or c.dis.deleting_since is not None:
                continue
            ttl = self._expire_after(c)
            if ttl is not None:
                out.append(c.created_at + ttl)
        return min(out, default=None)

    def reconcile(self) -> bool:
        s = self.state
        now = s.clock.now()
        progress = False
        for c in list(s.claims):
            if c.done or c.refused or c.dis.deleting_since is not None:
                continue
            ttl = self._expire_after(c)
            if ttl is None or now < c.created_at + ttl:
                continue
            s.trace(f"NodeClaim {c.result.name} expired (expireAfter {ttl:.0f}s)")
            if s.decisions.enabled:
                s.decide("disruption", "expired", disruptionwhy.subject(c),
                         f"expireAfter {c.obj['spec'].get('expireAfter', '720h')} reached at "
                         f"{disruptionwhy.when(s, c.created_at + ttl)} (created {disruptionwhy.when(s, c.created_at)}): "
                         "deleted at once, with no budget and no replacement launched first; its pods are provisioned "
                         "for again", disruptionwhy.related(c), {"expireAfter": ttl})
            self.termination.begin(c, EXPIRED)
            s.result.disruptions.append(disruption_record(s, c, None, None, EXPIRED, "expiration"))
            progress = True
        return progress
