"""The plugin is loaded into every pytest process of an environment the package is installed in
(`pytest11` entry point): in an unrelated project it must not clash with other plugins' options
(pytest-profiling's `--profile`, pytest-kind's `--keep-cluster`) and must import nothing heavy."""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINT = "harness.runner.plugin"


def _installed() -> bool:
    return any(ep.name == ENTRY_POINT for ep in importlib.metadata.entry_points(group="pytest11"))


def _unrelated(tmp_path: Path) -> Path:
    """A project that knows nothing of the harness: one test, no conftest, no ini file."""
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert True\n")
    return tmp_path


def _pytest(cwd: Path, *args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    # this checkout's code, loaded as an installed package's entry point would load it (or with -p
    # where the package is not installed)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTEST_ADDOPTS", None)
    load = [] if _installed() else ["-p", ENTRY_POINT]
    return subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", *load, *args],
                          capture_output=True, text=True, cwd=cwd, env=env)


def _need(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (the dev extra installs them)")


def test_beside_pytest_profiling_and_pytest_kind(tmp_path):
    _need("pytest_profiling", "pytest_kind")
    cwd = _unrelated(tmp_path)
    proc = _pytest(cwd, "-q")
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout + proc.stderr
    # every plugin's options are there, each under its own name
    help_text = _pytest(cwd, "--help").stdout
    for option in ("--profile", "--keep-cluster", "--cluster-name", "--harness-profile", "--harness-keep-cluster",
                   "--harness-backend", "--harness-shard"):
        assert f"  {option}" in help_text, option
    # the old spellings belong to their owners: pytest-profiling profiles, pytest-kind keeps its cluster
    proc = _pytest(cwd, "-q", "--profile", "--keep-cluster")
    assert proc.returncode == 0 and "Profiling (from" in proc.stdout, proc.stdout + proc.stderr


def test_old_spellings_without_their_owners(tmp_path):
    """Where no plugin owns `--profile`/`--keep-cluster` they are refused with the new name (their
    meaning would change with what else is installed); the others are deprecated aliases."""
    cwd = _unrelated(tmp_path)
    no_owners = ["-p", "no:profiling", "-p", "no:pytest-kind"]      # their entry point names
    proc = _pytest(cwd, *no_owners, "--profile", "upstream")
    assert proc.returncode == 4
    assert "--profile is now --harness-profile (the old name clashes with pytest-profiling's option)" in proc.stderr
    proc = _pytest(cwd, *no_owners, "--keep-cluster")
    assert proc.returncode == 4 and "--keep-cluster is now --harness-keep-cluster" in proc.stderr
    proc = _pytest(cwd, *no_owners, "-q", "--shard=0/1", "--backend", "embedded")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "--shard is deprecated: use --harness-shard" in proc.stdout
    assert "--backend is deprecated: use --harness-backend" in proc.stdout


HEAVY = ("harness.scenario.load", "harness.runner.engine", "harness.model", "harness.backends", "harness.loop",
         "fakeazure", "jsonschema", "celpy", "azure")        # (yaml: pytest-kind imports it)

PROBE = """\
import sys, pytest
code = pytest.main(["-q", "-p", "no:cacheprovider", *sys.argv[1:]])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}
               and any(m == h or m.startswith(h + ".") for h in HEAVY))
print("HEAVY", heavy)
sys.exit(int(code))
"""


def test_unrelated_run_imports_nothing_heavy(tmp_path):
    """Heavy imports wait until a scenario file is collected (or a harness option asks for them)."""
    cwd = _unrelated(tmp_path)
    (cwd / "probe.py").write_text(f"HEAVY = {HEAVY!r}\n" + PROBE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    load = [] if _installed() else ["-p", ENTRY_POINT]
    proc = subprocess.run([sys.executable, "probe.py", *load, "test_other.py"], capture_output=True, text=True,
                          cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "HEAVY []" in proc.stdout, proc.stdout
    # the plugin is loaded all the same
    assert "harness.runner.plugin" in subprocess.run(
        [sys.executable, "-c", "import sys, pytest; pytest.main(['-q', '-p', 'no:cacheprovider', *sys.argv[1:]]); "
                               "print(sorted(m for m in sys.modules if m.startswith('harness')))",
         *load, "test_other.py"], capture_output=True, text=True, cwd=cwd, env=env).stdout
