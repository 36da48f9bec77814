"""`harness explain`: values print as data (no markup eaten), piped output is not cut, errors are
located at the option the user typed, and `--json` gives requirements as `{operator, values}`."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]


def _explain_piped(*args: str) -> subprocess.CompletedProcess:
    """Through a pipe, as `harness explain ... | less` sees it (stdout is not a terminal)."""
    return subprocess.run([sys.executable, "-m", "harness", "explain", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**__import__("os").environ, "COLUMNS": "80"})


def test_bracketed_values_and_full_label_names_when_piped():
    proc = _explain_piped("--sku", "Standard_D4s_v5", "--region", "eastus")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    # lowercase bracketed text is data, not rich markup
    assert "In [on-demand spot]" in out
    assert "In [amd64]" in out
    assert "In [regional zonal]" in out
    # label names are whole even though COLUMNS=80
    assert "karpenter.azure.com/sku-storage-ephemeralos-maxsize" in out
    assert "beta.kubernetes.io/instance-type" in out
    assert "…" not in out


def test_json_requirements_are_operator_and_values(capsys):
    assert cli(["explain", "--sku", "Standard_NC24ads_A100_v4", "--json", "--profile", "upstream"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["requirements"]["karpenter.azure.com/sku-gpu-name"] == {"operator": "In", "values": ["A100"]}
    assert report["requirements"]["karpenter.sh/capacity-type"] == {"operator": "In", "values": ["on-demand", "spot"]}
    assert report["requirements"]["kubernetes.azure.com/fips_enabled"] == {"operator": "DoesNotExist", "values": []}
    assert report["labels"]["karpenter.azure.com/sku-gpu-manufacturer"]["value"] == "nvidia"
    assert {"writer": "karpenter-core", "value": "nvidia", "accepted": True} in \
        report["labels"]["karpenter.azure.com/sku-gpu-manufacturer"]["writes"]
    assert cli(["explain", "--sku", "Standard_A0", "--json"]) == 0
    assert "AKS-restricted" in json.loads(capsys.readouterr().out)["dropped"]


@pytest.mark.parametrize("args, message", [
    (["--sku", "Standard_Nope"],
     "harness explain --sku Standard_Nope: unknown SKU 'Standard_Nope' in catalog 'southcentralus'"),
    (["--sku", "Standard_D2s_v3", "--profile", "upstrem"],
     "harness explain --profile upstrem: unknown profile 'upstrem'; available: before-0006, design-0006, upstream"),
    # (a --region without a bundled catalog synthesizes the named SKU, with a warning)
    (["--sku", "Standard_D2s_v3", "--catalog", "nowhere"], "harness explain --catalog nowhere: unknown region 'nowhere'"),
    (["--sku", "Standard_D2s_v3", "--cluster", "foo"], "harness explain --cluster foo: expected KEY=VALUE"),
    (["--sku", "Standard_D2s_v3", "--cluster", "foo=bar"],
     "harness explain --cluster foo=bar: unknown cluster setting 'foo'"),
    (["--sku", "Standard_D2s_v3", "--nodeclass", "does-not-exist.yaml"],
     "harness explain --nodeclass does-not-exist.yaml: No such file or directory"),
])
def test_errors_name_the_option(args, message, capsys):
    assert cli(["explain", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert "explain:" not in err.split(":", 1)[0]          # no made-up `.../explain:9:` file location


def test_nodeclass_file_errors_carry_its_line(tmp_path, capsys):
    f = tmp_path / "nc.yaml"
    f.write_text("apiVersion: v1\nkind: ConfigMap\n---\nkind: [oops\n")
    assert cli(["explain", "--sku", "Standard_D2s_v3", "--nodeclass", str(f)]) == 2
    assert capsys.readouterr().err.startswith(f"{f}:")
    f.write_text("apiVersion: v1\nkind: ConfigMap\n")
    assert cli(["explain", "--sku", "Standard_D2s_v3", "--nodeclass", str(f)]) == 2
    assert capsys.readouterr().err.strip() == f"{f}:1: no AKSNodeClass in file"
