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


PUBLIC_CLIENT = """
import json, socket, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[1])
for url in ("https://prices.azure.com/api/retail/prices?$filter=armRegionName%20eq%20%27eastus%27",
            "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/providers/Microsoft.Compute/skus?api-version=2021-07-01"):
    with urllib.request.urlopen(url, context=ctx, timeout=10) as r:
        print("fake", r.status, url.split("/")[2])
for host in ("login.microsoftonline.com", "example.com"):      # not routed: no name, no network
    try:
        socket.create_connection((host, 443), timeout=3); print("reached", host)
    except OSError:
        print("unreachable", host)
try:
    socket.create_connection(("93.184.215.14", 443), timeout=3); print("reached an address")
except OSError:
    print("unreachable address")
"""


def test_azure_public_host_names_reach_the_fake_and_nothing_else(tmp_path):
    """The real engine runs the controller as in Azure's public cloud (harness/data/real-engine.yaml
    public_cloud): Azure's host names resolve to the fake inside the sandbox, its certificate (signed
    by the harness's own CA) names them, and every other name or address is unreachable."""
    import fakeazure
    from fakeazure.server import FakeAzureServer
    from harness.runner.engines.real.controller.settings import engine_data
    names = tuple(engine_data()["public_cloud"]["hosts"])
    fake = fakeazure.FakeAzure(region="eastus", seed=1)
    fake.load_catalog("eastus")
    server = FakeAzureServer(fake, tls=True, tls_dir=str(tmp_path / "tls"), tls_names=names)
    server.start()
    script = tmp_path / "public.py"
    script.write_text(PUBLIC_CLIENT)
    port = int(server.url.rsplit(":", 1)[1])
    sb = Sandbox("public", [sys.executable, str(script), server.ca_path], {"PATH": "/usr/bin:/bin"}, tmp_path, {},
                 [Forward(443, port)], hosts=names)
    p = sb.start(tmp_path / "public.log")
    try:
        p.proc.wait(60)
        out = (tmp_path / "public.log").read_text()
    finally:
        sb.stop()
        server.stop()
    assert "fake 200 prices.azure.com" in out and "fake 200 management.azure.com" in out, out
    assert "unreachable login.microsoftonline.com" in out and "unreachable example.com" in out, out
    assert "unreachable address" in out, out


def test_a_forward_waits_for_the_namespace_loopback_to_come_up():
    """The sandbox's script brings `lo` up a moment after the namespace exists; a listener opened in that
    moment binds (retrying EADDRNOTAVAIL, seen once under load as "cannot listen inside the sandbox:
    [Errno 99] Cannot assign requested address", not reproduced here)."""
    import ctypes
    import os
    import subprocess
    import time

    from harness.backends import sandbox as sb
    child = subprocess.Popen(["unshare", "--net", "sh", "-c", "sleep 0.3 && ip link set lo up && sleep 5"])
    try:
        mine = os.stat("/proc/self/ns/net").st_ino
        deadline = time.monotonic() + 5
        while os.stat(f"/proc/{child.pid}/ns/net").st_ino == mine and time.monotonic() < deadline:
            time.sleep(0.01)
        fd = os.open(f"/proc/{child.pid}/ns/net", os.O_RDONLY)
        out = {}

        def inside():
            try:
                if sb._libc.setns(fd, sb.CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns")
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sb._bind_once_up(s, free_port())
                out["bound"] = s.getsockname()
                s.close()
            except OSError as e:
                out["error"] = e
            finally:
                os.close(fd)

        t = threading.Thread(target=inside)
        t.start()
        t.join(10)
        assert out.get("bound", ("",))[0] == "127.0.0.1", out
    finally:
        child.kill()
        child.wait()
