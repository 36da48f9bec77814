"""URL table for Microsoft.ContainerService (matched case-insensitively, as ARM does; the provider's node
bootstrapping client spells ``managedclusters`` in lower case: provider v1.14.0
pkg/provisionclients/client/operations/operations_client.go NodeBootstrappingGet)."""
from __future__ import annotations

from ..arm import RG_PATH as RG, SUB_PATH as SUB
from ..lro import get_operation
from . import responses as r

CLUSTER = RG + r"/providers/Microsoft\.ContainerService/managedClusters/(?P<cluster>[^/]+)"
POOL = CLUSTER + r"/agentPools/(?P<pool>[^/]+)"
MACHINE = POOL + r"/machines/(?P<machine>[^/]+)"

# (method, path regex, handler, operation name or callable(ctx, params, method) -> name)
url_patterns = [
    ("GET", CLUSTER + r"/agentPools", r.list_pools, "agentpool.list"),
    ("GET", POOL, r.get_pool, "agentpool.get"),
    ("POST", POOL + r"/deleteMachines", r.delete_machines, "machine.delete"),
    ("GET", POOL + r"/machines", r.list_machines, "machine.list"),
    ("PUT", MACHINE, r.put_machine, r.machine_operation_name),
    ("GET", MACHINE, r.get_machine, "machine.get"),
    ("GET", SUB + r"/providers/Microsoft\.ContainerService/locations/(?P<location>[^/]+)/nodeImageVersions",
     r.list_node_image_versions, "nodeimageversions.list"),
    ("GET", SUB + r"/providers/Microsoft\.ContainerService/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)",
     get_operation, "operation.get"),
]

# the node bootstrapping service: no api-version, plain http (NODEBOOTSTRAPPING_SERVER_URL)
bootstrap_patterns = [
    ("GET", CLUSTER + r"/nodeBootstrapping", r.node_bootstrapping, "nodebootstrapping.get"),
]
