"""`harness parity` through the CLI (one label, so each call is a few probe runs)."""
from __future__ import annotations

import importlib.util
import json

import pytest

from harness.cli import main


def test_markdown_default(capsys):
    assert main(["parity", "--profile", "before-0006", "--label", "kubernetes.io/os"]) == 0
    out = capsys.readouterr().out
    assert "Regenerate with `harness parity --profile before-0006 --label kubernetes.io/os`" in out
    assert "| kubernetes.io/os |" in out


def test_json(capsys):
    assert main(["parity", "--label", "kubernetes.azure.com/role", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cell = data["rows"][0]["cells"][0]
    assert data["profile"] == "upstream"
    assert cell["written"]["value"] == "agent" and cell["written"]["writers"] == ["kubelet-node-labels"]
    assert cell["nodepool"] == {"accepted": False, "stage": "admission",
                                "message": 'label domain "kubernetes.azure.com" is restricted', "node": None}


def test_check_doc_json(capsys):
    assert main(["parity", "--profile", "before-0006", "--check-doc", "--format", "json",
                 "--label", "kubernetes.azure.com/cluster"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [(d["key"], d["column"], d["kind"]) for d in found] == [
        ("kubernetes.azure.com/cluster", "Karpenter (schedulable)", "disagree")]


def test_diff_json(capsys):
    assert main(["parity", "--profile", "before-0006", "--diff", "design-0006", "--format", "json",
                 "--label", "kubernetes.azure.com/os-sku"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["aspect"] for d in data["differences"]} == {"schedulable", "written"}


def test_svg_to_file(tmp_path):
    out = tmp_path / "t.svg"
    assert main(["parity", "--label", "kubernetes.io/arch", "--format", "svg", "-o", str(out)]) == 0
    assert out.read_text().startswith("<svg")


def test_png_needs_matplotlib(tmp_path, capsys):
    code = main(["parity", "--label", "kubernetes.io/arch", "--format", "png", "-o", str(tmp_path / "t.png")])
    if importlib.util.find_spec("matplotlib") is None:
        assert code == 2 and "matplotlib" in capsys.readouterr().err
    else:
        assert code == 0 and (tmp_path / "t.png").stat().st_size > 0


def test_unknown_profile(capsys):
    assert main(["parity", "--profile", "nope", "--label", "kubernetes.io/arch"]) == 2
    assert "unknown profile" in capsys.readouterr().err


def test_unknown_label():
    with pytest.raises(SystemExit):
        main(["parity", "--label", "example.com/nope"])
