"""The controller's sandbox: only forwarded ports are reachable, and nothing outlives stop()."""
import socket
import sys
import threading

import pytest

from harness.backends.procs import free_port, pid_alive
from harness.backends.sandbox import Forward, Sandbox, sandbox_available

ok, why = sandbox_available()
pytestmark = pytest.mark.skipif(not ok, reason=why)

CLIENT = """
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"ping"); print(s.recv(100).decode())
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2); print("reached")
except OSError:
    print("unreachable")
"""


def test_forwarded_port_reaches_the_host_and_nothing_else(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen()

    def answer():
        c, _ = srv.accept()
        c.sendall(b"pong:" + c.recv(100))
        c.close()
    threading.Thread(target=answer, daemon=True).start()
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    sb = Sandbox("probe", [sys.executable, str(script), str(port), str(other.getsockname()[1])],
                 {"PATH": "/usr/bin:/bin"}, tmp_path, {}, [Forward(port, port)])
    p = sb.start(tmp_path / "probe.log")
    try:
        p.proc.wait(30)
        out = (tmp_path / "probe.log").read_text()
        assert "pong:ping" in out
        assert "unreachable" in out           # the other host port is not forwarded
    finally:
        sb.stop()
    assert not pid_alive(p.pid)
    srv.close()
    other.close()


def test_stop_kills_a_waiting_sandbox(tmp_path):
    sb = Sandbox("sleeper", ["/bin/sleep", "600"], {}, tmp_path, {}, [Forward(free_port(), free_port())])
    p = sb.start(tmp_path / "s.log")
    sb.stop()
    assert not pid_alive(p.pid)
