"""TLS serving mode (fakeazure/tls.py, server.py), absolute URLs on the server's own address,
and the fake ``az`` (fakeazure/azshim.py)."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import ssl
import subprocess
import sys
import time

import pytest
import requests
from azure.core.credentials import AccessToken
from azure.core.exceptions import ServiceRequestError
from azure.mgmt.compute import ComputeManagementClient
from cryptography import x509

from fakeazure import FakeAzure, FakeAzureServer, RemoteFakeAzure
from fakeazure.clients import compute_client, network_client

from fa_helpers import RG, SUB, nic_body, vm_body

ROOT = pathlib.Path(__file__).resolve().parents[2]


class BearerCredential:
    """A plain TokenCredential: the SDK's BearerTokenCredentialPolicy sends its token."""

    def get_token(self, *scopes, **kwargs):
        return AccessToken("user-token", int(time.time()) + 3600)


def test_sdk_with_a_bearer_token_over_https_trusting_only_the_ca():
    with FakeAzureServer(tls=True) as srv:
        assert srv.url.startswith("https://127.0.0.1:") and srv.endpoint == srv.url
        ca = srv.ca_path
        assert os.path.exists(ca)
        client = ComputeManagementClient(BearerCredential(), SUB, base_url=srv.endpoint, connection_verify=ca,
                                         polling_interval=0)
        assert len(list(client.resource_skus.list(filter="location eq 'southcentralus'"))) == 20
        network = network_client(srv)  # fakeazure.clients picks up the CA
        nic = network.network_interfaces.begin_create_or_update(RG, "n1", nic_body()).result()
        vm = client.virtual_machines.begin_create_or_update(RG, "n1", vm_body(nic_id=nic.id)).result()
        assert vm.provisioning_state == "Succeeded"
        client.virtual_machines.begin_delete(RG, "n1").result()
        assert srv.state.get_vm(RG, "n1") is None
        client.close()
        network.close()
        # without the CA the certificate is not trusted: nothing is relaxed
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(f"{srv.url}/_fakeazure/health", timeout=10)
    assert not os.path.exists(ca)  # the generated directory goes with the server


def test_bearer_tokens_need_https():
    """The reason for the TLS mode: the SDK refuses a bearer token over http."""
    with FakeAzureServer() as srv:
        client = ComputeManagementClient(BearerCredential(), SUB, base_url=srv.url)
        with pytest.raises(ServiceRequestError, match="Bearer token authentication is not permitted"):
            list(client.resource_skus.list())
        client.close()


def test_certificate_names_loopback_and_is_signed_by_the_ca(tmp_path):
    with FakeAzureServer(tls_dir=str(tmp_path)) as srv:
        pem = ssl.get_server_certificate(("127.0.0.1", int(srv.url.rsplit(":", 1)[1])))
    cert = x509.load_pem_x509_certificate(pem.encode())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert {str(ip) for ip in sans.get_values_for_type(x509.IPAddress)} == {"127.0.0.1"}
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    ca = x509.load_pem_x509_certificate((tmp_path / "ca.pem").read_bytes())
    cert.verify_directly_issued_by(ca)
    assert (tmp_path / "server-key.pem").stat().st_mode & 0o077 == 0
    assert (tmp_path / "ca.pem").exists()  # an explicit directory is kept


@pytest.mark.parametrize("tls", [False, True])
def test_absolute_urls_use_the_configured_address_not_the_host_header(tls):
    with FakeAzureServer(FakeAzure(page_size=5), tls=tls) as srv:
        verify = srv.ca_path or True
        h = {"Host": "attacker.example:8443"}
        nic = f"{srv.url}/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/networkInterfaces/n1"
        r = requests.put(f"{nic}?api-version=2022-01-01", json=nic_body(), headers=h, verify=verify, timeout=10)
        assert r.status_code == 201 and r.headers["Azure-AsyncOperation"].startswith(srv.url + "/")
        r = requests.delete(f"{nic}?api-version=2022-01-01", headers=h, verify=verify, timeout=10)
        assert r.headers["Location"].startswith(srv.url + "/")
        skus = f"{srv.url}/subscriptions/{SUB}/providers/Microsoft.Compute/skus?api-version=2021-07-01"
        assert requests.get(skus, headers=h, verify=verify, timeout=10).json()["nextLink"].startswith(srv.url + "/")


def test_a_name_the_server_answers_for_keeps_its_pages_with_or_without_the_port():
    """Go sends `Host: prices.azure.com:443` for a URL that names the port (the real service's
    NextPageLink form): the pages after it stay on the name, never on the server's loopback address
    (which a sandboxed client cannot reach)."""
    state = FakeAzure(page_size=5)
    state.load_catalog("eastus")
    with FakeAzureServer(state, tls=True, tls_names=("prices.azure.com",)) as srv:
        url = f"{srv.url}/api/retail/prices?api-version=2023-01-01-preview&$filter=armRegionName eq 'eastus'"
        for host in ("prices.azure.com", "prices.azure.com:443"):
            r = requests.get(url, headers={"Host": host}, verify=srv.ca_path, timeout=10).json()
            assert r["NextPageLink"].startswith("https://prices.azure.com:443/api/retail/prices?"), (host, r["NextPageLink"])
        r = requests.get(url, headers={"Host": "other.example:443"}, verify=srv.ca_path, timeout=10).json()
        assert r["NextPageLink"].startswith(srv.url + "/")


def _spawn(*args: str):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "fakeazure", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))


def test_cli_serve_tls_prints_url_then_ca_path():
    proc = _spawn("serve", "--tls", "--lro", "immediate")
    try:
        url = proc.stdout.readline().strip()
        ca = proc.stdout.readline().strip()
        assert url.startswith("https://127.0.0.1:") and ca.endswith("ca.pem") and os.path.exists(ca)
        remote = RemoteFakeAzure(url, ca_path=ca)
        assert remote.health()["ok"] is True
        c = compute_client(url, connection_verify=ca)
        assert len(list(c.resource_skus.list())) == 20
        c.close()
        remote.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert not os.path.exists(ca)  # the temporary directory is removed at exit


def test_silent_tls_clients_do_not_hold_the_server_at_stop(monkeypatch):
    """A client that connects and never starts its TLS handshake: stop() shuts its socket (the TLS
    socket wrap_socket made, not the raw one it took over) instead of waiting for the handshake to
    time out, and removes the generated directory with the private key."""
    import socket
    import threading
    from fakeazure import server as servermod
    monkeypatch.setattr(servermod, "HANDSHAKE_TIMEOUT", 3600.0)   # only the shutdown can end the wait
    srv = FakeAzureServer(tls=True)
    host, port = srv.start().split("//")[1].split(":")
    key_dir = os.path.dirname(srv.ca_path)
    clients = [socket.create_connection((host, int(port))) for _ in range(20)]
    try:
        while len(srv._httpd._conns) < 20:
            time.sleep(0.01)
        stopper = threading.Thread(target=srv.stop)
        stopper.start()
        stopper.join(120)          # a guard against a hang, not a speed check
        assert not stopper.is_alive()
    finally:
        for c in clients:
            c.close()
    assert not os.path.exists(key_dir)


def test_cli_serve_tls_stops_on_sigterm_with_silent_clients():
    import socket
    proc = _spawn("serve", "--tls")
    url = proc.stdout.readline().strip()
    ca = proc.stdout.readline().strip()
    host, port = url.split("//")[1].split(":")
    clients = [socket.create_connection((host, int(port))) for _ in range(50)]
    try:
        time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)   # a guard against a hang, not a speed check
    finally:
        for c in clients:
            c.close()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert not os.path.exists(ca)


def test_az_shim_answers_like_the_azure_cli(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "fakeazure", "az-shim", str(tmp_path / "bin")], capture_output=True,
                          text=True, cwd=str(ROOT), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert proc.returncode == 0, proc.stderr
    az = pathlib.Path(proc.stdout.strip())
    assert az == tmp_path / "bin" / "az" and os.access(az, os.X_OK)
    # exactly how azidentity v1.14.0 AzureCLICredential runs it: /bin/sh -c "<command>" with az on PATH
    env = dict(os.environ, PATH=f"{az.parent}{os.pathsep}{os.environ['PATH']}")
    cmd = "az account get-access-token -o json --resource https://management.azure.com --tenant t1"
    out = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, env=env, timeout=30)
    assert out.returncode == 0, out.stderr
    token = json.loads(out.stdout)  # createAccessToken reads accessToken and expires_on (Unix seconds)
    assert token["accessToken"] == "fakeazure-token" and isinstance(token["expires_on"], int)
    assert token["expires_on"] > time.time() + 60 and token["subscription"] == SUB
    bad = subprocess.run(["/bin/sh", "-c", "az login"], capture_output=True, text=True, env=env, timeout=30)
    assert bad.returncode == 1 and "only 'az account get-access-token'" in bad.stderr
