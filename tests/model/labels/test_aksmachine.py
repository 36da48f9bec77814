"""harness/model/labels/aksmachine.py: configureLabelsAndMode per release, as derived from the provider's source
(release-probes.yaml provider.provisionModes, provider.aksMachine.*)."""
from __future__ import annotations

from harness.model.labels.aksmachine import is_machine_mode, machine_labels, strip_reason, writer
from harness.model.upstream.profile import load_profile
from harness.model.labels.requirements import Requirements
from harness.model.labels.semantics import semantics_for

SEM = semantics_for("upstream")
BASE = {"kubernetes.azure.com/os-sku-requested": "Ubuntu2204", "kubernetes.azure.com/mode": "user",
        "karpenter.sh/do-not-sync-taints": "true", "kubernetes.azure.com/role": "agent"}


def _labels(profile: str, nodeclaim: dict, claim: dict | None = None, zone: str = "eastus-1"):
    it = Requirements.from_labels({"karpenter.azure.com/sku-cpu": "2", "node.kubernetes.io/instance-type": "D2"}, SEM)
    return machine_labels(load_profile(profile), nodeclaim, Requirements.from_labels(claim or {}, SEM), it,
                          "on-demand", zone, False, BASE)


def test_modes_per_release():
    # pkg/consts/consts.go: aksmachineapi since v1.7.0, aksmachineapiheaderbatch since v1.12.0
    assert load_profile("v1.6.8").provision_modes == ("aksscriptless", "bootstrappingclient")
    assert "aksmachineapi" in load_profile("v1.7.2").provision_modes
    assert "aksmachineapiheaderbatch" not in load_profile("v1.10.2").provision_modes
    assert load_profile("v1.14.2").provision_modes[-1] == "aksmachineapiheaderbatch"
    assert is_machine_mode("aksmachineapiheaderbatch") and not is_machine_mode("bootstrappingclient")
    assert writer() == "aks"


def test_v1_14_strips_aks_kubelet_managed_and_forbidden_labels():
    out = _labels("v1.14.2", {"example.com/team": "blue", "kubernetes.azure.com/mode": "system",
                              "agentpool": "x", "node-restriction.kubernetes.io/a": "b"})
    assert out.sent == {"example.com/team": "blue", "karpenter.azure.com/sku-cpu": "2",
                        "karpenter.sh/capacity-type": "on-demand", "karpenter.azure.com/placement-scope": "zonal",
                        "karpenter.azure.com/sku-storage-ultra-ssd": "false"}
    assert out.mode == "system"                         # read before the strip
    assert set(out.stripped) == {"kubernetes.azure.com/mode", "agentpool", "node-restriction.kubernetes.io/a",
                                 "node.kubernetes.io/instance-type"}
    assert "kubelet manages itself" in out.why_stripped["node.kubernetes.io/instance-type"]
    assert out.stripped["agentpool"] == "x"
    # AKS writes its own kubernetes.azure.com labels, the machine's mode among them; not do-not-sync-taints
    assert out.on_node["kubernetes.azure.com/mode"] == "system"
    assert out.on_node["kubernetes.azure.com/os-sku-requested"] == "Ubuntu2204"
    assert "karpenter.sh/do-not-sync-taints" not in out.on_node


def test_v1_7_has_a_fixed_list_and_no_placement_scope():
    out = _labels("v1.7.2", {"example.com/team": "blue", "agentpool": "x"}, zone="0")
    assert "karpenter.azure.com/placement-scope" not in out.sent           # an input from v1.12.0
    assert out.sent["agentpool"] == "x"                 # aksLegacyLabels are stripped from v1.10.0
    assert strip_reason("node.kubernetes.io/instance-type", load_profile("v1.7.2")).startswith("on configureLabels")
    assert out.mode == "user"


def test_no_rule_before_the_machine_api():
    assert strip_reason("kubernetes.azure.com/mode", load_profile("v1.6.8")) is None
    assert _labels("v1.6.8", {"example.com/team": "blue"}).sent == {}
