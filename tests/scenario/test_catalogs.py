"""Scenario catalogs: customer files, region checks, synthesis (harness/scenario/catalogs.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.scenario.catalogs import scenario_catalog
from harness.scenario.load import load_scenarios_text
from harness.scenario.yamlsource import SourceError

FILES = Path(__file__).resolve().parents[2] / "scenarios" / "bugs" / "customer-files"


def scenario(tmp_path, given: str):
    for f in FILES.glob("*.json"):
        shutil.copy(f, tmp_path / f.name)
    text = f"""apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: s}}
given:
{given}
"""
    return load_scenarios_text(text, "s.scenario.yaml", tmp_path)[0]


def test_catalog_file_sets_the_region_and_prices(tmp_path):
    sc = scenario(tmp_path, "  catalog: {file: westus2-skus.json, prices: westus2-prices.json}")
    assert sc.region == "westus2" and not sc.warnings
    cat = scenario_catalog(sc)
    assert [s["name"] for s in cat.skus] == ["Standard_D2ds_v5", "Standard_D4ds_v5", "Standard_D8ds_v5"]
    assert cat.prices["westus2"]["Standard_D4ds_v5"] == {"on-demand": 0.226, "spot": 0.0452}


def test_catalog_file_without_prices_says_so(tmp_path):
    sc = scenario(tmp_path, "  catalog: {file: westus2-skus.json}")
    (n,) = sc.warnings
    assert "3 SKU(s) of westus2-skus.json have no price in westus2" in n.message
    assert scenario_catalog(sc).prices["westus2"]["Standard_D4ds_v5"]["on-demand"] > 0


def test_catalog_file_for_another_region_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="has no SKU in region 'eastus'"):
        scenario(tmp_path, "  region: eastus\n  catalog: {file: westus2-skus.json}")


def test_prices_given_as_the_sku_file_is_an_error(tmp_path):
    with pytest.raises(SourceError, match="holds Retail Prices API items"):
        scenario(tmp_path, "  catalog: {file: westus2-prices.json}")


def test_named_sku_missing_from_the_file_is_synthesized_in_its_zones(tmp_path):
    sc = scenario(tmp_path, "  catalog: {file: westus2-skus.json, prices: westus2-prices.json}\n"
                            "  skus: [Standard_D4ds_v5, Standard_E4ds_v5]")
    (n,) = sc.warnings
    assert n.line == 6 and "Standard_E4ds_v5 is synthesized" in n.message and "zones 1,2,3," in n.message
    cat = scenario_catalog(sc)
    assert [s["name"] for s in cat.skus] == ["Standard_D4ds_v5", "Standard_E4ds_v5"]
    assert "Standard_E4ds_v5" in cat.synthesized


def test_run_prints_the_warnings(capsys):
    path = Path(__file__).resolve().parents[2] / "scenarios" / "bugs" / "any-region-catalog.scenario.yaml"
    assert cli(["run", str(path), "-k", "synthesized"]) == 0
    assert "warning: Standard_D8ds_v5 is synthesized from its name" in capsys.readouterr().err


def test_inline_skus_need_no_catalog_for_their_region(tmp_path):
    sc = scenario(tmp_path, "  region: eastus2euap\n  skus:\n    - {name: Standard_D2s_v3, locations: [eastus2euap]}")
    assert sc.warnings == [] and scenario_catalog(sc).skus == []
