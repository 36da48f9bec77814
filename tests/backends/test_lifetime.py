"""harness/backends/lifetime.py: one registry of what a process has open, one exit path, one
watcher that reaps what a killed process left (processes, work dirs)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.backends import lifetime
from harness.backends.lifetime import CLUSTERS, DIRS, PROCESSES, ClusterCache, Lifetime, pid_alive

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _wait_for(check, timeout: float = 60.0) -> bool:
    """Poll until `check()` (a bound, not a timing: the machine may be loaded)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_close_all_closes_clusters_first_then_processes_then_dirs_and_reports_kept(capsys):
    lt = Lifetime()
    lt._install_exit_hooks = lambda: None           # a private instance: no atexit/signal handlers
    closed = []
    lt.open("dir", lambda: closed.append("dir"), tier=DIRS)
    lt.open("proc", lambda: closed.append("proc"), tier=PROCESSES)
    lt.open("cluster a", lambda: closed.append("a"), tier=CLUSTERS)
    lt.open("cluster b", lambda: closed.append("b"), tier=CLUSTERS)
    lt.open("kept", lambda: closed.append("kept"), tier=CLUSTERS, keep=True, kept_message=lambda: "kept it here")
    done = lt.open("closed", lambda: closed.append("closed"), tier=CLUSTERS)
    done.release()
    lt.close_all()
    assert closed == ["b", "a", "proc", "dir"]       # the latest first within a tier
    assert "kept it here" in capsys.readouterr().err
    assert [e.what for e in lt.entries()] == ["kept"]


def test_a_failing_close_does_not_stop_the_others():
    lt = Lifetime()
    lt._install_exit_hooks = lambda: None
    closed = []
    lt.open("ok", lambda: closed.append("ok"), tier=CLUSTERS)
    lt.open("boom", lambda: 1 / 0, tier=CLUSTERS)
    lt.close_all()
    assert closed == ["ok"] and lt.entries() == []


def test_the_cluster_cache_starts_once_per_key_and_leaves_kept_clusters_running():
    lt = Lifetime()
    lt._install_exit_hooks = lambda: None
    cache = ClusterCache(lt)

    class C:
        def __init__(self, keep=False):
            self.keep, self.closed = keep, False

        def close(self):
            self.closed = True

    a = cache.get(("local", ()), C)
    assert cache.get(("local", ()), lambda: pytest.fail("started twice")) is a
    kept = cache.get(("local", (("keep", True),)), lambda: C(keep=True))
    assert [e.what for e in lt.entries()] == ["shared clusters"]
    cache.close()
    assert a.closed and not kept.closed
    assert lt.entries() == []
    assert cache.get(("local", ()), C) is not a      # a closed cache starts afresh
    b = cache.get(("local", ()), C)
    b.retired = True                                  # upgraded (LocalCluster.upgrade): not what its key says
    c = cache.get(("local", ()), C)
    assert b.closed and c is not b and cache.get(("local", ()), C) is c
    cache.close()


CHILD = textwrap.dedent("""
    import json, sys, tempfile, time
    from pathlib import Path
    from harness.backends.lifetime import LIFETIME, DIRS
    from harness.backends.procs import ManagedProcess
    wd = Path(tempfile.mkdtemp(prefix="harness-lifetime-test-", dir=sys.argv[1]))
    LIFETIME.open("work dir", lambda: None, tier=DIRS, reap=(("dir", str(wd)),))
    p = ManagedProcess("sleeper", ["sh", "-c", "sleep 600 & sleep 600"], wd / "sleeper.log")
    released = Path(tempfile.mkdtemp(prefix="harness-lifetime-released-", dir=sys.argv[1]))
    e = LIFETIME.open("released", lambda: None, tier=DIRS, reap=(("dir", str(released)),))
    e.release()
    print(json.dumps({"workdir": str(wd), "released": str(released), "pgid": p.pid,
                      "watcher": LIFETIME.watcher_pid()}), flush=True)
    time.sleep(600)
""")


def test_the_watcher_reaps_what_a_killed_owner_left(tmp_path):
    """SIGKILL runs no handler: the watcher kills the owner's process groups (a grandchild too,
    which PR_SET_PDEATHSIG would miss) and removes its work dirs, but not what was released."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        info = json.loads(proc.stdout.readline())
        assert Path(info["workdir"]).is_dir() and pid_alive(info["watcher"])
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    assert _wait_for(lambda: not Path(info["workdir"]).exists())
    assert not lifetime._group_alive(info["pgid"])
    assert Path(info["released"]).is_dir()           # taken back before the owner died: left alone
    assert _wait_for(lambda: not pid_alive(info["watcher"]))     # it exits once done


def test_a_clean_exit_leaves_nothing_and_the_watcher_ends(tmp_path):
    code = CHILD.replace("time.sleep(600)", "")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=ENV,
                         timeout=120)
    info = json.loads(out.stdout)
    # stopped at exit (atexit); a killed group's last process may take a moment to be reaped on a busy machine
    assert _wait_for(lambda: not lifetime._group_alive(info["pgid"]))
    assert _wait_for(lambda: not pid_alive(info["watcher"]))
    assert Path(info["released"]).is_dir()


def test_a_watcher_for_another_pid_waits_for_it(tmp_path):
    """kind/reaper.start(pid) for a process that is not this one: a watcher of its own."""
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    d = tmp_path / "left-behind"
    d.mkdir()
    try:
        w = lifetime.spawn_watcher(owner.pid, [f"x dir {d}"])
        w.stdin.close()
        time.sleep(0.3)
        assert d.is_dir()                            # the owner is still alive
    finally:
        owner.kill()
        owner.wait()
    assert _wait_for(lambda: not d.exists())
    w.wait(timeout=60)


def test_a_reused_pid_is_not_killed():
    """A pgid order whose leader now has another start time names someone else's process."""
    other = subprocess.Popen(["sleep", "600"], start_new_session=True)
    try:
        lifetime.reap(os.getpid(), [("pgid", f"{other.pid} {lifetime.start_time(other.pid) + 1}")], grace=0)
        assert other.poll() is None
        lifetime.reap(os.getpid(), [("pgid", f"{other.pid} {lifetime.start_time(other.pid)}")])
        assert other.wait(timeout=30) == -signal.SIGKILL
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


def test_sweep_leaves_kept_and_live_owners_work_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_TMPDIR", str(tmp_path))
    dead = subprocess.Popen(["true"])
    dead.wait()
    for name, owner in (("harness-t-dead", dead.pid), ("harness-t-live", os.getpid()), ("harness-t-kept", None)):
        (tmp_path / name).mkdir()
        if owner is not None:
            (tmp_path / name / lifetime.OWNER_FILE).write_text(str(owner))
    assert lifetime.sweep_stale_workdirs("harness-t-") == [str(tmp_path / "harness-t-dead")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["harness-t-kept", "harness-t-live"]


def test_the_kind_sweep_retries_when_a_container_vanishes_while_listed(monkeypatch):
    """Another process removing its own container between docker's list and inspect must not stop
    the watcher's sweep of a dead owner (harness/backends/kind/reaper.py)."""
    docker_errors = pytest.importorskip("docker.errors")
    from harness.backends.kind import reaper
    calls = []

    def flaky(client, owner=None):
        calls.append(owner)
        if len(calls) < 3:
            raise docker_errors.NotFound("No such container")
        return 0

    monkeypatch.setattr(reaper, "docker_client", lambda: type("C", (), {"close": lambda self: None})())
    monkeypatch.setattr(reaper, "sweep_stale", flaky)
    reaper.sweep(4242)
    assert calls == [4242, 4242, 4242]


def test_a_replaced_process_runs_another_binary_with_the_same_arguments_environment_and_log(tmp_path):
    """ManagedProcess.replaced (a control plane's upgrade: LocalCluster.upgrade): the old process is
    stopped, the new binary gets its arguments, working directory and environment, and the log goes on."""
    from harness.backends.procs import ManagedProcess
    for name in ("old", "new"):
        (tmp_path / name).write_text(f'#!/bin/sh\necho {name} "$1" "$HARNESS_TEST_X" "$(pwd)"\nexec sleep 600\n')
        (tmp_path / name).chmod(0o755)
    log = tmp_path / "c.log"
    p = ManagedProcess("c", [str(tmp_path / "old"), "arg"], log, cwd=str(tmp_path), env={"HARNESS_TEST_X": "x"})
    assert _wait_for(lambda: "old arg x" in log.read_text())
    q = p.replaced(tmp_path / "new")
    try:
        assert _wait_for(lambda: f"new arg x {tmp_path}" in log.read_text())
        assert not p.alive() and q.alive() and log.read_text().startswith("old arg x")
    finally:
        q.stop()
