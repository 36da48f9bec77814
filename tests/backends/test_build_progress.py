"""Long builds say what they are doing: a heartbeat names the build script's current step and how long
it has taken so far (harness/backends/binaries/controlplane.py Heartbeat, run_logged), and the tools take
`-v/--verbose` through `logging` (harness/logs.py)."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from harness.backends.binaries import controlplane as binaries
from harness.backends.binaries.controlplane import BinariesError, Heartbeat, run_logged

SCRIPT = """\
echo "[build-x] resolving the module graph"
echo "[build-x] building kube-apiserver kube-scheduler (slow: many minutes)"
for i in $(seq 100); do [ -e "$1" ] && exit "${2:-0}"; sleep 0.05; done
exit 9
"""


def _script(tmp_path, done, code=0) -> list[str]:
    """A build script that logs two steps, then waits until `done` exists (the test creates it once a
    heartbeat has been seen: no timing is assumed)."""
    f = tmp_path / "build-x.sh"
    f.write_text(SCRIPT)
    return ["bash", str(f), str(done), str(code)]


class _Done(logging.Handler):
    """Creates the script's `done` file on the first heartbeat record."""
    def __init__(self, done):
        super().__init__()
        self.done, self.lines = done, []

    def emit(self, record):
        self.lines.append(record.getMessage())
        if "still" in record.getMessage():
            self.done.touch()


def test_heartbeat_names_the_step_and_the_time_so_far(tmp_path, monkeypatch):
    monkeypatch.setattr(binaries, "HEARTBEAT_SECONDS", 0.02)
    done = tmp_path / "done"
    handler = _Done(done)
    logger = logging.getLogger("harness.backends.binaries.controlplane")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)               # (setLevel: the logger caches isEnabledFor)
    try:
        run_logged(_script(tmp_path, done), {"PATH": "/usr/bin:/bin"}, False, 0.0)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    beats = [l for l in handler.lines if "still" in l]
    # the step's own words, without the script's parenthesised aside
    assert beats and beats[0].startswith("[build-x] still building kube-apiserver kube-scheduler: "), handler.lines
    assert beats[0].endswith(" so far") or " so far; " in beats[0]
    # the script's own lines are DEBUG records without echo
    assert "[build-x] resolving the module graph" in handler.lines


def test_heartbeat_echo_goes_to_stderr(capsys, monkeypatch):
    with Heartbeat("building tools/difftest", echo=True, tag="difftest", every=0.01) as beat:
        while "still" not in capsys.readouterr().err:
            beat._stop.wait(0.01)
    assert beat.line().startswith("[difftest] still building tools/difftest: ")


def test_run_logged_failure_keeps_the_tail(tmp_path, monkeypatch):
    done = tmp_path / "done"
    done.touch()
    with pytest.raises(BinariesError) as e:
        run_logged(_script(tmp_path, done, code=3), {"PATH": "/usr/bin:/bin"}, False, 0.0)
    assert "build-x.sh failed (exit 3)" in str(e.value) and "[build-x] building kube-apiserver" in str(e.value)


LOOP = str(Path(__file__).resolve().parents[2] / "scenarios" / "loop")


@pytest.mark.parametrize("argv", [["-v", "validate", LOOP], ["validate", "-v", LOOP]], ids=["before", "after"])
def test_cli_verbose_sets_the_log_level(argv, monkeypatch):
    from harness.cli import main
    logger = logging.getLogger("harness")
    try:
        assert main(argv) == 0
        assert logger.level == logging.INFO and [h for h in logger.handlers if getattr(h, "harness_cli", False)]
    finally:
        main(["validate", LOOP])          # without -v: logging as Python has it again
    assert logger.level == logging.NOTSET and not [h for h in logger.handlers if getattr(h, "harness_cli", False)]


def test_versions(capsys):
    import harness
    from fakeazure.__main__ import main as fakeazure_main
    from harness.cli import main
    for fn, prog in ((main, "harness"), (fakeazure_main, "fakeazure")):
        with pytest.raises(SystemExit) as e:
            fn(["--version"])
        assert e.value.code == 0
        out = capsys.readouterr().out.strip()
        assert out.startswith(f"{prog} ") and (prog == "fakeazure" or out == f"harness {harness.__version__}")
    assert sys.modules["harness"].__version__


def test_a_held_build_lock_is_announced_and_waited_for(tmp_path, capsys):
    import threading

    from filelock import FileLock

    from harness.backends.binaries.controlplane import BuildLock
    held = FileLock(str(tmp_path / "build.lock"))
    held.acquire()
    got = threading.Event()

    def waiter():
        with BuildLock(tmp_path / "build.lock", "the control plane", echo=True):
            got.set()
    t = threading.Thread(target=waiter)
    t.start()
    while "another build holds" not in capsys.readouterr().err:
        t.join(0.01)
    assert not got.is_set()
    held.release()
    t.join()
    assert got.is_set()
