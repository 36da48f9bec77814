"""Node image families and the labels derived from them.

The os-sku label (provider v1.14.0 pkg/apis/v1beta1/labels.go GetOSSKUFromImageFamily), the resolved
image family written as os-sku-effective (pkg/providers/imagefamily/resolver.go GetImageFamily, written
by pkg/providers/labels/labels.go), and the modeled node-image-version label. Kept apart from instance
types: only labels and the GPU image filter read the image family.
"""
from __future__ import annotations

from harness.model.values.versions import version_at_least

UBUNTU_FAMILIES = frozenset({"", "Ubuntu", "Ubuntu2204", "Ubuntu2404"})
AZURE_LINUX_FAMILY = "AzureLinux"


def os_sku_from_image_family(image_family: str | None) -> str:
    """`GetOSSKUFromImageFamily` (karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/labels.go;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements):
    Ubuntu
    families -> Ubuntu, AzureLinux -> AzureLinux, else unchanged."""
    fam = image_family or ""
    if fam in UBUNTU_FAMILIES:
        return "Ubuntu"
    if fam == AZURE_LINUX_FAMILY:
        return "AzureLinux"
    return fam


def os_sku_effective(image_family: str | None, k8s_version: str, fips: bool | str | None = False,
                     trusted_launch: bool = False) -> str:
    """The resolved image family written as `kubernetes.azure.com/os-sku-effective` (karpenter-provider-azure
    v1.14.0 pkg/providers/imagefamily/resolver.go GetImageFamily, pkg/providers/labels/labels.go Get;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go Get).

    Generic Ubuntu -> Ubuntu2404 on Kubernetes >= 1.34, else Ubuntu2204; with FIPS -> `Ubuntu` (the
    20.04 FIPS image) or Ubuntu2204 with trusted launch; trusted launch alone -> Ubuntu2204.
    AzureLinux -> AzureLinux3 on Kubernetes >= 1.32, else AzureLinux2. Others pass through."""
    fam = image_family or ""
    is_fips = fips is True or fips == "FIPS"
    if fam in ("", "Ubuntu"):
        if is_fips:
            return "Ubuntu2204" if trusted_launch else "Ubuntu"
        if trusted_launch:
            return "Ubuntu2204"
        return "Ubuntu2404" if version_at_least(k8s_version, (1, 34)) else "Ubuntu2204"
    if fam == AZURE_LINUX_FAMILY:
        return "AzureLinux3" if version_at_least(k8s_version, (1, 32)) else "AzureLinux2"
    return fam


def node_image_version_label(image_family: str | None, k8s_version: str, fips: bool | str | None,
                             trusted_launch: bool, version: str, gen2: bool, arm64: bool) -> str:
    """MODELED value for `kubernetes.azure.com/node-image-version` (harness assumption: the provider
    v1.14.0 does not compute it, github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetype.go computeRequirements, designs/0006-requirements-and-labels.md; only
    profiles with `nodeImageVersion: true`
    use it; AKS's reserved labels: https://learn.microsoft.com/azure/aks/use-labels). Shaped like AKS's own
    label values, e.g.
    `AKSUbuntu-2204gen2containerd-202409.30.0` (virtual-kubelet/virtual-kubelet#1250): `AKSUbuntu-<2204|2404|2004fips>
    [gen2][arm64]containerd-<version>` or `AKSAzureLinux-V<2|3>[gen2][arm64]-<version>`."""
    eff = os_sku_effective(image_family, k8s_version, fips, trusted_launch)
    g = "gen2" if gen2 else ""
    a = "arm64" if arm64 else ""
    if eff.startswith("AzureLinux"):
        return f"AKSAzureLinux-V{eff[len('AzureLinux'):] or '3'}{g}{a}-{version}"
    if eff == "Ubuntu":
        return f"AKSUbuntu-2004fips{g}{a}containerd-{version}"
    if eff.startswith("Ubuntu"):
        return f"AKSUbuntu-{eff[len('Ubuntu'):]}{g}{a}containerd-{version}"
    return f"AKS{eff}{g}{a}-{version}"

