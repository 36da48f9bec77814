"""Every file in tests/broken gives `file:line: reason` and exit code 2, never a traceback, both
from `harness validate` and from pytest collection. Each file's first line says what to expect:
`# expect: <line>: <reason text>` (or `<file>:<line>: ...` for an error in a referenced file)."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as cli_main

BROKEN = Path(__file__).parent.parent / "broken"
CASES = sorted(p for p in BROKEN.glob("*.yaml") if not p.name.endswith(".manifests.yaml"))


def expectation(path: Path) -> tuple[str, int, str]:
    m = re.match(r"# expect: (?:(?P<file>[^:]+):)?(?P<line>\d+): (?P<reason>.*)", path.read_bytes().decode("utf-8", "replace").splitlines()[0])
    assert m, f"{path} lacks an '# expect:' header"
    return m.group("file") or path.name, int(m.group("line")), m.group("reason")


def test_every_case_has_an_expectation():
    assert len(CASES) >= 15
    for c in CASES:
        expectation(c)


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_validate_reports_file_line_reason(case, capsys):
    file, line, reason = expectation(case)
    assert cli_main(["validate", str(case)]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    assert re.match(rf"^.*{re.escape(file)}:{line}: ", err), err
    assert reason in err, err


@pytest.mark.parametrize("case", CASES[:4], ids=lambda p: p.stem)
def test_pytest_collection_reports_file_line_reason(case, tmp_path):
    target = tmp_path / (case.stem + ".scenario.yaml")
    shutil.copy(case, target)
    for extra in BROKEN.glob("*.manifests.yaml"):
        shutil.copy(extra, tmp_path / extra.name)
    proc = subprocess.run([sys.executable, "-m", "pytest", str(target), "-q", "-p", "no:cacheprovider",
                           "-p", "harness.runner.plugin"], capture_output=True, text=True, cwd=tmp_path)
    file, line, reason = expectation(case)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert f":{line}: " in out and reason in out, out
    assert "Traceback" not in out, out
