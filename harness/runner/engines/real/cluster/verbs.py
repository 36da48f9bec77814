"""kubectl's verbs on the real engine's cluster, sent as kubectl sends them: a merge patch of the object
(`kubectl label|annotate|cordon|uncordon|scale|rollout restart`) or a delete; kube-controller-manager and the
controller answer them (the Deployment controller rolls, Karpenter's finalizers terminate a deleted
NodeClaim or Node). The simulated engine plays the same verbs in harness/loop/kube/kubectl.py;
`drain`, with kubectl's retried evictions, is drain.py's."""
from __future__ import annotations

from harness.backends.base import APIRejected
from harness.loop.kube.kubectl import RESTARTED_AT, not_found
from harness.model.kube.kubetime import rfc3339 as timestamp
from harness.scenario.steps import StepFailed

RESOURCES = {"Node": "nodes", "NodeClaim": "nodeclaims.karpenter.sh", "Pod": "pods", "Deployment": "deployments.apps",
             "StatefulSet": "statefulsets.apps", "NodePool": "nodepools.karpenter.sh",
             "AKSNodeClass": "aksnodeclasses.karpenter.azure.com"}
NAMESPACED = ("Pod", "Deployment", "StatefulSet")


def _patch(cluster, key: str, kind: str, name: str, namespace: str | None, patch: dict) -> None:
    ns = (namespace or "default") if kind in NAMESPACED else None
    try:
        cluster.admin.patch(kind, name, patch, ns)
    except APIRejected as e:
        words = not_found(RESOURCES.get(kind, kind.lower()), name) if e.status == 404 else \
            f"Error from server ({e.reason}): {e.message}"
        raise StepFailed(key, f"{kind} {name}", words) from None


def metadata(cluster, verb: str, kind: str, name: str, namespace: str | None, values: dict) -> None:
    """`kubectl label|annotate --overwrite`: null removes a key, as kubectl's `key-` does."""
    field = "labels" if verb == "label" else "annotations"
    shown = {k: (None if v is None else str(v).lower() if isinstance(v, bool) else str(v)) for k, v in values.items()}
    _patch(cluster, verb, kind, name, namespace, {"metadata": {field: shown}})


def cordon(cluster, name: str, unschedulable: bool) -> None:
    """spec.unschedulable (kube-controller-manager's node lifecycle controller adds its taint)."""
    _patch(cluster, "cordon" if unschedulable else "uncordon", "Node", name, None,
           {"spec": {"unschedulable": True if unschedulable else None}})


def scale(cluster, kind: str, name: str, namespace: str | None, replicas: int) -> None:
    """`kubectl scale deployment|statefulset`: spec.replicas (kubectl patches the scale subresource)."""
    _patch(cluster, "scale", kind, name, namespace, {"spec": {"replicas": int(replicas)}})


def restart(cluster, kind: str, name: str, namespace: str | None, now: float) -> None:
    _patch(cluster, "restart", kind, name, namespace,
           {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: timestamp(now)}}}}})


def delete(cluster, kind: str, name: str) -> None:
    """`kubectl delete nodeclaim|node`: the finalizers hold it while the controller terminates it."""
    try:
        cluster.delete(kind, name)
    except APIRejected as e:
        words = not_found(RESOURCES[kind], name) if e.status == 404 else f"Error from server ({e.reason}): {e.message}"
        raise StepFailed("delete", f"{kind} {name}", words) from None
