"""`harness explain --sku X --nodeclass nc.yaml` says whether the NodeClass's image family keeps the SKU,
why, and which upstream file of which release decides it (harness/model/azure/imagefamily.py)."""
from __future__ import annotations

import json

from harness.cli import main as cli
from harness.model.azure.imagefamily import image_family_verdict

NODECLASS = """apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata: {name: gpu}
spec:
  imageFamily: AzureLinux
"""


def test_azurelinux_keeps_an_a100_at_v1_14_and_drops_it_at_v1_6(tmp_path, capsys):
    nc = tmp_path / "nc.yaml"
    nc.write_text(NODECLASS)
    assert cli(["explain", "--sku", "Standard_NC24ads_A100_v4", "--nodeclass", str(nc)]) == 0
    out = capsys.readouterr().out
    assert "AzureLinux keeps it: GPU size supported on AzureLinux at provider v1.14.0-v1.14.2" in out
    assert "source: github.com/Azure/karpenter-provider-azure@v1.14.2 pkg/utils/supported-gpus.yaml" in out
    assert cli(["explain", "--sku", "Standard_NC24ads_A100_v4", "--nodeclass", str(nc), "--profile", "v1.6.2",
                "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dropped"] == "GPU SKU not supported by image family AzureLinux"
    assert report["imageFamily"]["keeps"] is False
    assert report["imageFamily"]["source"] == "github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/utils/supported-gpus.yaml"
    assert "the GPU table lists ubuntu)" in report["imageFamily"]["why"]


def test_verdicts():
    # a T4 size: AzureLinux listed since the oldest tables
    assert image_family_verdict("Standard_NC4as_T4_v3", "AzureLinux", "v1.6.4")["keeps"] is True
    plain = image_family_verdict("Standard_D2s_v3", "AzureLinux", "upstream")
    assert plain["keeps"] is True and plain["why"].startswith("not a GPU size")
    ubuntu = image_family_verdict("Standard_NC24ads_A100_v4", None, "upstream")     # unset: Ubuntu
    assert ubuntu["imageFamily"] == "Ubuntu" and ubuntu["keeps"] is True


def test_generic_ubuntu_reaches_no_gpu_table_at_v1_6_2():
    """Provider v1.6.2's isInstanceTypeSupportedByImageFamily has `case Ubuntu2204ImageFamily` only (probe
    provider.gpuImageFamilies); #1147 (v1.6.3) made it UbuntuFamilies.Has."""
    old = image_family_verdict("Standard_NC16as_T4_v3", "Ubuntu", "v1.6.2")
    assert old["keeps"] is False and "imageFamily Ubuntu reaches no GPU table" in old["why"]
    assert "only for AzureLinux, Ubuntu2204" in old["why"]
    assert image_family_verdict("Standard_NC16as_T4_v3", "Ubuntu2204", "v1.6.2")["keeps"] is True
    assert image_family_verdict("Standard_NC16as_T4_v3", "Ubuntu", "v1.6.4")["keeps"] is True
    unset = image_family_verdict("Standard_NC16as_T4_v3", None, "v1.6.2")      # the CRD default, Ubuntu2204
    assert unset["imageFamily"] == "Ubuntu2204" and unset["keeps"] is True
