"""The real kubelet as the judge of `--node-labels` (k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go
ValidateKubeletFlags).

The kubelet validates its flags before anything else and exits: `NewKubeletCommand`'s RunE calls
`options.ValidateKubeletFlags` and returns "failed to validate kubelet flags: %w" (k8s.io/kubernetes
v1.36.3 cmd/kubelet/app/server.go; the label rules in cmd/kubelet/app/options/options.go
ValidateKubeletFlags). The next step loads the file named by --config, so pointing --config at a
path that does not exist stops every run there ("failed to load kubelet config file"), on any host,
in about 0.2 s, without a runtime, kubeconfig or API server.

A run is a refusal if and only if the kubelet's error starts with "failed to validate kubelet
flags"; the refusal text is the error value the kubelet logs (`klog.ErrorS(err, "command failed")`,
k8s.io/component-base v0.36.3 cli/run.go).
"""
from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import tempfile
from pathlib import Path

from harness.backends.binaries import controlplane as binmod

REFUSED = "failed to validate kubelet flags"
# The step after flag validation when --config names a missing file (server.go loadConfigFile).
PASSED = "failed to load kubelet config file"
TIMEOUT = 30.0


class KubeletJudgeError(RuntimeError):
    """The kubelet binary gave neither verdict (it crashed, or a new version changed the order)."""


def node_labels_flag(labels: dict[str, str]) -> str:
    """The --node-labels value: the kubelet's mapStringString syntax, k=v pairs joined by ','."""
    return ",".join(f"{k}={v}" for k, v in labels.items())


def error_text(output: str) -> str | None:
    """The `err` value of the kubelet's "command failed" log line, in either klog form: a quoted Go
    string (`err="..."`) or, for a multi-line value, `err=<` + tab-indented lines + ` >`; or the
    plain "Error: ..." line printed before logging starts."""
    m = re.search(r'"command failed" err=<\n(.*?)\n >', output, re.S)
    if m:
        return "\n".join(line[1:] if line.startswith("\t") else line for line in m.group(1).split("\n"))
    m = re.search(r'"command failed" err=("(?:[^"\\]|\\.)*")', output)
    if m:
        return ast.literal_eval(m.group(1))          # Go's %q escapes are Python string escapes here
    m = re.search(r"^Error: (.*)", output, re.S | re.M)
    return m.group(1).strip() if m else None


def run_kubelet(kubelet: str | os.PathLike, labels: dict[str, str]) -> str | None:
    """Run the kubelet with only --node-labels (and a missing --config) and return its refusal, or
    None when it accepted the labels."""
    with tempfile.TemporaryDirectory(prefix="kubelet-judge-") as d:
        argv = [str(kubelet), f"--node-labels={node_labels_flag(labels)}",
                f"--config={Path(d) / 'no-such-config.yaml'}"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=d,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise KubeletJudgeError(f"{kubelet} did not exit within {TIMEOUT:.0f}s") from None
    out = proc.stdout + proc.stderr
    err = error_text(out)
    if err is not None and err.startswith(REFUSED):
        return err
    if err is not None and err.startswith(PASSED):
        return None
    raise KubeletJudgeError(f"{kubelet} exited {proc.returncode} without a flag verdict: {out[-800:]!r}")


def kubelet_binary() -> Path | None:
    """The kubelet to judge with (binaries.find_node_binary: KUBELET_BIN, $HARNESS_BIN_DIR, the
    node-binaries cache), or None."""
    return binmod.find_node_binary("kubelet")


@functools.lru_cache(maxsize=1)
def _upstream_tables() -> tuple[frozenset[str], tuple[str, ...]]:
    from harness.model.upstream.profile import load_profile
    p = load_profile("upstream")
    return p.kubelet_allowed_labels, p.kubelet_allowed_namespaces


def judges_profile(profile) -> bool:
    """The real kubelet only answers for the kubelet rules it was built with: a profile (or scenario
    knob) that changes the kubelet's allow-list is a hypothetical kubelet only the model can play."""
    return (profile.kubelet_allowed_labels, profile.kubelet_allowed_namespaces) == _upstream_tables()


@functools.lru_cache(maxsize=4096)
def _cached(kubelet: str, mtime: float, items: tuple[tuple[str, str], ...]) -> str | None:
    return run_kubelet(kubelet, dict(items))


def refusal(labels: dict[str, str], profile) -> tuple[str | None, str]:
    """(the refusal or None, who judged: "kubelet" or "model"). Same labels, same answer: results
    are memoized per binary (path + mtime) and label list."""
    from harness.model.labels.policy import kubelet_flag_error
    kubelet = kubelet_binary()
    if kubelet is None or not judges_profile(profile):
        return kubelet_flag_error(labels, profile), "model"
    return _cached(str(kubelet), kubelet.stat().st_mtime, tuple(labels.items())), "kubelet"
