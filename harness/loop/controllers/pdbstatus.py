"""PodDisruptionBudget status: kube-controller-manager's disruption controller (k8s.io/kubernetes v1.36.3
pkg/controller/disruption/disruption.go trySync), which the loop stands in for: each pass recomputes
every PDB's currentHealthy, desiredHealthy, expectedPods and disruptionsAllowed from the pods
(harness/loop/pdb.py compute_statuses), and writes them to the PDB's status when they change.
"""
from __future__ import annotations

from harness.backends.base import ADMIN, APIRejected
from harness.loop import podutil
from harness.loop.controllers.state import LoopState
from harness.loop.pdb import PDB, PodInfo, compute_statuses


class PDBStatus:
    def __init__(self, state: LoopState):
        self.state = state
        self.enabled = False             # set once a PodDisruptionBudget is applied (Simulation.apply)

    def reconcile(self) -> bool:
        s = self.state
        if not self.enabled:
            return False
        objs = s.cluster.list("PodDisruptionBudget")
        pods = [PodInfo(pv.namespace, pv.name, pv.labels, bool(s.result.pods[k].node), podutil.controller_of(pv))
                for k, pv in s.pod_views.items() if s.result.pods[k].state != "deleted"]
        out = {}
        for obj, pdb in zip(objs, compute_statuses([PDB.from_manifest(obj) for obj in objs], pods)):
            key = (pdb.namespace, pdb.name)
            out[key] = pdb
            status = {"currentHealthy": pdb.current_healthy, "desiredHealthy": pdb.desired_healthy,
                      "expectedPods": pdb.expected_pods, "disruptionsAllowed": pdb.disruptions_allowed}
            if (obj.get("status") or {}) != status:
                try:
                    s.cluster.update_status({**obj, "status": status}, ADMIN)
                except APIRejected as e:
                    s.trace(f"PodDisruptionBudget {pdb.key} status: {e.message}")
        s.disruption.pdb_status = out
        return False
