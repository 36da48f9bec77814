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


def test_unknown_label(capsys):
    assert main(["parity", "--label", "example.com/nope"]) == 2
    assert "--label example.com/nope: not a label of design 0006" in capsys.readouterr().err


# -- options are checked before any probe runs --------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["--diff", "design-0006", "--format", "svg"], "--diff supports --format markdown or json, not svg"),
    (["--check-doc", "--format", "svg"], "--check-doc supports --format markdown or json, not svg"),
    (["--diff", "design-0006", "--check-doc"], "--diff and --check-doc are separate reports"),
    (["--all"], "--all applies to --diff only"),
    (["--family", "foo"], "--family foo: unknown label family; known families: "),
    (["--diff", "upstrem"], "--diff upstrem: unknown profile; known profiles: before-0006, design-0006, upstream"),
    (["--format", "png"], "--format png needs -o FILE"),
])
def test_bad_options_fail_before_probing(argv, message, capsys, monkeypatch):
    from harness.parity import command

    def no_probing(*a, **k):
        raise AssertionError("probes ran before the options were checked")
    monkeypatch.setattr(command, "run_matrix", no_probing)
    assert main(["parity", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness parity: {message}"), err


def test_progress_on_stderr(capsys):
    assert main(["parity", "--label", "kubernetes.io/os", "--label", "kubernetes.io/arch"]) == 0
    captured = capsys.readouterr()
    assert "harness parity: upstream: 2/2 labels (kubernetes.io/os)" in captured.err
    assert "labels (" not in captured.out
    assert main(["parity", "-q", "--label", "kubernetes.io/os"]) == 0
    assert capsys.readouterr().err == ""


def test_diff_shows_changed_cells_grouped_and_all_with_flag(capsys):
    labels = ["--label", "kubernetes.azure.com/agentpool", "--label", "kubernetes.azure.com/role",
              "--label", "kubernetes.io/arch"]
    assert main(["parity", "-q", "--profile", "before-0006", "--diff", "design-0006", *labels]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| Label")]
    # the same change on two labels is one row; arch does not change and is left out
    assert rows == ['| (2 cells) kubernetes.azure.com/agentpool, kubernetes.azure.com/role | NodePool may set | '
                    'accepted; Node has it via kubelet-node-labels + karpenter-core | rejected (admission): label '
                    'domain "kubernetes.azure.com" is restricted | Decision 2: every other kubernetes.azure.com '
                    'label blocked |']
    assert main(["parity", "-q", "--profile", "before-0006", "--diff", "design-0006", "--all", *labels]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and not line.startswith("| Label")]
    assert len(rows) == 9                                 # 3 labels x 3 aspects
    assert sum("**changed**" in r for r in rows) == 2
    assert any(r.startswith("| kubernetes.io/arch | Karpenter schedulable | yes: binds | (same) |") for r in rows)


def test_check_doc_cites_upstream_sources(capsys):
    assert main(["parity", "-q", "--profile", "before-0006", "--check-doc", "--format", "json",
                 "--label", "kubernetes.azure.com/cluster", "--label", "kubernetes.azure.com/mode"]) == 0
    found = {d["key"]: d for d in json.loads(capsys.readouterr().out)}
    cluster = found["kubernetes.azure.com/cluster"]["sources"]
    assert cluster[0] == ("sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go:541 "
                          "filterInstanceTypesByRequirements")
    mode = found["kubernetes.azure.com/mode"]["sources"]
    assert mode[0].startswith("github.com/Azure/karpenter-provider-azure v1.14.0 "
                              "pkg/providers/imagefamily/bootstrap/aksbootstrap.go:332")
    # the upstream citation comes first, the reference note after it (never alone)
    assert all(any(s.startswith(("sigs.k8s.io/", "github.com/", "k8s.io/")) for s in d["sources"])
               for d in found.values())
    assert main(["parity", "-q", "--profile", "before-0006", "--check-doc",
                 "--label", "kubernetes.azure.com/cluster"]) == 0
    assert "| Label | Context | Column | Doc | Behavior | Kind | Reason | Sources |" in capsys.readouterr().out


def test_check_doc_cites_kube_scheduler_reason_under_before_0006(capsys):
    """Core v1.6.2 leaves a pod whose NodePools all filter out with kube-scheduler's reason only; that
    row cites the v1.6.2 scheduler and kube-scheduler's schedulePod, like every other row."""
    assert main(["parity", "-q", "--profile", "before-0006", "--check-doc", "--format", "json",
                 "--label", "karpenter.azure.com/sku-gpu-manufacturer"]) == 0
    found = json.loads(capsys.readouterr().out)
    amd = next(d for d in found if d["column"] == "Karpenter (schedulable)")
    assert "no nodes available to schedule pods" in amd["reason"]
    assert amd["sources"][0].startswith("sigs.k8s.io/karpenter v1.6.2 pkg/controllers/provisioning/scheduling/"
                                        "scheduler.go:628 Scheduler.addToNewNodeClaim")
    assert "k8s.io/kubernetes v1.36.3 pkg/scheduler/schedule_one.go:576 Scheduler.schedulePod" in amd["sources"][0]
    assert all(any(s.startswith(("sigs.k8s.io/", "github.com/", "k8s.io/")) for s in d["sources"]) for d in found)
