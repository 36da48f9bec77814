"""Image-family labels (harness.model.azure.nodeimage)."""
from __future__ import annotations

import pytest

from harness.model.azure.nodeimage import node_image_version_label, os_sku_effective, os_sku_from_image_family


@pytest.mark.parametrize("family,expected", [(None, "Ubuntu"), ("", "Ubuntu"), ("Ubuntu", "Ubuntu"),
                                             ("Ubuntu2204", "Ubuntu"), ("Ubuntu2404", "Ubuntu"),
                                             ("AzureLinux", "AzureLinux"), ("Windows2022", "Windows2022")])
def test_os_sku_from_image_family(family, expected):
    assert os_sku_from_image_family(family) == expected


@pytest.mark.parametrize("family,k8s,fips,tl,expected", [
    ("Ubuntu", "1.33.0", False, False, "Ubuntu2204"), ("Ubuntu", "1.34.0", False, False, "Ubuntu2404"),
    ("", "1.35.1", False, False, "Ubuntu2404"), ("Ubuntu", "1.34.0", "FIPS", False, "Ubuntu"),
    ("Ubuntu", "1.34.0", True, True, "Ubuntu2204"), ("Ubuntu", "1.34.0", False, True, "Ubuntu2204"),
    ("Ubuntu2204", "1.34.0", False, False, "Ubuntu2204"), ("Ubuntu2404", "1.30.0", False, False, "Ubuntu2404"),
    ("AzureLinux", "1.31.9", False, False, "AzureLinux2"), ("AzureLinux", "1.32.0", False, False, "AzureLinux3"),
    ("AzureLinux", "v1.33.2", "FIPS", False, "AzureLinux3"), ("Custom", "1.33.0", False, False, "Custom"),
])
def test_os_sku_effective(family, k8s, fips, tl, expected):
    assert os_sku_effective(family, k8s, fips, tl) == expected


def test_node_image_version_label_is_modeled():
    assert node_image_version_label("AzureLinux", "1.33.0", None, False, "202509.01.0", True, True) == \
        "AKSAzureLinux-V3gen2arm64-202509.01.0"
    assert node_image_version_label("Ubuntu", "1.34.0", None, False, "1", True, False) == \
        "AKSUbuntu-2404gen2containerd-1"
