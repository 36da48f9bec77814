"""The real engine beside kube-controller-manager's StatefulSet controller: a set whose pending pod names a claim
that does not exist is synced again.

The controller creates an ordinal's claims from its claim lister (k8s.io/kubernetes v1.36.3
pkg/controller/statefulset/stateful_pod_control.go createPersistentVolumeClaims): when that cache still holds a
claim of the same name that is gone - the previous scenario's, which the reset deleted in etcd a moment before
(harness/backends/local.py reset) - it creates the pod without its claim, and nothing requeues the set while the
pod stays pending (its sync is started by its pods' and its own events; the claim informer has no handler).
Its next sync creates the missing claim (processReplica: a pending pod's createMissingPersistentVolumeClaims),
so the set is given one: an annotation written once per pod, which changes no field the controller reads. A
customer's cluster meets the same only when a set is made again within a moment of its claims' deletion.
"""
from __future__ import annotations

from harness.backends.base import APIRejected

RESYNC = "harness.karpenter.azure.com/resync"


def missing_claims(cluster, sets: list[dict], pods: list[dict]) -> list[tuple[dict, dict, str]]:
    """(set, pod, claim) for each pending pod of `sets` that names a claim of its volumeClaimTemplates the
    cluster does not have."""
    out = []
    for st in sets:
        meta, spec = st["metadata"], st.get("spec") or {}
        ns = meta.get("namespace") or "default"
        templates = {(c.get("metadata") or {}).get("name") for c in spec.get("volumeClaimTemplates") or []}
        if not templates:
            continue
        for pod in pods:
            pmeta = pod["metadata"]
            if pmeta.get("namespace") != ns or (pod.get("spec") or {}).get("nodeName") or \
                    not any(r.get("uid") == meta.get("uid") for r in pmeta.get("ownerReferences") or []):
                continue
            for v in (pod.get("spec") or {}).get("volumes") or []:
                claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
                if v.get("name") in templates and claim and cluster.get("PersistentVolumeClaim", claim, ns) is None:
                    out.append((st, pod, claim))
                    break
    return out


def resync(cluster, missing: list[tuple[dict, dict, str]], done: set[str]) -> None:
    """Give each set of `missing` a sync, once per pod (`done`: the pod uids already answered, updated)."""
    for st, pod, _ in missing:
        uid = pod["metadata"].get("uid")
        if uid in done:
            continue
        done.add(uid)
        try:
            cluster.admin.patch("StatefulSet", st["metadata"]["name"], {"metadata": {"annotations": {RESYNC: uid}}},
                                st["metadata"].get("namespace") or "default")
        except APIRejected as e:
            if e.status != 404:
                raise
