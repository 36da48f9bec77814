"""Compute resource model: SKUs, quota (usages), virtual machines.

Pure Python, no HTTP.  Every public method is called with the state's lock held.
ARM invariants modelled here:

* a VM consumes its SKU family's quota and the regional ``cores`` total (Spot VMs
  consume ``lowPriorityCores`` instead) from PUT acceptance until it is deleted,
  evicted or its creation fails (https://learn.microsoft.com/rest/api/compute/usage/list;
  https://learn.microsoft.com/rest/api/compute/usage/list, github.com/Azure/karpenter-provider-azure v1.14.0
  pkg/providers/instancetype/instancetypes.go createOfferings);
* a VM needs its NICs: every referenced NIC must exist and not belong to another VM;
* names are unique per resource group, case-insensitively
  (https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules;
  https://learn.microsoft.com/rest/api/azure/);
* ``zones`` and ``customData`` cannot change on an existing VM (409
  PropertyChangeNotAllowed, https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update);
  customData is never returned
  (https://github.com/Azure/azure-cli/issues/20870).
"""
from __future__ import annotations

import hashlib
import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import catalog as cat
from ..arm import ARMError, clone_json, iso, json_bytes, new_guid, parse_resource_id, resource_id, rg_and_name
from ..faults import SERVER_CODES, Fault
from . import exceptions as exc
from .quota import HELD_FIELDS, Quota
from .skus import SkuCatalog

if TYPE_CHECKING:  # pragma: no cover
    from ..network.models import NetworkModel

VM_TYPE = "Microsoft.Compute/virtualMachines"


def _vm_key(rg: str, name: str) -> tuple[str, str]:
    return rg.lower(), name.lower()


def _norm_zones(zones: Any) -> list[str]:
    if not zones:
        return []
    if isinstance(zones, str):
        zones = [zones]
    return [str(z) for z in zones]


def is_spot(priority: str | None) -> bool:
    """Spot and its older name Low (https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update:
    priority "Spot" | "Regular", enum also "Low":
    azure-mgmt-compute 39.0.0 azure/mgmt/compute/models/_enums.py VirtualMachinePriorityTypes)."""
    return (priority or "Regular").lower() in ("spot", "low")


def vm_resource_id(sub: str, rg: str, name: str) -> str:
    return resource_id(sub, rg, "Microsoft.Compute", "virtualMachines", name)


def fault_ctx(operation: str, rg: str, name: str, location: str, size: str, zones: list[str], priority: str,
              method: str | None = None) -> dict:
    """What fault rules match on for a VM operation (``faults.MATCH_KEYS``)."""
    ctx = {"operation": operation, "resource_group": rg, "name": name, "location": location, "size": size,
           "zone": zones[0] if zones else "", "priority": priority}
    if method is not None:
        ctx["method"] = method
    return ctx


@dataclass
class VirtualMachine:
    rg: str
    name: str
    location: str
    size: str
    zones: list[str]
    priority: str
    eviction_policy: str | None
    vcpus: int
    family: str
    body: dict  # the resource as returned (customData/adminPassword stripped)
    custom_data_digest: str | None
    nic_ids: list[str]
    nic_delete: dict[str, bool]
    vm_id: str
    created: float
    provisioning_state: str = "Creating"
    power_state: str = "starting"
    holds_quota: bool = False
    operation: str | None = None
    evicted: bool = False
    failure: dict | None = None
    extensions: dict = field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        # the quota's running total of held cores follows every change of what it counts (quota.HeldCores)
        held = self.__dict__.get("_held") if name in HELD_FIELDS else None
        if held is None:
            object.__setattr__(self, name, value)
            return
        held.drop(self)
        object.__setattr__(self, name, value)
        held.add(self)

    @property
    def key(self) -> tuple[str, str]:
        return _vm_key(self.rg, self.name)

    @property
    def spot(self) -> bool:
        return is_spot(self.priority)

    def id(self, sub: str) -> str:
        return vm_resource_id(sub, self.rg, self.name)

    def fault_ctx(self, operation: str, method: str | None = None) -> dict:
        return fault_ctx(operation, self.rg, self.name, self.location, self.size, self.zones, self.priority,
                         method)


class ComputeModel:
    """SKUs, quota and VMs.  ``network`` is told when a VM attaches, detaches or cascades a NIC
    (it never looks back into compute)."""

    def __init__(self, rng, clock, network: "NetworkModel"):
        self.rng = rng
        self.clock = clock
        self.network = network
        self.skus = SkuCatalog()
        self.vms: dict[tuple[str, str], VirtualMachine] = {}
        self.quota = Quota(self.vms, self.skus)
        self.evictions: list[dict] = []
        # called with each VM a Spot eviction removed (policy Delete): what owns it goes with it (an AKS machine)
        self.on_evicted: list[Callable[[VirtualMachine], None]] = []
        # (created, removed, last view) of deleted VMs, for lagging readers (Resource Graph)
        self.removed: deque[tuple[float, float, dict]] = deque(maxlen=10000)
        # VMs whose provisioning state became Succeeded since the eviction rules last looked
        # (SpotEvictions.apply stamps the time they count ``after_seconds`` from).
        self.newly_succeeded: list[VirtualMachine] = []
        # VM key -> (the body, the provisioning state, the VM's JSON in a list page): list_json
        self._list_json: dict[tuple[str, str], tuple[dict, str, str]] = {}

    # ------------------------------------------------------------------ reset
    def clear(self) -> None:
        for vm in self.vms.values():
            self.quota.held.forget(vm)
        self.vms.clear()
        self._list_json.clear()
        self.removed.clear()
        self.evictions.clear()
        self.newly_succeeded.clear()

    # ------------------------------------------------------------------ SKUs
    def find_sku(self, region: str, size: str) -> dict | None:
        return self.skus.find(region, size)

    def fault_error(self, f: Fault, ctx: dict, sku: dict | None, parsed: dict | None, sub: str,
                    default_region: str) -> ARMError:
        """The error a provisioning fault rule stands for, in CRP's wording (fakeazure/compute/exceptions.py
        names each source;
        https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors;
        https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors)."""
        region = (ctx.get("location") or default_region).lower()
        zone = ctx.get("zone") or ""
        spot = is_spot(ctx.get("priority"))
        size = ctx.get("size") or (sku or {}).get("name") or ""
        vm_id = vm_resource_id(sub, ctx.get("resource_group"), ctx.get("name"))
        code = f.code
        if code == "SkuNotAvailable":
            return exc.sku_not_available(sub, vm_id, region, [zone] if zone else [])
        if code == "ZonalAllocationFailed":
            return exc.zonal_allocation_failed(size, zone)
        if code == "AllocationFailed":
            return exc.allocation_failed()
        if code == "OverconstrainedZonalAllocationRequest":
            return exc.overconstrained_zonal(spot)
        if code == "OverconstrainedAllocationRequest":
            return exc.overconstrained(bool((parsed or {}).get("ephemeral")), spot)
        if code in ("FamilyQuota", "RegionalQuota", "LowPriorityQuota"):
            fake_sku = sku or {"name": size, "family": "", "capabilities": []}
            return self.quota.fault_error(f, sub, region, fake_sku, spot)
        if code == "DiskControllerTypeMismatch":
            return exc.disk_controller_mismatch(size)
        if code in SERVER_CODES:
            return exc.internal_execution_error()
        return ARMError(code, f.message or f"Injected fault {code}.", int(f.status or 400), target=f.target)

    # ------------------------------------------------------------------ VMs
    def get(self, rg: str, name: str) -> VirtualMachine | None:
        return self.vms.get(_vm_key(rg, name))

    def require(self, rg: str, name: str) -> VirtualMachine:
        vm = self.get(rg, name)
        if vm is None:
            raise exc.vm_not_found(rg, name)
        return vm

    def list(self, rg: str | None = None) -> list[VirtualMachine]:
        vms = sorted(self.vms.values(), key=lambda v: (v.rg.lower(), v.name.lower()))
        if rg is not None:
            vms = [v for v in vms if v.rg.lower() == rg.lower()]
        return vms

    def parse_put(self, body: Any) -> dict:
        """Validate the PUT body shape and extract what the model needs."""
        if not isinstance(body, dict):
            raise exc.invalid_parameter("The request body must be a JSON object.", "body")
        props = body.get("properties") or {}
        if not isinstance(props, dict):
            raise exc.invalid_parameter("'properties' must be an object.", "properties")
        location = body.get("location")
        if not location:
            # ARM's own wording for a missing location (unverified).
            raise ARMError("LocationRequired", "The location property is required for this definition.", 400)
        size = ((props.get("hardwareProfile") or {}).get("vmSize"))
        if not size:
            raise exc.invalid_parameter("Required parameter 'hardwareProfile.vmSize' is missing (null).",
                                        "hardwareProfile.vmSize")
        nics = ((props.get("networkProfile") or {}).get("networkInterfaces")) or []
        os_profile = props.get("osProfile") or {}
        return {
            "location": str(location),
            "size": str(size),
            "zones": _norm_zones(body.get("zones")),
            "priority": props.get("priority") or "Regular",
            "eviction_policy": props.get("evictionPolicy"),
            "custom_data": os_profile.get("customData"),
            "nics": nics,
            "ephemeral": bool(((props.get("storageProfile") or {}).get("osDisk") or {}).get("diffDiskSettings")),
            "disk_controller": (props.get("storageProfile") or {}).get("diskControllerType"),
        }

    def usable_sku(self, sub: str, rg: str, name: str, p: dict) -> dict:
        """The SKU of the requested size; an unknown or location-restricted size is 409
        SkuNotAvailable
        (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/error-sku-not-available;
        github.com/Azure/skewer@v0.0.24/sku.go HasLocationRestriction,
        https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update)."""
        region = p["location"].lower()
        sku = self.find_sku(region, p["size"])
        if sku is None or cat.location_restricted(sku, region):
            raise exc.sku_not_available(sub, vm_resource_id(sub, rg, name), region, p["zones"])
        return sku

    def validate_new(self, sub: str, rg: str, name: str, p: dict) -> dict:
        """Checks ARM makes before accepting a new VM.  Returns the SKU."""
        region = p["location"].lower()
        vm_id = vm_resource_id(sub, rg, name)
        sku = self.usable_sku(sub, rg, name, p)
        if p["zones"]:
            listed = set((cat.location_info(sku, region).get("zones") or []))
            ok = set(cat.available_zones(sku, region))
            if any(z not in ok for z in p["zones"]):
                if not listed and not self.skus.zonal(region):
                    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors
                    # InvalidParameter (400, target = the property;
                    # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors);
                    # the message text is a harness assumption, not in reference.
                    raise exc.invalid_parameter(
                        f"The zone(s) '{','.join(p['zones'])}' for resource '{vm_id}' is not supported. "
                        f"The supported zones for location '{region}' are ''", "zones")
                raise exc.sku_not_available(sub, vm_id, region, p["zones"])
        # Spot needs LowPriorityCapable (github.com/Azure/skewer@v0.0.24/sku.go HasLocationRestriction: spot
        # restriction shows only there; the
        # provider checks it too: karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
        # createOfferings)
        if is_spot(p["priority"]) and (cat.capability(sku, "LowPriorityCapable") or "").lower() != "true":
            raise exc.sku_not_available_capacity(sku["name"], region)
        return sku

    def check_nics(self, sub: str, rg: str, name: str, nics: list[dict]) -> list[str]:
        vm_id = vm_resource_id(sub, rg, name)
        ids = []
        for ref in nics:
            nic_id = (ref or {}).get("id") or ""
            parts = parse_resource_id(nic_id)
            nic = self.network.get(parts.get("resourcegroups", ""), parts.get("name", ""))
            if nic is None or (parts.get("type", "").lower() != "networkinterfaces"):
                raise exc.nic_reference_not_found(nic_id, vm_id)
            if nic.deleting:
                # attached now, the NIC would be gone under the VM when its delete finishes
                raise exc.nic_not_provisioned(nic.id(sub), vm_id)
            if nic.vm_id and nic.vm_id.lower() != vm_id.lower():
                owner = self.by_id(nic.vm_id)
                if owner is not None:
                    raise exc.nic_in_use_by_other_vm(nic.id(sub), nic.vm_id)
            ids.append(nic.id(sub))
        return ids

    def by_id(self, vm_id: str) -> VirtualMachine | None:
        return self.get(*rg_and_name(vm_id))

    def check_update(self, vm: VirtualMachine, p: dict) -> None:
        if vm.provisioning_state == "Deleting":
            # CRP wording (unverified).
            raise ARMError("OperationNotAllowed",
                           f"Operation 'PUT' is not allowed on VM '{vm.name}' since the VM is marked for "
                           f"deletion. You can only retry the Delete operation (or wait for an ongoing one to "
                           f"complete).", 409)
        if p["location"].lower() != vm.location.lower():
            # (harness assumption, not in reference: ARM's code and wording for a name taken in
            # another location)
            raise ARMError("InvalidResourceLocation",
                           f"The resource '{vm.name}' already exists in location '{vm.location}' in resource "
                           f"group '{vm.rg}'. A resource with the same name cannot be created in location "
                           f"'{p['location']}'. Please select a new resource name.", 409)
        # https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update: immutable properties
        # (PropertyChangeNotAllowed as in karpenter-provider-azure
        # v1.14.0 pkg/fake/virtualmachinesapi.go).
        if sorted(p["zones"]) != sorted(vm.zones):
            raise exc.property_change_not_allowed("zones")
        if p["custom_data"] is not None and _digest(p["custom_data"]) != vm.custom_data_digest:
            raise exc.property_change_not_allowed("customData")
        if (p["priority"] or "Regular").lower() != (vm.priority or "Regular").lower():
            # (harness assumption, not in reference:
            # https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update names only zones and
            # customData as
            # immutable; priority is treated the same way, with the code of karpenter-provider-azure
            # v1.14.0 pkg/fake/virtualmachinesapi.go)
            raise exc.property_change_not_allowed("priority")

    def store_body(self, sub: str, rg: str, name: str, body: dict, p: dict, sku: dict, vm_guid: str,
                   created: float) -> dict:
        """The VM resource as ARM returns it
        (https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update;
        https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update): server-filled fields,
        no customData/adminPassword."""
        b = clone_json(body)
        # read-only, sent by the Go SDK, ignored (karpenter-provider-azure v1.14.0
        # pkg/providers/instance/vminstance.go newVMObject)
        b.pop("name", None)
        props = b.setdefault("properties", {})
        os_profile = props.get("osProfile")
        if isinstance(os_profile, dict):
            os_profile.pop("customData", None)
            os_profile.pop("adminPassword", None)
            os_profile.setdefault("secrets", [])
            os_profile.setdefault("allowExtensionOperations", True)
            os_profile.setdefault("requireGuestProvisionSignal", True)
        storage = props.setdefault("storageProfile", {})
        osd = storage.setdefault("osDisk", {})
        osd.setdefault("osType", "Linux")
        osd.setdefault("name", name)
        premium = (cat.capability(sku, "PremiumIO") or "").lower() == "true"
        if not osd.get("diffDiskSettings"):
            md = osd.setdefault("managedDisk", {})
            md.setdefault("storageAccountType", "Premium_LRS" if premium else "Standard_LRS")
            md["id"] = resource_id(sub, rg, "Microsoft.Compute", "disks", osd["name"])
        storage.setdefault("dataDisks", [])
        props["vmId"] = vm_guid
        props["timeCreated"] = iso(created)
        out = {"name": name, "id": vm_resource_id(sub, rg, name),
               "type": VM_TYPE, "location": p["location"]}
        if p["zones"]:
            out["zones"] = p["zones"]
        for k, v in b.items():
            if k not in ("id", "type", "location", "zones", "properties"):
                out[k] = v
        out["properties"] = props
        return out

    def create(self, sub: str, rg: str, name: str, body: dict, p: dict, sku: dict,
               nic_ids: list[str]) -> VirtualMachine:
        guid = new_guid(self.rng)
        now = self.clock.time()
        nic_delete = _nic_delete_options(p["nics"], nic_ids)
        vm = VirtualMachine(
            rg=rg, name=name, location=p["location"], size=sku["name"], zones=p["zones"],
            priority=p["priority"], eviction_policy=p["eviction_policy"], vcpus=cat.sku_vcpus(sku),
            family=cat.sku_family(sku), body=self.store_body(sub, rg, name, body, p, sku, guid, now),
            custom_data_digest=_digest(p["custom_data"]) if p["custom_data"] is not None else None,
            nic_ids=nic_ids, nic_delete=nic_delete, vm_id=guid, created=now, holds_quota=True)
        self.vms[vm.key] = vm
        self.quota.held.track(vm)
        for nid in nic_ids:
            self.network.attach(nid, vm.id(sub))
        return vm

    def check_update_quota(self, sub: str, vm: VirtualMachine, sku: dict) -> None:
        """Resize / retry after a failed create: quota re-checked with this VM's own cores released."""
        was = vm.holds_quota
        vm.holds_quota = False
        try:
            self.quota.check(sub, vm.location, sku, vm.spot, cat.sku_vcpus(sku))
        finally:
            vm.holds_quota = was

    def update(self, sub: str, vm: VirtualMachine, body: dict, p: dict, sku: dict, nic_ids: list[str]) -> None:
        """Apply an accepted re-PUT (after :meth:`check_update_quota`)."""
        vcpus = cat.sku_vcpus(sku)
        vm.holds_quota = True
        created_props = vm.body.get("properties", {})
        new_body = self.store_body(sub, vm.rg, vm.name, body, p, sku, vm.vm_id, vm.created)
        new_body["properties"]["timeCreated"] = created_props.get("timeCreated")
        vm.body = new_body
        vm.size = sku["name"]
        vm.vcpus = vcpus
        vm.family = cat.sku_family(sku)
        for nid in vm.nic_ids:
            if nid.lower() not in {n.lower() for n in nic_ids}:
                self.network.detach(nid)
        vm.nic_ids = nic_ids
        vm.nic_delete = _nic_delete_options(p["nics"], nic_ids)
        for nid in nic_ids:
            self.network.attach(nid, vm.id(sub))
        vm.failure = None

    def set_provisioning_state(self, vm: VirtualMachine, value: str) -> None:
        vm.provisioning_state = value
        if value == "Succeeded":
            self.newly_succeeded.append(vm)

    def mark_succeeded(self, vm: VirtualMachine) -> None:
        self.set_provisioning_state(vm, "Succeeded")
        vm.power_state = "running"

    def mark_failed(self, vm: VirtualMachine, err: ARMError) -> None:
        # A VM whose allocation failed stays as a resource in provisioningState Failed
        # (as in ARM) but holds no cores; the client deletes it.
        vm.provisioning_state = "Failed"
        vm.power_state = "stopped"
        vm.holds_quota = False
        vm.failure = {"code": err.code, "message": err.message}

    def remove(self, vm: VirtualMachine) -> None:
        """Finish a delete: free quota, cascade-delete NICs/disk with deleteOption Delete
        (https://learn.microsoft.com/rest/api/compute/virtual-machines/delete)."""
        vm.holds_quota = False
        if self.vms.pop(vm.key, None) is not None:
            self.quota.held.forget(vm)
            self._list_json.pop(vm.key, None)
            # its stored body is never changed (only replaced), and Resource Graph copies what it reads of it
            self.removed.append((vm.created, self.clock.time(), self.view(vm, shared=True)))
        for nid in vm.nic_ids:
            if vm.nic_delete.get(nid):
                self.network.remove_by_id(nid)
            else:
                self.network.detach(nid)

    def evict(self, vm: VirtualMachine, reason: str = "manual") -> dict:
        """Spot eviction: policy Delete removes the VM (and NICs with deleteOption Delete);
        Deallocate keeps it deallocated.  Either way it frees its cores."""
        policy = (vm.eviction_policy or "Deallocate")
        record = {"resource_group": vm.rg, "name": vm.name, "size": vm.size, "zones": list(vm.zones),
                  "priority": vm.priority, "eviction_policy": policy, "time": iso(self.clock.time()),
                  "reason": reason}
        vm.evicted = True
        if policy.lower() == "delete":
            self.remove(vm)
            for tell in self.on_evicted:
                tell(vm)
        else:
            vm.holds_quota = False
            vm.power_state = "deallocated"
        self.evictions.append(record)
        return record

    # ------------------------------------------------------------------ views
    def view(self, vm: VirtualMachine, expand: str | None = None, shared: bool = False) -> dict:
        """The VM as GET returns it. `shared`: its nested values are the stored body's own, for a reply
        serialized at once (a list page of thousands of VMs), never kept or changed."""
        out = dict(vm.body) if shared else clone_json(vm.body)
        props = out["properties"] = dict(out.get("properties") or {}) if shared else out.setdefault("properties", {})
        props["provisioningState"] = vm.provisioning_state
        if expand and "instanceview" in expand.lower():
            props["instanceView"] = self.instance_view(vm)
        return out

    def encoded(self, vm: VirtualMachine, expand: str | None = None) -> bytes:
        """`view(vm, expand)` as a reply's body (Response.body_bytes), serialized now, under the dispatcher's lock:
        without `expand`, the list page's kept text (list_json)."""
        if expand:
            return json_bytes(self.view(vm, expand, shared=True))
        return self.list_json(vm).encode("utf-8")

    def list_json(self, vm: VirtualMachine) -> str:
        """`view(vm)` as a list page serializes it (json.dumps, separators without spaces), kept per VM while
        its body (replaced, never changed in place) and provisioning state stay the same."""
        hit = self._list_json.get(vm.key)
        if hit is None or hit[0] is not vm.body or hit[1] != vm.provisioning_state:
            text = json.dumps(self.view(vm, shared=True), separators=(",", ":"))
            hit = self._list_json[vm.key] = (vm.body, vm.provisioning_state, text)
        return hit[2]

    def instance_view(self, vm: VirtualMachine) -> dict:
        t = iso(self.clock.time())
        ps = vm.provisioning_state.lower()
        statuses = [{"code": f"ProvisioningState/{ps}", "level": "Error" if ps == "failed" else "Info",
                     "displayStatus": f"Provisioning {ps}", "time": t}]
        if vm.failure:
            statuses[0]["message"] = vm.failure["message"]
        disp = {"running": "VM running", "deallocated": "VM deallocated", "starting": "VM starting",
                "stopped": "VM stopped"}.get(vm.power_state, vm.power_state)
        statuses.append({"code": f"PowerState/{vm.power_state}", "level": "Info", "displayStatus": disp})
        return {"computerName": (vm.body.get("properties", {}).get("osProfile") or {}).get("computerName"),
                "statuses": statuses}

    def snapshot_vm(self, sub: str, vm: VirtualMachine) -> dict:
        return {"resource_group": vm.rg, "name": vm.name, "id": vm.id(sub), "location": vm.location,
                "size": vm.size, "zones": list(vm.zones), "priority": vm.priority,
                "provisioning_state": vm.provisioning_state, "power_state": vm.power_state,
                "vcpus": vm.vcpus, "family": vm.family, "holds_quota": vm.holds_quota,
                "nics": list(vm.nic_ids), "evicted": vm.evicted, "failure": vm.failure,
                "tags": dict(vm.body.get("tags") or {})}


def _nic_delete_options(refs: list, nic_ids: list[str]) -> dict[str, bool]:
    """NIC id -> cascade on VM delete (``properties.deleteOption == "Delete"``; default Detach)."""
    out = {}
    for ref in refs:
        rid = (ref or {}).get("id", "")
        opt = (((ref or {}).get("properties") or {}).get("deleteOption") or "Detach")
        for nid in nic_ids:
            if nid.lower() == rid.lower():
                out[nid] = opt.lower() == "delete"
    return out


def _digest(s: Any) -> str:
    return hashlib.sha256(str(s).encode()).hexdigest()

