"""The AKS Machine API path's label rule: the nodeLabels the provider sends to AKS, the labels it strips, the
machine's mode, and what AKS writes on the Node (the writer `aks`).

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/aksmachineinstancehelpers.go
configureLabelsAndMode, configureTaints. Which parts a release has comes from its source (release-probes.yaml
provider.provisionModes, provider.aksMachine.*); what each part means is harness/data/aks-machine-labels.yaml.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Mapping

from harness.model.data import DATA_DIR, load_yaml
from harness.model.labels.policy import can_kubelet_set_label, is_kubelet_label
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirements
from harness.model.labels.wellknown import CAPACITY_TYPE, PLACEMENT_SCOPE, ULTRA_SSD

RULE_FILE = "aks-machine-labels.yaml"


@functools.lru_cache(maxsize=1)
def rule() -> dict:
    """harness/data/aks-machine-labels.yaml."""
    return load_yaml((DATA_DIR / RULE_FILE).read_text())


def writer() -> str:
    """The writer name of what AKS puts on a machine's Node."""
    return str(rule()["writer"])


def is_machine_mode(mode: str) -> bool:
    """Whether PROVISION_MODE `mode` creates nodes through the AKS Machine API."""
    return mode in rule()["machineModes"]


def cluster_settings(mode: str) -> dict:
    """The given.cluster settings PROVISION_MODE `mode` implies (aks-machine-labels.yaml `clusterSettings`), or
    none outside the Machine API modes."""
    return dict(rule()["clusterSettings"]) if is_machine_mode(mode) else {}


@dataclass(frozen=True)
class MachineLabels:
    """What configureLabelsAndMode sends and what AKS then writes on the Node."""

    sent: dict[str, str]                  # the Machine API's nodeLabels
    stripped: dict[str, str]              # key -> value of what was not sent
    mode: str                             # the machine's mode: system or user
    aks_own: dict[str, str] = field(default_factory=dict)   # what AKS adds itself (harness assumption)
    why_stripped: dict[str, str] = field(default_factory=dict)   # key -> why (aks-machine-labels.yaml `strip`)

    @property
    def on_node(self) -> dict[str, str]:
        """The labels AKS writes on the Node at registration."""
        return {**self.aks_own, **self.sent}


def aks_writes(aks_base: Mapping[str, str], mode: str, capacity_type: str) -> dict[str, str]:
    """What AKS itself writes on a machine's Node beside the nodeLabels the provider sent (aks-machine-labels.yaml
    `aksAdds`): the provider's base labels (writers.base_labels for the machine's AKSNodeClass and cluster) under
    its prefixes, those of the machine's priority (`capacity_type`: on-demand or spot), and its mode (`user` or
    `system`) under `modeLabel`. The one rule both engines read: the simulation's machine_labels and fakeazure's
    AKS on the real engine (azureside.machine_labeler)."""
    r = rule()
    prefixes = tuple(r["aksAdds"]["prefixes"])
    out = {k: v for k, v in aks_base.items() if k.startswith(prefixes)}
    out.update({k: by[capacity_type] for k, by in (r["aksAdds"].get("byCapacityType") or {}).items()
                if capacity_type in by})
    out[r["modeLabel"]] = mode
    return out


def strip_reason(key: str, profile: Profile) -> str | None:
    """Why configureLabelsAndMode removes `key` at the profile's release (the first rule that applies), or None."""
    am = profile.provider.get("aksMachine") or {}
    words = rule()["strip"]
    for part in am.get("labelStrip") or ():
        if part == "fixedKeys" and key in (am.get("fixedKeys") or ()):
            return words[part]
        if part == "aksDomain" and key.startswith("kubernetes.azure.com/"):
            return words[part]
        if part == "aksLabel" and (key.startswith("kubernetes.azure.com/") or key in (am.get("legacyLabels") or ())):
            return words[part]
        if part == "kubeletManaged" and key in (am.get("kubeletManaged") or ()):
            return words[part]
        if part == "kubeletForbidden" and not can_kubelet_set_label(key, profile):
            return words[part]
    return None


def machine_labels(profile: Profile, nodeclaim_labels: Mapping[str, str], claim_requirements: Requirements,
                   instance_type_requirements: Requirements, capacity_type: str, zone: str, ultra_ssd: bool,
                   aks_base: Mapping[str, str]) -> MachineLabels:
    """configureLabelsAndMode at the profile's release: the inputs merged in order, the mode read, the strip rules
    applied; `aks_base` is the provider's base labels (writers.base_labels), of which AKS writes its own."""
    am = profile.provider.get("aksMachine") or {}
    offering = {
        "capacityType": {CAPACITY_TYPE: capacity_type},
        "placementScope": {PLACEMENT_SCOPE: "regional" if zone in ("0", "") else "zonal"},
        "ultraSSD": {ULTRA_SSD: "true" if ultra_ssd else "false"},
    }
    merged: dict[str, str] = {}
    for part in am.get("labelInputs") or ():
        if part == "nodeClaimLabels":
            merged.update(nodeclaim_labels)
        elif part == "claimRequirements":
            merged.update(claim_requirements.single_valued_labels())
        elif part == "claimKubeletRequirements":
            merged.update({k: v for k, v in claim_requirements.single_valued_labels().items()
                           if is_kubelet_label(k, profile)})
        elif part == "instanceTypeRequirements":
            merged.update(instance_type_requirements.single_valued_labels())
        else:
            merged.update(offering[part])
    r = rule()
    mode = r["systemMode"] if merged.get(r["modeLabel"]) == r["systemMode"] else "user"
    sent, stripped, why_stripped = {}, {}, {}
    for k, v in merged.items():
        why = strip_reason(k, profile)
        if why is None:
            sent[k] = v
        else:
            stripped[k], why_stripped[k] = v, why
    return MachineLabels(sent, stripped, mode, aks_writes(aks_base, mode, capacity_type), why_stripped)
