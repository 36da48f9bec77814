"""Which core-behaviour scopes a run touched (harness.model.upstream.corebehaviour.SCOPES), read from what the
run did and the objects it held, plus those a controller touched where it met the situation
(LoopState.touch_scope: a budget over a node whose instance is deleting, an unpriced consolidation
candidate, ...): a run says a core behaviour is modeled as v1.14.0's only when that behaviour could have
changed its outcome (a drift switch only when a NodeClaim drifted, a PDB one only when a
PodDisruptionBudget existed, and so on)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from harness.loop.scheduling import podutil

if TYPE_CHECKING:
    from harness.loop.state import LoopState


def _pods(s: "LoopState") -> list[dict]:
    return [pv.obj for pv in s.pod_views.values()] + [ds_pod.obj for _, ds_pod in s.daemonsets]


def touched_scopes(s: "LoopState") -> set[str]:
    r = s.result
    out = set(s.core_scopes)                                    # those the controllers met (LoopState.touch_scope)
    if s.claims or r.pods:
        out.add("provisioning")
    nodepools = s.cluster.list("NodePool", shared=True)         # read only
    events = {e["reason"] for e in r.events}
    if r.disruptions or r.protected or events & {"DisruptionBlocked", "Unconsolidatable", "DisruptionTerminating"}:
        out.add("disruption")
    if any(c.dis.drifted is not None or c.dis.disruption_reason == "Drifted" for c in s.claims) or \
            any(d.get("reason") == "Drifted" for d in r.disruptions):
        out.add("drift")
    launched = any(c.launched is not None for c in s.claims)
    if launched and any(((np.get("spec") or {}).get("disruption") or {}).get("consolidateAfter", "0s") != "Never"
                        for np in nodepools):
        out.add("consolidation")
    deleted = [c for c in s.claims if c.done or c.dis.deleting_since is not None or c.dis.marked_for_deletion]
    if deleted:
        out.add("termination")
        if any(c.result.pods for c in deleted) or r.disruptions:
            out.add("deletingNodes")
        if any(((np.get("spec") or {}).get("template") or {}).get("spec", {}).get("terminationGracePeriod")
               for np in nodepools):
            out.add("terminationGracePeriod")
    if s.disruption.pdb_status or s.cluster.list("PodDisruptionBudget", shared=True):
        out.add("pdb")
    if any(c.result.failures or c.result.failure for c in s.claims):
        out.add("launchFailure")
    if any("nodes" in ((np.get("spec") or {}).get("limits") or {}) for np in nodepools):
        out.add("nodeLimits")
    if any((np.get("spec") or {}).get("replicas") is not None for np in nodepools):
        out.add("staticCapacity")
    if s.many_instance_types:
        out.add("manyInstanceTypes")
    if s.cfg.min_values_policy == "BestEffort":
        out.add("minValuesBestEffort")
    if s.cfg.preference_policy == "Ignore":
        out.add("preferencePolicyIgnore")
    if s.daemonsets:
        out.add("daemonSets")
    if any(((np.get("spec") or {}).get("template") or {}).get("spec", {}).get(k)
           for np in nodepools for k in ("taints", "startupTaints")):
        out.add("startupTaints")
    if any(pv.volume_requirements or pv.volume_affinity for pv in s.pod_views.values()):
        out.add("volumeTopology")
    for pod in _pods(s):
        spec = pod.get("spec") or {}
        value = ((pod.get("metadata") or {}).get("annotations") or {}).get(podutil.DO_NOT_DISRUPT)
        if value is not None and str(value) != "true":
            out.add("doNotDisruptDuration")
        if spec.get("topologySpreadConstraints"):
            out.add("topologySpread")
        affinity = spec.get("affinity") or {}
        if any((affinity.get(k) or {}).get("preferredDuringSchedulingIgnoredDuringExecution")
               for k in ("nodeAffinity", "podAffinity", "podAntiAffinity")) or \
                any(t.get("whenUnsatisfiable") == "ScheduleAnyway" for t in spec.get("topologySpreadConstraints") or ()):
            out.add("preferences")
        if any(p.get("hostPort") for c in spec.get("containers") or () for p in c.get("ports") or ()):
            out.add("hostPorts")
        if any(v.get("persistentVolumeClaim") or v.get("ephemeral") for v in spec.get("volumes") or ()):
            out.add("volumes")
        if spec.get("resources"):
            out.add("podLevelResources")
    return out
