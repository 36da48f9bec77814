"""A real cluster's work dir is removed when the process gets SIGTERM (issue 12): the default
action skips atexit, so the handler harness/backends/realcluster.py installs closes the clusters
first. Stale dirs of dead owners are still swept at start (test_local_cluster.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

CHILD = textwrap.dedent("""
    import sys, tempfile, time
    from pathlib import Path
    from harness.backends.realcluster import RealCluster
    wd = Path(tempfile.mkdtemp(prefix="harness-sigterm-test-", dir=sys.argv[1]))
    (wd / "etcd-data.bin").write_bytes(b"x" * 4096)
    cluster = RealCluster(wd, keep=False)
    print(wd, flush=True)
    while True:
        time.sleep(0.05)
""")


def test_sigterm_removes_the_work_dir(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        workdir = Path(proc.stdout.readline().strip())
        assert workdir.is_dir() and (workdir / "owner.pid").exists()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert rc == -signal.SIGTERM            # still dies of the signal, as without the handler
    assert not workdir.exists()


def test_a_handler_already_set_is_kept():
    from harness.backends import realcluster
    mine = lambda signum, frame: None  # noqa: E731
    old = signal.signal(signal.SIGTERM, mine)
    try:
        realcluster._install_sigterm_cleanup()
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, old)
