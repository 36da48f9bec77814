"""HTTP handlers for Microsoft.Compute.  Each takes ``(ctx, request, params)`` and
returns a :class:`~fakeazure.arm.Response`; errors are raised as ``ARMError`` and
turned into the ARM envelope by the dispatcher (``fakeazure.dispatch``)."""
from __future__ import annotations

import json
import pathlib
import re
from typing import TYPE_CHECKING

from .. import catalog as cat
from ..arm import ARMError, Request, Response, check_shape, paginate
from . import exceptions as exc
from .models import fault_ctx, is_spot
from .skus import ENCODED_PAGES

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ArmContext
    from .models import ComputeModel

SHAPES = json.loads((pathlib.Path(__file__).resolve().parents[1] / "catalogs" / "shapes" / "compute.json").read_text())
_LOCATION_FILTER = re.compile(r"^\s*location\s+eq\s+'([^']*)'\s*$", re.IGNORECASE)


# ----------------------------------------------------------------------------- SKUs & usages


def list_skus(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """ResourceSkus_List (https://learn.microsoft.com/rest/api/compute/resource-skus/list): optional
    ``$filter=location eq '<r>'``
    (the only filter the service supports), paged with an absolute nextLink."""
    flt = req.query_ci.get("$filter")
    region = None
    if flt:
        m = _LOCATION_FILTER.match(flt)
        if not m:
            raise ARMError("InvalidFilterInQueryString",
                           f"The filter '{flt}' is not valid. Only location filter is supported currently.", 400)
        region = m.group(1).lower()
    skus = ctx.compute.skus.list(region)
    return Response(200, ENCODED_PAGES.of(paginate(req, skus, ctx.page_size)))


def list_usages(ctx: "ArmContext", req: Request, p: dict) -> Response:
    rows = ctx.compute.quota.usage_rows(p["location"])
    return Response(200, paginate(req, rows, ctx.page_size))


# ----------------------------------------------------------------------------- VMs


def _vm_ctx(p: dict, parsed: dict, op: str) -> dict:
    return fault_ctx(op, p["rg"], p["name"], parsed["location"], parsed["size"], parsed["zones"],
                     parsed["priority"], "PUT")


def vm_operation_name(ctx: "ArmContext", p: dict, method: str) -> str:
    """`vm.create` for a VM that does not exist yet, else `vm.update`; `vm.get`, `vm.delete`."""
    if method == "PUT":
        return "vm.update" if ctx.compute.get(p["rg"], p["name"]) else "vm.create"
    return {"GET": "vm.get", "DELETE": "vm.delete", "PATCH": "vm.update"}.get(method, "vm.other")


def put_vm(ctx: "ArmContext", req: Request, p: dict) -> Response:
    sub, rg, name = ctx.subscription, p["rg"], p["name"]
    compute = ctx.compute
    body = req.json()
    check_shape(body, SHAPES["vm"])
    parsed = compute.parse_put(body)
    existing = compute.get(rg, name)
    fctx = _vm_ctx(p, parsed, req.operation)
    # what body rules match (faults.body_matches: an Azure Policy deny on a field of the VM)
    fctx.update(body=body, path=req.path)
    ctx.faults.check_request(fctx, body_pass=True)
    region = parsed["location"].lower()

    if existing is not None:
        compute.check_update(existing, parsed)
        sku = compute.usable_sku(sub, rg, name, parsed)
        nic_ids = compute.check_nics(sub, rg, name, parsed["nics"])
        async_err = ctx.faults.provision(fctx, sku, parsed)
        compute.check_update_quota(sub, existing, sku)
        ctx.lro.carry(async_err)  # after quota: a quota 409 comes first, as with an operation
        compute.update(sub, existing, body, parsed, sku, nic_ids)
        existing.provisioning_state = "Updating"
        op = ctx.lro.start("vm.update", "Microsoft.Compute", region, existing.id(sub), async_err,
                           lambda o, vm=existing: _finish_create(compute, vm, o))
        return ctx.lro.reply(req, op, 200, compute.encoded(existing))

    sku = compute.validate_new(sub, rg, name, parsed)
    nic_ids = compute.check_nics(sub, rg, name, parsed["nics"])
    async_err = ctx.faults.provision(fctx, sku, parsed)
    compute.quota.check(sub, region, sku, is_spot(parsed["priority"]), cat.sku_vcpus(sku))
    ctx.lro.carry(async_err)  # after quota: a quota 409 comes first, as with an operation
    vm = compute.create(sub, rg, name, body, parsed, sku, nic_ids)
    op = ctx.lro.start("vm.create", "Microsoft.Compute", region, vm.id(sub), async_err,
                       lambda o, vm=vm: _finish_create(compute, vm, o))
    vm.operation = op.id
    return ctx.lro.reply(req, op, 201, compute.encoded(vm))


def _finish_create(compute: "ComputeModel", vm, op) -> None:
    if compute.get(vm.rg, vm.name) is not vm:
        return  # deleted meanwhile
    if vm.provisioning_state == "Deleting":
        if op.error is not None:  # a delete is under way: keep showing Deleting
            vm.holds_quota = False
        return
    if op.error is not None:
        compute.mark_failed(vm, op.error)
    else:
        compute.mark_succeeded(vm)


def get_vm(ctx: "ArmContext", req: Request, p: dict) -> Response:
    vm = ctx.compute.require(p["rg"], p["name"])
    return Response(200, ctx.compute.encoded(vm, req.query_ci.get("$expand")))


def patch_vm(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """VirtualMachines_Update: only tags are merged (the SDK accepts only 200 here)."""
    vm = ctx.compute.require(p["rg"], p["name"])
    body = req.json() or {}
    check_shape(body, SHAPES["patch"])
    if "tags" in body:
        # a new body, never a change to the stored one (ComputeModel.list_json keys on the body)
        vm.body = {**vm.body, "tags": dict(body.get("tags") or {})}
    return Response(200, ctx.compute.view(vm))


def delete_vm(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """202 + Azure-AsyncOperation + Location while deleting; 204 when missing
    (https://learn.microsoft.com/rest/api/compute/virtual-machines/delete).
    ``forceDeletion`` is accepted and ignored."""
    sub = ctx.subscription
    compute = ctx.compute
    vm = compute.get(p["rg"], p["name"])
    if vm is None:
        return Response(204)
    async_err = ctx.lro.carry(ctx.faults.provision(vm.fault_ctx("vm.delete", "DELETE")))
    previous = vm.provisioning_state
    vm.provisioning_state = "Deleting"

    def finish(o, vm=vm, previous=previous):
        if o.error is not None:
            compute.set_provisioning_state(vm, previous)
        else:
            compute.remove(vm)

    op = ctx.lro.start("vm.delete", "Microsoft.Compute", vm.location, vm.id(sub), async_err, finish)
    return ctx.lro.reply(req, op, 202, location_header=True)


def _vm_page(ctx: "ArmContext", req: Request, vms) -> Response:
    """A page of VMs, serialized here, under the dispatcher's lock, so the views can share the stored bodies'
    values (a copy of every VM per list was most of a list's cost at thousands of VMs)."""
    expand = req.query_ci.get("$expand")
    page = paginate(req, list(vms), ctx.page_size)
    if expand:
        page["value"] = [ctx.compute.view(vm, expand, shared=True) for vm in page["value"]]
        return Response(200, json.dumps(page, separators=(",", ":")).encode("utf-8"))
    # each VM's JSON as json.dumps writes it inside the page, kept until its body or state changes (the
    # garbage collectors list every VM every 2 minutes)
    text = '{"value":[' + ",".join(ctx.compute.list_json(vm) for vm in page["value"]) + "]"
    if "nextLink" in page:
        text += ',"nextLink":' + json.dumps(page["nextLink"])
    return Response(200, (text + "}").encode("utf-8"))


def list_vms_rg(ctx: "ArmContext", req: Request, p: dict) -> Response:
    ctx.resource_groups.require(p["rg"])
    return _vm_page(ctx, req, ctx.compute.list(p["rg"]))


def list_vms_all(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return _vm_page(ctx, req, ctx.compute.list())


# ----------------------------------------------------------------------------- VM extensions


def _parent(ctx: "ArmContext", p: dict):
    vm = ctx.compute.get(p["rg"], p["name"])
    if vm is None:
        raise ARMError("ParentResourceNotFound",
                       f"Can not perform requested operation on nested resource. Parent resource '{p['name']}' "
                       f"not found.", 404)
    return vm


def _ext_view(vm, ext_name: str) -> dict:
    ext = vm.extensions[ext_name.lower()]
    out = dict(ext["body"])
    out.setdefault("properties", {})["provisioningState"] = ext["state"]
    return out


def put_extension(ctx: "ArmContext", req: Request, p: dict) -> Response:
    sub = ctx.subscription
    vm = _parent(ctx, p)
    body = req.json() or {}
    check_shape(body, SHAPES["extension"])
    props = dict(body.get("properties") or {})
    props.pop("protectedSettings", None)  # never returned, like customData
    ext_id = f"{vm.id(sub)}/extensions/{p['ext']}"
    key = p["ext"].lower()
    created = key not in vm.extensions
    async_err = ctx.lro.carry(ctx.faults.provision(vm.fault_ctx("vmext.create", "PUT")))
    vm.extensions[key] = {
        "state": "Creating" if created else "Updating",
        "body": {"name": p["ext"], "id": ext_id, "type": "Microsoft.Compute/virtualMachines/extensions",
                 "location": body.get("location", vm.location), "tags": body.get("tags"), "properties": props}}

    def finish(o, vm=vm, key=key):
        if key in vm.extensions:
            vm.extensions[key]["state"] = "Failed" if o.error is not None else "Succeeded"

    op = ctx.lro.start("vmext.create", "Microsoft.Compute", vm.location, ext_id, async_err, finish)
    return ctx.lro.reply(req, op, 201 if created else 200, _ext_view(vm, p["ext"]))


def get_extension(ctx: "ArmContext", req: Request, p: dict) -> Response:
    vm = _parent(ctx, p)
    if p["ext"].lower() not in vm.extensions:
        raise exc.extension_not_found(vm.rg, vm.name, p["ext"])
    return Response(200, _ext_view(vm, p["ext"]))


def delete_extension(ctx: "ArmContext", req: Request, p: dict) -> Response:
    vm = ctx.compute.get(p["rg"], p["name"])
    if vm is None or p["ext"].lower() not in vm.extensions:
        return Response(204)
    vm.extensions.pop(p["ext"].lower(), None)
    return Response(200)


def list_extensions(ctx: "ArmContext", req: Request, p: dict) -> Response:
    vm = _parent(ctx, p)
    return Response(200, {"value": [_ext_view(vm, k) for k in sorted(vm.extensions)]})


# ----------------------------------------------------------------------------- community galleries


def list_gallery_image_versions(ctx: "ArmContext", req: Request, p: dict) -> Response:
    versions = ctx.galleries.list_versions(p["location"], p["gallery"], p["image"])
    return Response(200, paginate(req, versions, ctx.page_size))


def get_gallery_image_version(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return Response(200, ctx.galleries.get_version(p["location"], p["gallery"], p["image"], p["version"]))
