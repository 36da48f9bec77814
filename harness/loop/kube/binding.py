"""kube-scheduler's side of the loop: bind each pending pod to the Node that fits and scores best.

The default profile's filter plugins of k8s.io/kubernetes v1.36.3 (harness/loop/kube/kubescheduler.py) and
the VolumeBinding filter (harness/loop/scheduling/volumes.py) decide where a pod fits, over the Nodes a cycle
filters (harness/loop/kube/nodetree.py: every Node below 100, a share of a larger cluster); the default
profile's scores pick one Node, a tie at random (harness/loop/kube/kubescore.py).

Why it is built this way: docs/architecture/loop.md."""
from __future__ import annotations

import functools

from harness.backends.base import ADMIN, SCHEDULER, APIRejected
from harness.loop.state import LoopState
from harness.loop.kube.kubescheduler import Cycle, Snapshot
from harness.loop.kube.kubescore import non_zero_requests, select_host
from harness.loop.kube.nodetree import NodeTree, Verdicts
from harness.loop.kube.preemption import (NOT_ELIGIBLE_TERMINATING, PREEMPTED_REASON, Preemption, preempted_message,
                                     priority)
from harness.loop.scheduling.topology import namespace_labels
from harness.loop.scheduling.volumes import EXTERNAL_PROVISIONING
from harness.model.values.resources import add
from harness.model.values.versions import version_at_least


class KubeScheduler:
    """One scheduling pass over the pending pods, in creation order."""

    def __init__(self, state: LoopState):
        self.state = state
        self.waiting: dict[str, str] = {}    # pod -> the Node its PreBind waits on (traced once)
        self.tree = NodeTree()                # which Nodes a cycle filters (harness/loop/kube/nodetree.py)
        # the cluster as the last pass found it, when that pass bound nothing and drew nothing (`_unchanged`)
        self._idle: tuple | None = None
        # Node -> (LoopState.on_node_changed then, its summed requests, its non-zero sums, its pods as
        # Snapshot.group holds them), as the last pass read them
        self._sums: dict[str, tuple[int, dict[str, int], tuple[int, int], tuple]] = {}
        # per pod class (Cycle.verdict_class) of the last pass that built a snapshot, its kept verdicts (_kept_fails)
        self._memos: dict[tuple, dict] = {}
        # the PostFilter (DefaultPreemption), its seeded draws where upstream picks at random
        self.preemption = Preemption(state, state.preemption_rng)
        self._lowest: int | None = None       # the pass's lowest bound-pod priority (_post_filter)

    def _unchanged(self) -> tuple | None:
        """What a pass reads, as a token (LoopState.unchanged_since), or None when
        the pass also reads what the loop keeps outside the store (volumes, PreBind waits, nominations) or
        draws a queue order. A pass that bound nothing and drew no tie leaves kube-scheduler as it was (a pod
        that fits nowhere moves nextStartNodeIndex by every Node: back where it started), so a pass whose token
        is the last idle pass's would repeat it: the same pods fail with the same message. A cluster of 50,000
        pods with a few that fit nowhere asked this twice an iteration, each time reading every pod."""
        s = self.state
        if s.volumes or s.prebind or s.preempting or s.cfg.ready_one_by_one or s.cfg.binding == "nominated":
            return None
        return s.unchanged_since()

    def reconcile(self) -> bool:
        s = self.state
        token = self._unchanged()
        if token is not None and token == self._idle:
            return False
        self._idle = None
        # every pod bound: the pass below would only read the cluster
        if not s.volumes.selected and not s.cfg.ready_one_by_one and not s.unbound:
            self._idle = token
            return False
        progress = False
        self._lowest = None
        retried: set[str] = set()             # the pods that preempted this pass, tried once more at its end
        nodes = sorted(s.cluster.list("Node", shared=True), key=lambda n: n["metadata"]["name"])   # read only
        if s.volumes.selected:
            names = {n["metadata"]["name"] for n in nodes}
            for ns, claim in s.volumes.reschedule(names, s.cfg.cluster.storage_provisioners):
                s.trace(f"CSI provisioner: the Node selected for claim {ns}/{claim} is gone; back to kube-scheduler")
        # built for the first pod that needs them, in one read of every bound pod (_bound)
        used: dict[str, dict[str, int]] = {}
        snap: Snapshot | None = None
        ordered: list[dict] | None = None     # the Nodes in the node tree's order, likewise
        non_zero: dict[str, tuple[int, int]] = {}
        position: dict[str, int] = {}         # each Node's place in `ordered`
        rank: list[int] = []                  # the place in `nodes` (name order) of each Node of `ordered`
        # per pod class, its filter verdict on every Node (nodetree.Verdicts), and per pod's requests each Node's
        # resource scores (kubescore.select_host): both kept as the pass binds, for the Node that took the pod
        classes: dict[tuple, Verdicts] = {}
        scores: dict[tuple, dict[int, tuple[int, int]]] = {}    # per Node by its index in `nodes`
        drew = False                          # select_host ran (it may draw a tie)
        memos: dict[tuple, dict] = {}         # this pass's classes' kept verdicts (_kept_fails)

        def bind(key: str, pv, node: dict) -> None:
            self._bind(key, pv, node, snap, used)
            name = node["metadata"]["name"]
            nz = non_zero_requests(pv)          # non_zero came with the snapshot, before any bind
            non_zero[name] = (non_zero.get(name, (0, 0))[0] + nz[0], non_zero.get(name, (0, 0))[1] + nz[1])
            for verdicts in classes.values():
                verdicts.changed(position[name], node)
            for per_node in scores.values():
                per_node.pop(rank[position[name]], None)
        # what each Deployment and StatefulSet selects: its pods' system default spread (kubescore.spread_scores)
        owners: dict[tuple[str, str], dict | None] | None = None
        # kube-scheduler's active queue takes pods of equal priority by the time they were last queued
        # (k8s.io/kubernetes v1.36.3 pkg/scheduler/backend/queue/scheduling_queue.go: Timestamp refreshed
        # on every failed attempt; queuesort/priority_sort.go Less), which depends on timing the loop does
        # not have: it takes them in creation order, and in a seeded order when the Nodes of a launch
        # turn Ready one at a time (given.loop.nodesReady: staggered or spread, races the outcome sets explore),
        # where pods that kept failing while no Node fitted come back in whatever order their retries
        # left them (fuzz-62d93f468d: a replica Karpenter planned nowhere took a planned one's room)
        if s.cfg.ready_one_by_one:
            queue = sorted(s.pod_views.items(), key=lambda kv: kv[1].order)
            s.queue_rng.shuffle(queue)         # over every pod: the seeded draws depend on the list's length
        else:
            # a bound pod is skipped below: only the unbound ones are sorted (a pass after a drain binds a
            # few hundred pods of a cluster of tens of thousands); the higher priority first (queuesort
            # PrioritySort), a stable sort keeping creation order among equals
            queue = s.pods_unbound()
            queue.sort(key=lambda kv: -priority(kv[1]))
        for key, pv in queue:
            pr = s.result.pods[key]
            if pr.node or pr.state == "ignored" and not nodes:
                continue
            if snap is None:
                used, non_zero, groups, namespaces = self._bound()
                snap = Snapshot.of_nodes(nodes, groups,
                                         namespace_labels(s.cluster.list("Namespace"), ["default", *namespaces]))
            if key in s.prebind:
                chosen = s.prebind[key]
                waited = next((n for n in nodes if n["metadata"]["name"] == chosen), None)
                if waited is not None and self._prebind_waits(key, pv, waited):
                    continue
                del s.prebind[key]
                self.waiting.pop(key, None)
                if waited is not None:          # the volume came: PreBind completes on the chosen Node
                    bind(key, pv, waited)
                    progress = True
                    continue
                # the chosen Node is gone: PreBind fails, the pod is tried again (binder.go checkBindings)
                pr.scheduler_error = (f'running PreBind plugin "VolumeBinding": binding volumes: failed to get node '
                                      f'"{chosen}": node "{chosen}" not found')
            if s.cfg.binding == "nominated":
                nominated = s.nominated.get(key)
                claim = s.claim_by_name(nominated) if nominated else None
                # nominated to a NodeClaim (its Node), or to a Node Karpenter does not manage (by name)
                target = claim.node_name if claim is not None else nominated
                preferred = [n for n in nodes if target and n["metadata"]["name"] == target]
                ready = [n for n in preferred if any(c.get("type") == "Ready" and c.get("status") == "True"
                                                     for c in (n.get("status") or {}).get("conditions") or [])]
                if ready and not self._prebind_waits(key, pv, ready[0]):
                    bind(key, pv, ready[0])
                    progress = True
                continue
            if ordered is None:
                by_name = {n["metadata"]["name"]: n for n in nodes}
                ordered = [by_name[n] for n in self.tree.update(nodes)]
                position = {n["metadata"]["name"]: i for i, n in enumerate(ordered)}
                rank = [0] * len(ordered)
                for i, n in enumerate(nodes):
                    rank[position[n["metadata"]["name"]]] = i
            cycle = Cycle(pv, snap)
            # the pods nominated by preemption take their Node's room from pods of no higher priority
            # (RunFilterPluginsWithNominatedPods): no verdict is shared while any is nominated
            seen = self._with_nominated(key, pv, used) if s.preempting else used
            nominated = s.preempting.get(key)
            if nominated is not None:
                # a pod nominated by an earlier preemption tries that Node first (schedule_one.go
                # evaluateNominatedNode) and binds there when it fits
                target = next((n for n in nodes if n["metadata"]["name"] == nominated), None)
                if target is not None and not self._filter(cycle, pv, seen)(target) \
                        and not self._prebind_waits(key, pv, target):
                    bind(key, pv, target)
                    progress = True
                    continue
            kind = None if s.volumes or pv.spec.get("volumes") or s.preempting else cycle.verdict_class()
            # scored in name order, as when every Node was filtered (the tie among the best is drawn in
            # this order)
            if kind is None:
                found, reasons = self.tree.find(ordered, self._filter(cycle, pv, seen))
                at = sorted(rank[position[n["metadata"]["name"]]] for n in found)
            else:
                if kind not in classes:
                    memo = memos[kind] = self._memos.get(kind) or {}
                    classes[kind] = Verdicts(ordered, self._kept_fails(cycle, used, snap, memo))
                places, reasons = self.tree.positions_in(len(ordered), classes[kind])
                at = sorted([rank[p] for p in places])
            feasible = [nodes[i] for i in at]
            if not feasible:
                pr.scheduler_error = scheduler_message(len(nodes), reasons)
                if self._post_filter(key, pv, cycle, nodes, seen, snap):
                    # victims deleted: the pass's view of the Nodes is built again for the next pod, and the
                    # pod tries its nominated Node once more at the end of this pass (its victims' deletion
                    # moves it back to the active queue)
                    snap, classes, scores, memos, drew = None, {}, {}, {}, True
                    if key not in retried:
                        retried.add(key)
                        queue.append((key, pv))
                continue
            drew = True
            if owners is None:
                owners = {(kind, d["metadata"].get("namespace") or "default", d["metadata"]["name"]):
                          (d.get("spec") or {}).get("selector")
                          for kind in ("Deployment", "StatefulSet") for d in s.cluster.list(kind)}
            node = select_host(pv, feasible, used, non_zero, s.bind_rng, snap,
                               owners.get((pv.owner_kind, pv.namespace, pv.owner_name)), scores, at)
            if self._prebind_waits(key, pv, node):
                continue
            bind(key, pv, node)
            progress = True
        if snap is not None:
            self._memos = memos
        if not progress and not drew and nodes:
            self._idle = token
        return progress

    def _with_nominated(self, key: str, pv, used: dict) -> dict:
        """`used` with, on each Node, the requests of the other pods nominated there by preemption whose priority
        is at least the pod's (they are filtered as though bound there)."""
        s = self.state
        mine = priority(pv)
        out = None
        for other, node in s.preempting.items():
            view = s.pod_views.get(other)
            if other == key or view is None or priority(view) < mine:
                continue
            out = dict(used) if out is None else out
            out[node] = add(out.get(node, {}), view.scheduler_requests)
        return used if out is None else out

    def _post_filter(self, key: str, pv, cycle: Cycle, nodes: list[dict], used: dict, snap: Snapshot) -> bool:
        """DefaultPreemption for a pod that fits on no Node (harness/loop/kube/preemption.py): when lower-priority
        pods on some Node make room, they are deleted gracefully (their ReplicaSets replace them), the pod is
        nominated to that Node (status.nominatedNodeName) and True is returned; otherwise a nomination it had
        is cleared, unless its victims are still terminating."""
        s = self.state
        mine = priority(pv)
        if self._lowest is None:        # the lowest priority of a bound pod, read once a pass (_bind lowers it)
            self._lowest = min((priority(s.pod_views[k]) for group in s.on_node.values() for k in group), default=mine)
        if self._lowest >= mine:
            if key in s.preempting:
                self._nominate(key, None)
            return False
        fails = self._filter(cycle, pv, used)
        failed = {n["metadata"]["name"]: fails(n) for n in nodes}
        groups = {name: Snapshot.group(sorted((s.pod_views[k] for k in s.pods_on(name)), key=lambda p: p.order))
                  for name in s.on_node}
        outcome = self.preemption.preempt(
            key, pv, nodes, failed, groups, snap.namespaces, lambda n: snap.facts(n).allocatable,
            lambda node, p: self._with_nominated(key, p, {}).get(node, {}),
            local=cycle.verdict_class() is not None and not snap.with_anti)
        if outcome.node is None:
            if key in s.preempting and outcome.why != NOT_ELIGIBLE_TERMINATING:
                self._nominate(key, None)
            return False
        self._actuate(key, pv, outcome.node, outcome.victims)
        self._lowest = None
        return True

    def _actuate(self, key: str, pv, node: str, victims: list[str]) -> None:
        """executor.go prepareCandidate: each victim not yet terminating gets its Preempted event and is deleted
        gracefully (evict_pod: its ReplicaSet makes a replacement), the lower-priority pods nominated to the
        Node lose their nomination, and the pod is nominated to it."""
        from harness.loop.lifecycle.nodetermination import evict_pod
        s = self.state
        s.decide("kube-scheduler", "pod-preempting", f"Pod/{key}",
                 f"fits on no Node; preempts {len(victims)} lower-priority pod(s) on Node {node} "
                 f"({', '.join(victims)}) and is nominated to it (status.nominatedNodeName)",
                 tuple(f"Pod/{k}" for k in victims) + (f"Node/{node}",))
        for k in victims:
            victim = s.pod_views.get(k)
            if victim is None or k in s.terminating:
                continue
            self.preemption.victims[k] = key
            pr = s.result.pods[k]
            s.record_event("Pod", pr.name, PREEMPTED_REASON, preempted_message(pv.uid, node), pr.namespace)
            s.decide("kube-scheduler", "pod-preempted", f"Pod/{k}",
                     f"deleted by kube-scheduler's preemption for the higher-priority pod {key} "
                     f"(priority {priority(pv)} over {priority(victim)}) on Node {node}", (f"Pod/{key}",))
            evict_pod(s, k, f"preempted by {key} on node {node}")
        for other in self.preemption.lower_nominated(node, pv, key):
            self._nominate(other, None)
        self._nominate(key, node)

    def _nominate(self, key: str, node: str | None) -> None:
        """The pod's status.nominatedNodeName, as kube-scheduler patches it (None clears it)."""
        s = self.state
        if node is None:
            s.preempting.pop(key, None)
        else:
            s.preempting[key] = node
        s.trace(f"kube-scheduler: {key} " + (f"nominated to {node} (preemption)" if node else "no longer nominated"))
        pv = s.pod_views.get(key)
        if pv is None:
            return
        current = s.cluster.get("Pod", pv.name, pv.namespace)
        if current is not None:
            status = {k: v for k, v in (current.get("status") or {}).items() if k != "nominatedNodeName"}
            if node:
                status["nominatedNodeName"] = node
            try:
                s.cluster.update_status({**current, "status": status}, SCHEDULER)
            except APIRejected:
                pass

    @staticmethod
    def _kept_fails(cycle: Cycle, used: dict, snap: Snapshot, memo: dict):
        """`cycle.fails` on a Node for a pod class (Cycle.verdict_class), kept between passes in `memo` (Node
        name -> (the Node object, its summed requests, its pods' count, the verdict)): a class's verdict reads
        only those (the Node object is replaced on every change; a Node's sums are kept, the same object, while
        its pods stay: _bound). A pass filters every Node for each class, and a command changes a few."""
        fails = functools.partial(cycle.fails, used)
        pods = snap.pods

        def kept(node: dict) -> list[str]:
            name = node["metadata"]["name"]
            requested, count = used.get(name), len(pods.get(name, ()))
            hit = memo.get(name)
            if hit is not None and hit[0] is node and hit[1] is requested and hit[2] == count:
                return hit[3]
            why = fails(node)
            memo[name] = (node, requested, count, why)
            return why
        return kept

    def _filter(self, cycle: Cycle, pv, used: dict):
        """The Filter plugins on one Node for the pod of `cycle`: the reasons it fails, empty when it fits."""
        s = self.state
        # nothing a cycle's filters read changes within it: whether VolumeBinding has anything to judge is read
        # once per pod, not once per Node
        volumes = bool(s.volumes or pv.spec.get("volumes"))
        empty: dict = {}
        if not volumes:
            return functools.partial(cycle.fails, used)      # one call per Node filtered

        def fails(node: dict) -> list[str]:
            why = cycle.filter(node, used.get(node["metadata"]["name"], empty))
            if not why and volumes:
                v = s.volumes.bind_error(pv.obj, node["metadata"].get("labels") or {})
                why = [v] if v else []
            return why
        return fails

    def _prebind_waits(self, key: str, pv, node: dict) -> bool:
        """The pod's PreBind waits on `node` for a volume no running provisioner creates
        (VolumeModel.unserved_provisioner): its claims name the Node (selected-node), kube-scheduler writes
        no new condition while it waits (only after its 600 s bind timeout) but, from Kubernetes 1.35, the
        pod's nominatedNodeName, which makes Karpenter stop counting the pod (writes_nominated_node)."""
        s = self.state
        waiting = s.volumes.unserved_provisioner(pv.obj, s.cfg.cluster.storage_provisioners) \
            if pv.spec.get("volumes") else None
        if waiting is None:
            return False
        name = node["metadata"]["name"]
        if self.waiting.get(key) != name:
            self.waiting[key] = name
            s.volumes.select_node(pv.obj, name)
            s.trace(f"kube-scheduler: {key} waits in PreBind on {name}; PV controller: "
                    + EXTERNAL_PROVISIONING.format(waiting))
        s.prebind[key] = name
        return True

    def _bound(self) -> tuple[dict[str, dict[str, int]], dict[str, tuple[int, int]], dict[str, tuple], set[str]]:
        """What a pass reads of every bound pod: each Node's summed requests (pods.PodView.scheduler_requests),
        the same with kube-scheduler's non-zero defaults (kubescore.non_zero_requests), each Node's pods for
        the snapshot (Snapshot.of_nodes: in creation order, with those with inter-pod terms counted), and the
        namespaces of every pod. A Node's entry is kept from the pass before while its pods are the same
        (LoopState.on_node_changed): a pass after a command changes a few hundred of 5,000 Nodes. The pass
        replaces a Node's sums as it binds, never changes them in place."""
        s = self.state
        views = s.pod_views
        used: dict[str, dict[str, int]] = {}
        non_zero: dict[str, tuple[int, int]] = {}
        groups: dict[str, tuple] = {}
        kept, self._sums = self._sums, {}
        changed = s.on_node_changed
        for node, group in s.on_node.items():
            at = changed[node]
            hit = kept.get(node)
            if hit is None or hit[0] != at:
                pods = sorted((views[k] for k in group), key=lambda pv: pv.order)
                total: dict[str, int] = {}
                cpu = mem = 0
                for pv in pods:
                    for k, v in pv.scheduler_requests.items():
                        total[k] = total.get(k, 0) + v
                    nz = non_zero_requests(pv)
                    cpu, mem = cpu + nz[0], mem + nz[1]
                hit = (at, total, (cpu, mem), Snapshot.group(pods))
            self._sums[node] = hit
            used[node], non_zero[node], groups[node] = hit[1], hit[2], hit[3]
        results = s.result.pods
        return used, non_zero, groups, {results[k].namespace for k in views}

    def _bind(self, key: str, pv, node: dict, snap: Snapshot, used: dict) -> None:
        s = self.state
        name = node["metadata"]["name"]
        s.cluster.bind(pv.obj, name, ADMIN)
        snap.add(pv, name)
        pr = s.result.pods[key]
        s.place_pod(key, name)
        pr.state, pr.scheduler_error = "scheduled", None
        pr.at["bound"] = s.clock.now()
        s.preempting.pop(key, None)
        if self._lowest is not None:
            self._lowest = min(self._lowest, priority(pv))
        used[name] = add(used.get(name, {}), pv.scheduler_requests)
        s.trace(f"kube-scheduler bound {key} to {name}")
        for made in s.volumes.provision_for(pv.obj, node["metadata"].get("labels") or {}):
            s.trace(f"CSI provisioner created PersistentVolume {made} for {key} on {name}")


def writes_nominated_node(kubernetes_version: str | None) -> bool:
    """kube-scheduler sets a pod's status.nominatedNodeName when its binding cycle will wait in PreBind
    (kubernetes v1.36.3 pkg/scheduler/schedule_one.go bindingCycle, feature NominatedNodeNameForExpectation:
    beta and on by default from 1.35, pkg/features/kube_features.go)."""
    return version_at_least(kubernetes_version, (1, 35))


def scheduler_message(n_nodes: int, reasons: list[str]) -> str:
    """kube-scheduler's FailedScheduling summary, e.g. '0/2 nodes are available: 2 Insufficient cpu.'
    (kubernetes v1.36.3 pkg/scheduler/framework/types.go FitError.Error; with no Node,
    pkg/scheduler/scheduler.go ErrNoNodesAvailable)."""
    if n_nodes == 0:
        return "no nodes available to schedule pods"
    counts: dict[str, int] = {}
    for r in reasons:
        counts[r] = counts.get(r, 0) + 1
    parts = ", ".join(f"{n} {r}" for r, n in sorted(counts.items()))
    return f"0/{n_nodes} nodes are available: {parts}."
