"""Whether an AKSNodeClass's image family keeps a SKU, and why, with the upstream source of the table
that decides it (`harness explain --sku X --nodeclass nc.yaml`).

The provider keeps a GPU size under an image family only when its GPU table lists that OS for the size
(karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go isInstanceTypeSupportedByFilters
-> pkg/utils/gpu.go IsGPUSKUSupportedOnOS over pkg/utils/supported-gpus.yaml; before v1.10 the maps
IsNvidiaEnabledSKU (Ubuntu) and IsMarinerEnabledGPUSKU (AzureLinux) of pkg/utils/gpu.go). Each release
profile reads its own release's table (harness/data/releases/<profile>/supported-gpus.yaml); a non-GPU size is
not filtered by image family. Which imageFamily values reach which table is the release's too (probe
provider.gpuImageFamilies; harness.model.azure.switches.gpu_supported_by_image_family, as staticpart uses it).
"""
from __future__ import annotations

import re

from harness.model.data import DATA_DIR
from harness.model.upstream.skutables import gpu_info
from harness.model.azure.switches import Switches, defaulted_image_family, gpu_supported_by_image_family, resolve_profile

_SOURCE = re.compile(r"from (github\.com/\S+ .+?)\s*$")


def table_source(tables: str) -> str:
    """`github.com/Azure/karpenter-provider-azure@v1.14.0 pkg/utils/supported-gpus.yaml`: the upstream file
    the profile's GPU table was derived from (its header, written by harness.model.sync)."""
    path = DATA_DIR / tables / "supported-gpus.yaml"
    first = path.read_text().splitlines()[0] if path.exists() else ""
    m = _SOURCE.search(first)
    return m.group(1) if m else str(path)


def image_family_verdict(sku: str, image_family: str | None, profile=None, release: str = "") -> dict:
    """{imageFamily, keeps, why, source}: whether `image_family` keeps `sku` under the profile's release."""
    prof = resolve_profile(profile)
    sw = Switches.of(prof)
    fam = defaulted_image_family(sw, image_family)
    at = f" at {release}" if release else ""
    source = table_source(sw.tables)
    info = gpu_info(sku, sw.tables)
    if info is None:
        return {"imageFamily": fam, "keeps": True, "source": source,
                "why": f"not a GPU size{at}: the image family filters only GPU sizes"}
    vendor, oses = info
    listed = ", ".join(oses) or "no OS"
    if vendor not in sw.gpu_vendors:
        return {"imageFamily": fam, "keeps": False, "source": source,
                "why": f"{vendor} GPU sizes are not supported{at} (dropped as 'unsupported GPU' before any "
                       f"image-family filter)"}
    if gpu_supported_by_image_family(sw, image_family, oses):
        return {"imageFamily": fam, "keeps": True, "source": source,
                "why": f"GPU size supported on {fam}{at} (the GPU table lists {listed})"}
    families = dict(sw.gpu_image_family_os)
    if fam not in families:
        known = ", ".join(sorted(families)) or "none"
        return {"imageFamily": fam, "keeps": False, "source": source,
                "why": f"imageFamily {fam} reaches no GPU table{at} (isInstanceTypeSupportedByImageFamily checks GPU "
                       f"sizes only for {known}); the provider drops it as 'GPU SKU not supported by image family {fam}'"}
    return {"imageFamily": fam, "keeps": False, "source": source,
            "why": f"GPU size not supported on {fam}{at} (the GPU table lists {listed}); the provider drops it "
                   f"as 'GPU SKU not supported by image family {fam}'"}
