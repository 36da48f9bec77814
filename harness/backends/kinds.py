"""The Kubernetes kinds the harness reads and writes, with their REST coordinates.

One table shared by every backend, so the embedded store and the real API server agree on
which kinds are namespaced and under which group/version/plural they are served.
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
    Kind("DaemonSet", "apps", "v1", "daemonsets", True),
    Kind("Deployment", "apps", "v1", "deployments", True),
    Kind("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    Kind("NodePool", "karpenter.sh", "v1", "nodepools", False),
    Kind("NodeClaim", "karpenter.sh", "v1", "nodeclaims", False),
    Kind("AKSNodeClass", "karpenter.azure.com", "v1beta1", "aksnodeclasses", False),
)}


def kind_of(obj: dict) -> Kind:
    """The Kind entry for a manifest; KeyError names the unsupported kind."""
    return KINDS[obj["kind"]]
