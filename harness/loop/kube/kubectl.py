"""A support engineer's kubectl verbs, played on the simulated cluster as the API server and the controllers
behind it answer them: `kubectl delete nodeclaim|node`, `cordon`, `uncordon`, `drain`, `scale`, `rollout
restart`, `label`, `annotate` (a scenario step's actions: harness/scenario/steps.py ACTIONS).

Deleting a NodeClaim or a Karpenter Node starts the termination Karpenter runs for its own deletions
(nodetermination.py: the Node's karpenter.sh/termination finalizer drains it, the NodeClaim goes with it,
sigs.k8s.io/karpenter v1.14.0 pkg/controllers/node/termination/controller.go finalize,
pkg/controllers/nodeclaim/lifecycle/controller.go finalize). A drain is kubectl's (k8s.io/kubectl
pkg/drain/drain.go evictPods): evictions through the eviction API, a PDB's refusal retried until it is
allowed. The verbs' order and what each plays: docs/scenario-format.md (Steps).
"""
from __future__ import annotations

import copy
from typing import Callable

from harness.backends.base import ADMIN, APIRejected
from harness.loop.scheduling import podutil
from harness.loop.lifecycle.nodetermination import NodeTermination, evict_pod
from harness.model.kube.kubetime import rfc3339
from harness.loop.state import Claim, LoopState
from harness.loop.kube.workloads import Workloads
from harness.loop.kube.pdb import MULTIPLE_PDBS_ERROR, Limits

# what kube-controller-manager's node lifecycle controller puts on a Node whose spec.unschedulable is set
# (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle/node_lifecycle_controller.go doNoScheduleTaintingPass;
# k8s.io/api core/v1 well_known_taints.go TaintNodeUnschedulable): Karpenter's scheduling reads taints, not
# spec.unschedulable (no core release v1.0.0-v1.14.0 does), so a cordoned Node keeps the pods that do not
# tolerate it off its simulations too
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
# the annotation `kubectl rollout restart` puts on a Deployment's pod template (k8s.io/kubectl
# pkg/polymorphichelpers/objectrestarter.go defaultObjectRestarter)
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# kubectl drain retries an eviction the API server answers 429 (a PDB) every 5 s (k8s.io/kubectl
# pkg/drain/drain.go evictPods: `time.Sleep(5 * time.Second)`), for as long as --timeout allows (default 0: ever)
EVICTION_RETRY_SECONDS = 5
# the flags a drain step plays (a support runbook's): DaemonSet pods stay, emptyDir data and pods no
# controller owns are evicted too
DRAIN_FLAGS = "--ignore-daemonsets --delete-emptydir-data --force"


class KubectlError(Exception):
    """kubectl's answer to a verb the cluster refuses (`Error from server (NotFound): ...`); `key` is the
    step's field it came from (`scale`, `drain`)."""

    def __init__(self, key: str, wanted: str, reason: str):
        super().__init__(reason)
        self.key, self.wanted, self.reason = key, wanted, reason


def not_found(resource: str, name: str) -> str:
    """The API server's NotFound as kubectl prints it."""
    return f'Error from server (NotFound): {resource} "{name}" not found'


class Kubectl:
    """The verbs, and the drains still retrying a refused eviction (`reconcile`)."""

    def __init__(self, state: LoopState, node_termination: NodeTermination, workloads: Workloads,
                 pdb_status: Callable[[], object]):
        self.state = state
        self.node_termination = node_termination
        self.workloads = workloads
        self.pdb_status = pdb_status            # recompute the PDBs' status (PDBStatus.reconcile)
        self.draining: dict[str, list[str]] = {}  # Node -> pods whose eviction kubectl drain still retries

    # -- delete ---------------------------------------------------------------------------------------
    def delete(self, kind: str, name: str) -> None:
        """`kubectl delete nodeclaim NAME` / `kubectl delete node NAME`."""
        s = self.state
        if kind == "NodeClaim":
            c = s.claim_by_name(name)
            if (c is None or c.done) and s.cluster.get("NodeClaim", name) is not None:
                s.cluster.delete("NodeClaim", name, identity=ADMIN)    # one a manifest made: no Karpenter launched it
                return
            if c is None or c.done:
                raise KubectlError("delete", f"NodeClaim {name}", not_found("nodeclaims.karpenter.sh", name)
                                   + f"; NodeClaims there: {self._claims_there()}")
            self._delete_claim(c, f"the user's `kubectl delete nodeclaim {name}`")
            return
        c = next((c for c in s.claims if c.node_name == name and not c.done), None)
        node = s.cluster.get("Node", name)
        if node is None:
            raise KubectlError("delete", f"Node {name}", not_found("nodes", name) + f"; Nodes there: {self._nodes_there()}")
        if c is not None:
            try:          # the karpenter.sh/termination finalizer holds it: marked, not gone
                s.cluster.delete("Node", name, identity=ADMIN)
            except APIRejected as e:
                s.trace(f"kubectl delete node {name}: {e.message}")
            # core's Node finalize deletes its NodeClaim first (nodetermination.py _deleted_nodes); the same pass
            self._delete_claim(c, f"the user's `kubectl delete node {name}`, which deletes its NodeClaim")
            return
        self._delete_unmanaged(name)

    def _delete_claim(self, c: Claim, by: str) -> None:
        s = self.state
        if c.dis.deleting_since is not None:
            s.trace(f"{by}: NodeClaim {c.result.name} is already being deleted")
            return
        s.trace(f"{by}")
        self.node_termination.begin(c, "", by=by)

    def _delete_unmanaged(self, name: str) -> None:
        """A Node no NodeClaim owns has no finalizer: it goes at once, and kube-controller-manager's pod
        garbage collector deletes the pods bound to it (k8s.io/kubernetes v1.36.3 pkg/controller/podgc
        gc_controller.go gcOrphaned, force-deleted; harness simplification: without its 40 s quarantine); a
        Deployment's ReplicaSet replaces its own."""
        s = self.state
        try:
            s.cluster.delete("Node", name, identity=ADMIN)
        except APIRejected as e:
            s.trace(f"kubectl delete node {name}: {e.message}")
        if name in s.unmanaged_nodes:
            s.unmanaged_nodes.remove(name)
        if name in s.nodes:
            s.nodes[name].deleted = "deleted"
        keys = [k for k, pr in s.result.pods.items() if pr.node == name and pr.state != "deleted"]
        s.decide("kubectl", "node-deleted", f"Node/{name}",
                 f"deleted by the user's `kubectl delete node {name}`: no Karpenter finalizer holds it, so it is gone "
                 f"at once and the pod garbage collector deletes its {len(keys)} pod(s)", tuple(f"Pod/{k}" for k in keys))
        for k in keys:
            evict_pod(s, k, f"its Node {name} was deleted (pod garbage collector)", grace=0)

    # -- cordon, uncordon ------------------------------------------------------------------------------
    def cordon(self, name: str, key: str = "cordon", unschedulable: bool = True) -> None:
        """spec.unschedulable, and the taint the node lifecycle controller mirrors it into
        (UNSCHEDULABLE_TAINT; harness simplification: at once rather than at its next pass)."""
        s = self.state
        node = s.cluster.get("Node", name)
        if node is None:
            raise KubectlError(key, f"Node {name}", not_found("nodes", name) + f"; Nodes there: {self._nodes_there()}")
        spec = node.setdefault("spec", {})
        verb = "cordon" if unschedulable else "uncordon"
        if bool(spec.get("unschedulable")) == unschedulable:
            s.trace(f"kubectl {verb} {name}: node/{name} already {verb}ed")
            return
        taints = [t for t in spec.get("taints") or [] if t.get("key") != UNSCHEDULABLE_TAINT["key"]]
        if unschedulable:
            spec["unschedulable"] = True
            taints.append(dict(UNSCHEDULABLE_TAINT))
        else:
            spec.pop("unschedulable", None)
        spec["taints"] = taints
        s.cluster.update(node, ADMIN)
        s.decide("kubectl", f"node-{verb}ed", f"Node/{name}",
                 f"the user's `kubectl {key} {name}`{' cordons it' if key == 'drain' else ''}: " + (
                     "spec.unschedulable, tainted node.kubernetes.io/unschedulable:NoSchedule; kube-scheduler and "
                     "Karpenter place no pod that does not tolerate it there" if unschedulable else
                     "spec.unschedulable cleared with its taint; pods may be placed there again"))

    # -- drain ------------------------------------------------------------------------------------------
    def drain(self, name: str) -> None:
        """`kubectl drain NAME` with DRAIN_FLAGS: cordon, then evict every pod but the DaemonSets' and mirror
        pods through the eviction API; a pod a PDB keeps is retried (`reconcile`) until it is allowed."""
        s = self.state
        self.cordon(name, "drain")
        pods = [k for k, pr in s.result.pods.items()
                if pr.node == name and pr.state != "deleted" and k in s.pod_views]
        skipped = [k for k in pods if podutil.owned_by_daemonset(s.pod_views[k]) or podutil.owned_by_node(s.pod_views[k])]
        waiting = [k for k in pods if k not in skipped and podutil.is_active(s.pod_views[k])]
        s.decide("kubectl", "drain-started", f"Node/{name}",
                 f"the user's `kubectl drain {name} {DRAIN_FLAGS}`: cordoned, {len(waiting)} pod(s) to evict "
                 f"through the eviction API" + (f", {len(skipped)} DaemonSet or mirror pod(s) left" if skipped else ""),
                 tuple(f"Pod/{k}" for k in waiting))
        self.draining[name] = waiting
        self._evict(name)

    def reconcile(self) -> bool:
        """kubectl drain's retries: each refused eviction again, with the PDBs' status as it stands (a PDB's
        allowance changes only when the cluster does, so a retry every pass is one every 5 s as far as the
        outcome goes)."""
        if not any(self.draining.values()):
            return False
        progress = False
        for name in sorted(self.draining):
            if self.draining[name]:
                progress |= self._evict(name)
        return progress

    def _evict(self, name: str) -> bool:
        s = self.state
        self.pdb_status()
        limits = Limits(list(s.disruption.pdb_status.values()))
        left, progress = [], False
        for k in self.draining.get(name, []):
            pv, pr = s.pod_views.get(k), s.result.pods.get(k)
            if pv is None or pr is None or pr.state == "deleted" or pr.node != name or not podutil.is_active(pv):
                continue                      # gone or already going: nothing to retry
            refusal = limits.evict(pv.namespace, pv.labels)
            if refusal is None:
                evict_pod(s, k, f"evicted by kubectl drain {name}")
                s.decide("kubectl", "pod-evicted", f"Pod/{k}",
                         f"evicted from Node {name} by the user's `kubectl drain`: the eviction API allowed it",
                         (f"Node/{name}",))
                progress = True
                continue
            pdbs = [p.key for p in limits.matching(pv.namespace, pv.labels)]
            said = s.disruption.said
            if said.get((f"Pod/{k}", "kubectl-drain")) != refusal:
                said[(f"Pod/{k}", "kubectl-drain")] = refusal
                if refusal == MULTIPLE_PDBS_ERROR:
                    # a 500, not a 429: kubectl reports it and does not retry (k8s.io/kubectl pkg/drain/drain.go
                    # evictPods: only IsTooManyRequests is retried)
                    words = "kubectl drain reports the error and does not retry it: the pod stays"
                else:       # kubectl's own line for it (k8s.io/kubectl pkg/drain/drain.go evictPods)
                    words = (f'kubectl prints `error when evicting pods/"{pv.name}" -n "{pv.namespace}" (will retry '
                             f'after {EVICTION_RETRY_SECONDS}s): {refusal}` and retries it every '
                             f"{EVICTION_RETRY_SECONDS} s until the PDB allows it (no --timeout): the pod stays until then")
                s.decide("kubectl", "eviction-refused", f"Pod/{k}",
                         f"the user's `kubectl drain {name}`: eviction refused by "
                         f"{', '.join('PodDisruptionBudget ' + p for p in pdbs) or 'a PodDisruptionBudget'}: "
                         f'"{refusal}"; {words}', (f"Node/{name}",) + tuple(f"PodDisruptionBudget/{p}" for p in pdbs))
            if refusal != MULTIPLE_PDBS_ERROR:
                left.append(k)
        self.draining[name] = left
        return progress

    # -- scale, rollout restart -------------------------------------------------------------------------
    def _workload(self, key: str, kind: str, name: str, namespace: str | None) -> dict:
        """A copy of the Deployment or StatefulSet as applied, or kubectl's NotFound."""
        ns = namespace or "default"
        if kind == "StatefulSet":
            st = self.workloads.statefulsets.sets.get((ns, name))
            obj = st.obj if st is not None else None
        else:
            obj = self.state.deployments.get((ns, name))
        if obj is None:
            raise KubectlError(key, f"{kind} {name}", not_found(f"{kind.lower()}s.apps", name))
        return copy.deepcopy(obj)

    def scale(self, name: str, replicas: int, namespace: str | None = None, kind: str = "Deployment") -> None:
        """`kubectl scale deployment|statefulset NAME --replicas=N`: the ReplicaSet is scaled, or the StatefulSet
        controller makes or removes ordinals (workloads.py update)."""
        obj = self._workload("scale", kind, name, namespace)
        obj.setdefault("spec", {})["replicas"] = int(replicas)
        self.state.decide("kubectl", f"{kind.lower()}-scaled", f"{kind}/{namespace or 'default'}/{name}",
                          f"the user's `kubectl scale {kind.lower()} {name} --replicas={replicas}`")
        self.workloads.update(obj)

    def restart(self, name: str, namespace: str | None = None, kind: str = "Deployment") -> None:
        """`kubectl rollout restart deployment|statefulset NAME`: the pod template gets RESTARTED_AT, so the
        Deployment controller rolls its pods to a new ReplicaSet (workloads.py _update_deployment), or the
        StatefulSet controller to a new revision by its update strategy (statefulsets.py)."""
        s = self.state
        obj = self._workload("restart", kind, name, namespace)
        tmpl = obj.setdefault("spec", {}).setdefault("template", {})
        tmpl.setdefault("metadata", {}).setdefault("annotations", {})[RESTARTED_AT] = rfc3339(s.clock.now())
        to = "a new ReplicaSet" if kind == "Deployment" else "a new revision"
        s.decide("kubectl", f"{kind.lower()}-restarted", f"{kind}/{namespace or 'default'}/{name}",
                 f"the user's `kubectl rollout restart {kind.lower()} {name}`: pod template annotated "
                 f"{RESTARTED_AT}={rfc3339(s.clock.now())}, so its pods roll to {to}")
        self.workloads.update(obj)

    # -- label, annotate ----------------------------------------------------------------------------------
    def metadata(self, verb: str, kind: str, name: str, namespace: str | None, values: dict) -> None:
        """`kubectl label|annotate --overwrite KIND NAME k=v k2-`: a null value removes the key."""
        s = self.state
        field = "labels" if verb == "label" else "annotations"
        ns = namespace or "default"

        def merged(meta: dict) -> dict:
            out = dict(meta.get(field) or {})
            for k, v in values.items():
                if v is None:
                    out.pop(k, None)
                else:
                    out[k] = str(v).lower() if isinstance(v, bool) else str(v)
            return out

        subject = f"{kind}/{ns}/{name}" if kind in ("Pod", "Deployment") else f"{kind}/{name}"
        if kind == "Pod":
            pv = s.pod_views.get(f"{ns}/{name}")
            if pv is None:
                raise KubectlError(verb, f"Pod {ns}/{name}", not_found("pods", name))
            meta = pv.obj["metadata"]
            obj = {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": dict(meta.get("labels") or {}),
                                               "annotations": dict(meta.get("annotations") or {})}}
            obj["metadata"][field] = merged(meta)
            self.workloads.update(obj)
            s.result.pods[f"{ns}/{name}"].labels = dict(obj["metadata"]["labels"])
        elif kind == "Deployment":
            dep = self._workload(verb, kind, name, namespace)
            dep["metadata"][field] = merged(dep["metadata"])
            s.deployments[(ns, name)] = dep      # the object's own metadata: its pods' template is unchanged
        elif kind == "NodeClaim":
            c = s.claim_by_name(name)
            if c is None or c.done:
                raise KubectlError(verb, f"NodeClaim {name}", not_found("nodeclaims.karpenter.sh", name))
            c.obj["metadata"][field] = merged(c.obj["metadata"])
            stored = s.cluster.get("NodeClaim", name)
            if stored is not None:
                stored["metadata"][field] = merged(stored["metadata"])
                s.cluster.update(stored, ADMIN)
        else:                                  # Node, NodePool, AKSNodeClass: the stored object
            obj = s.cluster.get(kind, name)
            if obj is None:
                resource = {"Node": "nodes", "NodePool": "nodepools.karpenter.sh",
                            "AKSNodeClass": "aksnodeclasses.karpenter.azure.com"}[kind]
                there = f"; Nodes there: {self._nodes_there()}" if kind == "Node" else ""
                raise KubectlError(verb, f"{kind} {name}", not_found(resource, name) + there)
            if kind == "Node":
                obj["metadata"][field] = merged(obj["metadata"])
                s.cluster.update(obj, ADMIN)
            else:
                self.workloads.update({"kind": kind, "metadata": {"name": name, field: merged(obj["metadata"])}})
        shown = " ".join(f"{k}-" if v is None else f"{k}={v}" for k, v in values.items())
        s.decide("kubectl", f"{field}-changed", subject, f"the user's `kubectl {verb} --overwrite {kind.lower()} {name} {shown}`")

    # -- words ----------------------------------------------------------------------------------------------
    def _claims_there(self) -> str:
        return ", ".join(c.result.name for c in self.state.claims if not c.done) or "none"

    def _nodes_there(self) -> str:
        return ", ".join(sorted(n["metadata"]["name"] for n in self.state.cluster.list("Node"))) or "none"
