"""harness/dump/provisionmode.py: the provision mode a dump's NodeClaims and Nodes show, and its evidence."""
from __future__ import annotations

from harness.dump.provisionmode import note, provision_mode_of

RG = "/subscriptions/s/resourceGroups/MC_rg_c_eastus/providers/Microsoft.Compute/virtualMachines/"


def _claim(name: str, annotations: dict | None = None, pid: str = "") -> dict:
    return {"kind": "NodeClaim", "metadata": {"name": name, "annotations": annotations or {}},
            "status": {"providerID": pid}}


def _node(name: str, labels: dict, pid: str = "") -> dict:
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}, "spec": {"providerID": pid}}


def test_the_machine_annotation_decides():
    rid = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c/agentPools/p/machines/m"
    found = provision_mode_of([_claim("default-abcde", {"karpenter.azure.com/aks-machine-resource-id": rid})], [])
    assert found.mode == "aksmachineapi" and "NodeClaim default-abcde is annotated" in found.evidence
    assert "aksmachineapiheaderbatch" in note(found)


def test_a_machine_vm_name_decides():
    found = provision_mode_of([], [_node("n", {}, "azure://" + RG + "aks-aksmachines-default-abcde-12345678-vm")])
    assert found.mode == "aksmachineapi" and "aks-aksmachines-default-abcde-12345678-vm" in found.evidence


def test_do_not_sync_taints_means_the_vm_path():
    node = _node("aks-default-abcde", {"karpenter.sh/nodepool": "default", "karpenter.sh/do-not-sync-taints": "true"},
                 "azure://" + RG + "aks-default-abcde")
    found = provision_mode_of([_claim("default-abcde", pid="azure://" + RG + "aks-default-abcde")], [node])
    assert found.mode == "aksscriptless" and "bootstrappingclient" in note(found)


def test_nothing_to_say():
    assert provision_mode_of([], [_node("system", {"kubernetes.azure.com/mode": "system"})]) is None


def test_what_a_reading_leaves_open_is_assumed_where_the_release_has_it():
    from harness.dump.provisionmode import ASSUMED, ModeEvidence, assumed
    machine = ModeEvidence("aksmachineapi", "NodeClaim x is annotated")
    assert assumed(machine, ("aksscriptless", "bootstrappingclient", "aksmachineapi", "aksmachineapiheaderbatch")) \
        .endswith("assumed aksmachineapi, not aksmachineapiheaderbatch")
    assert assumed(machine, ("aksscriptless", "bootstrappingclient", "aksmachineapi")) is None
    assert assumed(None, ("aksscriptless", "bootstrappingclient")) == ASSUMED
    assert assumed(None, ("aksscriptless",)) is None       # before v0.6.2: no other mode


def test_a_given_mode_may_only_be_what_the_dump_cannot_tell():
    from harness.dump.provisionmode import ModeEvidence, contradicts, given_note
    vm = ModeEvidence("aksscriptless", "Node n carries karpenter.sh/do-not-sync-taints=true")
    assert contradicts(vm, "bootstrappingclient") is None and contradicts(None, "aksmachineapi") is None
    assert contradicts(vm, "aksmachineapiheaderbatch").startswith("aksmachineapiheaderbatch is not what the dump shows")
    assert given_note(vm, "bootstrappingclient") == ("given.cluster.provisionMode bootstrappingclient: --provision-mode; "
                                                     "the dump agrees: Node n carries karpenter.sh/do-not-sync-taints=true")
