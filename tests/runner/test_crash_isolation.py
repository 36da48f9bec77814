"""Crash isolation: a run that raises (here an injected fault inside the loop, standing for a bug of
the harness) gets an error verdict with the scenario's file:line and the exception; the other
scenarios of the same `harness run` / pytest session still run and get their verdicts, and the
exit code says something failed."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.cli import main
from harness.loop.provisioning.provisioner import Provisioner

TWO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: boom}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - file: ../manifests/default-nodepool.yaml
  - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: x}]}}
expect:
  pods: {web: {scheduled: true}}
---
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: fine}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3]
manifests:
  - file: ../manifests/default-nodepool.yaml
  - {apiVersion: v1, kind: Pod, metadata: {name: web}, spec: {containers: [{name: c, image: x}]}}
expect:
  pods: {web: {scheduled: true}}
"""

ROOT = Path(__file__).resolve().parents[2]
NODEPOOL = ROOT / "scenarios" / "manifests" / "default-nodepool.yaml"

# the fault: the provisioner raises for the scenario named "boom" only
PLUGIN = """\
from harness.loop.provisioning.provisioner import Provisioner
_orig = Provisioner.reconcile
def _reconcile(self):
    if self.state.cfg.scenario == "boom":
        raise KeyError("injected-fault")
    return _orig(self)
Provisioner.reconcile = _reconcile
"""


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "default-nodepool.yaml").write_text(NODEPOOL.read_text())
    d = tmp_path / "lib"
    d.mkdir()
    (d / "two.scenario.yaml").write_text(TWO)
    return d


def test_harness_run_gives_the_crashed_run_an_error_and_goes_on(tmp_path, monkeypatch, capsys):
    d = _tree(tmp_path)
    orig = Provisioner.reconcile

    def faulty(self):
        if self.state.cfg.scenario == "boom":
            raise KeyError("injected-fault")
        return orig(self)
    monkeypatch.setattr(Provisioner, "reconcile", faulty)
    code = main(["run", str(d), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1
    by_name = {o["scenario"]: o for o in out}
    assert by_name["fine"]["verdict"] == "pass"
    boom = by_name["boom"]
    assert boom["verdict"] == "ERROR" and not boom["passed"]
    assert f"{d / 'two.scenario.yaml'}:1: scenario 'boom' [upstream/embedded]: run raised KeyError" in boom["error"]
    assert "injected-fault" in boom["error"] and "provisioner" not in boom["error"].split("(at")[0]


def test_harness_run_table_names_the_error(tmp_path, monkeypatch, capsys):
    d = _tree(tmp_path)
    orig = Provisioner.reconcile
    monkeypatch.setattr(Provisioner, "reconcile",
                        lambda self: (_ for _ in ()).throw(RuntimeError("bad")) if self.state.cfg.scenario == "boom"
                        else orig(self))
    assert main(["run", str(d)]) == 1
    out = capsys.readouterr().out
    assert "1 passed" in out and "1 error(s)" in out
    assert f"ERROR {d / 'two.scenario.yaml'}:1: scenario 'boom'" in out and "RuntimeError: bad" in out


def test_pytest_gives_the_crashed_item_an_error_and_goes_on(tmp_path):
    d = _tree(tmp_path)
    (tmp_path / "inject_fault.py").write_text(PLUGIN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--rootdir={tmp_path}",
                           "-c", os.devnull, "-p", "harness.runner.plugin", "-p", "inject_fault", str(d)],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 failed, 1 passed" in proc.stdout, proc.stdout
    assert f"ERROR {d / 'two.scenario.yaml'}:1: scenario 'boom' [upstream/embedded]: run raised KeyError" in proc.stdout
    assert "injected-fault" in proc.stdout


def test_a_seeding_error_is_said_at_its_field_without_frames(tmp_path, capsys):
    """An existing node the scenario describes wrongly (a zone no offering has) is the input's fault: the error
    names the entry's line and what the size offers, not where in the harness it was found."""
    f = tmp_path / "seed.scenario.yaml"
    f.write_text("""\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: seed}
given:
  region: eastus
  skus: [Standard_D2s_v3]
  existingNodes:
    - {nodePool: default, instanceType: Standard_D2s_v3,
       zone: "1", capacityType: on-demand}
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {name: default}
    spec: {}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec: {template: {spec: {nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default},
                             requirements: []}}}
""")
    assert main(["run", str(f)]) != 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("ERROR "))
    assert line.startswith(f"ERROR {f}:8: given.existingNodes[0]: Standard_D2s_v3 has no available offering in zone '1'")
    assert "eastus-1 on-demand" in line and "seed.py" not in line
