"""The fake server under hostile input (issue 12, "The fake server"): each test failed before its fix.

Bad bodies and names get ARM-shaped 4xx answers, never 500 "fakeazure bug"; malformed HTTP framing
gets 400 and a closed connection; 20 concurrent PUTs are all answered; the real-Azure guard sees
through percent-encoding and trailing dots."""
from __future__ import annotations

import json
import socket
import threading

import pytest
import requests
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fakeazure import FakeAzure, FakeAzureServer, RealAzureBlocked, block_real_azure, mock_azure
from fakeazure.guard import is_azure_host, is_azure_url, refuse_real_azure

from fa_helpers import RG, SUB, create_nic, nic_body, vm_body

API = "?api-version=2025-04-01"


def vm_url(env, name="vm1"):
    return env.url(env.vm_path(name)) + API


def assert_arm_400(r, code=None):
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert set(err) >= {"code", "message"} and (code is None or err["code"] == code)


# ----------------------------------------------------------------------------- bodies


@pytest.mark.parametrize("raw", [b"\xff\xfe", b"\xff\xfe{\x00}", b"{" * 3 + b"\xc3"])
def test_undecodable_bodies_are_400(fake, raw):
    r = fake.http.put(vm_url(fake), data=raw, headers={"Content-Type": "application/json"})
    assert_arm_400(r, "InvalidRequestContent")
    assert fake.state.internal_errors == []


def test_100k_deep_json_is_400(fake):
    deep = b"[" * 100000 + b"]" * 100000
    for url in (vm_url(fake), fake.url("/_fakeazure/faults")):
        method = fake.http.put if "virtualMachines" in url else fake.http.post
        assert_arm_400(method(url, data=deep, headers={"Content-Type": "application/json"}))
    assert fake.state.internal_errors == []


@pytest.mark.parametrize("patch", [
    {"location": 5}, {"location": ["southcentralus"]}, {"zones": 5}, {"zones": [{"a": 1}]}, {"tags": "x"},
    {"properties": {"hardwareProfile": 5}}, {"properties": {"hardwareProfile": {"vmSize": 5}}},
    {"properties": {"priority": 5}}, {"properties": {"storageProfile": []}},
    {"properties": {"storageProfile": {"osDisk": "x"}}}, {"properties": {"osProfile": 7}},
    {"properties": {"networkProfile": {"networkInterfaces": {"id": "x"}}}},
    {"properties": {"networkProfile": {"networkInterfaces": [5]}}}, {"properties": 5},
])
def test_wrongly_typed_vm_fields_are_400(fake, patch):
    body = vm_body(nic_id=create_nic(fake, "n1"))
    for k, v in patch.items():
        if k == "properties" and isinstance(v, dict):
            body["properties"].update(v)
        else:
            body[k] = v
    assert_arm_400(fake.http.put(vm_url(fake), json=body))
    assert fake.state.internal_errors == [] and fake.state.vms() == []


@pytest.mark.parametrize("body", [{"location": 5, "properties": nic_body()["properties"]},
                                  {"location": "southcentralus", "properties": {"ipConfigurations": [5]}},
                                  {"location": "southcentralus", "tags": [1], "properties": nic_body()["properties"]},
                                  [1, 2], "x", 5, None])
def test_wrongly_typed_nic_bodies_are_400(fake, body):
    r = fake.http.put(fake.url(fake.nic_path("n1")) + API, data=json.dumps(body),
                      headers={"Content-Type": "application/json"})
    assert_arm_400(r)
    assert fake.state.internal_errors == [] and fake.state.nics() == []


@pytest.mark.parametrize("path, body", [
    ("/faults", [5]), ("/faults", "x"), ("/usages", [1]), ("/usages", {"regional": "many"}),
    ("/usages", {"family": "standardDSv3Family", "limit": "x"}), ("/evict", [1]), ("/evict", "x"),
    ("/advance", [1]), ("/advance", {"seconds": "soon"}), ("/skus", [5]), ("/skus", {"value": ["x"]}),
    ("/catalog", [1]), ("/catalog", {"name": 5}), ("/lro", [1]), ("/lro", {"lro": 5}), ("/network", [1]),
    ("/network", {"networkSecurityGroups": "x"}), ("/resourcegraph", [1]), ("/resourcegraph", {"lag": "x"}),
])
def test_non_object_bodies_to_the_control_api_are_400(fake, path, body):
    r = fake.http.post(fake.url("/_fakeazure" + path), data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert_arm_400(r)
    assert fake.state.internal_errors == []


@pytest.mark.parametrize("path, body", [
    ("/lro", {"LRO": "sync"}), ("/lro", {}), ("/lro", None), ("/advance", {}), ("/advance", {"Seconds": 5}),
    ("/advance", {"seconds": -5}), ("/usages", {}), ("/usages", {"regional": 5, "Region": "eastus"}),
    ("/faults", {"faults": [], "extra": 1}), ("/skus", {"valu": []}), ("/reset", {"hard": True}),
    ("/settle", {"all": True}), ("/network", {}), ("/network", {"subnet": ["x"]}),
    ("/resourcegraph", {"lag": 1, "Lag": 2}), ("/catalog", {}), ("/evict", {"rg": "x", "name": "y"}),
])
def test_control_bodies_with_unknown_or_missing_keys_are_400(fake, path, body):
    """A body the control call does not understand is refused, not read as a request for the
    defaults: {"LRO": "sync"} (the key is case-sensitive) used to reset the LRO mode."""
    fake.state.set_lro("immediate")
    before = fake.state.snapshot()
    r = fake.http.post(fake.url("/_fakeazure" + path), data=None if body is None else json.dumps(body),
                       headers={"Content-Type": "application/json"})
    assert_arm_400(r)
    assert r.json()["error"]["code"] == "InvalidControlRequest"
    after = fake.state.snapshot()
    assert fake.state.lro_after_polls == 1
    assert {k: v for k, v in after.items() if k != "requests"} == {k: v for k, v in before.items() if k != "requests"}
    assert fake.state.internal_errors == []


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c, max_size=3),
                     max_leaves=8)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _replace(obj, path, value):
    if not path:
        return value
    obj = json.loads(json.dumps(obj))
    cur = obj
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return obj


VALID = {"vm": vm_body(nic_id=f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/"
                              f"networkInterfaces/n0"),
         "nic": nic_body(),
         "ext": {"location": "southcentralus", "properties": {"publisher": "p", "type": "t", "settings": {}}}}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(VALID)), which=st.integers(0, 10 ** 6), value=_json)
def test_no_mutated_body_is_a_500(kind, which, value):
    """The class, not the examples: any value at any path of a valid body gets a non-5xx answer."""
    state = FakeAzure(lro="immediate")
    base = f"https://management.azure.com/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
    state.handle("PUT", base + "Microsoft.Network/networkInterfaces/n0" + API, body=json.dumps(nic_body()))
    state.handle("PUT", base + "Microsoft.Compute/virtualMachines/v0" + API,
                 body=json.dumps(vm_body(nic_id=f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
                                                f"Microsoft.Network/networkInterfaces/n0")))
    paths = list(_paths(VALID[kind]))
    body = _replace(VALID[kind], paths[which % len(paths)], value)
    url = {"vm": "Microsoft.Compute/virtualMachines/v1", "nic": "Microsoft.Network/networkInterfaces/n1",
           "ext": "Microsoft.Compute/virtualMachines/v0/extensions/e1"}[kind]
    status, _, data = state.handle("PUT", base + url + API, body=json.dumps(body))
    assert status < 500, data
    assert state.internal_errors == []


# ----------------------------------------------------------------------------- names


@pytest.mark.parametrize("segment", ["..%2fevil", "a%2Fb", "%2e%2e", "x%5cy", "%00", "%2e"])
def test_resource_names_are_validated_as_arm_does(fake, segment):
    nic_id = create_nic(fake, "n1")
    r = fake.http.put(fake.url(fake.vm_path(segment)) + API, json=vm_body(nic_id=nic_id))
    assert_arm_400(r, "InvalidResourceName")
    r = fake.http.put(fake.url(fake.nic_path(segment)) + API, json=nic_body())
    assert_arm_400(r, "InvalidResourceName")
    rg_path = fake.vm_path("vm1").replace(f"/resourceGroups/{RG}/", f"/resourceGroups/{segment}/")
    assert_arm_400(fake.http.put(fake.url(rg_path) + API, json=vm_body(nic_id=nic_id)), "InvalidResourceName")
    assert fake.state.vms() == [] and [n["name"] for n in fake.state.nics()] == ["n1"]


def test_ordinary_names_still_work(fake):
    nic_id = create_nic(fake, "aks-default-x.y_z")
    r = fake.http.put(fake.url(fake.vm_path("aks-default-x.y_z", rg="MC_rg(1)_east")) + API,
                      json=vm_body(nic_id=nic_id))
    assert r.status_code == 201, r.text


# ----------------------------------------------------------------------------- the server


def test_twenty_concurrent_puts_of_one_vm_are_all_answered():
    with FakeAzureServer(FakeAzure(lro="immediate")) as srv:
        base = f"{srv.url}/subscriptions/{SUB}/resourceGroups/{RG}/providers/"
        requests.put(base + "Microsoft.Network/networkInterfaces/n1" + API, json=nic_body(), timeout=30)
        body = json.dumps(vm_body(nic_id=f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/"
                                         f"networkInterfaces/n1")).encode()
        for _round in range(3):
            go = threading.Barrier(20)
            results: list = []

            def put():
                go.wait()
                try:  # a fresh connection each: the listen backlog is what is tested
                    r = requests.put(base + "Microsoft.Compute/virtualMachines/vm1" + API, data=body, timeout=60,
                                     headers={"Content-Type": "application/json", "Connection": "close"})
                    results.append(r.status_code)
                except requests.RequestException as exc:
                    results.append(repr(exc))

            threads = [threading.Thread(target=put) for _ in range(20)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(results) == 20 and all(isinstance(s, int) and s < 500 for s in results), results


def _raw(srv, data: bytes) -> bytes:
    host, port = srv.url.rsplit("//", 1)[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except socket.timeout:
                return b"".join(chunks) + b"<timeout>"
            if not b:
                return b"".join(chunks)  # the server closed the connection
            chunks.append(b)


@pytest.mark.parametrize("framing", [
    b"Content-Length: abc\r\n\r\n{}", b"Content-Length: -1\r\n\r\n{}", b"Content-Length: 1e3\r\n\r\n{}",
    b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
    b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    b"Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n",
])
def test_malformed_framing_is_400_and_close(framing):
    with FakeAzureServer() as srv:
        path = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/networkInterfaces/n1{API}"
        out = _raw(srv, b"PUT " + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + framing)
    assert out.startswith(b"HTTP/1.1 400 "), out[:200]
    assert b"<timeout>" not in out and b"connection: close" in out.lower()
    assert json.loads(out.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "InvalidRequestFormat"


# ----------------------------------------------------------------------------- the guard


@pytest.mark.parametrize("host", ["management%2eazure%2ecom", "management.azure.com.", "MANAGEMENT.AZURE.COM..",
                                  "login.microsoftonline%2Ecom", "%6d%61nagement.azure.com", "management.azure.com%2e"])
def test_guard_normalizes_before_matching(host):
    assert is_azure_host(host) and is_azure_url(f"https://{host}/subscriptions")
    with pytest.raises(RealAzureBlocked):
        refuse_real_azure(f"https://{host}/subscriptions")
    with block_real_azure(), pytest.raises(RealAzureBlocked):
        socket.getaddrinfo(host, 443)


def test_guard_blocks_before_any_socket_connects(monkeypatch):
    connects = []
    real_connect = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda self, addr: connects.append(addr) or real_connect(self, addr))
    with mock_azure(passthrough=True):
        # requests decodes unreserved escapes in the host (%2e -> .): this one reaches the fake itself
        r = requests.get("https://management%2eazure%2ecom/subscriptions", timeout=5)
        assert r.status_code == 404 and r.json()["error"]["code"] == "NotImplementedInFakeAzure"
        for url in ("https://management.azure.com.:443/x", "https://login.microsoftonline.com./t",
                    "https://login.microsoftonline%2ecom/t", "https://LOGIN.MICROSOFTONLINE.COM../t"):
            with pytest.raises(RealAzureBlocked, match="fakeazure guard"):
                requests.get(url, timeout=5)
    with block_real_azure():  # without the mock: name resolution is refused, so nothing connects
        for url in ("https://login.microsoftonline%2ecom/t", "https://management.azure.com./x"):
            with pytest.raises(requests.ConnectionError, match="fakeazure guard"):
                requests.get(url, timeout=5)
    assert connects == []
