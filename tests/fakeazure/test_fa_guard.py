"""Nothing reaches a real Azure host; unmatched requests fail loudly."""
from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest
import requests
import responses

from fakeazure import (FakeAzure, FakeAzureServer, RealAzureBlocked, RemoteFakeAzure, block_real_azure, fetch_prices,
                       mock_azure)
from fakeazure.clients import compute_client, network_client
from fakeazure.guard import guard_active, is_azure_host


@pytest.mark.parametrize("url", [
    "https://login.microsoftonline.com/tenant/oauth2/v2.0/token",
    "https://management.core.windows.net/",
    "https://myacct.blob.core.windows.net/c/b",
    "https://graph.microsoft.com/v1.0/me",
    "https://eastus.management.azure.com/subscriptions",
    "https://myvault.vault.azure.net/secrets/x",
])
def test_other_azure_hosts_are_refused_in_process(url):
    with mock_azure():
        with pytest.raises(RealAzureBlocked, match="refusing to contact real Azure"):
            requests.get(url)


def test_unmatched_non_azure_request_fails_and_is_not_passed_through():
    with mock_azure():
        with pytest.raises(requests.ConnectionError):
            requests.get("https://example.org/anything")


def test_served_hosts_work_and_unknown_arm_paths_are_loud():
    with mock_azure():
        r = requests.get("https://management.azure.com/providers/Microsoft.Foo/bar?api-version=1")
        assert r.status_code == 404 and "does not serve" in r.json()["error"]["message"]
        assert requests.get("https://prices.azure.com/api/retail/prices").status_code == 200


def test_block_real_azure_refuses_name_resolution():
    assert not guard_active()
    with block_real_azure():
        assert guard_active()
        with pytest.raises(RealAzureBlocked):
            socket.getaddrinfo("management.azure.com", 443)
        with pytest.raises(RealAzureBlocked):
            socket.create_connection(("login.microsoftonline.com", 443), timeout=1)
        with pytest.raises(urllib.error.URLError) as ei:
            urllib.request.urlopen("https://prices.azure.com/api/retail/prices", timeout=1)
        assert isinstance(ei.value.reason, RealAzureBlocked)
        assert socket.getaddrinfo("127.0.0.1", 80)  # everything else resolves as usual
        with block_real_azure():  # re-entrant
            assert guard_active()
        assert guard_active()
    assert not guard_active()


def test_mock_activates_the_guard_for_other_libraries():
    with mock_azure():
        assert guard_active()
        with pytest.raises(RealAzureBlocked):
            socket.getaddrinfo("westeurope.api.azureml.ms.azure.com", 443)
    assert not guard_active()
    with mock_azure(guard=False):
        assert not guard_active()


def test_host_classification():
    assert is_azure_host("management.azure.com") and is_azure_host("x.windows.net.")
    assert not is_azure_host("notazure.com") and not is_azure_host("127.0.0.1") and not is_azure_host("")


def test_coexists_with_an_outer_responses_mock():
    with responses.RequestsMock() as outer:
        outer.add(responses.GET, "https://example.org/data", json={"outer": True})
        with mock_azure() as state:
            assert requests.get("https://example.org/data").json() == {"outer": True}
            c = compute_client(state)
            assert len(list(c.resource_skus.list())) == 20
            with pytest.raises(RealAzureBlocked):
                requests.get("https://login.microsoftonline.com/x")
        assert requests.get("https://example.org/data").json() == {"outer": True}


def test_decorator_injects_state():
    m = mock_azure(FakeAzure(region="westcentralus"))

    @m
    def uses(fakeazure):
        return len(list(compute_client(fakeazure).resource_skus.list()))

    assert uses() == 12

    @mock_azure()
    def plain():
        return requests.get("https://management.azure.com/_fakeazure/health").json()["ok"]

    assert plain() is True


def test_own_clients_refuse_real_azure_without_the_mock():
    """fetch_prices and the SDK clients default to the real hosts' URLs: outside mock_azure()
    nothing is sent.  An empty outer responses mock stands in for the network, so a request the
    guard let through would fail differently (requests.ConnectionError)."""
    with responses.RequestsMock(assert_all_requests_are_fired=False):
        with pytest.raises(RealAzureBlocked, match="prices.azure.com"):
            fetch_prices("southcentralus")
        c = compute_client()
        with pytest.raises(RealAzureBlocked, match="management.azure.com"):
            list(c.resource_skus.list())
        n = network_client(FakeAzure())
        with pytest.raises(RealAzureBlocked):
            n.network_interfaces.get("rg", "nic")
        with pytest.raises(RealAzureBlocked):
            RemoteFakeAzure("https://management.azure.com").health()
        # A client made inside the mock is refused once the mock has stopped.
        with mock_azure() as state:
            inside = compute_client(state)
            assert len(list(inside.resource_skus.list())) == 20
            assert fetch_prices("southcentralus")
        with pytest.raises(RealAzureBlocked):
            list(inside.resource_skus.list())
        for client in (c, n, inside):
            client.close()


def test_loopback_server_urls_are_not_refused():
    with FakeAzureServer() as srv:
        assert fetch_prices("southcentralus", srv.url)["Standard_D2s_v3"]["on-demand"] > 0
        c = compute_client(srv)
        assert len(list(c.resource_skus.list())) == 20
        c.close()
