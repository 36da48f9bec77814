"""scripts/install.sh says what it installs, how long that usually takes and how long it took, and
suggests a virtualenv when none is active (pip itself is replaced by a stand-in here)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_install_says_what_and_how_long(tmp_path):
    stub = tmp_path / "python3"
    stub.write_text('#!/bin/sh\nif [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "pip $*" > "$STUB_LOG"; exit 0; fi\n'
                    'exec "$REAL_PYTHON" "$@"\n')
    stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CI")}
    env.update(PATH=f"{tmp_path}:{env['PATH']}", STUB_LOG=str(tmp_path / "pip.log"),
               REAL_PYTHON=subprocess.check_output(["sh", "-c", "command -v python3"], text=True).strip())
    proc = subprocess.run(["bash", "scripts/install.sh"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "install: pip install -c requirements.lock -e '.[dev]' (the harness, fakeazure and their dependencies at " \
           "the locked versions; first time usually 1-3 min)..." in err
    assert "install: done in " in err
    assert "note: no virtualenv is active" in err and "python3 -m venv .venv" in err
    assert "-c requirements.lock -e .[dev]" in (tmp_path / "pip.log").read_text()
