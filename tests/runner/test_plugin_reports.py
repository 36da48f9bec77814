"""What CI sees of a scenario: JUnit XML <testcase> with file and line, and GitHub annotations
(`::error file=...,line=...::`) on failures when GITHUB_ACTIONS is set, serially and under xdist."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.runner.plugin import github_annotation

ROOT = Path(__file__).resolve().parents[2]

FAILING = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: reports-demo}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods:
    web: {scheduled: true}
  nodeCount: 3
---
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: reports-pass}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests: []
expect:
  nodeCount: 0
"""


def _pytest(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess, ET.Element]:
    f = tmp_path / "demo.scenario.yaml"
    f.write_text(FAILING)
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}",
                           "-c", os.devnull, "-p", "harness.runner.plugin", str(f), f"--junitxml={junit}", *extra],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    return proc, ET.parse(junit).getroot()


@pytest.mark.parametrize("extra", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_junit_file_line_and_annotations(tmp_path, extra):
    proc, root = _pytest(tmp_path, *extra)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    cases = {c.get("name"): c for c in root.iter("testcase")}
    failed, passed = cases["reports-demo[upstream-embedded]"], cases["reports-pass[upstream-embedded]"]
    # a failure points at its first unmet expectation, a pass at its scenario
    assert (failed.get("file"), failed.get("line")) == ("demo.scenario.yaml", "15")
    assert (passed.get("file"), passed.get("line")) == ("demo.scenario.yaml", "18")
    notes = [l for l in proc.stdout.splitlines() if l.startswith("::error ")]
    assert notes == [
        "::error file=demo.scenario.yaml,line=15,title=scenario failed::reports-demo [upstream/embedded]: "
        'expect.pods["web"].scheduled: expected True, got False (pod is pending: no dynamic nodepools found)',
        "::error file=demo.scenario.yaml,line=16,title=scenario failed::reports-demo [upstream/embedded]: "
        "expect.nodeCount: expected 3, got 0",
    ], proc.stdout


def test_no_annotations_outside_github(tmp_path):
    f = tmp_path / "demo.scenario.yaml"
    f.write_text(FAILING)
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}",
                           "-c", os.devnull, "-p", "harness.runner.plugin", str(f)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "::error" not in proc.stdout


def test_annotation_escaping():
    assert github_annotation("a,b:c.yaml", 3, "50%\nnext", title="t") == \
        "::error file=a%2Cb%3Ac.yaml,line=3,title=t::50%25%0Anext"


def test_a_strict_xpass_is_reported_not_an_internal_error(tmp_path):
    """An XPASS(strict) has no exception info: the report hook must still annotate it (it crashed
    the session with an INTERNALERROR when a real-engine xfail started to pass)."""
    f = tmp_path / "demo.scenario.yaml"
    f.write_text(FAILING.split("---\n")[1] + "xfail:\n  upstream: 'unconfirmed: passes now'\n")
    env = {**os.environ, "GITHUB_ACTIONS": "true"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}",
                           "-c", os.devnull, "-p", "harness.runner.plugin", str(f)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "INTERNALERROR" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "1 failed" in proc.stdout and "::error file=demo.scenario.yaml,line=1," in proc.stdout, proc.stdout


def test_junit_names_the_release_that_answered(tmp_path):
    """Each item's JUnit <property name="release"> says which provider release the profile modeled; a
    version the harness has no profile for says which release answered instead, and pytest warns."""
    f = tmp_path / "demo.scenario.yaml"
    f.write_text(FAILING)
    junit = tmp_path / "junit.xml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}        # this checkout's harness, wherever it is installed from
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}",
                           "-c", os.devnull, "-p", "harness.runner.plugin", str(f), f"--junitxml={junit}",
                           "-k", "reports-pass", "--harness-profile", "v1.8.1", "--harness-profile", "upstream"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    root = ET.parse(junit).getroot()
    props = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")} for c in root.iter("testcase")}
    newest = __import__("harness.model.upstream.releases", fromlist=["x"]).release_profiles()[-1]
    assert props["reports-pass[upstream-embedded]"]["release"].startswith(f"upstream = {newest} (provider ")
    assert props["reports-pass[v1.8.1-embedded]"]["release"].startswith(
        "v1.8.1 -> answered by v1.7.2 (NOT that release) (provider v1.7.0-v1.7.2, core v1.7.1)")
    assert "no profile for provider v1.8.1; answering with v1.7.2" in proc.stdout, proc.stdout
