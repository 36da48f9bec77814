"""NodeClaim pod events (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/podevents/controller.go
Reconcile): when a non-DaemonSet pod binds to a Node, or a pod on it terminates, the Node's
NodeClaim gets status.lastPodEventTime = now (at most once per 10 s, dedupeTimeout). Consolidation
counts consolidateAfter from it (nodeclaim/disruption/consolidation.go).

The loop's binders set a pod's node directly, so this controller compares each pass's bindings with
the last pass's (the pass runs in the same iteration as the bind, at the same simulated time). It
also remembers when each pod started (status.startTime, read by duration-valued do-not-disrupt
annotations) and the nomination window of the NodeClaims the provisioner nominated pods to
(pkg/controllers/state/statenode.go Nominate: now + max(2 x batch max duration, 10 s) = 20 s).
"""
from __future__ import annotations

from harness.loop.state import LoopState

DEDUPE_TIMEOUT = 10.0            # podevents/controller.go dedupeTimeout
NOMINATION_WINDOW = 20.0         # statenode.go nominationWindow: max(2 x BatchMaxDuration (10s), 10s)


class PodEvents:
    def __init__(self, state: LoopState):
        self.state = state
        self._bound: dict[str, str] = {}          # pod key -> node, as of the last pass
        self._read = 0                            # how many of LoopState.moved the last pass read
        self._seen: tuple | None = None           # LoopState.unchanged_since when `_bound` was read

    def settled(self, key: str, node: str) -> None:
        """A pod that ran on `node` before the run started (a dump's): its binding is no pod event."""
        self._bound[key] = node
        self._seen = None

    def relisted(self) -> None:
        """The controller (re)started: its pod informer lists every pod again, and its event filter screens
        updates only (podevents/controller.go Register: bound, terminal, terminating), so each listed pod is a
        Reconcile: every NodeClaim with a non-DaemonSet pod on its Node gets lastPodEventTime = now, unless
        stamped within dedupeTimeout. A dump's lastPodEventTime then counts no more (given.restrict restarts
        the controller after the seeding, on both engines)."""
        s = self.state
        now = s.clock.now()
        by_node = {c.node_name: c for c in s.claims if c.node_name and not c.done}
        for key, node in self._bound.items():
            c = by_node.get(node)
            pr = s.result.pods.get(key)
            if c is None or pr is None or pr.owner_kind == "DaemonSet":
                continue
            if c.dis.last_pod_event is None or now - c.dis.last_pod_event >= DEDUPE_TIMEOUT:
                c.dis.last_pod_event = now

    def reconcile(self) -> bool:
        s = self.state
        token = s.unchanged_since()
        if token is None or token != self._seen:
            self._bindings(s)
            self._seen = token
        self._nominations(s)
        return False

    def _bindings(self, s: LoopState) -> None:
        """Stamp the NodeClaims whose Nodes a pod bound to or left since the last read: the pods LoopState.place_pod
        moved since (`moved`), each compared with where the last read found it."""
        now = s.clock.now()
        moved, self._read = s.moved[self._read:], len(s.moved)
        touched: set[str] = set()
        for key in dict.fromkeys(moved):
            node, was = s.result.pods[key].node, self._bound.get(key)
            if node == was:
                continue
            if node:                # bound, or bound elsewhere: the new Node's pod event
                self._bound[key] = node
                s.disruption.pod_started.setdefault(key, now)
                if s.pod_views.get(key) is not None and s.pod_views[key].owner_kind != "DaemonSet":
                    touched.add(node)
            else:                   # gone from its Node
                del self._bound[key]
                s.disruption.pod_started.pop(key, None)
                if s.result.pods[key].owner_kind != "DaemonSet":
                    touched.add(was)
        if not touched:
            return
        by_node = {c.node_name: c for c in s.claims if c.node_name and not c.done}
        for node in touched:
            c = by_node.get(node)
            if c is None:
                continue
            last = c.dis.last_pod_event
            if last is None or now - last >= DEDUPE_TIMEOUT:
                c.dis.last_pod_event = now

    @staticmethod
    def _nominations(s: LoopState) -> None:
        """The nomination windows (each provisioning pass renews them: disruptionstate.Nominations)."""
        times = getattr(s.nominated, "times", {})
        for key, claim in s.nominated.items():
            t = times.get(key)
            c = s.claim_by_name(claim) if t is not None else None
            if c is not None and t + NOMINATION_WINDOW > c.dis.nominated_until:
                c.dis.nominated_until = t + NOMINATION_WINDOW
