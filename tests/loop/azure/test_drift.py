"""harness/loop/azure/drift.py: the provider's drift checks in each release's order, with each release's reason names
and AKSNodeClass hash (release-probes.yaml provider.drift, provider.nodeClassHash)."""
from __future__ import annotations

import dataclasses

import pytest

from harness.loop.azure import drift as azuredrift
from harness.loop.lifecycle.hashes import NODECLASS_HASH, NODECLASS_HASH_VERSION
from harness.model.azure.params import ClusterParams
from harness.model.upstream.profile import load_profile

CLUSTER = ClusterParams(region="eastus", kubernetes_version="1.33.0", node_image_version="202601.01.0")
NODECLASS = {"metadata": {"name": "default"}, "spec": {"imageFamily": "Ubuntu2204", "tags": {"team": "a"}}}
NODE_LABELS = {"kubernetes.io/arch": "amd64"}


def launched(profile, nodeclass=NODECLASS, cluster=CLUSTER) -> tuple[dict, dict]:
    """(the NodeClaim's annotations, the launch facts) of a VM created at `profile` from `nodeclass`."""
    facts = azuredrift.launch_facts(nodeclass, cluster, profile)
    return facts.pop("annotations"), facts


def drifted(profile, annotations, facts, nodeclass=NODECLASS, cluster=CLUSTER) -> str:
    return azuredrift.is_drifted(profile, None, cluster, annotations, facts, nodeclass, NODE_LABELS, "amd64")


def retagged(nodeclass: dict) -> dict:
    return {**nodeclass, "spec": {**nodeclass["spec"], "tags": {"team": "b"}}}


@pytest.mark.parametrize("profile,reason", [("v1.4.1", "NodeClassDrift"), ("v1.6.1", "NodeClassDrift"),
                                            ("v1.6.2", ""), ("v1.14.2", ""), ("upstream", "")])
def test_a_tags_only_change_drifts_before_v1_6_2(profile, reason):
    prof = load_profile(profile)
    ann, facts = launched(prof)
    assert drifted(prof, ann, facts) == ""
    assert drifted(prof, ann, facts, retagged(NODECLASS)) == reason


def test_no_hash_no_annotation_no_hash_drift_at_v0_5_and_v0_6():
    for profile in ("v0.5.5", "v0.6.3"):
        prof = load_profile(profile)
        ann, facts = launched(prof)
        assert ann == {}
        bigger = {**NODECLASS, "spec": {**NODECLASS["spec"], "osDiskSizeGB": 256}}
        assert drifted(prof, ann, facts, bigger) == ""
    prof = load_profile("v0.7.5")
    ann, facts = launched(prof)
    assert ann[NODECLASS_HASH_VERSION] == "v2"
    assert drifted(prof, ann, facts, {**NODECLASS, "spec": {**NODECLASS["spec"], "osDiskSizeGB": 256}}) == \
        "NodeClassDrift"


def test_a_hash_of_another_version_is_not_compared():
    """areStaticFieldsDrifted: a NodeClaim stamped with another hash version than the release's is not drifted."""
    prof = load_profile("v1.4.1")
    ann, facts = launched(prof)
    assert drifted(prof, {**ann, NODECLASS_HASH_VERSION: "v3", NODECLASS_HASH: "older"}, facts) == ""
    assert drifted(prof, {**ann, NODECLASS_HASH: "older"}, facts) == "NodeClassDrift"


def test_image_drift_is_named_as_the_release_names_it():
    newer = dataclasses.replace(CLUSTER, node_image_version="202602.10.0")
    for profile, reason in (("v0.5.5", "ImageVersionDrift"), ("v0.7.5", "ImageVersionDrift"), ("v1.4.1", "ImageDrift"),
                            ("upstream", "ImageDrift")):
        prof = load_profile(profile)
        ann, facts = launched(prof)
        assert drifted(prof, ann, facts, cluster=newer) == reason
        assert azuredrift.why(reason, prof) == azuredrift.IMAGE_WHY


def test_the_checks_run_in_the_releases_order():
    """A VM whose AKSNodeClass and kubelet version both changed: the hash check names it first from v0.7; provider
    v0.5 has no hash check, so the kubelet version names it."""
    upgraded = dataclasses.replace(CLUSTER, kubernetes_version="1.34.0")
    bigger = {**NODECLASS, "spec": {**NODECLASS["spec"], "osDiskSizeGB": 256}}
    for profile, reason in (("v0.5.5", "K8sVersionDrift"), ("v0.7.5", "NodeClassDrift"), ("v1.14.2", "NodeClassDrift")):
        prof = load_profile(profile)
        ann, facts = launched(prof)
        assert drifted(prof, ann, facts, bigger, upgraded) == reason


def test_subnet_drift_from_v0_6_until_v1_7():
    moved = {**NODECLASS, "spec": {**NODECLASS["spec"], "vnetSubnetID": "other-subnet"}}
    checks = {p: "subnet" in load_profile(p).provider_setting("drift", "checks")
              for p in ("v0.5.5", "v0.6.0", "v1.4.1", "v1.7.2", "v1.10.2")}
    assert checks == {"v0.5.5": False, "v0.6.0": True, "v1.4.1": True, "v1.7.2": True, "v1.10.2": False}
    prof = load_profile("v0.6.3")               # no hash: the subnet check names it
    ann, facts = launched(prof)
    assert drifted(prof, ann, facts, moved) == "SubnetDrift"


def test_a_label_policys_hand_written_checks_are_its_releases():
    """before-0006 (provider main between v1.6.5 and v1.6.6) writes its checks by hand, as it extends upstream:
    they are what release profile v1.6.5 derives; design-0006 adds its cluster label values."""
    v165 = load_profile("v1.6.5").provider_setting("drift", "checks")
    assert load_profile("before-0006").provider_setting("drift", "checks") == v165
    assert load_profile("design-0006").provider_setting("drift", "checks") == [*v165, "clusterLabelValues"]
    assert load_profile("upstream").provider_setting("drift", "checks") == \
        load_profile("v1.14.2").provider_setting("drift", "checks")


class _Machines:
    """The provider's read of an AKS machine's status.driftAction (AzureProvider.machine_drift_action)."""

    def __init__(self, action):
        self.action, self.asked = action, []

    def machine_drift_action(self, name):
        self.asked.append(name)
        return self.action


def machine_drifted(profile, provider, annotations, facts, cluster=CLUSTER) -> str:
    return azuredrift.is_drifted(profile, provider, cluster, annotations, facts, NODECLASS, NODE_LABELS, "amd64",
                                 machine_name="default-abcde")


def test_an_aks_machine_node_runs_the_machine_branch_from_v1_7():
    """isNodeClassDrifted's AKS machine branch: hash, kubelet version, image, then the machine's drift action; no
    kubelet identity (nor subnet) check. No release before v1.7 has the branch."""
    want = ["nodeClassHash", "kubernetesVersion", "imageVersion", "machineDriftAction"]
    got = {p: load_profile(p).provider_setting("drift", "machineChecks") for p in ("v1.6.8", "v1.7.2", "v1.10.2",
                                                                                     "v1.14.2", "upstream")}
    assert got == {"v1.6.8": [], "v1.7.2": want, "v1.10.2": want, "v1.14.2": want, "upstream": want}


def test_a_kubelet_identity_change_drifts_a_vm_node_but_not_an_aks_machine_node():
    other = dataclasses.replace(CLUSTER, kubelet_identity_client_id="99999999-8888-7777-6666-555555555555")
    prof = load_profile("v1.14.2")
    ann, facts = launched(prof)
    labels = {**NODE_LABELS, azuredrift.KUBELET_IDENTITY_LABEL: "11111111-2222-3333-4444-555555555555"}
    assert azuredrift.is_drifted(prof, None, other, ann, facts, NODECLASS, labels, "amd64") == "KubeletIdentityDrift"
    assert azuredrift.is_drifted(prof, _Machines(""), other, ann, facts, NODECLASS, labels, "amd64",
                                 machine_name="default-abcde") == ""


@pytest.mark.parametrize("action,reason", [(None, ""), ("", ""), ("Synced", ""), ("Recreate", "ClusterConfigDrift"),
                                           ("Reimage", "ClusterConfigDrift")])
def test_the_machines_drift_action_is_cluster_config_drift_unless_synced(action, reason):
    """isMachineDrifted: Recreate and any action it does not know drift the node as ClusterConfigDrift; a failed
    read (None) is the check's error, no drift this time."""
    prof = load_profile("v1.14.2")
    ann, facts = launched(prof)
    machines = _Machines(action)
    assert machine_drifted(prof, machines, ann, facts) == reason
    assert machines.asked == ["default-abcde"]
    assert azuredrift.why("ClusterConfigDrift", prof)


def test_the_machine_branchs_earlier_checks_name_the_drift_first():
    upgraded = dataclasses.replace(CLUSTER, kubernetes_version="1.34.0")
    prof = load_profile("v1.14.2")
    ann, facts = launched(prof)
    machines = _Machines("Recreate")
    assert machine_drifted(prof, machines, ann, facts, upgraded) == "K8sVersionDrift"
    assert machines.asked == []
