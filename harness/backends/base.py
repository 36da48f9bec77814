"""The cluster interface every backend implements (embedded, local, container).

The loop talks to a `Cluster` only through these calls, each made under an `Identity`, so the
same simulated kubelet write is judged by the model's NodeRestriction emulation on `embedded`
and by the real NodeRestriction admission plugin on `local`/`container`
(k8s.io/kubernetes v1.36.3 plugin/pkg/admission/noderestriction/admission.go;
https://kubernetes.io/docs/reference/access-authn-authz/node/).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Protocol, TypeVar, runtime_checkable

from harness.model.kube.apistatus import APIRejected, Cause  # the API server's refusal, a model value

__all__ = ["ADMIN", "APIRejected", "Backend", "Cause", "Cluster", "Identity", "KARPENTER", "CLOUD_NODE_MANAGER",
           "NODE_LIFECYCLE", "SCHEDULER", "retry_on_conflict"]

T = TypeVar("T")


def retry_on_conflict(write: Callable[[], T], attempts: int = 20) -> T:
    """A read-modify-write against controllers writing the same object (a Node's lifecycle controller,
    a volume's PV controller): `write` reads and writes again on 409 Conflict, as client-go's
    RetryOnConflict does."""
    for i in range(attempts):
        try:
            return write()
        except APIRejected as e:
            if e.status != 409 or i == attempts - 1:
                raise
            time.sleep(0.05)
    raise AssertionError("unreachable")


@dataclass(frozen=True)
class Identity:
    """Who performs a write. Real backends map this to client credentials."""

    kind: str            # "admin" | "controller" | "node"
    name: str = ""

    @staticmethod
    def node(name: str) -> "Identity":
        return Identity("node", name)

    @property
    def username(self) -> str:
        if self.kind == "node":
            return f"system:node:{self.name}"
        if self.kind == "controller":
            return f"system:serviceaccount:kube-system:{self.name}"
        return "admin"


ADMIN = Identity("admin")
KARPENTER = Identity("controller", "karpenter")
CLOUD_NODE_MANAGER = Identity("controller", "cloud-node-manager")
SCHEDULER = Identity("controller", "kube-scheduler")
NODE_LIFECYCLE = Identity("controller", "node-lifecycle-controller")


@runtime_checkable
class Cluster(Protocol):
    """A running cluster (or the embedded store). Objects are plain dicts in manifest shape."""

    backend: str                     # "embedded" | "local" | "container"
    capabilities: frozenset[str]     # e.g. {"cel", "node-restriction", "kube-scheduler"}

    def create(self, obj: dict, identity: Identity = ADMIN) -> dict: ...
    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        """The object, or None. `shared`: the caller only reads it, so a store may hand out the object it
        holds rather than a copy (the embedded store's objects are never changed in place)."""
    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]: ...
    def update(self, obj: dict, identity: Identity = ADMIN) -> dict: ...
    def update_status(self, obj: dict, identity: Identity = ADMIN) -> dict: ...
    def delete(self, kind: str, name: str, namespace: str | None = None, identity: Identity = ADMIN,
               graceful: bool = False) -> None:
        """Delete; a Pod with grace period 0 (no kubelet confirms) unless `graceful` (kubectl delete: the
        pod's own grace period; a kubelet stand-in confirms it)."""
    def bind(self, pod: dict, node_name: str, identity: Identity = ADMIN, *, read_back: bool = True) -> dict | None:
        """Bind the pod to the Node and return the bound pod; `read_back=False`: the caller does not read it,
        and the embedded store returns None rather than copy it."""
    def kubelet_refusal(self, node_labels: dict[str, str], profile) -> str | None:
        """Why a kubelet started with these --node-labels exits at flag validation, or None (the
        model's ValidateKubeletFlags on embedded, the real kubelet binary on the real backends)."""
    def register_kubelet(self, node: dict, node_labels: dict[str, str], profile, provider_id: str) -> str | None:
        """A VM's kubelet starts with these --node-labels and registers `node` under its own
        identity: returns the kubelet's refusal (no Node) or None (registered); an API refusal
        raises APIRejected. Embedded/local: kubelet_refusal() then a create as the node; kind: a
        real kubelet boots with the flags and `provider_id`."""
    def install_profile(self, profile_name: str) -> None:
        """Make the cluster judge NodePools/NodeClaims with this label profile's CRD rules."""
    def reset(self) -> None:
        """Remove every object a scenario created; the cluster itself keeps running."""
    def close(self) -> None: ...


class Backend(Protocol):
    name: str

    def available(self) -> tuple[bool, str]:
        """(True, "") or (False, why) - a skip reason, never an exception."""

    def start(self) -> Cluster: ...
