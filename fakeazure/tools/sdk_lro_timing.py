"""How long a plain Azure SDK user waits for NIC create + VM create + VM delete against the fake,
with the SDK's default polling (no ``polling_interval`` given), with and without the fake's
LRO ``Retry-After``.  A measurement, not a test (timings are never asserted).

    python -m fakeazure.tools.sdk_lro_timing [--retry-after 1] [--without]

Prints one line per setting: seconds for the three operations through the real
``azure-mgmt-network`` / ``azure-mgmt-compute`` clients over the TLS loopback server.
"""
from __future__ import annotations

import argparse
import time

from azure.core.credentials import AccessToken
from azure.mgmt.compute import ComputeManagementClient
from azure.mgmt.network import NetworkManagementClient

from fakeazure import WELL_KNOWN_SUBSCRIPTION, FakeAzure, FakeAzureServer

RG = "rg-timing"


class _Credential:
    def get_token(self, *scopes, **kwargs):
        return AccessToken("user-token", int(time.time()) + 3600)


def _bodies(sub: str) -> tuple[dict, dict]:
    nic = {"location": "southcentralus", "properties": {"ipConfigurations": [{"name": "ipconfig0", "properties": {
        "subnet": {"id": f"/subscriptions/{sub}/resourceGroups/{RG}/providers/Microsoft.Network/virtualNetworks/"
                         f"aks-vnet/subnets/aks-subnet"}}}]}}
    vm = {"location": "southcentralus", "zones": ["1"], "properties": {
        "hardwareProfile": {"vmSize": "Standard_D2s_v3"},
        "storageProfile": {"osDisk": {"createOption": "FromImage", "deleteOption": "Delete"}},
        "osProfile": {"computerName": "n", "adminUsername": "azureuser"},
        "networkProfile": {"networkInterfaces": [{"id": f"/subscriptions/{sub}/resourceGroups/{RG}/providers/"
                                                        f"Microsoft.Network/networkInterfaces/n1",
                                                  "properties": {"deleteOption": "Delete"}}]}}}
    return nic, vm


def measure(retry_after: int | None) -> float:
    with FakeAzureServer(FakeAzure(lro_retry_after=retry_after), tls=True) as srv:
        kw = {"base_url": srv.endpoint, "connection_verify": srv.ca_path}  # SDK default polling
        network = NetworkManagementClient(_Credential(), WELL_KNOWN_SUBSCRIPTION, **kw)
        compute = ComputeManagementClient(_Credential(), WELL_KNOWN_SUBSCRIPTION, **kw)
        nic, vm = _bodies(WELL_KNOWN_SUBSCRIPTION)
        t0 = time.perf_counter()
        network.network_interfaces.begin_create_or_update(RG, "n1", nic).result()
        compute.virtual_machines.begin_create_or_update(RG, "n1", vm).result()
        compute.virtual_machines.begin_delete(RG, "n1").result()
        took = time.perf_counter() - t0
        network.close()
        compute.close()
    return took


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--retry-after", type=int, default=1, help="the fake's LRO Retry-After (seconds)")
    p.add_argument("--without", action="store_true", help="also measure with no Retry-After (slow: ~2 min)")
    args = p.parse_args(argv)
    settings = ([None] if args.without else []) + [args.retry_after]
    for ra in settings:
        label = "no Retry-After" if ra is None else f"Retry-After: {ra}"
        print(f"{label}: NIC create + VM create + VM delete through the SDK took {measure(ra):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
