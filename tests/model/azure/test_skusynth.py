"""SKU synthesis from a size name (harness/model/azure/skusynth.py), checked against the bundled catalog."""
from __future__ import annotations

import pytest

from fakeazure import catalog as cat
from harness.model.azure.skusynth import SynthesisError, synthesize

EASTUS = {s["name"]: s for s in cat.load_catalog_file(cat.CATALOG_DIR / "skus" / "eastus.json")[0]}
# sizes whose series rule the table states; their vCPUs, memory, architecture and disks must agree
CHECKED = ["Standard_D4s_v3", "Standard_D4ds_v5", "Standard_D4s_v5", "Standard_E2ds_v5", "Standard_D4pls_v5",
           "Standard_D4ps_v5", "Standard_D4ds_v6", "Standard_D4as_v5"]


@pytest.mark.parametrize("name", CHECKED)
def test_synthesized_matches_catalog_on_what_the_name_tells(name):
    real = cat.capabilities(EASTUS[name])
    synth = cat.capabilities(synthesize(name, "eastus").sku)
    for key in ("vCPUs", "MemoryGB", "CpuArchitectureType", "PremiumIO"):
        assert float(synth[key]) == float(real[key]) if key in ("vCPUs", "MemoryGB") else synth[key] == real[key], key
    assert (int(synth["MaxResourceVolumeMB"]) > 0) == (int(real.get("MaxResourceVolumeMB", "0")) > 0)
    assert ("NvmeDiskSizeInMiB" in synth) == ("NvmeDiskSizeInMiB" in real)


def test_wire_shape_and_note():
    s = synthesize("Standard_D8ds_v5", "westus2")
    assert all(isinstance(c["value"], str) for c in s.sku["capabilities"])
    assert s.sku["locationInfo"] == [{"location": "westus2", "zones": ["1", "2", "3"], "zoneDetails": []}]
    assert s.sku["family"] == "standardDDSv5Family"
    assert "synthesized" in s.note and "(default)" in s.note
    assert s.prices["spot"] < s.prices["on-demand"]


def test_region_zones_are_used_when_known():
    assert synthesize("Standard_D2s_v3", "westcentralus", []).sku["locationInfo"][0]["zones"] == []


@pytest.mark.parametrize("name", ["Standard_Foo_Bar", "D2s_v3", "Standard_M8-2ms"])
def test_names_it_cannot_read(name):
    with pytest.raises(SynthesisError):
        synthesize(name, "eastus")
