"""The wire tap keeps VM/NIC PUT bodies (the fake strips customData from what it stores) and the
Host of every request."""
import json

from harness.runner.engines.real.fakeside import WireTap


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
