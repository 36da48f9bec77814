"""harness/model/azure/aksmachines.py: an AKS machine's name from its NodeClaim's
(github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/aksmachineinstanceutils_test.go
GetAKSMachineNameFromNodeClaimName's cases)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.model.azure.aksmachines import MachineNameError, alphanumeric_hash, machine_name


def test_hash_is_hashstructure_v2_of_the_string():
    # the values of the Go function (hash/fnv New64, base 36) for these inputs, computed with Go 1.x
    assert alphanumeric_hash("3456789", 6) == "zc32rh"
    assert alphanumeric_hash("a-a-a", 6) == "lfib9e"


@pytest.mark.parametrize("name", ["default-a1b2c", "d-a1b2c", "123456789-123456789-12345678-a1b2c"])
def test_a_name_within_the_limit_is_kept(name):
    assert machine_name(name, 34) == name


def test_at_the_limit_plus_one_the_prefix_is_cut_and_hashed():
    got = machine_name("123456789-123456789-123456789-a1b2c", 34)
    assert len(got) == 34 and got.endswith("-a1b2c") and got.startswith("123456789-123456789-12")
    assert got != machine_name("123456789-123456789-12345678X-a1b2c", 34)


def test_the_limit_is_the_release_s():
    name = "machine-names-nodepool-of-29c-abcde"
    assert machine_name(name, 35) == name                      # v1.7.0 - v1.12.0
    assert machine_name(name, 34) == "machine-names-nodepoolxb16is-abcde"    # v1.12.1 on (#1691)


def test_no_dash_is_the_provider_s_error():
    with pytest.raises(MachineNameError, match='no dash found in "x{40}"'):
        machine_name("x" * 40, 34)


@given(st.from_regex(r"[a-z0-9][a-z0-9-]{0,60}-[a-z0-9]{5}", fullmatch=True))
def test_never_longer_than_the_limit_and_the_suffix_kept(name):
    got = machine_name(name, 34)
    assert len(got) <= 34 and got.endswith(name[name.rfind("-"):])

