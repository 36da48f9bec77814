"""harness/loop/azure/machinetags.py: an AKS machine's tags (launchtemplate.Tags, ConfigureAKSMachineTags) and its
in-place update hash (inplaceupdate HashFromNodeClaim), the values checked against the provider's Go code at v1.14.0
(encoding/json + hash/fnv's New32a)."""
from __future__ import annotations

from harness.loop.azure.machinetags import inplace_update_hash, machine_tags, resource_tags


def test_the_nodeclass_tags_go_under_the_providers_own():
    tags = resource_tags("c", {"karpenter.azure.com/cluster": "x", "team": "a", "a/b": "1"}, "default")
    assert tags == {"karpenter.azure.com_cluster": "c", "team": "a", "a_b": "1", "compute.aks.billing": "linux",
                    "karpenter.sh_nodepool": "default"}
    assert machine_tags("c", None, None, "default-abcde") == {
        "karpenter.azure.com_cluster": "c", "compute.aks.billing": "linux",
        "karpenter.azure.com_aksmachine_nodeclaim": "default-abcde"}


def test_the_hash_is_fnv32a_of_go_json():
    # go: json.Marshal(&aksMachineInPlaceUpdateFields{Tags: ...}) then fnv.New32a, printed in decimal
    assert inplace_update_hash("c", {"team": "a&<b>"}, "default") == "3463892869"


def test_the_hash_follows_the_tags_and_only_them():
    a = inplace_update_hash("c", {"team": "a"}, "default")
    assert a == inplace_update_hash("c", {"team": "a"}, "default")
    assert a != inplace_update_hash("c", {"team": "b"}, "default")
