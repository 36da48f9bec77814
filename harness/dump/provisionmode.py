"""Which PROVISION_MODE a dumped cluster's Karpenter ran in, and the evidence that decided it, read by `harness new`
(harness/dump/new.py) from the NodeClaims and Nodes:

- a NodeClaim annotated karpenter.azure.com/aks-machine-resource-id, or a provider ID whose VM is named
  aks-<pool>-<machine>-<8 digits>-vm: an AKS machine (github.com/Azure/karpenter-provider-azure v1.14.0
  pkg/apis/v1beta1/labels.go AnnotationAKSMachineResourceID, pkg/providers/instance/aksmachineinstanceutils.go
  GetAKSMachineNameFromVMName); aksmachineapi, since a dump does not show whether creates were batched;
- a Karpenter Node labelled karpenter.sh/do-not-sync-taints=true (the VM path's --node-labels carry it:
  pkg/providers/labels/labels.go Get), or a provider ID whose VM is named aks-<its NodeClaim's name> (the VM
  path's pkg/providers/instance/vminstance.go GenerateResourceName): aksscriptless, since what tells it from
  bootstrappingclient (the VM's custom data and extensions) is on the Azure side, not in a dump.
What a reading leaves open at the customer's release (the batched Machine API, bootstrappingclient; every mode when
nothing shows one) is a line of given.assumed (`assumed`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harness.dump.aksnames import PROVIDER_ID
from harness.model.azure.aksmachines import MACHINE_ANNOTATION

DO_NOT_SYNC_TAINTS = "karpenter.sh/do-not-sync-taints"
NODEPOOL_LABEL = "karpenter.sh/nodepool"
# the annotation's value: .../managedClusters/<cluster>/agentPools/<pool>/machines/<machine>
MACHINE_ID = re.compile(r"/agentPools/([^/]+)/machines/([^/\s]+)$", re.I)
# aks-<machinesPoolName>-<aksMachineName>-########-vm (GetAKSMachineNameFromVMName)
MACHINE_VM = re.compile(r"^aks-[a-z0-9]+-.+-\d{8}-vm$", re.I)


# said when the dump's NodeClaims show no mode: the run takes the provider's default
ASSUMED = ("given.cluster.provisionMode: no NodeClaim or Node of the dump shows which PROVISION_MODE Karpenter ran in "
           f"(no {MACHINE_ANNOTATION} annotation, no AKS machine VM name, no VM named for its NodeClaim, no "
           f"{DO_NOT_SYNC_TAINTS} label); assumed aksscriptless, the provider's default")
# the mode a reading leaves open beside the one written, and why a dump cannot tell them apart
LEFT_OPEN = {"aksmachineapi": ("aksmachineapiheaderbatch", "a dump does not show whether creates were batched "
                                                         "(aksmachineapiheaderbatch)"),
             "aksscriptless": ("bootstrappingclient", "a dump does not tell it from bootstrappingclient (the VM's "
                                                      "custom data and extensions are on the Azure side)")}


@dataclass(frozen=True)
class ModeEvidence:
    mode: str            # the PROVISION_MODE written to given.cluster.provisionMode
    evidence: str        # what decided it, for the notes


def provision_mode_of(nodeclaims: list[dict], nodes: list[dict]) -> ModeEvidence | None:
    """The mode the objects show, with its evidence; None when no Karpenter object says."""
    for nc in nodeclaims:
        meta = nc.get("metadata") or {}
        rid = (meta.get("annotations") or {}).get(MACHINE_ANNOTATION)
        if rid:
            m = MACHINE_ID.search(str(rid))
            return ModeEvidence("aksmachineapi", f"NodeClaim {meta.get('name')} is annotated {MACHINE_ANNOTATION} "
                                                 + (f"(machine {m.group(2)} of agent pool {m.group(1)})" if m
                                                    else f"({rid})"))
    for obj in nodeclaims + nodes:
        pid = ((obj.get("status") or {}).get("providerID") if obj.get("kind") == "NodeClaim"
               else (obj.get("spec") or {}).get("providerID")) or ""
        m = PROVIDER_ID.search(pid)
        if m and MACHINE_VM.match(m.group(2)):
            return ModeEvidence("aksmachineapi", f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}'s "
                                                 f"provider ID names the VM {m.group(2)}, an AKS machine's "
                                                 "(aks-<pool>-<machine>-<8 digits>-vm)")
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        if labels.get(NODEPOOL_LABEL) and labels.get(DO_NOT_SYNC_TAINTS) == "true":
            return ModeEvidence("aksscriptless", f"Node {node['metadata'].get('name')} carries "
                                                 f"{DO_NOT_SYNC_TAINTS}=true, which only the VM path's --node-labels "
                                                 "write")
    for nc in nodeclaims:
        m = PROVIDER_ID.search(str((nc.get("status") or {}).get("providerID") or ""))
        name = (nc.get("metadata") or {}).get("name")
        if m and name and m.group(2).lower() == f"aks-{name}".lower():
            return ModeEvidence("aksscriptless", f"NodeClaim {name}'s provider ID names the VM {m.group(2)}, which "
                                                 "the VM path names for its NodeClaim (aks-<name>)")
    return None


def note(found: ModeEvidence) -> str:
    """The `harness new` note saying which evidence decided the mode, and what a dump cannot tell."""
    return f"given.cluster.provisionMode {found.mode}: {found.evidence}; {LEFT_OPEN[found.mode][1]}"


def assumed(found: ModeEvidence | None, modes: tuple[str, ...]) -> str | None:
    """The given.assumed line for what the reading leaves open among `modes` (those of the customer's release:
    a release without the other mode leaves nothing open), or None."""
    if found is None:
        return ASSUMED if set(modes) - {"aksscriptless"} else None
    other, cannot = LEFT_OPEN[found.mode]
    if other not in modes:
        return None
    return (f"given.cluster.provisionMode {found.mode}: {found.evidence}; {cannot}: assumed {found.mode}, "
            f"not {other}")


def contradicts(found: ModeEvidence | None, mode: str) -> str | None:
    """Why `harness new --provision-mode` cannot be the mode the dump shows (the other path), or None: only what a
    dump cannot tell apart may be given (LEFT_OPEN)."""
    if found is None or mode in (found.mode, LEFT_OPEN[found.mode][0]):
        return None
    return (f"{mode} is not what the dump shows: given.cluster.provisionMode {found.mode}: {found.evidence} (a dump "
            f"cannot tell {found.mode} from {LEFT_OPEN[found.mode][0]}: only these two may be given)")


def given_note(found: ModeEvidence | None, mode: str) -> str:
    """The note on a mode given by --provision-mode, with what of the dump agrees."""
    agrees = f"; the dump agrees: {found.evidence}" if found is not None else "; the dump shows no mode"
    return f"given.cluster.provisionMode {mode}: --provision-mode{agrees}"
