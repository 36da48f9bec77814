"""Core's node repair: the node health controller deletes the NodeClaim of a node whose condition one of the
provider's repair policies names, once it has held for the policy's toleration (sigs.k8s.io/karpenter v1.14.0
pkg/controllers/node/health/controller.go Reconcile).

It runs with the NodeRepair feature gate on (given.featureGates) at a core that has it (core-behaviour.yaml
nodeRepair: core v1.1.0 on) and a provider that names policies (profile provider.repairPolicies, derived from
github.com/Azure/karpenter-provider-azure pkg/cloudprovider/cloudprovider.go RepairPolicies: none before v1.4.0).
Past the toleration, and unless more than 20% of the nodes of its NodePool (of the cluster, for a NodeClaim
without one) match a policy (then a NodeRepairBlocked event, retried later), the NodeClaim gets the
termination-timestamp annotation at now and is deleted: termination deletes its pods at once, bypassing PDBs
and do-not-disrupt, and provisioning replaces them. With the gate off, or at a release without node repair, a
node that matches stays, and the run says so (repair_notice). A condition's start is its lastTransitionTime,
or the first instant the loop saw it (a seeded node: the run's start). Why so: docs/architecture/loop.md.
"""
from __future__ import annotations

from harness.model.kube.kubetime import parse_rfc3339
from harness.loop.disruption import record as disruptionwhy
from harness.loop.disruption.orchestration import disruption_record
from harness.loop.lifecycle.nodetermination import NodeTermination
from harness.loop.state import Claim, LoopState
from harness.model.labels.wellknown import NODEPOOL
from harness.model.upstream.factreads import REPAIR_POLICIES
from harness.model.values.durations import go_duration_text

GATE = "NodeRepair"
UNHEALTHY = "Unhealthy"                # the record's reason (core's metrics.UnhealthyReason, "unhealthy")
# health/controller.go allowedUnhealthyPercent, rounded up (intstr.GetScaledValueFromIntOrPercent(.., true))
ALLOWED_UNHEALTHY_PERCENT = 20
BLOCKED = "NodeRepairBlocked"          # core pkg/events/reason.go NodeRepairBlocked
# health/controller.go publishNodePoolHealthEvent, and Reconcile's message for a NodeClaim without a NodePool
# (its "then" as core spells it)
BLOCKED_NODEPOOL = "more than 20% nodes are unhealthy in the nodepool"
BLOCKED_CLUSTER = "more then 20% nodes are unhealthy in the cluster"
BLOCKED_DEDUPE = 900.0                 # events.go NodeRepairBlocked: DedupeTimeout 15 minutes
BLOCKED_REQUEUE = 300.0                # Reconcile: RequeueAfter 5 minutes while blocked


def policies(s: LoopState) -> list[dict]:
    """The release's repair policies: [{type, status, tolerationSeconds}] (profile provider.repairPolicies)."""
    return list(s.profile.provider.get("repairPolicies") or [])


def _condition(node: dict, type_: str) -> dict | None:
    return next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == type_), None)


def _matches(node: dict, rules: list[dict]) -> bool:
    """nodeutils.GetCondition(node, policy.ConditionType).Status == policy.ConditionStatus for some policy."""
    return any((_condition(node, p["type"]) or {}).get("status") == p["status"] for p in rules)


def _parse(stamp: str | None) -> float | None:
    try:
        return parse_rfc3339(stamp) if stamp else None
    except ValueError:
        return None


class NodeHealth:
    """The node.health controller, every pass, over the live managed nodes."""

    def __init__(self, state: LoopState, node_termination: NodeTermination):
        self.state = state
        self.node_termination = node_termination
        # (node, condition type, status) -> when the loop first saw it, for a condition without lastTransitionTime
        self._seen: dict[tuple[str, str, str], float] = {}
        self._blocked_until: dict[str, float] = {}     # node -> when a blocked Reconcile looks again
        self.matched: dict[str, str] = {}               # node -> the condition it matched ("Ready False"), for the notice

    def enabled(self) -> bool:
        s = self.state
        # core-behaviour.yaml nodeRepair: the release's core has the controller; the gate switches it on, and core
        # registers it only when the provider names policies (pkg/controllers/controllers.go NewControllers)
        if not ((s.cfg.feature_gates or {}).get(GATE) and s.core["nodeRepair"]):
            return False
        s.provider.fact_reads.note(REPAIR_POLICIES)        # only here do the policies act (factreads.py)
        return bool(policies(s))

    def _since(self, node: dict, cond: dict) -> float:
        at = _parse(cond.get("lastTransitionTime"))
        if at is not None:
            return at
        key = (node["metadata"]["name"], str(cond.get("type")), str(cond.get("status")))
        return self._seen.setdefault(key, self.state.clock.now())

    def _unhealthy(self, node: dict, rules: list[dict]) -> tuple[dict, float] | None:
        """findUnhealthyConditions: the matching condition whose toleration ends first, and when it ends."""
        best = None
        for p in rules:
            cond = _condition(node, p["type"])
            if cond is None or cond.get("status") != p["status"]:
                # healed (or never so): a later match starts its toleration anew
                self._seen.pop((node["metadata"]["name"], str(p["type"]), str(p["status"])), None)
                continue
            ends = self._since(node, cond) + float(p["tolerationSeconds"])
            if best is None or ends < best[1]:
                best = (p, ends)
        return best

    def _live(self) -> list[tuple[Claim, dict]]:
        s = self.state
        out = []
        for c in s.claims:
            if c.done or c.refused or not c.node_name or c.dis.deleting_since is not None \
                    or c.obj["metadata"].get("deletionTimestamp"):
                continue
            node = s.cluster.get("Node", c.node_name, shared=True)
            if node is not None and not node["metadata"].get("deletionTimestamp"):
                out.append((c, node))
        return out

    def next_deadline(self) -> float | None:
        """When the next matching node's toleration ends, or a blocked one is looked at again (None: none)."""
        if not self.enabled():
            return None
        rules = policies(self.state)
        out = []
        for _, node in self._live():
            found = self._unhealthy(node, rules)
            if found is not None:
                out.append(max(found[1], self._blocked_until.get(node["metadata"]["name"], found[1])))
        return min(out, default=None)

    def reconcile(self) -> bool:
        s = self.state
        live = self._live()
        # the notice's test when the controller does not run: the release's policies, else the newest's Ready ones
        rules = policies(s) or [{"type": "Ready", "status": st, "tolerationSeconds": 600} for st in ("False", "Unknown")]
        for _, node in live:
            found = self._unhealthy(node, rules)
            if found is not None:
                s.touch_scope("nodeRepair")
                self.matched.setdefault(node["metadata"]["name"], f"{found[0]['type']} {found[0]['status']}")
        if not self.enabled():
            return False
        now = s.clock.now()
        progress = False
        for c, node in live:
            found = self._unhealthy(node, rules)
            name = node["metadata"]["name"]
            if found is None or now < found[1] or now < self._blocked_until.get(name, found[1]):
                continue
            policy, ends = found
            why = (f"its condition {policy['type']} is {policy['status']} past the provider's toleration of "
                   f"{go_duration_text(float(policy['tolerationSeconds']))} (from {disruptionwhy.when(s, ends - float(policy['tolerationSeconds']))})")
            blocked = self._blocked(c)
            if blocked:
                self._blocked_until[name] = now + BLOCKED_REQUEUE
                s.disruption.recorder.publish("Node", name, BLOCKED, blocked, ("repair", name), BLOCKED_DEDUPE)
                if s.decisions.enabled:
                    s.decide("node.health", "repair-blocked", disruptionwhy.subject(c),
                             f"not repaired though {why}: {blocked}", disruptionwhy.related(c))
                continue
            s.trace(f"NodeClaim {c.result.name}: Node {name} unhealthy ({policy['type']} {policy['status']}), deleting")
            if s.decisions.enabled:
                s.decide("node.health", "unhealthy-deleted", disruptionwhy.subject(c),
                         f"{why}: deleting unhealthy node - its NodeClaim annotated with termination time now and "
                         "deleted at once, with no budget and no replacement launched first; its pods are deleted "
                         "bypassing PDBs and do-not-disrupt, and provisioned for again",
                         disruptionwhy.related(c), {"condition": policy["type"], "status": policy["status"]})
            self.node_termination.begin(c, UNHEALTHY, annotated=now)
            s.result.disruptions.append(disruption_record(s, c, None, None, UNHEALTHY, "repair"))
            progress = True
        return progress

    def _blocked(self, c: Claim) -> str:
        """isNodePoolHealthy / isClusterHealthy: the event's message when more nodes than 20% (rounded up) of the
        NodeClaim's NodePool (of the cluster, without one) match a policy; "" when repair may go on."""
        s = self.state
        pool = (c.obj["metadata"].get("labels") or {}).get(NODEPOOL)
        nodes = [n for n in s.cluster.list("Node", shared=True)
                 if pool is None or (n["metadata"].get("labels") or {}).get(NODEPOOL) == pool]
        unhealthy = sum(1 for n in nodes if _matches(n, policies(s)))
        if unhealthy <= -(-len(nodes) * ALLOWED_UNHEALTHY_PERCENT // 100):
            return ""
        return BLOCKED_NODEPOOL if pool is not None else BLOCKED_CLUSTER


def repair_notice(s: LoopState, health: NodeHealth) -> list[str]:
    """The run's notice when a node matched a repair condition and node repair did not run: the gate off, or a
    release without it."""
    if not health.matched or health.enabled():
        return []
    names = ", ".join(f"{n} ({why})" for n, why in sorted(health.matched.items())[:3]) \
        + (f" and {len(health.matched) - 3} more" if len(health.matched) > 3 else "") \
        + (" stays" if len(health.matched) == 1 else " stay")
    if not (s.cfg.feature_gates or {}).get(GATE):
        return [f"node repair is off: core's NodeRepair feature gate is off (given.featureGates.NodeRepair, false by "
                f"default at every release), so {names}; with it on, core deletes a node past its repair "
                "policy's toleration (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/node/health/controller.go "
                "Reconcile; the provider's RepairPolicies: Ready False or Unknown for 10 minutes)"]
    if not s.core["nodeRepair"]:
        return [f"node repair does not exist at this release: its core has no node health controller and ignores "
                f"the NodeRepair feature gate (core v1.1.0 added both, #1793), so {names}"]
    return [f"node repair does not run at this release: the provider names no repair policies, so core starts no "
            f"node health controller (github.com/Azure/karpenter-provider-azure v1.4.0 pkg/cloudprovider/cloudprovider.go "
            f"RepairPolicies is the first), and {names}"]
