"""A real cluster's work dir is removed when the process gets SIGTERM (issue 12) or, with SIGINT's
default action, SIGINT: the default action skips atexit, so the handler harness/backends/lifetime.py
installs closes the clusters first. Stale dirs of dead owners are still swept at start
(test_local_cluster.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_removes_the_work_dir(tmp_path, sig):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    # SIGINT at its default action (as under `nohup`/a shell that resets it), not Python's KeyboardInterrupt
    pre = "import signal; signal.signal(signal.SIGINT, signal.SIG_DFL)\n" if sig == signal.SIGINT else ""
    proc = subprocess.Popen([sys.executable, "-c", pre + CHILD, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                            env=env)
    try:
        workdir = Path(proc.stdout.readline().strip())
        assert workdir.is_dir() and (workdir / "owner.pid").exists()
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert rc == -sig                       # still dies of the signal, as without the handler
    assert not workdir.exists()


def test_a_handler_already_set_is_kept():
    from harness.backends import lifetime
    mine = lambda signum, frame: None  # noqa: E731
    old = signal.signal(signal.SIGTERM, mine)
    try:
        lifetime.install_signal_cleanup(lifetime.Lifetime())
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, old)
