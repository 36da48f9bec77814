"""A ReplicationController as the ReplicaSet kube-controller-manager treats it as.

k8s.io/kubernetes v1.36.3 pkg/controller/replication/replication_controller.go: the ReplicationManager is the
ReplicaSetController over a conversion layer that reads a ReplicationController as an older version of a
ReplicaSet (conversion.go). The harness does the same at load: the object runs as a ReplicaSet of the same name,
replicas, template and minReadySeconds, its set-based selector the controller's equality selector, defaulted to
the template's labels as the API server defaults it (pkg/apis/core/v1/defaults.go SetDefaults_ReplicationController).
Its pods are then owned by a ReplicaSet, not a ReplicationController: the one thing a run shows differently."""
from __future__ import annotations

import copy

KIND = "ReplicationController"
AS_KIND = "ReplicaSet"
# the notice's words (harness/scenario/load.py says it at the object's line)
RUN_AS = ("run as a ReplicaSet of the same pods: kube-controller-manager runs both with one controller "
          "(k8s.io/kubernetes v1.36.3 pkg/controller/replication), so scheduling and Karpenter see the same; "
          "only its pods' owner kind reads ReplicaSet")


def as_replicaset(rc: dict) -> dict:
    """The ReplicaSet `rc` (a v1 ReplicationController manifest) runs as."""
    spec = rc.get("spec") if isinstance(rc.get("spec"), dict) else {}
    template = copy.deepcopy(spec.get("template")) if isinstance(spec.get("template"), dict) else {}
    labels = dict(((template.get("metadata") or {}).get("labels")) or {})
    meta = copy.deepcopy(rc.get("metadata") or {})
    if labels and not meta.get("labels"):
        meta["labels"] = dict(labels)
    out_spec: dict = {"selector": {"matchLabels": dict(spec.get("selector") or labels)}, "template": template}
    for key in ("replicas", "minReadySeconds"):
        if key in spec:
            out_spec[key] = spec[key]
    return {"apiVersion": "apps/v1", "kind": AS_KIND, "metadata": meta, "spec": out_spec}
