"""Minimal manifests for the backend tests."""
from __future__ import annotations


def nodepool(name: str, labels: dict | None = None, requirements: list | None = None) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
        "spec": {"template": {
            "metadata": {"labels": labels or {}},
            "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                     "requirements": requirements or []}}},
    }


def nodeclaim(name: str, requirements: list | None = None) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": name},
        "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                 "requirements": requirements or []},
    }


def node(name: str, labels: dict | None = None, taints: list | None = None) -> dict:
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}
    if taints is not None:
        obj["spec"] = {"taints": taints}
    return obj


def pod(name: str, namespace: str = "default") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "registry.invalid/pause"}]}}
