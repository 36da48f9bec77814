"""Graceful termination of a deleted NodeClaim and its Node: drain, eviction, instance deletion,
finalizers, as sigs.k8s.io/karpenter v1.14.0 pkg/controllers/node/termination/controller.go and
pkg/controllers/nodeclaim/lifecycle/controller.go finalize run them.

Why it is built this way: docs/architecture/loop.md."""
from __future__ import annotations

import copy
from datetime import datetime, timezone

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.disruption import record as disruptionwhy
from harness.loop.scheduling import podutil
from harness.loop.disruption.budgets import termination_grace_period
from harness.loop.state import Claim, LoopState
from harness.loop.lifecycle.termination import Termination
from harness.loop.kube.pdb import MULTIPLE_PDBS_ERROR, Limits
from harness.model.kube import podtermination
from harness.model.kube.kubetime import parse_rfc3339, rfc3339

MIN_DRAIN_TIME = 5.0                     # node/termination/controller.go MinDrainTime
INSTANCE_REQUEUE = 5.0                   # awaitInstanceTermination RequeueAfter
# given.loop.nextCommand raced: the seconds a drained node may wait before its instance's deletion is asked for,
# drawn per node (harness assumption: a command's nodes finish terminating within about two of the disruption
# controller's 10 s polls of each other; the real engine's commands came 12-26 s apart: docs/races.md)
TERMINATION_SPREAD = (0.0, 5.0, 10.0, 15.0, 20.0)
TERMINATION_ANNOTATION = "karpenter.sh/nodeclaim-termination-timestamp"
EXCLUDE_LB_LABEL = "node.kubernetes.io/exclude-from-external-load-balancers"




def go_time(t: float) -> str:
    """Go's time.Time %v in UTC ("2026-01-01 00:10:00 +0000 UTC")."""
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000 UTC")


def pod_deadline(c: Claim, pv) -> float:
    """When a draining node's terminationGracePeriod deletes `pv`: the node's termination time less the
    pod's own grace period (core v1.14.0 pkg/controllers/node/termination/terminator DeleteExpiringPods)."""
    return c.dis.termination_time - podtermination.grace_seconds(pv.spec)


class NodeTermination:
    def __init__(self, state: LoopState, termination: Termination):
        self.state = state
        self.termination = termination
        self._instance_at: dict[str, float] = {}   # claim -> when instance deletion was requested
        # given.loop.vmDelete: claim -> when the provider's Delete began, while Azure deletes the VM (_terminate_instance)
        self._deleting_since: dict[str, float] = {}
        # nextCommand raced: claim -> when its instance deletion is asked for (TERMINATION_SPREAD, drawn from
        # LoopState.termination_spread_rng: its own stream, so no other stream's draws move)
        self._spread_until: dict[str, float] = {}

    # -- NodeClaim deletion (lifecycle finalize) ------------------------------------------------------
    def begin(self, c: Claim, reason: str, since: float | None = None, by: str = "",
              annotated: float | None = None) -> None:
        """The NodeClaim is deleted (deletionTimestamp `since`, now unless a dump dates it): termination
        starts on the next pass. `reason`: the disruption's (empty for a delete from outside Karpenter); `by`:
        who deleted it, in words (a step's kubectl verb: loop/kube/kubectl.py). Its one deadline is the
        deletionTimestamp plus the NodeClaim's own terminationGracePeriod (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/nodeclaim/lifecycle/controller.go ensureTerminationGracePeriodTerminationTimeAnnotation),
        set once: a later change of its NodePool does not move it. `annotated`: a termination time the deleter
        annotated first (node repair: now), which the lifecycle keeps (no TerminationGracePeriodExpiring event)."""
        s = self.state
        if c.dis.deleting_since is not None:
            return
        now = s.clock.now() if since is None else since
        c.dis.deleting_since, c.dis.deleted_by = now, reason
        tgp = termination_grace_period(c.obj["spec"])
        if annotated is not None:
            c.dis.termination_time = annotated
            c.obj["metadata"].setdefault("annotations", {})[TERMINATION_ANNOTATION] = rfc3339(annotated)
        elif tgp is not None:
            c.dis.termination_time = now + tgp
            ann = c.obj["metadata"].setdefault("annotations", {})
            ann[TERMINATION_ANNOTATION] = rfc3339(c.dis.termination_time)
            s.disruption.recorder.publish("NodeClaim", c.result.name, "TerminationGracePeriodExpiring",
                                          f"All pods will be deleted by {rfc3339(c.dis.termination_time)}",
                                          (c.result.name,))
        self._timeline(c, "deleting", reason, at=now)
        if s.decisions.enabled:
            why = f"deleted ({reason})" if reason else f"deleted by {by}" if by else \
                "deleted: its Node was deleted from outside Karpenter"
            tgp = c.obj["spec"].get("terminationGracePeriod")
            source = "its termination time annotated by its deleter" if annotated is not None else \
                f"terminationGracePeriod {tgp}" if tgp is not None else None
            deadline = (f"; {source}: every pod still there is deleted by "
                        f"{disruptionwhy.when(s, c.dis.termination_time)} ({rfc3339(c.dis.termination_time)}), "
                        "bypassing PDBs and do-not-disrupt") if source and c.dis.termination_time is not None else \
                "; no terminationGracePeriod: the drain waits on PDBs and do-not-disrupt pods for as long as they block"
            s.decide("termination", "nodeclaim-deleting", disruptionwhy.subject(c), f"{why}: termination drains "
                     f"its Node, then deletes the instance{deadline}", disruptionwhy.related(c),
                     {"reason": reason, "terminationTime": c.dis.termination_time})

    def _timeline(self, c: Claim, action: str, detail: str = "", at: float | None = None) -> None:
        s = self.state
        s.result.timeline.append({"t": s.clock.now() if at is None else at, "node": c.node_name or (c.launched.vm_name if c.launched else ""),
                                  "nodeClaim": c.result.name, "action": action, "detail": detail})

    def reconcile(self) -> bool:
        s = self.state
        progress = self._deleted_nodes()
        for c in list(s.claims):
            if c.done or c.dis.deleting_since is None:
                continue
            progress |= self._finalize(c)
        return progress

    def _deleted_nodes(self) -> bool:
        """A managed Node deleted from outside (`kubectl delete node`, a dump's deleting Node): its
        finalize deletes the NodeClaim first (core v1.14.0 pkg/controllers/node/termination/controller.go
        finalize: `if nodeClaim.DeletionTimestamp.IsZero() { Delete(nodeClaim) }`), so the termination
        below runs as for any deleted NodeClaim, with no disruption reason."""
        s = self.state
        begun = False
        for c in s.claims:
            if c.done or c.dis.deleting_since is not None or not c.node_name:
                continue
            node = s.cluster.get("Node", c.node_name, shared=True)
            if node is not None and node["metadata"].get("deletionTimestamp"):
                self.begin(c, "")
                begun = True
        return begun

    def next_deadline(self) -> float | None:
        """The short waits termination has in flight (MinDrainTime, instance deletion requeue, a terminating
        pod the drain waits on until it is stuck: a minute past its deletionTimestamp, core v1.14.0
        pkg/utils/pod/scheduling.go IsStuckTerminating, after which the drain goes on without it). A drain
        that is still blocked otherwise is no short wait: what unblocks it (a PDB, the do-not-disrupt
        annotation, terminationGracePeriod's deadline) is the scenario's to reach, with `advance` or a step."""
        s = self.state
        now = s.clock.now()
        out = []
        for c in s.claims:
            if c.done or c.dis.deleting_since is None:
                continue
            if c.dis.drain_started is not None and not c.dis.drained and c.dis.drain_started + MIN_DRAIN_TIME > now:
                out.append(c.dis.drain_started + MIN_DRAIN_TIME)
            if c.dis.drain_started is not None and not c.dis.drained:
                # a pod whose containers still run is the kubelet's timer (loop/kube/kubelet.py), not a wait
                out += [at for k, pr in s.result.pods.items()
                        if pr.node == c.node_name and pr.state != "deleted" and k in s.pod_views
                        and k not in s.terminating
                        and (at := podutil.stuck_at(s.pod_views[k])) is not None and at >= now and self._drainable(k)]
            if c.result.name in self._instance_at:
                out.append(self._instance_at[c.result.name] + INSTANCE_REQUEUE)
            if c.result.name in self._deleting_since:
                out.append(self._deleting_since[c.result.name] + s.cfg.vm_delete)
            held = self._spread_until.get(c.result.name)
            if held is not None and held > now:
                out.append(held)
        return min(out) if out else None

    def grace_deadline(self) -> float | None:
        """The next moment a draining node's terminationGracePeriod deletes a pod: its
        termination time less the pod's own grace period, passed (core's terminator deletes it once
        now is after that), so the first whole second beyond."""
        s = self.state
        now = s.clock.now()
        out = []
        for c in s.claims:
            if c.done or c.dis.deleting_since is None or c.dis.termination_time is None or c.dis.drained:
                continue
            for k, pr in s.result.pods.items():
                pv = s.pod_views.get(k)
                if pv is None or pr.node != c.node_name or pr.state == "deleted":
                    continue
                at = pod_deadline(c, pv) + 1
                if at > now:
                    out.append(at)
        return min(out, default=None)

    def _finalize(self, c: Claim) -> bool:
        s = self.state
        node = s.cluster.get("Node", c.node_name) if c.node_name else None
        if node is None:
            return self._terminate_instance(c)
        name = c.node_name
        if not c.dis.node_deleting:
            c.dis.node_deleting = True
            try:
                s.cluster.delete("Node", name, identity=KARPENTER)
            except APIRejected as e:
                s.trace(f"deleting Node {name}: {e.message}")
        if c.dis.termination_time is not None:
            s.disruption.recorder.publish("Node", name, "TerminationGracePeriodExpiring",
                                          f"All pods will be deleted by {rfc3339(c.dis.termination_time)}", (name,))
        progress = self._taint(c, name)
        if not c.dis.drained:
            return self._drain(c, name) or progress
        if self._spread(c):
            return progress
        return self._terminate_instance(c) or progress

    def _spread(self, c: Claim) -> bool:
        """`given.loop.nextCommand: raced`: whether a drained node's instance deletion waits (a seeded
        TERMINATION_SPREAD, drawn once per node). Core's termination controller reconciles each Node on its own
        (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/node/termination/controller.go Reconcile), so a command's
        nodes reach InstanceTerminating, and leave the NodePool's disruption budget, one after another."""
        s = self.state
        if s.cfg.next_command != "raced" or not c.dis.deleted_by or c.result.name in self._instance_at:
            return False
        name = c.result.name
        if name not in self._spread_until:
            self._spread_until[name] = s.clock.now() + s.termination_spread_rng.choice(TERMINATION_SPREAD)
        return s.clock.now() < self._spread_until[name]

    def _taint(self, c: Claim, name: str) -> bool:
        """Terminator.Taint: the disrupted taint and the load-balancer exclusion label."""
        s = self.state
        node = s.cluster.get("Node", name)
        if node is None:
            return False
        taints = (node.get("spec") or {}).get("taints") or []
        labels = node["metadata"].setdefault("labels", {})
        has = any(t["key"] == podutil.DISRUPTED_TAINT.key and t.get("effect") == "NoSchedule" for t in taints)
        if has and labels.get(EXCLUDE_LB_LABEL) == "karpenter":
            return False
        if not has:
            taints = [t for t in taints if t["key"] != podutil.DISRUPTED_TAINT.key] + [podutil.DISRUPTED_TAINT.to_dict()]
            node.setdefault("spec", {})["taints"] = taints
        labels[EXCLUDE_LB_LABEL] = "karpenter"
        try:
            s.cluster.update(node, KARPENTER)
        except APIRejected as e:
            s.trace(f"tainting Node {name}: {e.message}")
        return True

    # -- drain ------------------------------------------------------------------------------------------
    def _drain(self, c: Claim, name: str) -> bool:
        s = self.state
        now = s.clock.now()
        rec = s.disruption.recorder
        pods = s.pods_on(name)
        waiting = [k for k in pods if self._drainable(k)]
        if c.dis.drain_started is None:
            c.dis.drain_started = now
            self._timeline(c, "draining")
            if s.decisions.enabled:
                s.decide("termination", "drain-started", disruptionwhy.subject(c),
                         f"draining Node {name}: tainted karpenter.sh/disrupted:NoSchedule, {len(waiting)} pod(s) to "
                         f"evict (at least {MIN_DRAIN_TIME:.0f} s)", disruptionwhy.related(c))
        progress = False
        # pods whose terminationGracePeriodSeconds must start now to end by the node's deadline
        if c.dis.termination_time is not None:
            for k in list(waiting):
                pv = s.pod_views[k]
                grace = podtermination.grace_seconds(pv.spec)
                if now > pod_deadline(c, pv) and self._expiring(c, pv):
                    left = max(int(c.dis.termination_time - now), 1)
                    rec.publish("Pod", pv.name, "Disrupted",
                                f"Deleting the pod to accommodate the terminationTime {go_time(c.dis.termination_time)} of "
                                f"the node. The pod was granted {left} seconds of grace-period of its {grace} "
                                "terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt "
                                "annotation.", (pv.name,), namespace=pv.namespace)
                    evict_pod(s, k, f"deleted from node {name} at its termination deadline", grace=left)
                    if s.decisions.enabled:
                        s.decide("termination", "pod-deleted-at-deadline", f"Pod/{k}",
                                 f"deleted from Node {name} at NodeClaim {c.result.name}'s terminationGracePeriod "
                                 f"deadline {disruptionwhy.when(s, c.dis.termination_time)}: granted {left} s of its "
                                 f"{grace} s terminationGracePeriodSeconds, bypassing its PDB and do-not-disrupt",
                                 (disruptionwhy.subject(c), f"Node/{name}"))
                    if k not in s.pod_views:
                        waiting.remove(k)
                    progress = True
        if waiting:
            # the count: the pods waiting, from core v1.1.0 (#1478, the priority groups' sizes); before, every pod
            # bound to the node (sigs.k8s.io/karpenter v1.0.6 terminator.go Drain: len(pods))
            count = len(waiting) if s.core["evictionInPriorityGroups"] else len(pods)
            rec.publish("Node", name, "FailedDraining", f"Failed to drain node, {count} pods are waiting to be evicted",
                        (name,))
            limits = Limits(list(s.disruption.pdb_status.values()))
            reason = c.dis.disruption_reason or "Forceful Termination"
            for group in self._groups(self._grouped(waiting)):
                if not group:
                    continue
                for k in group:
                    if not self._evictable(k):
                        if s.decisions.enabled:
                            self._held(c, name, k)
                        continue
                    pv = s.pod_views[k]
                    refusal = limits.evict(pv.namespace, pv.labels)
                    if refusal is not None:
                        if s.decisions.enabled:
                            self._refused(c, name, k, limits, refusal)
                        if refusal == MULTIPLE_PDBS_ERROR and not s.core["multiplePdbsEviction"]:
                            # the API server's 500 is only a reconcile error before core v1.7.0 (#2379;
                            # sigs.k8s.io/karpenter v1.6.2 terminator/eviction.go Evict): no event, retried
                            continue
                        why = ("eviction does not support multiple PDBs" if refusal == MULTIPLE_PDBS_ERROR
                               else "evicting pod violates a PDB")
                        rec.publish("Node", name, "FailedDraining",
                                    f"Failed to drain node, {why} (Pod={pv.namespace}/{pv.name})", (name,))
                        continue
                    # the reason from the DisruptionReason condition: core v1.2.0 on (#1370, core-behaviour.yaml
                    # disruptionReasonCondition); before, sigs.k8s.io/karpenter v1.0.6 terminator/events/events.go EvictPod
                    message = f"Evicted pod: {reason}" if s.core["disruptionReasonCondition"] else "Evicted pod"
                    rec.publish("Pod", pv.name, "Evicted", message, (pv.name,), namespace=pv.namespace)
                    evict_pod(s, k, f"evicted from node {name}")
                    if s.decisions.enabled:
                        s.decide("termination", "pod-evicted", f"Pod/{k}",
                                 f"evicted from Node {name} ({reason}): the eviction API allowed it",
                                 (disruptionwhy.subject(c), f"Node/{name}"))
                    progress = True
                break
            return progress
        if now - c.dis.drain_started >= MIN_DRAIN_TIME:
            c.dis.drained = True
            self._timeline(c, "drained")
            if s.decisions.enabled:
                s.decide("termination", "drained", disruptionwhy.subject(c),
                         f"Node {name} drained after {now - c.dis.drain_started:.0f} s: deleting the instance",
                         disruptionwhy.related(c))
            return True
        return progress

    def _held(self, c: Claim, name: str, key: str) -> None:
        """The decision record: a pod the drain waits on without evicting it (do-not-disrupt, or already
        terminating), once per pod and cause."""
        s = self.state
        pv = s.pod_views[key]
        if not podutil.is_active(pv):
            cause = ("terminating", pv.obj["metadata"].get("deletionTimestamp"))
            text = lambda: f"the drain of Node {name} waits for it to terminate (deletionTimestamp {cause[1]})"
        else:
            cause = ("do-not-disrupt",)
            text = lambda: (f"the drain of Node {name} cannot evict it: {podutil.DO_NOT_DISRUPT} " +
                            disruptionwhy.do_not_disrupt_hold(pv, s.disruption.pod_started.get(key), s) +
                            self._until_deadline(c))
        self._pod_note(c, key, cause, "drain-blocked", text, name)

    def _refused(self, c: Claim, name: str, key: str, limits: Limits, refusal: str) -> None:
        """The decision record: the eviction API refused the pod's eviction (the PDB named, its exact message)."""
        s = self.state
        pv = s.pod_views[key]
        pdbs = [p.key for p in limits.matching(pv.namespace, pv.labels)]

        def text() -> str:
            status = ", ".join(f"PodDisruptionBudget {p.key} (disruptionsAllowed {p.disruptions_allowed})"
                               for p in limits.matching(pv.namespace, pv.labels))
            return (f"eviction from Node {name} refused by {status or 'a PodDisruptionBudget'}: "
                    f'"{refusal}"' + self._until_deadline(c))
        self._pod_note(c, key, ("eviction", refusal, tuple(pdbs)), "eviction-refused", text, name,
                       tuple(f"PodDisruptionBudget/{p}" for p in pdbs))

    def _until_deadline(self, c: Claim) -> str:
        s = self.state
        if c.dis.termination_time is None:
            return "; no terminationGracePeriod: the drain waits as long as this holds"
        return f"; terminationGracePeriod deletes it by {disruptionwhy.when(s, c.dis.termination_time)}"

    def _pod_note(self, c: Claim, key: str, cause: tuple, action: str, text, name: str, extra=()) -> None:
        said = self.state.disruption.said
        k = (f"Pod/{key}", "drain")
        if said.get(k) == cause:
            return
        said[k] = cause
        self.state.decide("termination", action, f"Pod/{key}", text(),
                          (disruptionwhy.subject(c), f"Node/{name}") + tuple(extra))

    def _expiring(self, c: Claim, pv) -> bool:
        """Whether Drain hands the pod to DeleteExpiringPods: a pod not yet terminating, and from core v1.6.0
        (#2316) also one terminating past the node's deadline, deleted again so it ends by it
        (sigs.k8s.io/karpenter v1.6.1 pkg/controllers/node/termination/terminator/terminator.go Drain,
        pkg/utils/pod/scheduling.go IsPodEligibleForForcedEviction). Before, a terminating pod is skipped
        (v1.5.0 terminator.go Drain: `!podutil.IsTerminating(p)`) and the drain waits until it is gone or stuck
        (core-behaviour.yaml forcedEvictionAfterNodeDeadline)."""
        if not podutil.terminating(pv):
            return True
        stamp = pv.obj["metadata"]["deletionTimestamp"]
        return self.state.core["forcedEvictionAfterNodeDeadline"] and \
            parse_rfc3339(stamp) > c.dis.termination_time

    def _drainable(self, key: str) -> bool:
        """pod.IsWaitingEviction / IsDrainable: not tolerating the disrupted taint, not a mirror pod, not
        stuck terminating (a terminating pod is waited for until then)."""
        pv = self.state.pod_views[key]
        return not podutil.tolerates_disrupted_taint(pv) and not podutil.owned_by_node(pv) and \
            not podutil.stuck_terminating(pv, self.state.clock.now())

    def _evictable(self, key: str) -> bool:
        """pod.IsEvictable: only an active pod is (re)evicted; a terminating one is already going."""
        s = self.state
        pv = s.pod_views[key]
        started = s.disruption.pod_started.get(key)
        return podutil.is_active(pv) and \
            not podutil.do_not_disrupt(pv, started, s.clock.now(), s.disruption.recorder.publish,
                                        s.core["doNotDisruptDurations"])

    def _grouped(self, waiting: list[str]) -> list[str]:
        """The pods the priority groups are made of. From core v1.1.0 (#1478) every pod the drain waits on
        (IsWaitingEviction): a group whose pods are still there, evicted or not (a do-not-disrupt pod, a
        terminating one), holds back the next. Before, only the evictable ones (sigs.k8s.io/karpenter v1.0.6
        terminator/terminator.go Evict, EvictInOrder over IsEvictable pods): a group with none left to
        evict - a do-not-disrupt pod's included - lets the next be evicted at once
        (core-behaviour.yaml evictionInPriorityGroups)."""
        if self.state.core["evictionInPriorityGroups"]:
            return waiting
        return [k for k in waiting if self._evictable(k)]

    def _groups(self, keys: list[str]) -> list[list[str]]:
        """groupPodsByPriority (v1.0.x: Evict's four lists, the same order)."""
        groups: list[list[str]] = [[], [], [], []]
        for k in keys:
            pv = self.state.pod_views[k]
            critical, daemon = podutil.is_critical(pv), podutil.owned_by_daemonset(pv)
            groups[(2 if critical else 0) + (1 if daemon else 0)].append(k)
        return groups

    # -- instance -----------------------------------------------------------------------------------------
    def _terminate_instance(self, c: Claim) -> bool:
        s = self.state
        now = s.clock.now()
        at = self._instance_at.get(c.result.name)
        if at is None:
            if self._vm_deleting(c, now):
                return self._deleting_since[c.result.name] == now       # the Delete began: a change
            if c.launched is not None:
                s.provider.delete(c.launched.vm_name)
            c.dis.instance_terminating = True
            self._instance_at[c.result.name] = now
            self._timeline(c, "instance terminating")
            return True
        if now - at < INSTANCE_REQUEUE:
            return False
        self._instance_at.pop(c.result.name, None)
        node = c.node_name
        if s.decisions.enabled:
            s.decide("termination", "nodeclaim-deleted", disruptionwhy.subject(c),
                     f"instance {c.launched.vm_name if c.launched else '(none)'} is gone: the NodeClaim"
                     f"{' and Node ' + node if node else ''} are deleted (finalizers removed; "
                     f"{c.dis.deleted_by or 'deleted'})", disruptionwhy.related(c), {"reason": c.dis.deleted_by})
        self.termination.delete_claim(c, c.dis.deleted_by or "deleted")
        if node and node in s.nodes:
            s.nodes[node].deleted = c.dis.deleted_by or "deleted"
            self._collect_dependents(node)
        self._timeline(c, "terminated", c.dis.deleted_by or "")
        return True

    def _vm_deleting(self, c: Claim, now: float) -> bool:
        """`given.loop.vmDelete`: whether Azure is still deleting the VM. The provider's Delete waits for the VM's
        deletion (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/vminstance.go
        deleteVirtualMachine: BeginDelete, then PollUntilDone), and core marks the NodeClaim InstanceTerminating -
        which frees its NodePool's disruption budget - only once Delete returned (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/node/termination/controller.go awaitInstanceTermination). The VM stays in the fake until
        then; 0 (the default) deletes it at once."""
        if self.state.cfg.vm_delete <= 0 or c.launched is None:
            return False
        name = c.result.name
        if name not in self._deleting_since:
            self._deleting_since[name] = now
            self.state.trace(f"Azure deletes VM {c.launched.vm_name} for {self.state.cfg.vm_delete:g}s (given.loop.vmDelete)")
        if now < self._deleting_since[name] + self.state.cfg.vm_delete:
            return True
        del self._deleting_since[name]
        return False

    def _collect_dependents(self, node: str) -> None:
        """Once the Node is gone (its termination finalizer removed), kube-controller-manager's garbage
        collector deletes what names it as owner: its mirror pods, which no drain evicts (k8s.io/kubernetes
        v1.36.3 pkg/controller/garbagecollector attemptToDeleteItem: the owner's uid no longer exists)."""
        s = self.state
        for key in s.pods_on(node):
            pv = s.pod_views.get(key)
            if pv is not None and podutil.owned_by_node(pv):
                s.delete_pod(key, f"its owner, Node {node}, was deleted (garbage collector)")


def termination_conditions(c: Claim, drain_conditions: bool) -> dict[str, str]:
    """The termination status conditions of `c`'s NodeClaim (type -> status) as the last pass left them.
    InstanceTerminating is True once the instance's deletion was asked for, at every modeled core. From core
    v1.6.0 (#1876, sigs.k8s.io/karpenter v1.6.1 pkg/controllers/node/termination/controller.go awaitDrain,
    awaitVolumeDetachment) also Drained - Unknown (Draining) from the drain's start, True once drained - and
    VolumesDetached, True once drained: the loop models no VolumeAttachment to wait on. Before (`drain_conditions`
    False) neither exists (v1.5.0 controller.go Reconcile sets no condition while draining)."""
    out = {}
    if drain_conditions and c.dis.drain_started is not None:
        out["Drained"] = "True" if c.dis.drained else "Unknown"
        if c.dis.drained:
            out["VolumesDetached"] = "True"
    if c.dis.instance_terminating:
        out["InstanceTerminating"] = "True"
    return out


def evict_pod(s: LoopState, key: str, why: str, grace: int | None = None) -> None:
    """The pod is deleted gracefully (LoopState.terminate_pod: with the pod's own grace period, or `grace`); a
    Deployment's ReplicaSet (or a bare ReplicaSet) creates a replacement from
    the Deployment's current template (new name, unbound: kubernetes v1.36.3 pkg/controller/replicaset), once:
    a pod already terminating was replaced when it began; a bare pod is not replaced."""
    pr = s.result.pods[key]
    pv = s.pod_views.get(key)
    replaced = pv is not None and podutil.terminating(pv)
    s.terminate_pod(key, why, grace)
    if pr.owner_kind not in ("Deployment", "ReplicaSet") or pv is None or replaced:
        return
    dep = (s.deployments if pr.owner_kind == "Deployment" else s.replicasets).get((pr.namespace, pr.owner_name))
    tmpl = ((dep or {}).get("spec") or {}).get("template") or {"metadata": {"labels": pv.labels}, "spec": pv.spec}
    meta = copy.deepcopy(tmpl.get("metadata") or {})
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {**meta, "name": s.name(pr.owner_name + "-"), "namespace": pr.namespace},
           "spec": {k: v for k, v in copy.deepcopy(tmpl.get("spec") or {}).items() if k != "nodeName"}}
    try:
        s.create_pod(pod, pr.owner_kind, pr.owner_name)
    except APIRejected as e:        # admission (e.g. RuntimeClass, a quota) refuses the replacement
        s.refused_pod(pod, pr.owner_kind, pr.owner_name, e)
