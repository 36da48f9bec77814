"""A non-editable install has every file the code reads: each tracked file under harness/ and fakeazure/
is a module of a package or matched by pyproject.toml's package-data (scripts/wheel-smoke.sh builds
the wheel and runs it from a fresh venv outside the checkout; this is the fast check)."""
from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _tracked(package: str) -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", package], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / line for line in out.stdout.splitlines() if (ROOT / line).is_file()]


@pytest.mark.parametrize("package", ["harness", "fakeazure"])
def test_package_data_covers_every_file(package):
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"][package]
    data = {p for pattern in patterns for p in (ROOT / package).glob(pattern) if p.is_file()}
    left = []
    for f in _tracked(package):
        if f.suffix == ".py":
            continue                      # a module ([tool.setuptools.packages.find] finds namespace packages too)
        if f not in data:
            left.append(str(f.relative_to(ROOT)))
    assert not left, f"not in the wheel (add to [tool.setuptools.package-data] {package}): {left}"


def test_metadata():
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"                 # an SPDX expression, not the deprecated table
    assert "Apache License" in (ROOT / "LICENSE").read_text() and project["license-files"] == ["LICENSE"]
    assert "Framework :: Pytest" in project["classifiers"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]   # PEP 639: the expression only
    assert (ROOT / "harness" / "py.typed").exists() and (ROOT / "fakeazure" / "py.typed").exists()
