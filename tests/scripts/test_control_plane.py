"""scripts/control-plane.sh says what it waits for: a build lock held by another build, or its own
build (the build command is replaced by a stand-in, so nothing is built here)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[2]


def _run(cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HARNESS_CACHE": str(cache), "CONTROL_PLANE_BUILD": "true"}
    return subprocess.run(["bash", "scripts/control-plane.sh"], cwd=ROOT, env=env, capture_output=True, text=True)


def test_says_when_it_waits_on_the_build_lock(tmp_path):
    lock = FileLock(str(tmp_path / "build.lock"))
    with lock:
        proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (f"control plane: another build holds {tmp_path / 'build.lock'}; waiting for it to finish "
            "(a cold build takes ~13 min)") in proc.stderr
    assert "control plane: ready after" in proc.stderr


def test_says_what_it_builds(tmp_path):
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "control plane: building or reusing the pinned binaries" in proc.stderr
    assert "~13 min the first time, seconds when cached" in proc.stderr
