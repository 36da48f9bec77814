"""The real kubelet as the judge of --node-labels (harness/backends/kubeletjudge.py): parsing its
exit message, the fallback to the model, and - when the kubelet is built - that the real binary and
the model agree label set by label set."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from harness.backends.binaries import controlplane as binmod
from harness.backends import kubeletjudge as kj
from harness.backends.embedded import EmbeddedCluster
from harness.model.labels.policy import kubelet_flag_error
from harness.model.upstream.profile import load_profile, profile_with_knobs

UP = load_profile("upstream")
MULTILINE = ('I1122 12:00:00.000000   42 server.go:1] "Golang settings"\n'
             'E1122 12:00:00.100000   42 run.go:72] "command failed" err=<\n'
             "\tfailed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with "
             "--node-labels: [kubernetes.io/foo]\n"
             "\t--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (x)\n"
             " >\n")
QUOTED = ('E1122 12:00:00.100000   42 run.go:72] "command failed" err="failed to load kubelet config file, '
          'path: /tmp/x, error: open \\"/tmp/x\\": no such file or directory"\n')


def test_error_text_multiline_klog_value():
    assert kj.error_text(MULTILINE) == (
        "failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with "
        "--node-labels: [kubernetes.io/foo]\n--node-labels in the 'kubernetes.io' namespace must begin with an "
        "allowed prefix (x)")


def test_error_text_quoted_klog_value_and_plain_error():
    assert kj.error_text(QUOTED) == ('failed to load kubelet config file, path: /tmp/x, error: open "/tmp/x": '
                                     'no such file or directory')
    assert kj.error_text("Error: failed to parse kubelet flag: bad\n") == "failed to parse kubelet flag: bad"
    assert kj.error_text("no verdict here") is None


def test_node_labels_flag_keeps_order_and_empty_values():
    assert kj.node_labels_flag({"b/x": "1", "a/y": ""}) == "b/x=1,a/y="


def _fake_kubelet(tmp_path: Path, output: str, code: int = 1) -> Path:
    script = tmp_path / "kubelet"
    script.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{output}EOF\nexit {code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def test_run_kubelet_reads_the_verdict_from_the_exit_message(tmp_path):
    assert kj.run_kubelet(_fake_kubelet(tmp_path, MULTILINE), {"kubernetes.io/foo": "x"}).startswith(kj.REFUSED)
    assert kj.run_kubelet(_fake_kubelet(tmp_path, QUOTED), {"example.com/a": "b"}) is None


def test_run_kubelet_without_a_verdict_is_an_error(tmp_path):
    with pytest.raises(kj.KubeletJudgeError, match="without a flag verdict"):
        kj.run_kubelet(_fake_kubelet(tmp_path, "segfault\n", 2), {})


def test_refusal_falls_back_to_the_model_without_a_kubelet(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBELET_BIN", raising=False)
    monkeypatch.delenv("HARNESS_BIN_DIR", raising=False)
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    labels = {"kubernetes.io/foo": "bar"}
    assert kj.refusal(labels, UP) == (kubelet_flag_error(labels, UP), "model")


def test_refusal_uses_the_kubelet_binary(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBELET_BIN", str(_fake_kubelet(tmp_path, MULTILINE)))
    verdict, judge = kj.refusal({"kubernetes.io/foo": "bar"}, UP)
    assert judge == "kubelet" and verdict.startswith(kj.REFUSED)


def test_a_changed_kubelet_allow_list_is_judged_by_the_model(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBELET_BIN", str(_fake_kubelet(tmp_path, MULTILINE)))
    knobbed = profile_with_knobs("upstream", {"kubelet": {"allowedLabels": ["kubernetes.io/foo"]}})
    assert not kj.judges_profile(knobbed)
    assert kj.refusal({"kubernetes.io/foo": "bar"}, knobbed) == (None, "model")


def test_embedded_cluster_keeps_the_models_answer():
    labels = {"node-restriction.kubernetes.io/x": "y"}
    assert EmbeddedCluster().kubelet_refusal(labels, UP) == kubelet_flag_error(labels, UP)


# -- the real binary (skipped until `python -m harness.backends build --node` has run) ------------------
LABEL_SETS = [
    {"kubernetes.io/foo": "bar"},
    {"node-role.kubernetes.io/worker": ""},
    {"node-restriction.kubernetes.io/team": "a", "example.com/x": "y"},
    {"k8s.io/x": "y"},
    {"kops.k8s.io/instancegroup": "ig"},
    {"bad label": "1"},
    {"example.com/x": "-bad"},
    {"karpenter.sh/nodepool": "default", "example.com/x": "y"},
    {"kubernetes.azure.com/mode": "user", "kubernetes.azure.com/agentpool": "pool"},
    {"node.kubernetes.io/instance-type": "Standard_D2s_v3", "topology.kubernetes.io/zone": "eastus-1",
     "kubernetes.io/arch": "amd64"},
    {"kubelet.kubernetes.io/anything": "1", "node.kubernetes.io/exclude-from-external-load-balancers": "true"},
    {},
]


@pytest.fixture(scope="module")
def real_kubelet():
    try:
        k = binmod.find_node_binary("kubelet")
    except binmod.BinariesError as e:
        pytest.skip(str(e))
    if k is None or not os.access(k, os.X_OK):
        pytest.skip("no kubelet built (python -m harness.backends build --node)")
    return k


@pytest.mark.parametrize("labels", LABEL_SETS, ids=lambda d: ",".join(d) or "none")
def test_real_kubelet_and_model_agree(real_kubelet, labels):
    assert kj.run_kubelet(real_kubelet, labels) == kubelet_flag_error(labels, UP)
