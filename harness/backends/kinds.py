"""The Kubernetes kinds the harness reads and writes, with their REST coordinates.

One table shared by every backend, so the embedded store and the real API server agree on
which kinds are namespaced and under which group/version/plural they are served; and the order in
which both engines apply a scenario's manifests.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    kind: str
    group: str          # "" for the core group
    version: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KINDS: dict[str, Kind] = {k.kind: k for k in (
    Kind("Namespace", "", "v1", "namespaces", False),
    Kind("Node", "", "v1", "nodes", False),
    Kind("Pod", "", "v1", "pods", True),
    Kind("Event", "", "v1", "events", True),
    Kind("PersistentVolume", "", "v1", "persistentvolumes", False),
    Kind("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True),
    Kind("StorageClass", "storage.k8s.io", "v1", "storageclasses", False),
    Kind("RuntimeClass", "node.k8s.io", "v1", "runtimeclasses", False),
    Kind("DaemonSet", "apps", "v1", "daemonsets", True),
    Kind("Deployment", "apps", "v1", "deployments", True),
    Kind("StatefulSet", "apps", "v1", "statefulsets", True),
    Kind("Job", "batch", "v1", "jobs", True),
    Kind("CronJob", "batch", "v1", "cronjobs", True),
    Kind("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    Kind("NodePool", "karpenter.sh", "v1", "nodepools", False),
    Kind("NodeClaim", "karpenter.sh", "v1", "nodeclaims", False),
    Kind("AKSNodeClass", "karpenter.azure.com", "v1beta1", "aksnodeclasses", False),
    # core v1.7.0+ (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1alpha1/nodeoverlay.go); an older release has no
    # such kind (harness.model.crd.apiversions served_rejection)
    Kind("NodeOverlay", "karpenter.sh", "v1alpha1", "nodeoverlays", False),
    # what the API server's admission reads when a pod is created (Priority, LimitRanger, ResourceQuota), and a
    # ReplicaSet that no Deployment owns
    Kind("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False),
    Kind("LimitRange", "", "v1", "limitranges", True),
    Kind("ResourceQuota", "", "v1", "resourcequotas", True),
    Kind("ReplicaSet", "apps", "v1", "replicasets", True),
)}


def kind_of(obj: dict) -> Kind:
    """The Kind entry for a manifest; KeyError names the unsupported kind."""
    return KINDS[obj["kind"]]


# apiVersions a scenario's manifests may use, per kind (what users paste from clusters and docs)
API_VERSIONS = {
    # v1beta1: served by provider v0.5-v0.7; whether a profile's release serves it is its admission's
    # call (harness.model.crd.apiversions), not the loader's
    "NodePool": {"karpenter.sh/v1", "karpenter.sh/v1beta1"},
    "NodeClaim": {"karpenter.sh/v1", "karpenter.sh/v1beta1"},
    "AKSNodeClass": {"karpenter.azure.com/v1beta1", "karpenter.azure.com/v1alpha2"},
    "NodeOverlay": {"karpenter.sh/v1alpha1"},
    "Pod": {"v1"}, "Namespace": {"v1"}, "PersistentVolume": {"v1"}, "PersistentVolumeClaim": {"v1"},
    "Deployment": {"apps/v1"}, "StatefulSet": {"apps/v1"}, "DaemonSet": {"apps/v1"}, "StorageClass": {"storage.k8s.io/v1"},
    "PodDisruptionBudget": {"policy/v1"}, "Job": {"batch/v1"}, "CronJob": {"batch/v1"},
    "RuntimeClass": {"node.k8s.io/v1"},
    "PriorityClass": {"scheduling.k8s.io/v1"}, "LimitRange": {"v1"}, "ResourceQuota": {"v1"}, "ReplicaSet": {"apps/v1"},
}

# harness assumption: namespaces and classes first, then what refers to them, pods last (what
# `kubectl apply -f` of one file gives when the objects are written in dependency order). Volumes before
# the claims that name them: kube-controller-manager's PV controller marks a claim bound to a volume it
# cannot find Lost at once (kubernetes v1.36.3 pkg/controller/volume/persistentvolume/pv_controller.go
# syncBoundClaim), and Karpenter ignores its pods until a later resync binds them again
APPLY_ORDER = {"Namespace": 0, "AKSNodeClass": 1, "NodePool": 2, "NodeOverlay": 2, "StorageClass": 3, "PersistentVolume": 3,
               "PodDisruptionBudget": 3, "RuntimeClass": 3, "PersistentVolumeClaim": 4, "DaemonSet": 5,
               "Deployment": 6, "StatefulSet": 6, "Job": 6, "CronJob": 6, "Pod": 7,
               # before any workload: admission reads them when its pods are created
               "PriorityClass": 3, "LimitRange": 3, "ResourceQuota": 3, "ReplicaSet": 6}


# applied after a scenario's given.existingNodes are in place (what runs on them)
WORKLOAD_KINDS = ("Pod", "Deployment", "StatefulSet", "Job", "CronJob", "ReplicaSet")


def apply_order(kind: str | None) -> int:
    """Where a manifest of `kind` goes when a scenario's manifests are applied (unknown kinds last)."""
    return APPLY_ORDER.get(kind or "", 9)
