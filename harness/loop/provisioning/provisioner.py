"""Karpenter core's provisioner (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/provisioner.go).

One pass: the pending pods Karpenter would act on (GetPendingPods; Validate drops pods it ignores,
with the volume checks of harness/loop/scheduling/volumes.py), the NodeClaimTemplates of the Ready dynamic
NodePools (NewScheduler), the cluster state's existing and in-flight nodes (pkg/controllers/state
cluster.go; sigs.k8s.io/karpenter v1.14.0 pkg/controllers/state/statenode.go), the scheduling simulation
(harness/loop/scheduling/scheduler.py Scheduler,
standing for scheduling/scheduler.go Solve) and, for every new NodeClaim, the API create (Create ->
NodeClaimTemplate ToNodeClaim, scheduling/nodeclaimtemplate.go). Each round's decisions go to the decision
record with their reasons (harness/loop/provisioning/reasons.py): the provisionable pods, the NodePools
skipped, each NodeClaim's NodePool and why that one, each pod placed on a node or left unschedulable.
"""
from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, Callable

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.provisioning import reasons
from harness.loop.kube.binding import writes_nominated_node
from harness.loop.provisioning.nodepool import is_static, nodeclass_params, ready_nodepools
from harness.loop.disruption.simulate import synced
from harness.loop.state import Claim, LoopState
from harness.loop.provisioning.staticcapacity import GATE as STATIC_GATE
from harness.loop.scheduling.limits import (NODES, RemainingResources, create_refused_message, exceeded_by,
                                 nodepool_limits, usage_exceeds_message)
from harness.loop.provisioning.nodeclaimobject import template_for, to_nodeclaim
from harness.loop.scheduling.pods import PodView, Taint, admission_error, is_ephemeral, karpenter_untolerated
from harness.loop.result import NodeClaimResult
from harness.loop.scheduling.existingnode import shallow_copy
from harness.loop.scheduling.scheduler import MIN_VALUES_EVENT_SUFFIX, ExistingNode, Scheduler, Template
from harness.loop.scheduling.topology import (Topology, has_term_without_selector, namespace_labels, topology_keys,
                                   universe_for)
from harness.loop.scheduling.why import explain_template
from harness.model.azure import instancetypes as itmod
from harness.model.labels.requirements import Requirements
from harness.model.values.resources import add, parse_resource_list

NO_DYNAMIC_NODEPOOLS = "no dynamic nodepools found"     # provisioner.go Schedule (ErrNodePoolsNotFound)


class Provisioner:
    """Pending pods -> NodeClaims. `templates(record=False)` is the same template step for readers
    (the why view) that must leave the run's result alone."""

    def __init__(self, state: LoopState):
        self.state = state
        self._hostnames = 0          # the scheduler's placeholder hostnames, unique over the run
        self._daemon_views: dict = {}     # (pod order, id(DaemonSet)) -> the simulated daemon pod
        # disruption's seam (harness/loop/disruption/controller.py): the currently reschedulable pods of
        # nodes being deleted, which a pass schedules too (core provisioner.go Schedule: Deleting())
        self.deleting_pods: Callable[[], list[PodView]] = lambda: []
        # what the decision record last said of each pod (its key) and each skipped NodePool: a round that
        # decides the same again records nothing (every round plans every pending pod again)
        self._said: dict[str, str] = {}
        self._skipped: dict[str, str] = {}
        self._skipped_now: set[str] = set()        # the NodePools skipped in this round
        self._provisionable = None                  # the last pods-provisionable decision
        # each initialized Node's existing_entries entry by Node name, with the inputs it was built of
        self._entries: dict[str, tuple[tuple, tuple[ExistingNode, frozenset]]] = {}

    # -- templates (NewScheduler) -----------------------------------------------------------------
    def templates(self, record: bool = True) -> list[Template]:
        """The NodeClaimTemplates of a provisioning pass: Ready dynamic NodePools with their
        AKSNodeClass's instance types. `record=False` leaves the run's result alone."""
        s = self.state
        templates = []
        daemon_pods = self.daemon_pods()
        for np, its in self.nodepool_types():
            if record:
                self._record_instance_types(its)
            templates.append(template_for(np, list(its.instance_types), s.profile, s.sem, s.core, daemon_pods))
        return templates

    def nodepool_types(self, shared: bool = False, params: Callable | None = None) -> Iterator[tuple[dict, Any]]:
        """Each Ready dynamic NodePool whose AKSNodeClass exists, with that class's instance types from the
        provider. `shared`: the stored NodePools themselves (read only); `params`: the AKSNodeClass's
        parameters by name (nodeclass_params unless given)."""
        s = self.state
        for np in ready_nodepools(s, shared=shared):
            ref = np["spec"]["template"]["spec"].get("nodeClassRef") or {}
            p = params(ref.get("name", "")) if params is not None else nodeclass_params(s, ref.get("name", ""))
            if p is not None:
                yield np, s.overlays.instance_types(s, np["metadata"]["name"], s.provider.instance_types(p))

    def daemon_pods(self) -> list[PodView]:
        """The pod Karpenter simulates for each DaemonSet (daemon_pod), in the DaemonSets' order."""
        s = self.state
        newest = {}
        for ds, _ in s.daemonsets:
            key = (ds["metadata"].get("namespace") or "default", ds["metadata"]["name"])
            pv = s.newest_pod_of("DaemonSet", *key)
            if pv is not None:
                newest[key] = pv
        return [self.daemon_pod(ds, view, newest) for ds, view in s.daemonsets]

    def daemon_pod(self, ds: dict, template_view: PodView, newest_pods: dict[tuple[str, str], PodView]) -> PodView:
        """The pod Karpenter simulates for a DaemonSet (core v1.14.0 provisioner.go getDaemonSetPods):
        the newest pod the DaemonSet controls (cluster state's GetDaemonSetPod: its requests may differ
        from the template's, e.g. after a LimitRange; `newest_pods`: LoopState.newest_pod_of per DaemonSet), with
        the template's required node affinity in place of the controller's per-node pin; the template when
        it has no pod yet."""
        name, ns = ds["metadata"]["name"], ds["metadata"].get("namespace") or "default"
        newest = newest_pods.get((ns, name))
        if newest is None:
            return template_view
        key = (newest.order, id(ds))
        cached = self._daemon_views.get(key)
        if cached is not None:
            return cached
        spec = copy.deepcopy(newest.spec)
        required = ((((ds["spec"]["template"].get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution"))
        if required:
            spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
                "requiredDuringSchedulingIgnoredDuringExecution"] = copy.deepcopy(required)
        cached = self._daemon_views[key] = PodView({"metadata": {"name": name, "namespace": ns,
                                                                "labels": dict(newest.labels)}, "spec": spec},
                                                   0, "DaemonSet", name)
        return cached

    def record_catalog(self) -> None:
        """The instance types each NodePool's AKSNodeClass has, recorded whether or not the NodePool is
        Ready: the result's instanceTypes and drop reasons when the controller never got to a provisioning
        pass (it exited at its start: harness/loop/simulation.py _start)."""
        s = self.state
        for np in s.cluster.list("NodePool"):
            ref = ((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("nodeClassRef") or {}
            params = nodeclass_params(s, ref.get("name", ""))
            if params is not None:
                self._record_instance_types(s.provider.instance_types(params))

    def _record_instance_types(self, its) -> None:
        """The latest build wins, so expectations see availability after faults and TTLs."""
        result = self.state.result
        for it in its.instance_types:
            result.instance_types[it.name] = it
            result.dropped_skus.pop(it.name, None)
        for name, why in its.dropped.items():
            if name not in result.instance_types:
                result.dropped_skus[name] = why

    # -- cluster state ----------------------------------------------------------------------------
    def existing_nodes(self) -> list[ExistingNode]:
        """Cluster state's nodes as the scheduler sees them (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/state/statenode.go StateNode, scheduling/scheduler.go calculateExistingNodeClaims,
        scheduling/existingnode.go NewExistingNode):

        - a launched NodeClaim (cluster state tracks it once it has a provider id): its Node once
          registered (labels, taints, allocatable), else the NodeClaim's labels and taints and its
          instance type's allocatable; until initialized, the known ephemeral taints and the
          NodeClaim's startup taints are ignored (StateNode.Taints);
        - every other Node (not managed by Karpenter: always registered and initialized);
        - requested = bound pods + the DaemonSet pods that would still land on it (compatible daemons
          minus those already bound, never below zero); a pod nominated to it is not counted: it is
          pending, so each pass plans it again (StateNode counts bound pods alone, and core tracks
          no nomination's requests);
        - initialized nodes first, then by name (Scheduler.sortExistingNodes).
        Nodes marked for deletion (being deleted, or a disruption command's candidates) are left out
        (core Schedule passes nodes.Active(); the provisioner reschedules their pods instead).
        A disruption simulation leaves out its candidates too (existing_entries)."""
        return [shallow_copy(n) for n, _ in self.existing_entries()]

    def existing_entries(self) -> list[tuple[ExistingNode, frozenset]]:
        """existing_nodes, each with the names a disruption simulation's candidates match it by (a NodeClaim's
        VM and Node names, an unmanaged Node's name). A disruption pass builds this once and leaves out each
        simulation's candidates (simulate.py Simulator._existing). The entries are shared: a caller that
        schedules onto them copies them first (existingnode.shallow_copy).

        An initialized Node's entry is kept from the call before while what it is built of is the same (the
        Node object, which the store replaces on every change, its NodeClaim, its bound pods - the last change
        to them, LoopState.on_node_changed - and the DaemonSets): a disruption pass and its validation read every
        Node of the cluster, and between two passes a command changes a hundred of them."""
        s = self.state
        views, changed = s.pod_views, s.on_node_changed

        def bound(name: str) -> list:
            return [views[k] for k in s.pods_on(name)]
        daemons = tuple(pv for _, pv in s.daemonsets)
        kept, self._entries = self._entries, {}
        # each entry kept, or how to build it once the requests of the Nodes to build are summed
        rows: list[tuple | Callable] = []
        need: set[str] = set()
        managed: set[str] = set()
        for c in s.claims:
            if c.done or c.refused or c.launched is None:
                continue
            managed.add(c.launched.vm_name)
            if c.node_name:
                managed.add(c.node_name)
            node = s.cluster.get("Node", c.node_name, shared=True) if c.node_name else None
            if node is not None and node["metadata"].get("deletionTimestamp"):
                continue
            if c.dis.marked_for_deletion or c.dis.deleting_since is not None:
                continue
            if c.registered and node is not None and c.initialized:
                inputs = (node, c.result.name, c.launched, changed.get(c.node_name), daemons)
                hit = kept.get(c.node_name)
                if hit is not None and hit[0] == inputs:
                    self._entries[c.node_name] = hit
                    rows.append(hit[1])
                    continue
                need.add(c.node_name)
                rows.append(lambda used, c=c, node=node, inputs=inputs: self._keep(
                    c.node_name, inputs, self._registered(c.node_name, node, used.get(c.node_name, {}),
                                                          bound(c.node_name), c.result.name),
                    frozenset((c.launched.vm_name, c.node_name))))
                continue
            name = c.node_name if c.registered and node is not None else c.launched.vm_name
            need.add(name)
            rows.append(lambda used, c=c, node=node, name=name: (self._in_flight(
                c, node, used.get(name, {}), bound(name)), frozenset((c.launched.vm_name, c.node_name))))
        # Nodes reach the cluster through a NodeClaim or as existing nodes (loop/seed.py), so
        # the seeded names are the Nodes Karpenter does not manage
        for name in s.unmanaged_nodes:
            node = s.cluster.get("Node", name, shared=True)
            if node is None or name in managed or node["metadata"].get("deletionTimestamp"):
                continue
            inputs = (node, None, None, changed.get(name), daemons)
            hit = kept.get(name)
            if hit is not None and hit[0] == inputs:
                self._entries[name] = hit
                rows.append(hit[1])
                continue
            need.add(name)
            rows.append(lambda used, name=name, node=node, inputs=inputs: self._keep(
                name, inputs, self._registered(name, node, used.get(name, {}), bound(name), None),
                frozenset((name,))))
        used = s.node_requested(need)
        out = [row(used) if callable(row) else row for row in rows]
        out.sort(key=lambda e: (not e[0].initialized, e[0].name))
        return out

    def _keep(self, name: str, inputs: tuple, built: ExistingNode, names: frozenset) -> tuple[ExistingNode, frozenset]:
        """An entry built of `inputs`, kept for the next existing_entries."""
        self._entries[name] = (inputs, (built, names))
        return built, names

    def _registered(self, name: str, node: dict, used: dict, pods: list, nodeclaim: str | None) -> ExistingNode:
        """The ExistingNode of an initialized Node (a NodeClaim's or one Karpenter does not manage)."""
        labels = dict(node["metadata"].get("labels") or {})
        taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
        alloc = parse_resource_list((node.get("status") or {}).get("allocatable") or {})
        return self._existing(name, labels, taints, alloc, used, pods, nodeclaim, True)

    def _in_flight(self, c: Claim, node: dict | None, used: dict, pods: list) -> ExistingNode:
        """The ExistingNode of a NodeClaim not yet initialized (its Node's, or its own, labels and taints)."""
        if c.registered and node is not None:
            name, labels = c.node_name, dict(node["metadata"].get("labels") or {})
            taints = [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []]
            alloc = parse_resource_list((node.get("status") or {}).get("allocatable") or {})
            if not c.initialized:        # StateNode.Capacity/Allocatable: the NodeClaim's fill zeros
                alloc = {**c.launched.instance_type.allocatable(), **{k: v for k, v in alloc.items() if v}}
        else:
            name, labels = c.launched.vm_name, dict(c.obj["metadata"].get("labels") or {})
            taints = [Taint.from_dict(t) for t in c.obj["spec"].get("taints") or []]
            alloc = c.launched.instance_type.allocatable()
        if not c.initialized:
            startup = [Taint.from_dict(t) for t in c.obj["spec"].get("startupTaints") or []]
            taints = [t for t in taints if not is_ephemeral(t, self.state.core) and
                      not any(t.key == st.key and t.effect == st.effect for st in startup)]
        return self._existing(name, labels, taints, alloc, used, pods, c.result.name, c.initialized)

    def _existing(self, name: str, labels: dict, taints: list, alloc: dict, used: dict, pods: list,
                  nodeclaim: str | None, initialized: bool) -> ExistingNode:
        """One ExistingNode: requested = its bound `pods` + the daemons still to come (NewExistingNode
        subtracts the node's DaemonSet requests from the compatible daemons' and floors at zero)."""
        s = self.state
        requested = dict(used)
        daemons: dict[str, int] = {}
        node_reqs = Requirements.from_labels(labels, s.sem) if s.daemonsets else None
        for _, ds in s.daemonsets:
            # isDaemonPodCompatibleWithNode: Taints.ToleratesPod, no PreferNoSchedule toleration added
            if karpenter_untolerated(ds.tolerations, taints):
                continue
            if node_reqs.compatible(ds.requirements(s.sem, strict=True)) is None:
                daemons = add(daemons, ds.requests)
        for pv in pods:
            if pv.owner_kind == "DaemonSet":
                daemons = {k: v - pv.requests.get(k, 0) for k, v in daemons.items()}
        requested = add(requested, {k: v for k, v in daemons.items() if v > 0 and k != "pods"})
        return ExistingNode(name, labels, taints, alloc, requested, nodeclaim,
                            host_ports=[hp for pv in pods for hp in pv.host_ports], initialized=initialized)

    def remaining_resources(self) -> RemainingResources:
        """NodePool limits minus launched NodeClaims' capacity (harness/loop/scheduling/limits.py: core
        NewScheduler + updateRemainingResources; an unlaunched NodeClaim is not in cluster state)."""
        s = self.state
        launched = [(c.template.name, c.launched.instance_type.capacity, c.initialized or not c.registered)
                    for c in s.claims if not c.done and c.launched is not None]
        return RemainingResources.build(s.cluster.list("NodePool"), launched, s.core["nodeLimits"],
                                        s.core["initializedNodesCounted"])

    def topology(self, pending: list[PodView], templates: list[Template], existing: list[ExistingNode]):
        """Topology for this pass (core scheduling/topology.go NewTopology): the domain universe of
        the keys pending pods spread over, the existing nodes' labels and the running pods to count."""
        s = self.state
        running = [(pv, s.result.pods[k].node) for k, pv in s.pod_views.items() if s.result.pods[k].node]
        return self.topology_over(pending, templates, existing, running)

    def topology_over(self, pods: list[PodView], templates: list[Template], existing: list[ExistingNode],
                      running: list[tuple[PodView, str]]):
        """NewTopology for scheduling `pods` with `running` (pod, node) counted: one builder for the
        provisioning pass and the disruption simulation, which core builds alike (SimulateScheduling
        calls the provisioner's NewScheduler, pkg/controllers/disruption/helpers.go v1.14.0). None when
        no pod has a topology key and no running pod an anti-affinity."""
        s = self.state
        keys = set().union(*(topology_keys(pv) for pv in pods)) if pods else set()
        anti = [(pv, n) for pv, n in running if pv.pod_affinity[1]]     # required anti-affinity terms
        if "nilLabelSelector" not in s.core_scopes and (
                any(has_term_without_selector(pv.spec) for pv in pods) or
                any(has_term_without_selector(pv.spec, inverse=True) for pv, _ in anti)):
            s.touch_scope("nilLabelSelector")
        if not keys and not anti:
            return None
        node_labels = {n.name: n.labels for n in existing}
        node_taints = {n.name: n.taints for n in existing}
        registered = set()
        for node in s.cluster.list("Node"):
            name = node["metadata"]["name"]
            registered.add(name)
            node_labels.setdefault(name, node["metadata"].get("labels") or {})
            node_taints.setdefault(name, [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []])
        for pv, _ in anti:
            keys |= topology_keys(pv)
        bound = [(pv.namespace, pv.labels, n) for pv, n in running]
        namespaces = namespace_labels(s.cluster.list("Namespace"),
                                      ["default", *{pv.namespace for pv in s.pod_views.values()}])
        s.sem.note_keys(keys)          # a domain of the key is what the templates' requirements give it
        if {s.sem.normalize_key(k) for k in keys} & itmod.OFFERING_KEYS:
            s.provider.fact_reads.read_every_size()     # the domains of every instance type's offerings
        return Topology(universe_for(keys, templates), node_labels, bound, anti, sem=s.sem,
                        well_known=s.profile.well_known_labels, seed=s.cfg.seed, namespaces=namespaces,
                        node_taints=node_taints, registered=registered,
                        spread_policies=s.core["topologySpreadPolicies"])

    # -- the pass (Reconcile -> Schedule -> CreateNodeClaims) ---------------------------------------
    def pending_pods(self) -> list[PodView]:
        """GetPendingPods + Validate: unbound non-DaemonSet pods Karpenter does not ignore. A pod
        planned onto an in-flight NodeClaim in an earlier pass is one of them: every pass plans every
        pending pod again, existing and in-flight nodes first (core v1.14.0 provisioner.go Schedule;
        its nomination is cluster state's record for disruption, not a reservation)."""
        s = self.state
        pending = []
        pods = s.result.pods
        for key, pv in s.pods_unbound():
            if pv.owner_kind == "DaemonSet":
                continue
            pr = pods[key]
            err = admission_error(pv, s.profile, s.sem, s.core["validatesPreferredNodeAffinity"])
            verr = s.volumes.validate(pv.obj, s.core["unsupportedVolumePods"]) if s.volumes or pv.spec.get("volumes") else None
            if verr is not None:      # Provisioner.Validate combines every error (multierr, "; ")
                err = (f"{err[0]}; {verr}", err[1]) if err is not None else (verr, True)
            if err is not None:
                msg, emits = err
                pr.state, pr.reason, pr.karpenter_error = "ignored", msg, msg
                # core before v1.7.0 (#2480) only logs why it ignores a pod
                if emits and s.core["unsupportedVolumePods"] != "none":
                    s.pod_event(pr, f"Failed to schedule pod, {msg}")
                continue
            if key in s.prebind and writes_nominated_node(s.cfg.cluster.kubernetes_version):
                # kube-scheduler nominated it while its PreBind waits: IsProvisionable is false for a pod
                # with status.nominatedNodeName (core v1.14.0 pkg/utils/pod/scheduling.go IsPreempting)
                continue
            if key in s.preempting:
                # nominated by kube-scheduler's preemption: not provisionable at any core the harness models
                # (IsPreempting, alike from sigs.k8s.io/karpenter v0.36.1 to v1.14.0): its victims' Node is its
                self._say_preempting(key, s.preempting[key])
                continue
            pending.append(pv)
        return pending

    def reconcile(self) -> bool:
        s = self.state
        if not synced(s):
            # Provisioner.Reconcile waits while cluster state is not synced: a NodeClaim without a provider
            # id (one whose launch failed and is retried) holds every pass (core v1.14.0
            # pkg/controllers/provisioning/provisioner.go Reconcile, pkg/controllers/state/cluster.go Synced)
            return False
        pending = self.pending_pods()
        deleting = [pv for pv in self.deleting_pods() if pv not in pending]
        pending += deleting
        if not pending:
            return False
        record = s.decisions.enabled
        if record:
            self._skipped_now = set()
            self._record_provisionable(pending, len(deleting))
        templates = self.templates()
        if record:
            self._record_not_ready(templates)
        if not templates and not ready_nodepools(s):
            # core v1.14.0 provisioner.go Schedule: ErrNodePoolsNotFound only marks the scheduling
            # decision in cluster state (MarkPodSchedulingDecisions) and logs; no pod event
            for pv in pending:
                key = s.pod_key(pv.obj)
                pr = s.result.pods[key]
                pr.karpenter_error = pr.reason = NO_DYNAMIC_NODEPOOLS
                if record:
                    self._say(key, "pod-unschedulable", NO_DYNAMIC_NODEPOOLS + " (no NodePool is Ready)",
                              same=f"error:{NO_DYNAMIC_NODEPOOLS}")
            return False

        def counter() -> int:
            self._hostnames += 1
            return self._hostnames
        for pv in pending:
            if s.volumes:
                s.volumes.plan(pv, s.sem, s.core)
        existing = self.existing_nodes()
        remaining = self.remaining_resources()
        # what remained of each limit before this round's NodeClaims (the Solve subtracts from `remaining`)
        start = {k: dict(v) for k, v in remaining.remaining.items()} if record else None
        sched = Scheduler(templates, existing, s.profile, s.sem, s.min_values_policy, counter,
                          self.topology(pending, templates, existing), remaining,
                          s.preference_policy, lambda: s.core["hostPortsPerNodeClaim"], s.core["relaxPreferencesPerPod"],
                          s.daemon_order_rng, s.max_instance_types)
        if record:
            self._record_skipped_templates(sched, remaining, start)
        solved = sched.solve(pending)
        event = s.core["noCompatibleInstanceTypesEvent"]      # core-behaviour.yaml: none | plain | minValuesSuffix
        for np_name, reason, message in solved.nodepool_events:
            if reason == "NoCompatibleInstanceTypes" and event != "minValuesSuffix":
                if event == "none":
                    continue            # core before v1.2.0 (#1891) has no such event
                message = message.removesuffix(MIN_VALUES_EVENT_SUFFIX)     # before v1.6.0 (#2299)
            res = s.result.nodepools.get(np_name)
            if res is not None:
                s.nodepool_event(res, reason, message)
        if record:
            # a NodePool no longer skipped: the next skip is news again
            for name in [n for n in self._skipped if n not in self._skipped_now]:
                del self._skipped[name]
        progress = False
        by_uid = {pv.uid: pv for pv in pending}
        for uid, node in solved.existing.items():
            claim = next((c for c in s.claims if c.node_name == node or
                          (c.launched and c.launched.vm_name == node)), None)
            # nominations are keyed like every pod map (namespace/name): to the NodeClaim, or to a
            # Node Karpenter does not manage
            key = s.pod_key(by_uid[uid].obj)
            s.nominated[key] = claim.result.name if claim is not None else node
            if record:
                self._record_placed(key, node, claim)
        limited = {t.name: t for t in sched.templates if t.name in remaining.remaining} if record else {}
        for pv in pending:
            if pv.uid in solved.errors:
                err = solved.errors[pv.uid]
                # a pod that fails was tried last after the Solve's last new NodeClaim (the queue stops once every
                # failed pod was retried with nothing placed since), so what remains now is what it saw
                detail = ""
                if limited and self._said.get(s.pod_key(pv.obj)) != f"error:{err}":
                    detail = reasons.limit_details(err, limited, start, remaining.remaining)
                self.pod_error(pv, err, detail)
        for planned in solved.new_claims:
            if self.create_nodeclaim(planned):
                progress = True
                if record:
                    self._record_created(planned, sched.templates, start)
        return progress

    def pod_error(self, pv: PodView, err: str, detail: str = "") -> None:
        """Karpenter's error for a pod it could not schedule; `detail`: what the record adds (limits)."""
        s = self.state
        key = s.pod_key(pv.obj)
        pr = s.result.pods[key]
        pr.karpenter_error = pr.reason = err
        s.pod_event(pr, f"Failed to schedule pod, {err}")
        if s.decisions.enabled:
            self._say(key, "pod-unschedulable", err + (f"; {detail}" if detail else ""), same=f"error:{err}")

    def create_nodeclaim(self, planned) -> bool:
        """Provisioner.Create: the NodePool's limits against what cluster state counts for it (limit_refusal),
        ToNodeClaim (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go) and the API
        write (provisioner.go Create; the CRD rules judge it)."""
        s = self.state
        t = planned.template
        refused = self.limit_refusal(t.name, t.nodepool)
        if refused is not None:
            self._refused(planned, refused)
            return False
        obj, reqs = to_nodeclaim(t, planned.requirements, planned.instance_types,
                                 add(planned.requests, planned.daemon_requests), s.profile, s.sem, s.core, s.rng,
                                 lambda: s.name(t.name + "-"))
        return self.write_nodeclaim(obj, reqs, t, planned.pods)

    def limit_refusal(self, nodepool: str, fallback: dict) -> str | None:
        """Provisioner.Create's limit check (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/provisioner.go
        Create, Limits.ExceededBy on Cluster.NodePoolResourcesFor): the NodePool's launched nodes not marked for
        deletion, each its capacity and one `nodes`; the error when one limited resource is above its limit. The
        NodeClaims of the same batch are not counted (they have no provider id yet). From core v1.11.0 the scheduler
        has already refused what this would (it counts `nodes` too); before, a `nodes` limit is enforced here only,
        one node late (core-behaviour.yaml nodeLimits)."""
        s = self.state
        latest = s.cluster.get("NodePool", nodepool) or fallback
        if nodepool_limits(latest) is None:
            return None
        usage: dict[str, int] = {}
        for c in s.claims:
            if c.done or c.launched is None or c.template.name != nodepool:
                continue
            # StateNode.MarkedForDeletion: its resources leave the NodePool's count
            if c.dis.marked_for_deletion or c.dis.deleting_since is not None or \
                    c.obj["metadata"].get("deletionTimestamp"):
                continue
            usage = add(usage, {**c.launched.instance_type.capacity, NODES: 1})
        over = exceeded_by(latest, usage)
        if over is None:
            return None
        # the error's words moved to serrors with the change core-behaviour.yaml blockedReasonFormat reads (#2136)
        return create_refused_message(usage_exceeds_message(*over, s.core["blockedReasonFormat"] == "keyValue"))

    def _refused(self, planned, err: str) -> None:
        """A NodeClaim Create refused: nothing is written, the pods stay pending with no event and no Karpenter
        error of their own (core returns the error from the provisioner's Reconcile, which controller-runtime
        logs as "Reconciler error"), and the next pass plans them again. The decision record keeps the error."""
        s = self.state
        keys = [s.pod_key(pv.obj) for pv in planned.pods]
        s.trace(f"NodeClaim for {len(keys)} pod(s) of NodePool {planned.template.name} refused: {err}")
        if s.decisions.enabled:
            # core-behaviour.yaml nodeLimits, read for the words: a run where it differs names it at this decision
            counted = s.core["nodeLimits"]
            text = reasons.create_refused(planned.template.name, keys, err, counted)
            for k in keys:
                self._say(k, "nodeclaim-refused", text, (f"NodePool/{planned.template.name}",),
                          {"nodePool": planned.template.name}, same=f"refused:{err}")

    def write_nodeclaim(self, obj: dict, reqs, t: Template, planned_pods: list[PodView]) -> bool:
        """The API write of a NodeClaim object (provisioner.go Create; the CRD rules judge it) and the
        loop's record of it; False when the API server refused it."""
        s = self.state
        name, labels = obj["metadata"]["name"], obj["metadata"]["labels"]
        spec_t = t.nodepool["spec"]["template"]["spec"]
        pods = [s.pod_key(p.obj) for p in planned_pods]
        result = NodeClaimResult(name, t.name, pods, obj["spec"]["requirements"], dict(labels),
                                 at={"created": s.clock.now()})
        s.result.nodeclaims.append(result)
        for k in pods:
            s.result.pods[k].nodeclaims.append(name)
            s.launches_for[k] = s.launches_for.get(k, 0) + 1
        try:
            created = s.cluster.create(obj, KARPENTER)
        except APIRejected as e:
            result.rejected = e.message
            for k in pods:
                self.pod_error(s.pod_views[k], f"creating nodeclaim, {e.message}")
            s.trace(f"NodeClaim {name} rejected: {e.message}")
            return False
        nc_name = (spec_t.get("nodeClassRef") or {}).get("name", "")
        claim = Claim(created, result, t, reqs, s.clock.now(), nodeclass_params(s, nc_name), nc_name)
        s.claims.append(claim)
        for k in pods:
            s.nominated[k] = name
        s.trace(f"created NodeClaim {name} for {len(pods)} pod(s) from NodePool {t.name}")
        return True

    # -- the decision record (harness/loop/decisions.py; texts: harness/loop/provisioning/reasons.py) -------
    def _say(self, key: str, action: str, reason: str, related=(), data: dict | None = None,
             same: str | None = None) -> None:
        """Record a decision about pod `key` unless the record last said the same of it (`same`: what makes
        two decisions the same, by default the action and reason)."""
        said = same or f"{action}:{reason}"
        if self._said.get(key) == said:
            return
        self._said[key] = said
        self.state.decide("provisioner", action, reasons.pod_ref(key), reason, related, data)

    def _say_preempting(self, key: str, node: str) -> None:
        """Why a pod nominated by preemption gets no NodeClaim, said once while it waits."""
        if self.state.decisions.enabled:
            self._say(key, "pod-not-provisionable",
                      f"kube-scheduler nominated it to Node {node} by preemption (status.nominatedNodeName): core "
                      "does not provision for a pod that is preempting (IsProvisionable, IsPreempting)")

    def _skip(self, nodepool: str, reason: str) -> None:
        self._skipped_now.add(nodepool)
        if self._skipped.get(nodepool) == reason:
            return
        self._skipped[nodepool] = reason
        self.state.decide("provisioner", "nodepool-skipped", f"NodePool/{nodepool}", reason)

    def _record_provisionable(self, pending: list[PodView], deleting: int) -> None:
        """Core logs "found provisionable pod(s)" once a round (provisioner.go Schedule)."""
        s = self.state
        keys = [s.pod_key(pv.obj) for pv in pending]
        refs = tuple(reasons.pod_ref(k) for k in keys)
        last = self._provisionable
        if last is not None and s.result.decisions and s.result.decisions[-1] is last and last.related == refs:
            # the same pods as the round before, which decided nothing: a round that repeats an idle one
            # (pods waiting on a drain, say) adds nothing to the record
            return
        reason = f"found {len(keys)} provisionable pod(s): {reasons.names_phrase(keys)}"
        if deleting:
            reason += f" ({deleting} of them on nodes being deleted)"
        self._provisionable = s.decide("provisioner", "pods-provisionable", refs[0], reason, refs,
                                       {"pods": len(keys), "deleting": deleting})

    def _record_not_ready(self, templates: list[Template]) -> None:
        """The NodePools NewScheduler leaves out: not Ready, static, being deleted (provisioner.go
        NewScheduler; nodepool.py ready_nodepools)."""
        s = self.state
        used = {t.name for t in templates}
        if all(name in used for name, res in s.result.nodepools.items() if res.accepted):
            return          # every NodePool has a template this round (listing them costs more than the round)
        ready = {np["metadata"]["name"] for np in ready_nodepools(s)}
        for np in s.cluster.list("NodePool"):
            name = np["metadata"]["name"]
            if name in ready:
                continue
            res = s.result.nodepools.get(name)
            if is_static(np):
                reason = "static NodePool (spec.replicas is set): the provisioner makes no NodeClaims for it" + (
                    "" if s.cfg.feature_gates.get(STATIC_GATE) else
                    ", and with the StaticCapacity feature gate off no static controller does")
            elif np["metadata"].get("deletionTimestamp"):
                reason = "being deleted: the provisioner leaves it out"
            elif res is not None and res.stage == "runtime":
                reason = f"not Ready: ValidationSucceeded=False, {res.message}"
            else:
                conds = ((np.get("status") or {}).get("conditions") or [])
                bad = [c for c in conds if c.get("type") != "Ready" and c.get("status") != "True"]
                reason = "not Ready" + ("".join(f": {c['type']}={c.get('status')} ({c.get('reason')}"
                                               + (f", {c['message']}" if c.get("message") else "") + ")"
                                               for c in bad[:1]) or ": its status is not Ready yet")
            self._skip(name, reason)

    def _record_skipped_templates(self, sched: Scheduler, remaining: RemainingResources, start: dict) -> None:
        """The Ready NodePools a new NodeClaim cannot come from this round: those whose own requirements leave
        no instance type (NewScheduler's prefilter), and those whose limits no instance type fits in at the
        round's start (core addToNewNodeClaim fails on them for every pod: limits.py RemainingResources.check)."""
        for np_name, reason, message in sched.nodepool_events:
            if reason == "NoCompatibleInstanceTypes":
                self._skip(np_name, f"NoCompatibleInstanceTypes: {message}")
        for t in sched.templates:
            name = t.name
            if name not in remaining.remaining:
                continue
            options = t.options if t.options is not None else t.instance_types
            _, err = remaining.check(name, options)
            if err is None:
                continue
            self._skip(name, f"limits used up, {err}: " + reasons.limits_arithmetic(
                t.nodepool, None, start[name], options, "a new NodeClaim needs at least"))

    def _record_placed(self, key: str, node: str, claim) -> None:
        """A pod the Solve placed on an existing or in-flight node (core Scheduler.add tries those first)."""
        # the same node again (as it registers, initializes) is the same decision; so is the NodeClaim the
        # pod was planned on when it was created
        same = f"on:{claim.result.name if claim else node}"
        if self._said.get(key) == same:
            return
        if claim is None:
            where, related = f"Node {node} (not managed by Karpenter)", (f"Node/{node}",)
        else:
            name = claim.result.name
            related = (f"NodeClaim/{name}", f"Node/{node}", f"NodePool/{claim.template.name}")
            if not claim.registered:
                where = f"in-flight NodeClaim {name} (launched, its Node {node} not registered yet)"
            elif not claim.initialized:
                where = f"Node {node} of NodeClaim {name} (registered, not initialized yet)"
            else:
                where = f"Node {node} of NodeClaim {name}"
        self._say(key, "pod-placed", f"fits on {where}: existing and in-flight nodes are tried before a "
                  "new NodeClaim", related, {"node": node}, same=same)

    def _record_created(self, planned, order: list[Template], start: dict | None) -> None:
        """Which NodePool the new NodeClaim came from and why that one: weight order, a tie broken by name,
        why each NodePool tried before it could not take the pod that opened it, and the instance types left."""
        s = self.state
        c = s.claims[-1]
        name, t = c.result.name, planned.template
        keys = [s.pod_key(pv.obj) for pv in planned.pods]
        first = keys[0] if keys else ""
        passed = []
        by_name = {tt.name: tt for tt in order}
        for np_name, err, left in planned.passed_over or ():
            other = by_name.get(np_name)
            detail = ""
            if other is not None and left is not None and reasons.is_limit_error(np_name, err):
                options = other.options if other.options is not None else other.instance_types
                detail = reasons.limits_arithmetic(other.nodepool, (start or {}).get(np_name), left, options)
            elif other is not None and err.startswith(("no instance type", "minValues")):
                err = err.split(", requirements=", 1)[0]
                detail = reasons.elimination_summary(
                    explain_template(planned.pods[0], other, s.profile.well_known_labels, s.sem))
            w = other.weight if other is not None else 0
            passed.append({"nodePool": np_name, "weight": w, "error": err, **({"detail": detail} if detail else {})})
        text = (f"NodePool {t.name} for {len(keys)} pod(s) {reasons.names_phrase(keys)}, "
                f"{reasons.weight_phrase(t.weight)}: ")
        if passed:
            text += f"the first NodePool in weight order that could take pod {first}"
        elif len(order) > 1:
            text += "the first NodePool tried in weight order"
        else:
            text += "the only NodePool to try"
        tie = reasons.tie_phrase(t, order)
        if tie:
            text += f"; {tie}"
        tried = {tt.name for tt in order}
        out = sorted(n for n in self._skipped_now if n not in tried)
        if out:
            # not Ready, static, or no instance type left by its own requirements: skipped before any pod
            text += "; left out this round: " + ", ".join(
                f"NodePool {n} ({self._skipped[n].split(':', 1)[0]})" for n in out if n in self._skipped)
        if passed:
            text += "; tried before it: " + "; ".join(
                f"NodePool {p['nodePool']}, {reasons.weight_phrase(p['weight'])}: {p['error']}"
                + (f": {p['detail']}" if p.get("detail") else "") for p in passed)
        its = planned.instance_types
        best = reasons.cheapest(its, planned.requirements, s.profile.well_known_labels)
        text += f"; {len(its)} instance type(s) remain"
        data = {"nodePool": t.name, "weight": t.weight, "pods": keys, "instanceTypes": len(its)}
        if best is not None:
            it, o = best
            text += f", cheapest {it.name} at {reasons.price_phrase(o.price)}"
            data["cheapest"] = {"instanceType": it.name, "price": o.price}
        if passed:
            data["passedOver"] = passed
        for k in keys:
            self._said[k] = f"on:{name}"
        s.decide("provisioner", "nodeclaim-created", f"NodeClaim/{name}", text,
                 [*(reasons.pod_ref(k) for k in keys), f"NodePool/{t.name}",
                  *(f"NodePool/{p['nodePool']}" for p in passed)],
                 data)
