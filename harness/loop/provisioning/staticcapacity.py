"""Core's static capacity controllers: a NodePool with spec.replicas keeps that many nodes, pods or not.

They run with the StaticCapacity feature gate on (given.featureGates) at a core that registers them
(core-behaviour.yaml staticCapacity: core v1.8.0 on).
- provisioning (pkg/controllers/static/provisioning/controller.go Reconcile): a managed, Ready NodePool not being
  deleted gets NodeClaims until its active ones plus those pending disruption reach replicas, no more than
  limits.nodes leaves over every NodeClaim of the pool (pkg/controllers/state/statenodepool.go ReserveNodeCount).
  Each is the template's NodeClaim without pods or an instance-type list: the provider's Create picks among every
  type the template allows (provisioning/scheduling/nodeclaimtemplate.go ToNodeClaim, IsStaticNodeClaim).
- deprovisioning (pkg/controllers/static/deprovisioning/controller.go Reconcile, getDeprovisioningCandidates):
  active NodeClaims above replicas are deleted: unlaunched ones first, then empty nodes, then the lowest
  rescheduling cost times lifetime remaining, nodes with an active do-not-disrupt pod last.
Their nodes are never Consolidatable (nodeclaim/disruption/controller.go runReconcilers: nodeclaimdisruption.py),
and Drift leaves them out (disruption/drift.go ShouldDisrupt); core replaces a drifted one by its StaticDrift method
(disruption/staticdrift.go), which the loop does not simulate: a run where one drifted says so (static_drift_notice).
"""
from __future__ import annotations

import math

from harness.loop.scheduling import podutil
from harness.loop.scheduling.limits import NODES, nodepool_limits
from harness.loop.provisioning import reasons
from harness.loop.disruption.budgets import lifetime_remaining
from harness.loop.provisioning.nodepool import is_static, nodeclass_params
from harness.loop.state import Claim, LoopState
from harness.loop.provisioning.nodeclaimobject import template_for, to_nodeclaim

GATE = "StaticCapacity"


def node_limit(np: dict) -> float:
    """The NodePool's limits.nodes, or no limit."""
    return (nodepool_limits(np) or {}).get(NODES, math.inf)


class StaticCapacity:
    """Static provisioning, then static deprovisioning, of each static NodePool, every pass."""

    def __init__(self, state: LoopState, provisioner, node_termination, termination):
        self.state = state
        self.provisioner = provisioner          # its write_nodeclaim: the API write and the loop's record
        self.node_termination = node_termination
        self.termination = termination

    def enabled(self) -> bool:
        s = self.state
        # core-behaviour.yaml staticCapacity: the release's core has the controllers; the gate switches them on
        return bool((s.cfg.feature_gates or {}).get(GATE)) and s.core["staticCapacity"]

    def reconcile(self) -> bool:
        if not self.enabled():
            return False
        s = self.state
        progress = False
        for np in s.cluster.list("NodePool"):
            res = s.result.nodepools.get(np["metadata"]["name"])
            if not is_static(np) or np["metadata"].get("deletionTimestamp") or res is None or res.unmanaged:
                continue
            progress |= self._deprovision(np)
            if res.ready:
                progress |= self._provision(np)
        return progress

    def _counts(self, name: str) -> tuple[list[Claim], int, int]:
        """NodePoolState.GetNodeCount: the pool's active NodeClaims, how many are deleting, how many pending
        disruption (a disruption command's candidates, not yet deleted)."""
        active, deleting, pending = [], 0, 0
        for c in self.state.claims:
            if c.done or c.template.name != name:
                continue
            if c.dis.deleting_since is not None or c.obj["metadata"].get("deletionTimestamp"):
                deleting += 1
            elif c.dis.marked_for_deletion:
                pending += 1
            else:
                active.append(c)
        return active, deleting, pending

    def _provision(self, np: dict) -> bool:
        s = self.state
        name = np["metadata"]["name"]
        replicas = int(np["spec"]["replicas"])
        active, deleting, pending = self._counts(name)
        if len(active) + pending >= replicas:
            return False
        room = node_limit(np) - (len(active) + deleting + pending)
        count = int(min(replicas - len(active), max(room, 0)))
        if count <= 0:
            s.trace(f"NodePool {name}: static, {len(active)} of {replicas} replicas: nodepool node limit reached")
            if s.decisions.enabled:
                s.decide("provisioner", "static-limit-reached", f"NodePool/{name}",
                         reasons.static_limited(len(active), replicas, np["spec"]["limits"]["nodes"]))
            return False
        ref = np["spec"]["template"]["spec"].get("nodeClassRef") or {}
        params = nodeclass_params(s, ref.get("name", ""))
        if params is None:
            return False
        its = s.overlays.instance_types(s, name, s.provider.instance_types(params))
        t = template_for(np, list(its.instance_types), s.profile, s.sem, s.core, [])
        s.trace(f"NodePool {name}: static, {len(active)} of {replicas} replicas: provisioning {count} NodeClaim(s)")
        made = False
        for _ in range(count):
            obj, reqs = to_nodeclaim(t, t.requirements.copy(), [], {}, s.profile, s.sem, s.core, s.rng,
                                     lambda: s.name(name + "-"), static=True)
            if self.provisioner.write_nodeclaim(obj, reqs, t, []):
                made = True
                if s.decisions.enabled:
                    s.decide("provisioner", "static-nodeclaim-created", f"NodeClaim/{obj['metadata']['name']}",
                             reasons.static_created(name, len(active), replicas), (f"NodePool/{name}",))
        return made

    def _deprovision(self, np: dict) -> bool:
        s = self.state
        name = np["metadata"]["name"]
        replicas = int(np["spec"]["replicas"])
        active, _, _ = self._counts(name)
        surplus = len(active) - replicas
        if surplus <= 0:
            return False
        chosen = self._candidates(np, active, surplus)
        s.trace(f"NodePool {name}: static, {len(active)} active for {replicas} replicas: deleting "
                f"{', '.join(c.result.name for c in chosen)}")
        for c in chosen:
            why = reasons.static_surplus(name, len(active), replicas)
            if c.launched is None:
                self.termination.delete_claim(c, why)
            else:
                self.node_termination.begin(c, "", by=f"core's static deprovisioning: {why}")
        return bool(chosen)

    def _candidates(self, np: dict, active: list[Claim], count: int) -> list[Claim]:
        """getDeprovisioningCandidates: unlaunched first (in creation order), then empty nodes, then by
        (an active do-not-disrupt pod, rescheduling cost x lifetime remaining)."""
        s = self.state
        unresolved = [c for c in active if c.launched is None][:count]
        nodes = [c for c in active if c.launched is not None and c.node_name]
        started = s.disruption.pod_started
        now = s.clock.now()

        def dnd(key: str) -> bool:
            pv = s.pod_views[key]
            return podutil.do_not_disrupt(pv, started.get(key), now, None, s.core["doNotDisruptDurations"])

        def pods(c: Claim) -> list[str]:
            return [k for k in s.pods_on(c.node_name) if k in s.pod_views]
        empty = [c for c in nodes if all(podutil.owned_by_daemonset(s.pod_views[k]) for k in pods(c))
                 and not any(dnd(k) for k in pods(c))]

        def cost(c: Claim) -> tuple[bool, float]:
            keys = pods(c)
            lifetime = lifetime_remaining(c.obj["spec"], c.created_at, now)
            return (any(dnd(k) for k in keys),
                    sum(podutil.eviction_cost(s.pod_views[k]) for k in keys) * lifetime)
        rest = sorted((c for c in nodes if c not in empty), key=cost)
        return (unresolved + empty + rest)[:count]


def static_drift_notice(s: LoopState) -> list[str]:
    """The run's notice when a node of a static NodePool drifted: core's StaticDrift is not simulated."""
    drifted = sorted(c.result.name for c in s.claims
                     if not c.done and c.dis.drifted is not None and is_static(c.template.nodepool))
    if not drifted:
        return []
    return [f"static drift is not simulated: {', '.join(drifted)} of a static NodePool drifted and is kept; core "
            "replaces each with a NodeClaim of its NodePool's template within the Drifted budget, once the NodePool "
            "has no more nodes than replicas (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/staticdrift.go "
            "StaticDrift.ComputeCommands)"]
