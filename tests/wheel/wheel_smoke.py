"""Smoke test of an installed wheel, run by scripts/wheel-smoke.sh with a fresh venv's pytest in a
temporary folder outside the checkout (so nothing can come from the checkout): the console scripts, the
pytest plugin through its entry point, the package data every backend reads (the kind backend's scripts
and tables too), and a scenario run end to end. Not collected by `pytest tests/` (its name has no test_
prefix): it needs the wheel installed, not the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
CHECKOUT = Path(os.environ.get("HARNESS_CHECKOUT", "/nonexistent")).resolve()

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: wheel-smoke}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {name: default}
    spec: {}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: []
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
expect:
  pods:
    web: {scheduled: true}
  nodeCount: 1
"""


def run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def test_installed_outside_the_checkout():
    import fakeazure
    import harness
    for module in (harness, fakeazure):
        path = Path(module.__file__).resolve()
        assert "site-packages" in path.parts, path
        assert CHECKOUT not in path.parents, path


def test_console_scripts_and_versions():
    import harness
    assert run(str(BIN / "harness"), "--version").stdout.strip() == f"harness {harness.__version__}"
    assert run(str(BIN / "fakeazure"), "--version").stdout.strip() == f"fakeazure {harness.__version__}"
    assert "southcentralus" in run(str(BIN / "fakeazure"), "catalogs").stdout


def test_package_data():
    from fakeazure.tools import go_sdk_check
    from harness.backends.binaries import controlplane as binaries, controller
    from harness.backends.kind import image, nodes, writers
    files = [binaries.BUILD_SCRIPT, controller.BUILD_SCRIPT, binaries.BUILD_SCRIPT.parent.with_name("docker-up.sh"),
             image.EXTRAS_SCRIPT, nodes.MACHINE_VIEW, writers.FIELD_MANAGERS,
             Path(nodes.__file__).with_name(nodes.RUNTIME), go_sdk_check.SRC / "main.go", go_sdk_check.SRC / "go.mod"]
    missing = [str(f) for f in files if not f.is_file()]
    assert not missing, missing
    assert writers.managers()                     # field-managers.yaml parses
    import harness
    root = Path(harness.__file__).parent
    assert (root / "py.typed").is_file() and (root / "data" / "scenario.schema.json").is_file()


def test_profiles_and_catalogs_load():
    from fakeazure.catalog import available_catalogs
    from harness.model.upstream.profile import available_profiles
    assert {"before-0006", "design-0006", "upstream"} <= set(available_profiles())
    assert available_catalogs()


def test_a_scenario_runs_through_the_cli_and_the_pytest_plugin(tmp_path):
    f = tmp_path / "smoke.scenario.yaml"
    f.write_text(SCENARIO)
    run(str(BIN / "harness"), "validate", str(f), cwd=tmp_path)
    assert "1 passed" in run(str(BIN / "harness"), "run", str(f), cwd=tmp_path).stdout
    # the plugin comes from the pytest11 entry point (no conftest.py, no -p here)
    out = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(f), "--harness-profile", "upstream",
              cwd=tmp_path).stdout
    assert "1 passed" in out, out


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
