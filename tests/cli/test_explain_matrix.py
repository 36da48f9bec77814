"""`harness explain` with several sizes, image families or releases: one matrix in one call, each cell
naming what decided it - the release's AKSNodeClass CRD, the image family's GPU table, the instance-type
filters - and agreeing with the single-size explain (harness/why/explain.py)."""
from __future__ import annotations

import json

import pytest

from harness.cli import main as cli
from harness.model.upstream.releases import release_profiles
from harness.why.explain import (
    CRD,
    IMAGE_FAMILY,
    NOT_READY,
    OFFERED,
    UNKNOWN_SKU,
    Request,
    expand_profiles,
    explain_matrix,
    split_values,
)

A100 = "Standard_NC24ads_A100_v4"
V100 = "Standard_NC6s_v3"
CRD_V162 = "github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml"


def _matrix(capsys, *args: str) -> dict:
    assert cli(["explain", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _cell(data: dict, sku: str, family: str, profile: str) -> dict:
    return next(c for c in data["cells"] if (c["sku"], c["imageFamily"], c["profile"]) == (sku, family, profile))


def test_shape_sizes_by_families_by_releases(capsys):
    data = _matrix(capsys, "--sku", f"{V100},{A100}", "--image-family", "Ubuntu2204", "--image-family", "AzureLinux",
                   "--profile", "v1.6.2", "--profile", "v1.14.2")
    assert data["skus"] == [V100, A100] and data["imageFamilies"] == ["Ubuntu2204", "AzureLinux"]
    assert [p["profile"] for p in data["profiles"]] == ["v1.6.2", "v1.14.2"]
    # sizes x families x releases, in the order asked
    assert [(c["sku"], c["imageFamily"], c["profile"]) for c in data["cells"]] == [
        (s, f, p) for s in (V100, A100) for f in ("Ubuntu2204", "AzureLinux") for p in ("v1.6.2", "v1.14.2")]
    # every cell points at one of the distinct outcomes, and they count every cell
    notes = {o["note"]: o for o in data["outcomes"]}
    assert {c["note"] for c in data["cells"]} == set(notes)
    assert sum(o["cells"] for o in data["outcomes"]) == 8
    offered = _cell(data, A100, "Ubuntu2204", "v1.6.2")
    assert offered["outcome"] == OFFERED
    assert offered["requirements"]["karpenter.azure.com/sku-gpu-name"] == {"operator": "In", "values": ["A100"]}


def test_text_matrix_has_a_column_per_release_and_the_details_below(capsys):
    assert cli(["explain", "--sku", A100, "--image-family", "AzureLinux,Ubuntu2404",
                "--profile", "v1.6.2,v1.14.2"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "┃ size" in line)
    assert "v1.6.2" in header and "v1.14.2" in header
    assert "dropped by image family AzureLinux [" in out
    assert "refused by CRD (imageFamily) [" in out
    assert "source: github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/utils/supported-gpus.yaml" in out


def test_one_release_puts_the_image_families_across(capsys):
    assert cli(["explain", "--sku", A100, "--image-family", "Ubuntu2204,AzureLinux", "--profile", "v1.6.2"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if "┃ size" in line)
    assert "Ubuntu2204" in header and "AzureLinux" in header


def test_many_releases_go_down_and_releases_that_answer_alike_share_a_note(capsys):
    data = _matrix(capsys, "--sku", A100, "--image-family", "AzureLinux", "--profile", "all-releases")
    dropped = [o for o in data["outcomes"] if o["outcome"] == IMAGE_FAMILY]
    assert len(dropped) == 1 and "v1.6.2" in dropped[0]["profiles"] and "v1.14.2" not in dropped[0]["profiles"]
    assert "github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/utils/supported-gpus.yaml" in dropped[0]["sources"]
    assert cli(["explain", "--sku", A100, "--image-family", "AzureLinux", "--profile", "all-releases"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert next(line for line in out if "┃ release" in line).split("┃")[2].strip() == A100
    assert any(line.startswith("│ v1.6.2 ") and "dropped by image family AzureLinux [1]" in line for line in out)
    assert any("source: github.com/Azure/karpenter-provider-azure@{" in line and "v1.6.2" in line for line in out)


def test_crd_refusal_is_named_as_such():
    """Provider v1.6.2's AKSNodeClass CRD enumerates imageFamily without Ubuntu2404 (it came in v1.6.3): the
    API server refuses the class, so no size is offered - neither the GPU table nor the catalog decides."""
    m = explain_matrix(Request([V100, "Standard_D2s_v3"], ["v1.6.2", "v1.14.2"], ["Ubuntu2404"]))
    for sku in (V100, "Standard_D2s_v3"):
        cell = m.cell(sku, "Ubuntu2404", "v1.6.2")
        assert cell.outcome == CRD and cell.short == "refused by CRD (imageFamily)"
        assert 'spec.imageFamily: Unsupported value: "Ubuntu2404": supported values: "Ubuntu", "Ubuntu2204", ' \
               '"AzureLinux"' in cell.detail
        assert cell.source == CRD_V162
        assert m.cell(sku, "Ubuntu2404", "v1.14.2").outcome == OFFERED


def test_single_size_names_the_crd_refusal_too(capsys):
    """Issue: `--image-family Ubuntu2404 --profile v1.6.2` said 'reaches no GPU table' and 'not in the
    catalog'; the release's CRD refuses the class before either."""
    assert cli(["explain", "--sku", V100, "--image-family", "Ubuntu2404", "--profile", "v1.6.2", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["refused"]["outcome"] == CRD
    assert 'Unsupported value: "Ubuntu2404"' in report["refused"]["message"]
    assert report["refused"]["source"] == CRD_V162
    assert "dropped" not in report and "imageFamily" not in report


def test_image_family_drop_is_named_as_such():
    m = explain_matrix(Request([A100, "Standard_NC4as_T4_v3"], ["v1.6.2", "v1.14.2"], ["AzureLinux"]))
    dropped = m.cell(A100, "AzureLinux", "v1.6.2")
    assert dropped.outcome == IMAGE_FAMILY and dropped.short == "dropped by image family AzureLinux"
    assert "GPU size not supported on AzureLinux (the GPU table lists ubuntu)" in dropped.detail
    assert dropped.source == "github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/utils/supported-gpus.yaml"
    assert m.cell(A100, "AzureLinux", "v1.14.2").outcome == OFFERED
    assert m.cell("Standard_NC4as_T4_v3", "AzureLinux", "v1.6.2").outcome == OFFERED   # T4: listed for AzureLinux


def test_unknown_sizes_are_cells_not_errors():
    m = explain_matrix(Request(["Standard_Nope", "Standard_nc6s_v3", V100], ["v1.14.2"], ["Ubuntu2204"]))
    assert m.cell("Standard_Nope", "Ubuntu2204", "v1.14.2").outcome == UNKNOWN_SKU
    typo = m.cell("Standard_nc6s_v3", "Ubuntu2204", "v1.14.2")
    assert typo.outcome == UNKNOWN_SKU and "did you mean 'Standard_NC6s_v3'" in typo.detail
    assert m.cell(V100, "Ubuntu2204", "v1.14.2").outcome == OFFERED


def test_old_release_judges_its_own_nodeclass_version():
    """Provider v0.7.5 serves AKSNodeClass v1alpha2 only: the probe is written in it, so the cell is the
    release's filters' answer, not an unserved version."""
    m = explain_matrix(Request([A100, "Standard_NC4as_T4_v3"], ["v0.7.5"], ["AzureLinux"]))
    assert m.cell(A100, "AzureLinux", "v0.7.5").outcome == IMAGE_FAMILY
    assert m.cell("Standard_NC4as_T4_v3", "AzureLinux", "v0.7.5").outcome == OFFERED


def test_all_releases_and_lists():
    assert split_values(["a,b", "b", " c "]) == ["a", "b", "c"]
    m = explain_matrix(Request(["Standard_D2s_v3"], expand_profiles(["all-releases"]), ["Ubuntu2204"]))
    assert m.profiles == release_profiles()
    assert all(c.outcome == OFFERED for c in m.cells)


def test_bad_profile_names_the_option(capsys):
    assert cli(["explain", "--sku", "Standard_D2s_v3", "--profile", "v1.6.2,upstrem"]) == 2
    assert capsys.readouterr().err.startswith("harness explain --profile upstrem: ")


@pytest.mark.parametrize("sku, family, profile", [(A100, "AzureLinux", "v0.7.5"), ("Standard_D2s_v3", "AzureLinux", "v0.7.5")])
def test_cells_agree_with_the_single_size_run(sku, family, profile, capsys):
    """The matrix builds instance types without running the loop; the single-size explain runs it."""
    cell = explain_matrix(Request([sku], [profile], [family])).cell(sku, family, profile)
    assert cli(["explain", "--sku", sku, "--image-family", family, "--profile", profile, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    if cell.outcome == OFFERED:
        assert "dropped" not in report and report["requirements"] == cell.data["requirements"]
        assert report["labels"]      # the loop launched a Node
    else:
        assert report["dropped"] == "GPU SKU not supported by image family AzureLinux"


def test_a_class_held_back_from_ready_is_named(tmp_path, capsys):
    """FIPS without SIG images: admitted, but the provider's status controllers keep the AKSNodeClass from
    Ready (harness.model.crd.aksnodeclass.not_ready), so no size launches - not 'not in the catalog'."""
    nc = tmp_path / "nc.yaml"
    nc.write_text("apiVersion: karpenter.azure.com/v1beta1\nkind: AKSNodeClass\nmetadata: {name: fips}\n"
                  "spec: {imageFamily: AzureLinux, fipsMode: FIPS}\n")
    data = _matrix(capsys, "--sku", "Standard_D2s_v3,Standard_D4s_v3", "--nodeclass", str(nc), "--profile", "v1.14.2")
    assert {c["outcome"] for c in data["cells"]} == {NOT_READY}
    assert "SIGRequiredForFIPS" in data["outcomes"][0]["detail"]
    assert cli(["explain", "--sku", "Standard_D2s_v3", "--nodeclass", str(nc), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["notReady"]["outcome"] == NOT_READY and "dropped" not in report
    data = _matrix(capsys, "--sku", "Standard_D2s_v3,Standard_D4s_v3", "--nodeclass", str(nc), "--profile", "v1.14.2",
                   "--cluster", "useSIG=true")
    assert {c["outcome"] for c in data["cells"]} == {OFFERED}
