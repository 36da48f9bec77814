"""The disruption orchestration queue (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/queue.go).

StartCommand: the candidates are tainted karpenter.sh/disrupted:NoSchedule and their NodeClaims get
DisruptionReason=<reason> (markDisrupted, before any replacement exists), the replacement NodeClaims
are created through the provisioner (createReplacementNodeClaims -> Provisioner.CreateNodeClaims),
the candidates are MarkedForDeletion (after the replacements, to avoid double launches) and the
scheduling results nominate their destination nodes (Results.Record). Reconcile (waitOrTerminate):
each replacement NodeClaim gets DisruptionLaunching ("Launching NodeClaim: <Reason>") and, until it
is Initialized, DisruptionWaitingReadiness; once all are initialized the candidates' NodeClaims are
deleted (DisruptionTerminating on the Node and the NodeClaim: "Disrupting Node: <Reason>") and
termination drains them (nodetermination.py). A replacement that disappears, or a command older than
the retry duration (10 minutes, GetMaxRetryDuration for a short queue), fails: the taint and the
condition are removed and the candidates are no longer marked for deletion.
"""
from __future__ import annotations

import random
import re

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.disruption import record as disruptionwhy
from harness.loop.scheduling import podutil
from harness.loop.disruption.candidates import Candidate
from harness.loop.disruption.consolidation import Proposal
from harness.loop.lifecycle.nodetermination import NodeTermination
from harness.loop.lifecycle.podevents import NOMINATION_WINDOW
from harness.loop.state import Claim, LoopState
from harness.loop.disruption.memory import Command, Replacement

MIN_RETRY_DURATION = 600.0              # queue.go minRetryDuration (retryDurationScale x commands, clamped)
REPLACEMENT_DELETED = "replacement was deleted"     # queue.go waitOrTerminate's error for a replacement gone


def title(reason: str) -> str:
    """cases.Title(language.Und, cases.NoLower): the first letter of each word upper-cased (a space or a
    slash ends a word: "drifted/replace" is "Drifted/Replace")."""
    return re.sub(r"(^|[ /])([a-z])", lambda m: m.group(1) + m.group(2).upper(), reason)


def event_reason(cmd, how: str) -> str:
    """What the queue's DisruptionLaunching / DisruptionTerminating messages name (core-behaviour.yaml
    disruptionEventReason): the method's reason, or before core v1.6.0 the orchestration Command's Reason(),
    "<reason>/<replace|delete>" (sigs.k8s.io/karpenter v1.5.0 pkg/controllers/disruption/orchestration/queue.go
    Command.Reason)."""
    if how == "reasonAndDecision":
        return title(f"{cmd.reason}/{'replace' if cmd.replacements else 'delete'}")
    return title(cmd.reason)


class Orchestration:
    def __init__(self, state: LoopState, provisioner, termination: NodeTermination):
        self.state = state
        self.provisioner = provisioner
        self.termination = termination
        self._ids = random.Random(f"commands-{state.cfg.seed}")      # own stream: names stay as they were

    def has(self, claim_name: str) -> bool:
        return self.state.disruption.in_queue(claim_name)

    def _uuid(self) -> str:
        h = "%032x" % self._ids.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{h[16:20]}-{h[20:32]}"

    # -- StartCommand ---------------------------------------------------------------------------------
    def start(self, p: Proposal) -> bool:
        s = self.state
        now = s.clock.now()
        if any(self.has(c.claim.result.name) for c in p.candidates):
            return False
        cmd = Command(id=len(s.disruption.commands) + 1, reason=p.reason, method=p.method,
                      candidates=[c.claim.result.name for c in p.candidates], replacements=[], created_at=now,
                      decision=p.decision, savings=p.savings())
        cmd.uuid = self._uuid()
        for c in p.candidates:
            self._mark_disrupted(c, p.reason)
        for planned in p.replacements:
            before = len(s.claims)
            if not self.provisioner.create_nodeclaim(planned) or len(s.claims) == before:
                s.trace(f"disruption command {cmd.uuid}: launching replacement nodeclaim failed")
                for c in p.candidates:
                    self._unmark(c.claim)
                if s.decisions.enabled:
                    s.decide("disruption", "command-failed", disruptionwhy.subject(p.candidates[0].claim),
                             f"{disruptionwhy.METHODS[p.method]} command {disruptionwhy.command_text(p)} failed: "
                             "launching a replacement NodeClaim failed; the candidates are untainted",
                             disruptionwhy.command_related(p), disruptionwhy.command_data(p))
                return False
            name = s.claims[-1].result.name
            # the candidates' pods are bound: CreateNodeClaims nominates nothing for them (only a
            # provisioning pass nominates a pending pod's node)
            for pv in planned.pods:
                key = s.pod_key(pv.obj)
                if s.result.pods[key].node and s.nominated.get(key) == name:
                    del s.nominated[key]
            cmd.replacements.append(Replacement(name))
            self.timeline(s.claims[-1], "replacement created", f"for {', '.join(c.name for c in p.candidates)}")
        for c in p.candidates:
            c.claim.dis.marked_for_deletion = True
        for node in set((p.sim.existing if p.sim is not None else {}).values()):
            dest = next((c for c in s.claims if c.node_name == node and not c.done), None)
            if dest is not None:
                dest.dis.nominated_until = max(dest.dis.nominated_until, now + NOMINATION_WINDOW)
        cmd.proposal = p
        s.disruption.add(cmd)
        if s.decisions.enabled:
            for c in p.candidates:
                disruptionwhy.forget(s, c.claim)       # what kept it before is over; a later refusal is new
            reps = [f"NodeClaim/{r.name}" for r in cmd.replacements]
            names = [r.name for r in cmd.replacements]
            wait = (f"; replacement NodeClaim{'s' if len(names) > 1 else ''} {', '.join(names)} created, the "
                    f"candidates are deleted once {'they initialize' if len(names) > 1 else 'it initializes'}") \
                if names else "; the candidates are deleted now"
            s.decide("disruption", "command-started", disruptionwhy.subject(p.candidates[0].claim),
                     f"disrupting via {disruptionwhy.METHODS[p.method]}: {disruptionwhy.command_text(p)}{wait}"
                     + (f"; within {p.budget}" if p.budget else ""),
                     disruptionwhy.command_related(p) + tuple(reps),
                     {**disruptionwhy.command_data(p), "command": cmd.uuid,
                      "replacementNodeClaims": [r.name for r in cmd.replacements]})
        s.trace(f"disrupting node(s): {p.reason}/{cmd.uuid}: {p.decision}: [{', '.join(c.name for c in p.candidates)}]"
                + (f" -> [{len(p.replacements)} replacement(s)]" if p.replacements else ""))
        self._reconcile(cmd)
        return True

    def _mark_disrupted(self, c: Candidate, reason: str) -> None:
        """markDisrupted: RequireNoScheduleTaint(true) and DisruptionReason=True."""
        s = self.state
        node = s.cluster.get("Node", c.name)
        if node is not None:
            taints = (node.get("spec") or {}).get("taints") or []
            if not any(t["key"] == podutil.DISRUPTED_TAINT.key for t in taints):
                node.setdefault("spec", {})["taints"] = taints + [podutil.DISRUPTED_TAINT.to_dict()]
                try:
                    s.cluster.update(node, KARPENTER)
                except APIRejected as e:
                    s.trace(f"tainting {c.name}: {e.message}")
        c.claim.dis.disruption_reason = reason
        self.timeline(c.claim, "tainted", reason)

    def _unmark(self, claim: Claim) -> None:
        """RequireNoScheduleTaint(false), ClearNodeClaimsCondition(DisruptionReason), UnmarkForDeletion."""
        s = self.state
        claim.dis.disruption_reason = None
        claim.dis.marked_for_deletion = False
        if claim.node_name:
            remove_disrupted_taint(s, claim.node_name)
        self.timeline(claim, "untainted")

    def timeline(self, c: Claim, action: str, detail: str = "") -> None:
        s = self.state
        s.result.timeline.append({"t": s.clock.now(), "node": c.node_name or (c.launched.vm_name if c.launched else ""),
                                  "nodeClaim": c.result.name, "action": action, "detail": detail})

    # -- Reconcile (waitOrTerminate) ------------------------------------------------------------------
    def reconcile(self) -> bool:
        progress = False
        for cmd in list(self.state.disruption.active()):
            progress |= self._reconcile(cmd)
        return progress

    def next_deadline(self) -> float | None:
        active = self.state.disruption.active()
        return min((cmd.created_at + MIN_RETRY_DURATION for cmd in active), default=None)

    def _reconcile(self, cmd: Command) -> bool:
        s = self.state
        now = s.clock.now()
        rec = s.disruption.recorder
        how = s.core["disruptionEventReason"]
        if now - cmd.created_at > MIN_RETRY_DURATION:
            return self._fail(cmd, "command reached timeout")
        waiting = False
        for r in cmd.replacements:
            if r.initialized:
                continue
            claim = s.claim_by_name(r.name)
            if claim is None or claim.done:
                return self._fail(cmd, REPLACEMENT_DELETED)
            rec.publish("NodeClaim", r.name, "DisruptionLaunching", f"Launching NodeClaim: {event_reason(cmd, how)}",
                        (r.name, cmd.reason))
            if not claim.initialized:
                rec.publish("NodeClaim", r.name, "DisruptionWaitingReadiness", "Waiting on readiness to continue disruption",
                            (r.name,))
                waiting = True
                continue
            r.initialized = True
            self.timeline(claim, "replacement initialized")
        if waiting:
            return False
        p = cmd.proposal
        for name in cmd.candidates:
            c = s.claim_by_name(name)
            if c is None or c.done:
                continue
            self.termination.begin(c, cmd.reason)
            if c.node_name:
                rec.publish("Node", c.node_name, "DisruptionTerminating", f"Disrupting Node: {event_reason(cmd, how)}",
                            (c.node_name, cmd.reason))
            rec.publish("NodeClaim", name, "DisruptionTerminating", f"Disrupting NodeClaim: {event_reason(cmd, how)}",
                        (name, cmd.reason))
            cand = next((x for x in p.candidates if x.claim is c), None)
            s.result.disruptions.append(disruption_record(s, c, cmd, cand))
        s.disruption.finish(cmd, succeeded=True)
        s.trace(f"disruption command {cmd.uuid} succeeded")
        return True

    def _fail(self, cmd: Command, why: str) -> bool:
        s = self.state
        s.trace(f"disruption command {cmd.uuid} failed: {why}")
        if why == REPLACEMENT_DELETED and s.cfg.replacement_failure == "raced" and \
                s.replacement_failure_rng.random() < 0.5:
            # core's queue sees the deletion at its next requeue (sigs.k8s.io/karpenter v1.14.0
            # pkg/controllers/disruption/queue.go Reconcile: queueBaseDelay 1 s); a provisioning batch closing
            # before it still finds the candidates marked for deletion and plans their pods
            # (provisioner.go Schedule: deletingNodePods) - given.loop.replacementFailure, docs/races.md
            s.trace(f"disruption command {cmd.uuid}: a provisioning round before the queue untaints its candidates "
                    "(replacementFailure: raced)")
            self.provisioner.reconcile()
        if s.decisions.enabled:
            s.decide("disruption", "command-failed", f"NodeClaim/{cmd.candidates[0]}",
                     f"{cmd.reason}/{cmd.decision} command {cmd.uuid} on [{', '.join(cmd.candidates)}] failed: {why}; "
                     "the candidates are untainted and no longer marked for deletion",
                     tuple(f"NodeClaim/{n}" for n in cmd.candidates[1:]) +
                     tuple(f"NodeClaim/{r.name}" for r in cmd.replacements), {"command": cmd.uuid, "why": why})
        for name in cmd.candidates:
            c = s.claim_by_name(name)
            if c is not None and not c.done:
                self._unmark(c)
        s.disruption.finish(cmd, succeeded=False)
        return True


def remove_disrupted_taint(s: LoopState, node_name: str) -> None:
    # read shared (a disruption pass asks this of every Node); a copy only for the Node that has the taint
    node = s.cluster.get("Node", node_name, shared=True)
    if node is None:
        return
    taints = (node.get("spec") or {}).get("taints") or []
    kept = [t for t in taints if t["key"] != podutil.DISRUPTED_TAINT.key]
    if len(kept) != len(taints):
        node = s.cluster.get("Node", node_name)
        taints = (node.get("spec") or {}).get("taints") or []
        node["spec"]["taints"] = [t for t in taints if t["key"] != podutil.DISRUPTED_TAINT.key]
        try:
            s.cluster.update(node, KARPENTER)
        except APIRejected as e:
            s.trace(f"untainting {node_name}: {e.message}")


def disruption_record(s: LoopState, c: Claim, cmd: Command | None, cand: Candidate | None, reason: str | None = None,
                      method: str | None = None) -> dict:
    """What a scenario's expect.disruption.disrupted reads."""
    nr = s.nodes.get(c.node_name) if c.node_name else None
    reps = []
    for r in (cmd.replacements if cmd is not None else []):
        rc = s.claim_by_name(r.name)
        reps.append({"nodeClaim": r.name,
                     "instanceType": rc.launched.instance_type.name if rc is not None and rc.launched else None,
                     "node": rc.node_name if rc is not None else None})
    return {"node": c.node_name, "index": nr.index if nr is not None else None, "nodeClaim": c.result.name,
            "nodePool": c.template.name,
            "instanceType": c.launched.instance_type.name if c.launched else None,
            "capacityType": c.launched.capacity_type if c.launched else None,
            "reason": reason or (cmd.reason if cmd else ""), "driftReason": c.dis.drifted,
            "method": method or (cmd.method if cmd else ""), "decision": cmd.decision if cmd else "delete",
            "command": getattr(cmd, "uuid", None) if cmd else None,
            "commandIndex": cmd.id if cmd else None,           # 1 for the run's first command, ...
            "candidates": len(cmd.candidates) if cmd else 1,
            "replacements": reps, "at": s.clock.now()}
