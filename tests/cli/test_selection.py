"""Options that select nothing fail loudly, with the reason: `harness run` and `pytest`."""
from __future__ import annotations

import re

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as cli

ROOT = Path(__file__).resolve().parents[2]
LOOP = str(ROOT / "scenarios" / "loop")         # its scenarios declare before-0006 and upstream only


@pytest.mark.parametrize("args, message", [
    (["--profile", "upstrem"],
     "harness run: --profile upstrem: unknown profile; known profiles: before-0006, design-0006, upstream"),
    (["--profile", "design-0006"],
     "harness run: --profile design-0006 selects no scenario: none of the "),
    (["-k", "no-such-scenario"], "harness run: -k no-such-scenario: no scenario name in "),
])
def test_run_selecting_nothing_exits_2(args, message, capsys):
    assert cli(["run", LOOP, *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message), captured.err
    assert captured.out == ""                  # no empty table


def _pytest(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, cwd=ROOT)


def test_pytest_unknown_profile_is_a_usage_error():
    proc = _pytest("scenarios/loop", "--harness-profile", "upstrem", "--collect-only")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "--harness-profile upstrem: unknown profile; known profiles: before-0006, design-0006, upstream" in proc.stderr


def test_pytest_unknown_backend_is_a_usage_error():
    proc = _pytest("scenarios/loop", "--harness-backend", "nope", "--collect-only")
    assert proc.returncode == 4
    assert "--harness-backend nope: unknown backend; known backends: " in proc.stderr


def test_pytest_profile_no_collected_scenario_declares():
    proc = _pytest("scenarios/loop", "--harness-profile", "design-0006", "--collect-only")
    assert proc.returncode == 4
    assert re.search(r"--harness-profile design-0006 selects no scenario: none of the \d+ collected scenario\(s\) declares it",
                     proc.stderr)
    # without scenario files in the run, --harness-profile is simply unused
    assert _pytest("tests/loop/azure/test_unavailable.py", "--harness-profile", "design-0006", "--collect-only").returncode == 0


def test_pytest_profile_no_scenario_declares_under_xdist():
    """xdist workers collect; the controller still says why and exits as a usage error."""
    proc = _pytest("scenarios/loop", "--harness-profile", "design-0006", "-n", "2")
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert re.search(r"--harness-profile design-0006 selects no scenario: none of the \d+ collected scenario\(s\) declares it",
                     proc.stdout + proc.stderr)


@pytest.mark.parametrize("args, message", [
    (["--provider-git", "/nowhere"], "harness run: --provider-git / --provider-ref choose the real engine's controller: "
                                     "add --engine real"),
    (["--engine", "real", "--provider-ref", "v1.6.8"], "harness run: --provider-ref v1.6.8: needs --provider-git DIR"),
])
def test_run_provider_options_need_the_real_engine_and_the_history(args, message, capsys, monkeypatch):
    for var in ("KARPENTER_PROVIDER_GIT", "HARNESS_PROVIDER_GIT", "KARPENTER_PROVIDER_REF"):
        monkeypatch.delenv(var, raising=False)
    assert cli(["run", LOOP, *args]) == 2
    assert message in capsys.readouterr().err
