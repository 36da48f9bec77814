"""Karpenter core's provisioner (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/provisioner.go).

One pass: the pending pods Karpenter would act on (GetPendingPods; Validate drops pods it ignores,
with the volume checks of harness/loop/volumes.py), the NodeClaimTemplates of the Ready dynamic
NodePools (NewScheduler), the cluster state's existing and in-flight nodes (pkg/controllers/state
cluster.go; karpenter-core.md §4.5), the scheduling simulation (harness/loop/scheduling.py Scheduler,
standing for scheduling/scheduler.go Solve) and, for every new NodeClaim, the API create (Create ->
NodeClaimTemplate ToNodeClaim, scheduling/nodeclaimtemplate.go).
"""
from __future__ import annotations

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.controllers.nodepool import nodeclass_params, ready_nodepools
from harness.loop.controllers.registration import UNINITIALIZED, UNREGISTERED
from harness.loop.controllers.state import Claim, LoopState
from harness.loop.hashes import nodepool_hash_annotations, template_lifetime
from harness.loop.limits import RemainingResources
from harness.loop.pods import PodView, Taint, admission_error
from harness.loop.result import NodeClaimResult
from harness.loop.scheduling import ExistingNode, Scheduler, Template, offering_compatible
from harness.loop.topology import HOSTNAME, Topology, affinity_terms, topology_keys, universe_for
from harness.model.requirements import IN, Requirement
from harness.model.resources import add, format_resource_list, parse_resource_list
from harness.model.wellknown import CAPACITY_TYPE, INSTANCE_TYPE
from harness.model.writers import resolved_requirement_labels

NO_DYNAMIC_NODEPOOLS = "no dynamic nodepools found"     # provisioner.go Schedule (ErrNodePoolsNotFound)


class Provisioner:
    """Pending pods -> NodeClaims. `templates(record=False)` is the same template step for readers
    (the why view) that must leave the run's result alone."""

    def __init__(self, state: LoopState):
        self.state = state
        self._hostnames = 0          # the scheduler's placeholder hostnames, unique over the run

    # -- templates (NewScheduler) -----------------------------------------------------------------
    def templates(self, record: bool = True) -> list[Template]:
        """The NodeClaimTemplates of a provisioning pass: Ready dynamic NodePools with their
        AKSNodeClass's instance types. `record=False` leaves the run's result alone."""
        s = self.state
        templates = []
        daemon_pods = [view for _, view in s.daemonsets]
        for np in ready_nodepools(s):
            ref = np["spec"]["template"]["spec"].get("nodeClassRef") or {}
            params = nodeclass_params(s, ref.get("name", ""))
            if params is None:
                continue
            its = s.provider.instance_types(params)
            if record:
                self._record_instance_types(its)
            t = Template.from_nodepool(np, list(its.instance_types), s.profile, s.sem)
            t.daemon_pods = daemon_pods
            templates.append(t)
        return templates

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
        """Cluster state (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/state/cluster.go; karpenter-core.md
        §4.5): registered
        Nodes by their labels, in-flight NodeClaims by the NodeClaim's labels; requested = bound +
        nominated pods. The ephemeral unregistered/uninitialized taints are not counted."""
        s = self.state
        used = s.node_requested()
        out = []
        for c in s.claims:
            if c.done or c.refused:
                continue
            nominated = [k for k, n in s.nominated.items() if n == c.result.name and not s.result.pods[k].node]
            extra: dict[str, int] = {}
            for k in nominated:
                extra = add(extra, s.pod_views[k].requests)
            if c.registered and c.node_name:
                node = s.cluster.get("Node", c.node_name)
                if node is None:
                    continue
                req = add(used.get(c.node_name, {}), extra)
                out.append(ExistingNode(c.node_name, dict(node["metadata"].get("labels") or {}),
                                        [Taint.from_dict(t) for t in (node.get("spec") or {}).get("taints") or []
                                         if t["key"] not in (UNREGISTERED.key, UNINITIALIZED.key)],
                                        parse_resource_list((node.get("status") or {}).get("allocatable") or {}),
                                        req, c.result.name))
            elif c.launched is not None:
                it = c.launched.instance_type
                out.append(ExistingNode(c.launched.vm_name, dict(c.obj["metadata"].get("labels") or {}),
                                        [Taint.from_dict(t) for t in c.obj["spec"].get("taints") or []],
                                        it.allocatable(), extra, c.result.name))
        return out

    def remaining_resources(self) -> RemainingResources:
        """NodePool limits minus launched NodeClaims' capacity (harness/loop/limits.py: core
        NewScheduler + updateRemainingResources; an unlaunched NodeClaim is not in cluster state)."""
        s = self.state
        launched = [(c.template.name, c.launched.instance_type.capacity) for c in s.claims
                    if not c.done and c.launched is not None]
        return RemainingResources.build(s.cluster.list("NodePool"), launched)

    def topology(self, pending: list[PodView], templates: list[Template], existing: list[ExistingNode]):
        """Topology for this pass (core scheduling/topology.go NewTopology): the domain universe of
        the keys pending pods spread over, the existing nodes' labels and the running pods to count."""
        s = self.state
        running = [(pv, s.result.pods[k].node) for k, pv in s.pod_views.items() if s.result.pods[k].node]
        keys = set().union(*(topology_keys(pv) for pv in pending)) if pending else set()
        anti = [(pv, n) for pv, n in running if affinity_terms(pv, "podAntiAffinity")]
        if not keys and not anti:
            return None
        node_labels = {n.name: n.labels for n in existing}
        for node in s.cluster.list("Node"):
            node_labels.setdefault(node["metadata"]["name"], node["metadata"].get("labels") or {})
        for pv, _ in anti:
            keys |= topology_keys(pv)
        bound = [(pv.namespace, pv.labels, n) for pv, n in running]
        return Topology(universe_for(keys, templates), node_labels, bound, anti)

    # -- the pass (Reconcile -> Schedule -> CreateNodeClaims) ---------------------------------------
    def pending_pods(self) -> list[PodView]:
        """GetPendingPods + Validate: unbound non-DaemonSet pods Karpenter does not ignore and that
        are not waiting for the NodeClaim they were nominated to."""
        s = self.state
        pending = []
        for key, pv in sorted(s.pod_views.items(), key=lambda kv: kv[1].order):
            pr = s.result.pods[key]
            if pr.node or pv.owner_kind == "DaemonSet":
                continue
            err = admission_error(pv, s.profile, s.sem)
            verr = s.volumes.validate(pv.obj) if s.volumes or pv.spec.get("volumes") else None
            if verr is not None:      # Provisioner.Validate combines every error (multierr, "; ")
                err = (f"{err[0]}; {verr}", err[1]) if err is not None else (verr, True)
            if err is not None:
                msg, emits = err
                pr.state, pr.reason, pr.karpenter_error = "ignored", msg, msg
                if emits:
                    s.pod_event(pr, f"Failed to schedule pod, {msg}")
                continue
            claim = s.claim_by_name(s.nominated.get(key, ""))
            if claim is not None and not (claim.done or claim.refused or claim.initialized):
                continue    # waiting for its in-flight NodeClaim (cluster state nomination)
            pending.append(pv)
        return pending

    def reconcile(self) -> bool:
        s = self.state
        pending = self.pending_pods()
        if not pending:
            return False
        templates = self.templates()
        if not templates and not ready_nodepools(s):
            for pv in pending:
                self.pod_error(pv, NO_DYNAMIC_NODEPOOLS)
            return False

        def counter() -> int:
            self._hostnames += 1
            return self._hostnames
        for pv in pending:
            pv.volume_requirements = s.volumes.requirements(pv.obj, s.sem) if s.volumes else None
        existing = self.existing_nodes()
        sched = Scheduler(templates, existing, s.profile, s.sem, s.cfg.min_values_policy, counter,
                          self.topology(pending, templates, existing), self.remaining_resources())
        solved = sched.solve(pending)
        for np_name, reason, message in solved.nodepool_events:
            res = s.result.nodepools.get(np_name)
            if res is not None:
                s.nodepool_event(res, reason, message)
        progress = False
        by_uid = {pv.uid: pv for pv in pending}
        for uid, node in solved.existing.items():
            claim = next((c for c in s.claims if c.node_name == node or
                          (c.launched and c.launched.vm_name == node)), None)
            if claim is not None:       # nominations are keyed like every pod map: namespace/name
                s.nominated[s.pod_key(by_uid[uid].obj)] = claim.result.name
        for pv in pending:
            if pv.uid in solved.errors:
                self.pod_error(pv, solved.errors[pv.uid])
        for planned in solved.new_claims:
            if self.create_nodeclaim(planned):
                progress = True
        return progress

    def pod_error(self, pv: PodView, err: str) -> None:
        s = self.state
        pr = s.result.pods[s.pod_key(pv.obj)]
        pr.karpenter_error = pr.reason = err
        s.pod_event(pr, f"Failed to schedule pod, {err}")

    def create_nodeclaim(self, planned) -> bool:
        """ToNodeClaim (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go; karpenter-core.md §3.1) and the API
        write (provisioner.go Create; the CRD rules judge it)."""
        s = self.state
        t = planned.template
        reqs = planned.requirements.without(HOSTNAME, *s.profile.scheduling_simulation_keys)
        wk = s.profile.well_known_labels
        # Scheduler._truncate already kept the 600 cheapest (sigs.k8s.io/karpenter v1.14.0
        # pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go MaxInstanceTypes; karpenter-core.md
        # §3.3 Truncation)
        its = planned.instance_types
        reqs.add(Requirement(INSTANCE_TYPE, False, frozenset(it.name for it in its),
                             min_values=reqs.get(INSTANCE_TYPE).min_values if INSTANCE_TYPE in reqs else None))
        cts = sorted({o.capacity_type for it in its for o in it.offerings
                      if offering_compatible(o, reqs, wk)})
        if cts:
            reqs.add(Requirement.new(CAPACITY_TYPE, IN, cts, s.sem))
        labels = dict(t.labels)
        if s.profile.label_resolution == "toNodeClaim":
            labels.update(resolved_requirement_labels(s.profile, reqs, s.rng))
        name = s.name(t.name + "-")
        spec_t = t.nodepool["spec"]["template"]["spec"]
        obj = {
            "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": name, "labels": labels,
                         # NodePool.Hash and its version (core nodeclaimtemplate.go NewNodeClaimTemplate)
                         "annotations": nodepool_hash_annotations(t.nodepool),
                         "ownerReferences": [{"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
                                              "name": t.name, "uid": t.nodepool["metadata"].get("uid", ""),
                                              "blockOwnerDeletion": True}]},
            "spec": {"requirements": reqs.node_selector_requirements(),
                     "resources": {"requests": format_resource_list(planned.requests)},   # the pods' sum
                     "nodeClassRef": spec_t.get("nodeClassRef"),
                     **({"taints": spec_t["taints"]} if spec_t.get("taints") else {}),
                     **({"startupTaints": spec_t["startupTaints"]} if spec_t.get("startupTaints") else {}),
                     **template_lifetime(spec_t)},    # expireAfter, terminationGracePeriod (ToNodeClaim)
        }
        pods = [s.pod_key(p.obj) for p in planned.pods]
        result = NodeClaimResult(name, t.name, pods, obj["spec"]["requirements"], dict(labels))
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
