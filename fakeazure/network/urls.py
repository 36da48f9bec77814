"""URL table for Microsoft.Network."""
from __future__ import annotations

from ..arm import RG_PATH as RG, SUB_PATH as SUB
from ..operations import get_operation
from . import responses as r

NIC = RG + r"/providers/Microsoft\.Network/networkInterfaces/(?P<name>[^/]+)"

url_patterns = [
    ("PUT", NIC, r.put_nic, r.nic_operation_name),
    ("GET", NIC, r.get_nic, "nic.get"),
    ("PATCH", NIC, r.patch_nic, "nic.update"),
    ("DELETE", NIC, r.delete_nic, "nic.delete"),
    ("GET", RG + r"/providers/Microsoft\.Network/networkInterfaces", r.list_nics_rg, "nic.list"),
    ("GET", SUB + r"/providers/Microsoft\.Network/networkInterfaces", r.list_nics_all, "nic.list"),
    ("GET", SUB + r"/providers/Microsoft\.Network/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)",
     get_operation, "operation.get"),
]
