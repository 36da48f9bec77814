"""The VM size name parser (github.com/Azure/skewer@v0.0.24/vmsize.go GetVMSize)."""
from __future__ import annotations

import pytest

from harness.model.azure.vmsize import ACCELERATOR_FALLBACK, VMSizeParseError, parse_vm_size, size_from_name

# size -> family / series / sku-version / accelerator (None = no accelerator), as
# GetVMSize parses them (github.com/Azure/skewer@v0.0.24/vmsize.go)
SECTION_1_3 = [
    ("D4pls_v6", "D", "Dpls_v6", "6", None),
    ("D2_v2", "D", "D_v2", "2", None),
    ("DS2_v2", "D", "DS_v2", "2", None),
    ("D2s_v3", "D", "Ds_v3", "3", None),
    ("D16plds_v5", "D", "Dplds_v5", "5", None),
    ("B20ms", "B", "Bms", "1", None),
    ("E4d_v5", "E", "Ed_v5", "5", None),
    ("M8-2ms", "M", "Mms", "1", None),
    ("NC24ads_A100_v4", "N", "NCads_v4", "4", "A100"),
    ("NC16as_T4_v3", "N", "NCas_v3", "3", "T4"),
    ("NV36ads_A10_v5", "N", "NVads_v5", "5", "A10"),
    ("NV4ads_V710_v5", "N", "NVads_v5", "5", "V710"),
    ("ND96isr_H100_v5", "N", "NDisr_v5", "5", "H100"),
    ("NC24lds_xl_RTXPRO6000BSE_v6", "N", "NClds_v6", "6", "RTXPRO6000BSE"),
    ("D2_v2_Promo", "D", "D_v2", "2", None),
    ("DC8s_v3", "D", "DCs_v3", "3", None),
]


@pytest.mark.parametrize("size,family,series,version,accelerator", SECTION_1_3, ids=[r[0] for r in SECTION_1_3])
def test_section_1_3_examples(size, family, series, version, accelerator):
    vm = parse_vm_size(size, fallback=False)
    assert (vm.family, vm.series, vm.version_label, vm.accelerator) == (family, series, version, accelerator)


def test_constrained_vcpus():
    vm = parse_vm_size("M8-2ms")
    assert vm.constrained and vm.cpus == "8" and vm.cpus_constrained == "2"
    assert not parse_vm_size("M8ms").constrained
    hb = parse_vm_size("HB120-16rs_v3")
    assert (hb.subfamily, hb.cpus, hb.cpus_constrained, hb.additive_features, hb.series) == ("B", "120", "16", "rs", "HBrs_v3")


def test_subfamily_and_features():
    vm = parse_vm_size("DS2_v2")
    assert (vm.family, vm.subfamily, vm.cpus, vm.additive_features, vm.version) == ("D", "S", "2", "", "v2")
    ncc = parse_vm_size("NCC40ads_H100_v5")
    assert (ncc.subfamily, ncc.additive_features, ncc.accelerator, ncc.series) == ("CC", "ads", "H100", "NCCads_v5")
    assert parse_vm_size("A0").series == "A" and parse_vm_size("A0").version_label == "1"


def test_xl_prefix_is_stripped_from_the_accelerator():
    vm = parse_vm_size("NC288ds_xl_RTXPRO6000BSE_v6")
    assert (vm.additive_features, vm.accelerator, vm.series) == ("ds", "RTXPRO6000BSE", "NCds_v6")


def test_ndr_infix_is_rejected_as_skewer_v0_0_24_does():
    # skewer v0.0.24 (pinned by provider v1.14.0) has no `NDR_` infix: the size does not parse and the
    # provider drops the SKU ("parsing VM size"); GB300 without the infix is an ordinary accelerator.
    with pytest.raises(VMSizeParseError):
        parse_vm_size("ND128isr_NDR_GB200_v6")
    assert parse_vm_size("ND128isr_GB300_v6").accelerator == "GB300"


def test_accelerator_takes_no_trailing_letters_without_xl_prefix():
    # v0.0.24's accelerator is `xl_[A-Z]+[0-9]+[A-Z]*|[A-Z]+[0-9]+`: `MI300X` is not one, so the
    # `_MI300X_` group takes it and there is no GPU name; without a version the size does not parse.
    for size in ("ND96isr_MI300X_v5", "ND96is_MI300X_v5"):
        vm = parse_vm_size(size)
        assert (vm.accelerator, vm.series, vm.version_label) == (None, size[:2] + size[4:size.index("_")] + "_v5", "5")
    with pytest.raises(VMSizeParseError):
        parse_vm_size("NP40mds_MI300X")


def test_end_of_text_is_go_end_of_text():
    # Go's `$` matches only at the end of the text; Python's would also match before a final newline.
    with pytest.raises(VMSizeParseError):
        parse_vm_size("D2s_v3\n")


def test_constrained_vcpus_beyond_int_are_a_parse_error():
    # GetVMSize runs strconv.Atoi on the constrained vCPUs and fails on a range error.
    with pytest.raises(VMSizeParseError):
        parse_vm_size("M8-99999999999999999999ms")
    assert parse_vm_size("M8-9223372036854775807ms").constrained


def test_confidential_child_capability():
    vm = parse_vm_size("DC4as_cc_v5")
    assert vm.confidential_child and vm.series == "DCas_v5" and vm.accelerator is None
    assert not parse_vm_size("DC4as_v5").confidential_child


def test_m_series_memory_variant():
    vm = parse_vm_size("M96s_1_v3")
    assert (vm.family, vm.additive_features, vm.version, vm.series) == ("M", "s", "v3", "Ms_v3")
    assert parse_vm_size("M416ds_10_v3").series == "Mds_v3"


def test_m416s_8_v2_special_case():
    vm = parse_vm_size("M416s_8_v2")
    assert (vm.family, vm.subfamily, vm.additive_features, vm.version, vm.series) == ("M", "", "s", "v2", "Ms_v2")
    assert vm.version_label == "2"


def test_promo():
    vm = parse_vm_size("D2_v2_Promo")
    assert vm.promo and vm.version == "v2"
    assert not parse_vm_size("D2_v2").promo


def test_capital_v_version_is_taken_as_an_accelerator_after_an_underscore():
    # Quirk of the pattern (same in Go): after "_", "V3" matches the accelerator group
    # ([A-Z]+[0-9]+[A-Z]*) before the version group gets a chance.
    vm = parse_vm_size("D16darm_V3")
    assert (vm.additive_features, vm.accelerator, vm.version, vm.series, vm.version_label) == (
        "darm", "V3", "", "Ddarm", "1")
    # so is "V3" right after the vCPUs; a capital-V version is only reached when no accelerator can match
    assert parse_vm_size("D2V3").accelerator == "V3"
    cc = parse_vm_size("DC4as_cc_V5")
    assert (cc.version, cc.version_label, cc.series) == ("V5", "5", "DCas_V5")


def test_h100_and_mi300x_groups_after_another_accelerator():
    # groups 10/11 (`_MI300X_`, `_H100_`) are only reached after an accelerator took the first token
    vm = parse_vm_size("ND96isr_A100_H100_v5")
    assert (vm.accelerator, vm.version, vm.series) == ("A100", "v5", "NDisr_v5")
    assert parse_vm_size("ND96isr_A100_MI300X_v5").accelerator == "A100"


@pytest.mark.parametrize("size", ["inValid", "Standard_D2s_v3", "d2s_v3", "D2s_v10", "ND96is_flex_H100_v5",
                                  "ND96is_noib_H100_v5", "", "D", "D2s_v3_"])
def test_parse_failure_is_a_clear_error(size):
    with pytest.raises(VMSizeParseError) as e:
        parse_vm_size(size)
    assert str(e.value) == f"could not parse VM size {size}"


def test_accelerator_fallback_table_is_optional():
    # flagged uncertain (not confirmed in github.com/Azure/skewer@v0.0.24/vmsize.go)
    assert parse_vm_size("NC6s_v3", fallback=False).accelerator is None
    with_fb = parse_vm_size("NC6s_v3", fallback=True)
    assert with_fb.accelerator == "V100" and with_fb.accelerator_from_fallback
    assert parse_vm_size("NV8as_v4", fallback=True).accelerator == "MI25"
    assert parse_vm_size("ND96asr_v4", fallback=True).accelerator == "A100"
    # a name-borne accelerator always wins
    assert parse_vm_size("NC24ads_A100_v4", fallback=True).accelerator_from_fallback is False
    assert set(ACCELERATOR_FALLBACK.values()) == {"V100", "A100", "M60", "MI25"}


def test_size_from_name():
    assert size_from_name("Standard_D2s_v3") == "D2s_v3"
    assert size_from_name("Basic_A0") == "A0"
    assert size_from_name("D2s_v3") == "D2s_v3"
