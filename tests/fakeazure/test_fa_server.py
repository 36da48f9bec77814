"""Loopback server, CLI, control API, thread safety."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from fakeazure import FakeAzure, FakeAzureServer, RemoteFakeAzure, mock_azure
from fakeazure.clients import compute_client, network_client

from fa_helpers import RG, SUB, nic_body, usages, vm_body

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _serving_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("fakeazure") or "process_request_thread" in t.name}


def test_binds_loopback_and_stops_cleanly():
    before = _serving_threads()          # another test's server in this process is not this one's to judge
    srv = FakeAzureServer()
    url = srv.start()
    assert url.startswith("http://127.0.0.1:")
    s = requests.Session()
    assert s.get(f"{url}/_fakeazure/health").json()["ok"] is True
    srv.stop()
    s.close()
    assert not _serving_threads() - before
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{url}/_fakeazure/health", timeout=2)
    srv.stop()  # idempotent


def test_context_manager_and_http_clients():
    with FakeAzureServer(FakeAzure(region="eastus")) as srv:
        c = compute_client(srv.url)  # a bare URL works too (well-known subscription)
        assert len(list(c.resource_skus.list(filter="location eq 'eastus'"))) == 90
        c.close()


def test_control_api_mirrors_python(make_env):
    env = make_env("server")
    ctl = RemoteFakeAzure(env.server.url)
    try:
        assert ctl.health()["subscription_id"] == env.sub
        added = ctl.add_fault({"code": "SkuNotAvailable", "match": {"zone": "3"}, "times": 1})
        assert added["code"] == "SkuNotAvailable" and len(ctl.faults()) == 1
        ctl.set_usage("standardDSv3Family", 8, current=1)
        ctl.set_regional_quota(40)
        rows = usages(env.state)
        assert rows["standardDSv3Family"]["limit"] == 8 and rows["cores"]["limit"] == 40
        env.network.network_interfaces.begin_create_or_update(RG, "n1", nic_body()).result()
        body = vm_body(nic_id=env.nic_id("n1"), priority="Spot", zones=("3",))
        with pytest.raises(Exception):
            env.compute.virtual_machines.begin_create_or_update(RG, "vm1", body)
        env.compute.virtual_machines.begin_create_or_update(RG, "vm1", body).result()
        snap = ctl.snapshot()
        assert snap["vms"][0]["name"] == "vm1" and snap["faults"][0]["fired"] == 1
        assert ("PUT", env.vm_path("vm1"), 409) in ctl.requests()
        ctl.advance(5)
        rec = ctl.evict(RG, "vm1")
        assert rec["name"] == "vm1" and env.state.get_vm(RG, "vm1") is None
        ctl.set_lro("immediate")
        assert env.state.lro_after_polls == 1
        assert ctl.add_skus([{"name": "Standard_Z2s_v9", "locations": ["southcentralus"],
                              "capabilities": [{"name": "vCPUs", "value": "2"}]}]) == 1
        assert ctl.load_catalog("westcentralus") == 12
        assert ctl.settle() == 0
        ctl.clear_faults()
        assert ctl.faults() == []
        ctl.reset()
        assert env.state.vms() == [] and env.state.faults.rules == []
        assert env.state.requests == [("POST", "/_fakeazure/reset", 200)]  # the log restarts
        from fakeazure.control import RemoteControlError
        with pytest.raises(RemoteControlError):
            ctl.add_fault({"code": "X", "nonsense": True})
        with pytest.raises(RemoteControlError):
            ctl.evict(RG, "nope")
    finally:
        ctl.close()


def test_control_api_in_process_too():
    with mock_azure() as state:
        r = requests.post("https://management.azure.com/_fakeazure/faults",
                          json=[{"code": "Latency", "latency": 1}, {"code": "TooManyRequests", "times": 1}])
        assert r.status_code == 201 and len(state.faults.rules) == 2
        assert requests.get("https://management.azure.com/_fakeazure/state.json").json()["faults"]


def test_concurrent_clients_keep_invariants(make_env):
    """Many threads creating and deleting through one server: one lock, consistent quota."""
    env = make_env("server")
    env.state.set_usage("standardDSv3Family", limit=40)
    url = env.server.url

    def worker(i: int) -> str:
        c, n = compute_client(url), network_client(url)
        try:
            nic = n.network_interfaces.begin_create_or_update(RG, f"n{i}", nic_body()).result()
            try:
                c.virtual_machines.begin_create_or_update(RG, f"vm{i}", vm_body(nic_id=nic.id)).result()
            except Exception as e:  # quota: 40 cores = 20 VMs of 2
                return getattr(getattr(e, "error", None), "code", repr(e))
            return "ok"
        finally:
            c.close()
            n.close()

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(worker, range(30)))
    assert results.count("ok") == 20 and results.count("OperationNotAllowed") == 10
    rows = usages(env.state)
    assert rows["standardDSv3Family"]["currentValue"] == 40 == rows["cores"]["currentValue"]
    ips = [ip for nic in env.state.snapshot()["nics"] for ip in nic["private_ips"]]
    assert len(ips) == len(set(ips)) == 30


def _spawn(*args: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "fakeazure", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))


def test_cli_serve_prints_url_and_serves(tmp_path):
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps([{"code": "SkuNotAvailable", "match": {"size": "Standard_A0"}}]))
    proc = _spawn("serve", "--port", "0", "--catalog", "eastus", "--catalog", "southcentralus",
                  "--faults", str(faults), "--lro", "immediate")
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        ctl = RemoteFakeAzure(url)
        snap = ctl.snapshot()
        assert snap["skus"] == {"eastus": 90, "southcentralus": 20} and len(snap["faults"]) == 1
        c = compute_client(url)
        assert len(list(c.resource_skus.list(filter="location eq 'eastus'"))) == 90
        c.close()
        ctl.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err


def test_cli_catalogs_and_help():
    out = subprocess.run([sys.executable, "-m", "fakeazure", "catalogs"], capture_output=True, text=True,
                         cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert out.returncode == 0 and set(out.stdout.split()) >= {"eastus", "southcentralus", "westcentralus"}
    from fakeazure.__main__ import main
    assert callable(main)


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::1", "::", "10.0.0.1", "example.org"])
def test_only_loopback_hosts_can_be_bound(host):
    with pytest.raises(ValueError, match="loopback"):
        FakeAzureServer(host=host)


def test_localhost_and_127_8_are_loopback():
    from fakeazure.server import is_loopback_host
    assert is_loopback_host("127.0.0.1") and is_loopback_host("127.5.0.9") and is_loopback_host("LocalHost")
    with FakeAzureServer(host="localhost") as srv:
        assert requests.get(f"{srv.url}/_fakeazure/health", timeout=5).json()["ok"] is True


def test_cli_refuses_a_non_loopback_host():
    proc = _spawn("serve", "--host", "0.0.0.0", "--port", "0")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == ""
    assert "not a loopback address" in err and "Traceback" not in err


def test_keepalive_connections_do_not_block_stop():
    srv = FakeAzureServer()
    url = srv.start()
    s = requests.Session()
    for _ in range(3):
        assert s.get(f"{url}/_fakeazure/health").status_code == 200
    stopper = threading.Thread(target=srv.stop)  # the session still holds a keep-alive connection
    stopper.start()
    stopper.join(timeout=60)  # a hang guard, not a timing: stop() must return at all
    assert not stopper.is_alive()
    s.close()


@pytest.mark.parametrize("args, expect", [
    (["serve", "--lro", "foo"], "lro must be"),
    (["serve", "--catalog", "nope"], "unknown catalog 'nope'"),
    (["serve", "--faults", "{tmp}/bad.json"], "bad.json:2: Expecting value"),
    (["serve", "--faults", "{tmp}/unknown.json"], "unknown keys ['bogus']"),
    (["serve", "--faults", "{tmp}/missing.json"], "missing.json: No such file or directory"),
    (["serve", "--resource-graph-lag", "-1"], "--resource-graph-lag must be"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, args, expect):
    (tmp_path / "bad.json").write_text('[\n{"code": ')
    (tmp_path / "unknown.json").write_text('[{"code": "X", "bogus": 1}]')
    proc = _spawn(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and out == "" and "Traceback" not in err
    assert expect in err


def test_cli_real_clock_and_resource_graph_lag():
    proc = _spawn("serve", "--clock", "real", "--resource-graph-lag", "3600")
    try:
        url = proc.stdout.readline().strip()
        nic = f"{url}/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/networkInterfaces/n1"
        assert requests.put(f"{nic}?api-version=2022-01-01", json=nic_body(), timeout=30).status_code == 201
        q = {"query": 'Resources | where type == "microsoft.network/networkinterfaces"', "subscriptions": [SUB]}
        r = requests.post(f"{url}/providers/Microsoft.ResourceGraph/resources?api-version=2024-04-01", json=q, timeout=30)
        assert r.status_code == 200 and r.json()["data"] == []  # an hour of lag: not indexed yet
        assert not RemoteFakeAzure(url).snapshot()["time"].startswith("2026-01-01T00:00:00")  # FakeClock's start
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
