"""The wire tap keeps VM/NIC PUT bodies (the fake strips customData from what it stores) and the
Host of every request."""
import json

from harness.runner.engines.real.controller.fakeside import WireTap


class _State:
    def __init__(self):
        self.urls = []

    def handle(self, method, url, headers=None, body=None):
        self.urls.append(url)
        return (201 if method == "PUT" else 200), {}, b"{}"


def test_put_bodies_and_hosts_are_recorded():
    st = _State()
    tap = WireTap(st)
    vm = {"properties": {"osProfile": {"customData": "eA=="}}}
    tap.handle("PUT", "https://127.0.0.1:1/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
                      "virtualMachines/aks-x?api-version=1", {"Host": "127.0.0.1:1"}, json.dumps(vm).encode())
    tap.handle("GET", "https://127.0.0.1:1/subscriptions/s/providers/Microsoft.Compute/skus", {"Host": "127.0.0.1:1"})
    assert st.urls[0].startswith("https://127.0.0.1:1/")
    assert tap.vm_puts()["aks-x"].body == vm
    assert tap.nic_puts() == {}
    assert tap.hosts == {"127.0.0.1:1"}


def test_a_fault_that_refuses_every_time_holds_the_run_for_its_first_request_only():
    """A rule without `times` answers every retry the same: once nothing is in flight its first request's
    tries hold the run until the SDK gives up (SDK_CHAIN), a controller asking again on its own backoff does
    not extend that (usages-unavailable-fails-open waited 130 s for the quota controller's retries); while
    a launch is in flight (`retry_until`) that holds per request: another request refused by the rule holds
    the run for its own tries, the same request asked again later does not (a launch core retries in a
    loop: nic-get-failing-after-create-leaves-the-nic waited 150 s). A rule with `times` may let the retry
    through, so each refusal holds the run for its retry."""
    import time

    from fakeazure import FakeAzure
    from harness.runner.engines.real.controller.fakeside import SDK_BACKOFF, SDK_CHAIN

    fake = FakeAzure()
    url = (f"https://management.azure.com/subscriptions/{fake.subscription_id}/providers/Microsoft.Compute/"
           "locations/southcentralus/usages?api-version=2024-07-01")
    fake.add_fault({"code": "ServiceUnavailable", "match": {"operation": "usages.list"}})
    tap = WireTap(fake)
    start = time.monotonic()
    assert tap.handle("GET", url, {"Host": "management.azure.com"})[0] == 503
    assert start + SDK_BACKOFF <= tap.first_tries_until <= time.monotonic() + SDK_BACKOFF
    tap.permanent_since = {k: v - 60 for k, v in tap.permanent_since.items()}     # the first refusal, a minute ago
    tap.retry_until = tap.first_tries_until = 0.0
    tap.repeat_since = {k: v - 60 for k, v in tap.repeat_since.items()}
    later = time.monotonic()
    tap.handle("GET", url, {"Host": "management.azure.com"})
    assert tap.first_tries_until <= start - 60 + SDK_CHAIN + 1
    assert tap.retry_until <= start - 60 + SDK_CHAIN + 1          # the same request again: a loop
    tap.handle("GET", url.replace("southcentralus", "westus2"), {"Host": "management.azure.com"})
    assert tap.first_tries_until <= start - 60 + SDK_CHAIN + 1
    assert tap.retry_until >= later + SDK_BACKOFF                  # another request: its own tries

    limited = FakeAzure()
    limited.add_fault({"code": "ServiceUnavailable", "match": {"operation": "usages.list"}, "times": 5})
    tap = WireTap(limited)
    tap.permanent_since = {}
    before = time.monotonic()
    tap.handle("GET", url, {"Host": "management.azure.com"})
    assert tap.first_tries_until >= before + SDK_BACKOFF


def test_the_vms_aks_made_for_machines_are_seen_as_puts():
    """The AKS Machine API modes put no VM: AKS makes each machine's, with the kubelet's bootstrap kept."""
    import fakeazure
    fa = fakeazure.FakeAzure(lro="sync")
    fa.add_agent_pool("rg", "c", "testmpool", "MC_rg")
    body = {"zones": ["1"], "properties": {"hardware": {"vmSize": "Standard_D2s_v3"}, "mode": "User",
                                           "kubernetes": {"nodeLabels": {"env": "prod"}}}}
    fa.handle("PUT", "https://management.azure.com/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                     "rg/providers/Microsoft.ContainerService/managedClusters/c/agentPools/testmpool/machines/m1"
                     "?api-version=1", {}, json.dumps(body))
    (name, put), = WireTap(fa).machine_vm_puts().items()
    assert name.startswith("aks-testmpool-m1-") and put.kind == "vm" and put.status == 201
    assert put.body["properties"]["osProfile"]["customData"]
    assert WireTap(_State()).machine_vm_puts() == {}
