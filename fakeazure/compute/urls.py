"""URL table for Microsoft.Compute (paths are matched case-insensitively, as ARM does:
https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules;
https://learn.microsoft.com/rest/api/azure/)."""
from __future__ import annotations

from ..arm import RG_PATH as RG, SUB_PATH as SUB
from ..lro import get_operation
from . import responses as r

VM = RG + r"/providers/Microsoft\.Compute/virtualMachines/(?P<name>[^/]+)"
CIG = (SUB + r"/providers/Microsoft\.Compute/locations/(?P<location>[^/]+)/communityGalleries/(?P<gallery>[^/]+)"
       r"/images/(?P<image>[^/]+)/versions")

# (method, path regex, handler, operation name or callable(ctx, params, method) -> name)
url_patterns = [
    ("GET", SUB + r"/providers/Microsoft\.Compute/skus", r.list_skus, "skus.list"),
    ("GET", SUB + r"/providers/Microsoft\.Compute/locations/(?P<location>[^/]+)/usages", r.list_usages,
     "usages.list"),
    ("GET", SUB + r"/providers/Microsoft\.Compute/locations/(?P<location>[^/]+)/operations/(?P<op>[^/]+)",
     get_operation, "operation.get"),
    ("PUT", VM, r.put_vm, r.vm_operation_name),
    ("GET", VM, r.get_vm, "vm.get"),
    ("PATCH", VM, r.patch_vm, "vm.update"),
    ("DELETE", VM, r.delete_vm, "vm.delete"),
    ("GET", RG + r"/providers/Microsoft\.Compute/virtualMachines", r.list_vms_rg, "vm.list"),
    ("GET", SUB + r"/providers/Microsoft\.Compute/virtualMachines", r.list_vms_all, "vm.list"),
    ("PUT", VM + r"/extensions/(?P<ext>[^/]+)", r.put_extension, "vmext.create"),
    ("GET", VM + r"/extensions/(?P<ext>[^/]+)", r.get_extension, "vmext.get"),
    ("DELETE", VM + r"/extensions/(?P<ext>[^/]+)", r.delete_extension, "vmext.delete"),
    ("GET", VM + r"/extensions", r.list_extensions, "vmext.list"),
    ("GET", CIG, r.list_gallery_image_versions, "gallery.versions.list"),
    ("GET", CIG + r"/(?P<version>[^/]+)", r.get_gallery_image_version, "gallery.versions.get"),
]
