"""PodDisruptionBudget status: kube-controller-manager's disruption controller (k8s.io/kubernetes v1.36.3
pkg/controller/disruption/disruption.go trySync), which the loop stands in for: each pass recomputes
every PDB's currentHealthy, desiredHealthy, expectedPods and disruptionsAllowed from the pods
(harness/loop/pdb.py sync_statuses), and writes them to the PDB's status when they change.
"""
from __future__ import annotations

from harness.backends.base import ADMIN, APIRejected
from harness.loop import podutil
from harness.loop.controllers.state import LoopState
from harness.loop.pdb import PDB, PDBIndex, PodInfo, sync_statuses


class PDBStatus:
    def __init__(self, state: LoopState):
        self.state = state
        self.enabled = False             # set once a PodDisruptionBudget is applied (Simulation.apply)
        # which PDBs each pod matches, kept between passes while the PDBs' selectors are the same: pod key ->
        # (the pod's object the match was found for, the matching PDBs' positions, the pod's controller). A pass
        # runs every quiet iteration over every pod; a pod's labels and owner change only with a new object
        # (workloads.py _update_pod), so each pass reads a kept match, not the PDB index, for each pod
        self._selectors: tuple | None = None
        self._matches: dict[str, tuple] = {}
        # the last pass's LoopState.unchanged_since after its writes, the statuses it published and their
        # allowances (an eviction takes one in place: pdb.Limits.evict): an equal token with the allowances
        # untouched, and the pass would publish the same statuses again
        self._seen: tuple | None = None
        self._published: tuple[dict, tuple] | None = None

    def reconcile(self) -> bool:
        s = self.state
        if not self.enabled:
            return False
        token = s.unchanged_since()
        if token is not None and token == self._seen and self._published is not None \
                and s.disruption.pdb_status is self._published[0] \
                and tuple(p.disruptions_allowed for p in s.disruption.pdb_status.values()) == self._published[1]:
            return False
        objs = s.cluster.list("PodDisruptionBudget")
        pdbs = [PDB.from_manifest(obj) for obj in objs]
        selectors = tuple((p.namespace, p.name, repr(p.selector)) for p in pdbs)
        kept = self._matches if selectors == self._selectors else {}
        index = PDBIndex(pdbs)
        matched: list[list[PodInfo]] = [[] for _ in pdbs]
        matches = {}
        results = s.result.pods
        for k, pv in s.pod_views.items():
            pr = results[k]
            if pr.state == "deleted":
                continue
            m = kept.get(k)
            if m is None or m[0] is not pv.obj:
                m = (pv.obj, index.positions(pv.namespace, pv.labels), podutil.controller_of(pv))
            matches[k] = m
            for i in m[1]:
                matched[i].append(PodInfo(pv.namespace, pv.name, pv.labels, bool(pr.node), m[2]))
        self._selectors, self._matches = selectors, matches
        out = {}
        for obj, pdb in zip(objs, sync_statuses(pdbs, matched)):
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
        self._seen = s.unchanged_since()
        self._published = (out, tuple(p.disruptions_allowed for p in out.values()))
        return False
