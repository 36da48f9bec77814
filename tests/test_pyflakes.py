"""Pyflakes' rules (ruff's F: undefined names, unused imports and variables, f-strings without a
placeholder) over the whole source: an undefined name is a NameError waiting on the path no test
takes (the container backend's kube-scheduler configuration once called a function it never
imported), and an unused import is what a move left behind."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_no_pyflakes_finding():
    run = subprocess.run([sys.executable, "-m", "ruff", "check", "--select", "F", "--no-cache",
                          "--output-format", "concise", "harness", "fakeazure", "tools", "tests", "scripts"],
                         cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
