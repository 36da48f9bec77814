"""What a route handler may use: the models, faults, long-running operations and the
subscription.  Handlers get an :class:`ArmContext`, never the whole ``FakeAzure``, so a
service's handlers can only reach the parts they are given."""
from __future__ import annotations

from dataclasses import dataclass

from .arm import ResourceGroups
from .compute.galleries import CommunityGalleries
from .compute.models import ComputeModel
from .containerservice.models import ContainerServiceModel
from .faults import FaultService
from .lro import Lro
from .network.models import NetworkModel
from .network.topology import Topology
from .pricing.models import PriceBook
from .resourcegraph.models import ResourceGraph


@dataclass
class ArmContext:
    subscription: str
    region: str  # the default region
    compute: ComputeModel
    network: NetworkModel
    topology: Topology
    galleries: CommunityGalleries
    resource_graph: ResourceGraph
    prices: PriceBook
    faults: FaultService
    lro: Lro
    resource_groups: ResourceGroups
    page_size: int | None = None  # ARM lists are paged by this many items (None: one page)
    aks: ContainerServiceModel | None = None   # agent pools and machines (containerservice/)
