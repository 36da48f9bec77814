"""Who wrote a Node label on kind, read from the real Node's managedFields: each harness writer sends
its own field manager (field-managers.yaml), and an owner in managedFields maps back to a writer
name of harness/model/labels/writers.py (server-side field tracking: k8s.io/apimachinery v0.36.3
pkg/util/managedfields; https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.model.data import load_yaml

FIELD_MANAGERS = Path(__file__).with_name("field-managers.yaml")


@dataclass(frozen=True)
class Manager:
    field_manager: str
    identity: str            # "controller/karpenter", "node", "admin", ... ("" for the real kubelet)
    writer: str


def managers() -> tuple[Manager, ...]:
    doc = load_yaml(FIELD_MANAGERS.read_text())
    return tuple(Manager(m["fieldManager"], m.get("identity", ""), m["writer"]) for m in doc["managers"])


def field_manager(identity) -> str:
    """The field manager an identity's writes carry (field-managers.yaml; a controller without a
    row is named after itself)."""
    key = identity.kind if identity.kind in ("node", "admin") else f"{identity.kind}/{identity.name}"
    for m in managers():
        if m.identity == key:
            return m.field_manager
    return f"harness-{identity.kind}-{identity.name or 'admin'}"


def writer_of(manager: str, key: str, node_labels: dict[str, str]) -> str:
    """The writer name (harness/model/labels/writers.py) a field manager stands for; the kubelet's
    manager writes both its own labels and its --node-labels."""
    if manager == "kubelet":
        return "kubelet-node-labels" if key in node_labels else "kubelet"
    return next((m.writer for m in managers() if m.field_manager == manager), manager)
