"""URL table for Microsoft.Network."""
from __future__ import annotations

from ..arm import RG_PATH as RG, SUB_PATH as SUB
from ..lro import get_operation
from . import responses as r

NIC = RG + r"/providers/Microsoft\.Network/networkInterfaces/(?P<name>[^/]+)"
VNET = RG + r"/providers/Microsoft\.Network/virtualNetworks/(?P<vnet>[^/]+)"
NSGS = RG + r"/providers/Microsoft\.Network/networkSecurityGroups"
LBS = RG + r"/providers/Microsoft\.Network/loadBalancers"

url_patterns = [
    ("PUT", NIC, r.put_nic, r.nic_operation_name),
    ("GET", NIC, r.get_nic, "nic.get"),
    ("PATCH", NIC, r.patch_nic, "nic.update"),
    ("DELETE", NIC, r.delete_nic, "nic.delete"),
    ("GET", RG + r"/providers/Microsoft\.Network/networkInterfaces", r.list_nics_rg, "nic.list"),
    ("GET", SUB + r"/providers/Microsoft\.Network/networkInterfaces", r.list_nics_all, "nic.list"),
    ("GET", VNET, r.get_vnet, "vnet.get"),
    ("GET", VNET + r"/subnets/(?P<subnet>[^/]+)", r.get_subnet, "subnet.get"),
    ("GET", NSGS, r.list_nsgs, "nsg.list"),
    ("GET", NSGS + r"/(?P<name>[^/]+)", r.get_nsg, "nsg.get"),
    ("GET", LBS, r.list_load_balancers, "lb.list"),
    ("GET", LBS + r"/(?P<name>[^/]+)", r.get_load_balancer, "lb.get"),
    ("GET", SUB + r"/providers/Microsoft\.Network/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)",
     get_operation, "operation.get"),
]
