"""The decision record: every decision the loop takes, with its reason in Karpenter's terms.

Karpenter's controllers decide (which pods to provision, which NodePool and instance type a NodeClaim gets,
which disruption candidate a pass takes or leaves, which eviction is refused) and say little of why: a log
line, an event. The loop records each decision as a `Decision` on `RunResult.decisions`, in the order taken,
so a run can answer "why this NodePool", "why is this node still here" and "why did the release decide so"
(harness/why/deciding.py compares the records of two runs to find the decision a core switch changed).

A decision names its subject as `Kind/name` (`Pod/default/web-x`, `NodeClaim/default-abc`, `Node/aks-...`,
`NodePool/default`), so `harness run --why NAME` finds every decision about an object. Recording is cheap (one
append of a frozen value); controllers build a decision's reason text only where they decide anyway.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.loop.history import offset_text

# the controllers that decide, in the words the record and the report use
# (`kubectl`: a step's verbs, the user's decisions: loop/kube/kubectl.py)
CONTROLLERS = ("provisioner", "launch", "lifecycle", "disruption", "termination", "garbage-collection", "kubectl",
               "kube-scheduler", "node.health", "nodeclaim.inplaceupdate")


@dataclass(frozen=True)
class Decision:
    """One decision: when, by which controller, what was decided about which object, and why."""

    t: float                          # the simulated clock (epoch s)
    controller: str                   # one of CONTROLLERS
    action: str                       # what was decided, a short verb phrase: `nodeclaim-created`, `candidate-kept`
    subject: str                      # the object it is about: `Kind/name` (a pod: `Pod/<namespace>/<name>`)
    reason: str                       # why, in Karpenter's terms (the arithmetic included where there is one)
    related: tuple[str, ...] = ()     # other objects it names (a NodeClaim's pods, a command's candidates)
    # the core switches (harness/data/core-behaviour.yaml) read at this decision whose value at the run's
    # release differs from the newest core's, by name
    switches: tuple[str, ...] = ()
    data: dict = field(default_factory=dict, compare=False, hash=False)   # structured facts for --json

    def names(self, name: str) -> bool:
        """Whether the decision is about `name` (`Kind/name`, `name`, `namespace/name`) or names it."""
        for ref in (self.subject, *self.related):
            if ref == name or ref.split("/", 1)[-1] == name or ref.rsplit("/", 1)[-1] == name:
                return True
        return False

    def key(self) -> tuple:
        """What two runs' records are compared on (harness/why/deciding.py): everything but the
        structured data, with generated names left in (the same seed draws the same names)."""
        return (round(self.t, 3), self.controller, self.action, self.subject, self.reason, self.related)

    def render(self, start: float | None = None) -> str:
        """`+1m10s disruption candidate-kept NodeClaim/x: <reason>`."""
        when = offset_text(self.t - start) if start is not None else f"t={self.t:.0f}"
        return f"{when} {self.controller} {self.action} {self.subject}: {self.reason}"

    def to_json(self, start: float | None = None) -> dict:
        out = {"t": self.t, "controller": self.controller, "action": self.action, "subject": self.subject,
               "reason": self.reason}
        if start is not None:
            out["offset"] = offset_text(self.t - start)
        if self.related:
            out["related"] = list(self.related)
        if self.switches:
            out["switches"] = list(self.switches)
        if self.data:
            out["data"] = self.data
        return out


class DecisionLog:
    """The run's decisions in order, with the core switches read since the last one (CoreBehaviour's read
    log, harness/model/upstream/corebehaviour.py), so each decision names the differing switches it read."""

    def __init__(self, clock, core, out: list):
        self.clock = clock
        self.core = core
        self.out = out
        self.enabled = True

    def decide(self, controller: str, action: str, subject: str, reason: str, related=(), data: dict | None = None,
               switches: tuple[str, ...] | None = None) -> Decision | None:
        """Record a decision now. `switches`: the differing switches it read (default: those read since the
        previous decision, CoreBehaviour.take_reads)."""
        if not self.enabled:
            return None
        if switches is None:
            switches = self.core.take_reads()
        d = Decision(self.clock.now(), controller, action, subject, reason, tuple(related), tuple(switches),
                     data or {})
        self.out.append(d)
        return d


def about(decisions: list[Decision], name: str) -> list[Decision]:
    """The decisions about `name` or naming it, in order."""
    return [d for d in decisions if d.names(name)]
