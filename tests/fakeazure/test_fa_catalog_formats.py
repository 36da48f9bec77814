"""Customer catalog files: `az vm list-skus` output, raw ARM resourceSkus pages, Retail Prices API JSON
(fakeazure/catalog.py skus_from_document, prices_from_retail)."""
from __future__ import annotations

import json
from pathlib import Path

from fakeazure import catalog as cat

FILES = Path(__file__).resolve().parents[2] / "scenarios" / "bugs" / "customer-files"


def test_az_list_skus_output_keeps_only_vms_and_normalizes_zone_details():
    data = json.loads((FILES / "westus2-skus.json").read_text())
    skus = cat.skus_from_document(data)
    assert [s["name"] for s in skus] == ["Standard_D2ds_v5", "Standard_D4ds_v5", "Standard_D8ds_v5"]
    norm = cat.normalize_sku(skus[0])
    assert "Name" in norm["locationInfo"][0]["zoneDetails"][0]
    assert cat.available_zones(cat.normalize_sku(skus[2]), "westus2") == ["1", "2"]


def test_arm_pages_and_value_documents():
    sku = {"name": "Standard_D2s_v3", "resourceType": "virtualMachines"}
    disk = {"name": "Premium_LRS", "resourceType": "disks"}
    assert cat.skus_from_document({"value": [sku, disk], "nextLink": None}) == [sku]
    assert cat.skus_from_document([{"value": [sku]}, {"value": [disk]}]) == [sku]


def test_retail_prices_classified_like_fetch_pricing():
    data = json.loads((FILES / "westus2-prices.json").read_text())
    assert cat.is_retail_prices(data)
    prices = cat.prices_from_retail(data)
    # Windows, Low Priority and Reservation items are not prices; " Spot" skuNames are spot
    assert prices["westus2"]["Standard_D8ds_v5"] == {"on-demand": 0.452, "spot": 0.0904}
    assert cat.prices_from_retail([data]) == prices


def test_load_catalog_file_reads_customer_files(tmp_path):
    p = tmp_path / "skus.json"
    p.write_text((FILES / "westus2-skus.json").read_text())
    skus, prices = cat.load_catalog_file(p)
    assert len(skus) == 3 and prices == {}
    q = tmp_path / "prices.json"
    q.write_text((FILES / "westus2-prices.json").read_text())
    assert cat.load_catalog_file(q) == ([], cat.prices_from_retail(json.loads(q.read_text())))
