"""fakeazure: an ARM-compatible fake of Azure Compute (SKUs, VMs, extensions, usages, community
gallery image versions), Network (NICs; VNets, subnets, NSGs, load balancers read-only), Resource
Graph (Karpenter's query) and Retail Prices, served in-process through ``responses`` or as a
loopback HTTP(S) server.  See docs/fakeazure.md."""
from __future__ import annotations

from .arm import ARMError, FakeClock, RealClock, WELL_KNOWN_SUBSCRIPTION
from .catalog import available_catalogs, synthetic_prices, synthetic_skus
from .control import RemoteFakeAzure
from .faults import Fault, make_fault
from .guard import RealAzureBlocked, block_real_azure
from .mock import mock_azure
from .pricing.client import PricingError, fetch_prices
from .server import FakeAzureServer
from .state import FakeAzure

__all__ = [
    "ARMError", "FakeAzure", "FakeAzureServer", "FakeClock", "Fault", "PricingError", "RealAzureBlocked",
    "RealClock", "RemoteFakeAzure", "WELL_KNOWN_SUBSCRIPTION", "available_catalogs", "block_real_azure",
    "fetch_prices", "make_fault", "mock_azure", "synthetic_prices", "synthetic_skus",
]
