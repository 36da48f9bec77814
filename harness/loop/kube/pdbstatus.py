"""PodDisruptionBudget status: kube-controller-manager's disruption controller (k8s.io/kubernetes v1.36.3
pkg/controller/disruption/disruption.go trySync), which the loop stands in for: each pass recomputes
every PDB's currentHealthy, desiredHealthy, expectedPods and disruptionsAllowed from the pods
(harness/loop/kube/pdb.py sync_statuses), and writes them to the PDB's status when they change.
"""
from __future__ import annotations

import itertools

from harness.backends.base import ADMIN, APIRejected
from harness.loop.scheduling import podutil
from harness.loop.state import LoopState
from harness.loop.kube.pdb import PDB, PDBIndex, PodInfo, sync_statuses


class PDBStatus:
    def __init__(self, state: LoopState):
        self.state = state
        self.enabled = False             # set once a PodDisruptionBudget is applied (Simulation.apply)
        # the live pods some PDB matches, kept between passes while the PDBs' selectors are the same: pod key ->
        # (the matching PDBs' positions, the pod's controller). A pass reads the pods created since the last
        # (`_created`: the last PodView.order read) and the ones bound, gone or changed since (LoopState.moved,
        # read up to `_read`); a pod's labels and owner change only with a new object (workloads.py
        # _update_pod: LoopState.changed_in_place)
        self._selectors: tuple | None = None
        self._members: dict[str, tuple] = {}
        self._created = 0
        self._read = 0
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
        views, results = s.pod_views, s.result.pods
        if selectors != self._selectors:
            self._selectors, self._members, self._created = selectors, {}, 0
        index = PDBIndex(pdbs)
        members = self._members
        # the pods created since the last pass (a view's order only grows: read from the end), then the ones
        # moved or changed since, each matched again as it is now
        created = list(itertools.takewhile(lambda k: views[k].order > self._created, reversed(views)))
        changed = dict.fromkeys(reversed(created))
        changed.update(dict.fromkeys(s.moved[self._read:]))
        if created:
            self._created = views[created[0]].order
        self._read = len(s.moved)
        for k in changed:
            pv = views.get(k)
            found = index.positions(pv.namespace, pv.labels) if pv is not None else ()
            if found:
                members[k] = (found, podutil.controller_of(pv))
            else:
                members.pop(k, None)
        matched: list[list[PodInfo]] = [[] for _ in pdbs]
        for k, (found, controller) in members.items():
            pv = views[k]
            info = PodInfo(pv.namespace, pv.name, pv.labels, bool(results[k].node), controller)
            for i in found:
                matched[i].append(info)
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
