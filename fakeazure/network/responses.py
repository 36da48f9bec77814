"""HTTP handlers for Microsoft.Network: network interfaces
(https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces) and the read-only
topology Karpenter reads (VNets, subnets, NSGs, load balancers; network/topology.py)."""
from __future__ import annotations

import json
import pathlib
from typing import TYPE_CHECKING

from ..arm import Request, Response, check_shape, json_bytes, paginate, resource_not_found

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ArmContext


SHAPES = json.loads((pathlib.Path(__file__).resolve().parents[1] / "catalogs" / "shapes" / "network.json").read_text())


def _fault_ctx(p: dict, op: str, method: str) -> dict:
    return {"operation": op, "resource_group": p["rg"], "name": p["name"], "method": method}


def nic_operation_name(ctx: "ArmContext", p: dict, method: str) -> str:
    """`nic.create` for a NIC that does not exist yet, else `nic.update`; `nic.get`, `nic.delete`."""
    if method == "PUT":
        return "nic.update" if ctx.network.get(p["rg"], p["name"]) else "nic.create"
    return {"GET": "nic.get", "DELETE": "nic.delete", "PATCH": "nic.update"}.get(method, "nic.other")


def put_nic(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """201 (new) / 200 (update) with provisioningState Succeeded and assigned IPs, plus
    an Azure-AsyncOperation the client polls once (NRP behaviour,
    https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces/create-or-update)."""
    sub = ctx.subscription
    op_name = req.operation
    body = req.json()
    check_shape(body, SHAPES["nic"])
    async_err = ctx.lro.carry(ctx.faults.provision(_fault_ctx(p, op_name, "PUT")))
    nic, created = ctx.network.create_or_update(sub, p["rg"], p["name"], body)
    if async_err is not None:
        nic.body["properties"]["provisioningState"] = "Failed"
    op = ctx.lro.start(op_name, "Microsoft.Network", nic.location, nic.id(sub), async_err, None, after_polls=1)
    status = 201 if created else 200
    # lro="sync" keeps 201/200: NRP answers with the final body either way
    # (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces/create-or-update).
    return ctx.lro.reply(req, op, status, json_bytes(ctx.network.view(nic, shared=True)), done_status=status)


def get_nic(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return Response(200, json_bytes(ctx.network.view(ctx.network.require(p["rg"], p["name"]), shared=True)))


def patch_nic(ctx: "ArmContext", req: Request, p: dict) -> Response:
    nic = ctx.network.require(p["rg"], p["name"])
    body = req.json() or {}
    check_shape(body, SHAPES["patch"])
    if "tags" in body:
        nic.body["tags"] = dict(body.get("tags") or {})
    return Response(200, ctx.network.view(nic))


def delete_nic(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """204 when missing (verified SDK behaviour,
    https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces/delete); 400
    NicInUse while a VM
    holds it; otherwise 202 + Azure-AsyncOperation + Location."""
    sub = ctx.subscription
    network = ctx.network
    nic = network.get(p["rg"], p["name"])
    if nic is None:
        return Response(204)
    network.delete_check(sub, nic)
    async_err = ctx.lro.carry(ctx.faults.provision(_fault_ctx(p, "nic.delete", "DELETE")))
    nic.body["properties"]["provisioningState"] = "Deleting"

    def finish(o, nic=nic):
        if o.error is None:
            network.remove(nic)
        else:
            nic.body["properties"]["provisioningState"] = "Succeeded"

    op = ctx.lro.start("nic.delete", "Microsoft.Network", nic.location, nic.id(sub), async_err, finish,
                       after_polls=1)
    return ctx.lro.reply(req, op, 202, location_header=True)


def _page(ctx: "ArmContext", req: Request, nics) -> Response:
    return Response(200, paginate(req, [ctx.network.view(n) for n in nics], ctx.page_size))


def list_nics_rg(ctx: "ArmContext", req: Request, p: dict) -> Response:
    ctx.resource_groups.require(p["rg"])
    return _page(ctx, req, ctx.network.list(p["rg"]))


def list_nics_all(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return _page(ctx, req, ctx.network.list())


# ----------------------------------------------------------------------------- read-only topology


def get_vnet(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return Response(200, ctx.topology.vnet(ctx.subscription, p["rg"], p["vnet"]))


def get_subnet(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return Response(200, ctx.topology.subnet(ctx.subscription, p["rg"], p["vnet"], p["subnet"]))


def list_nsgs(ctx: "ArmContext", req: Request, p: dict) -> Response:
    ctx.resource_groups.require(p["rg"])
    return Response(200, paginate(req, ctx.topology.nsgs(ctx.subscription, p["rg"]), ctx.page_size))


def _named(items: list[dict], kind: str, p: dict) -> Response:
    """One of a resource group's read-only resources by name (ARM names are case-insensitive)."""
    for item in items:
        if item["name"].lower() == p["name"].lower():
            return Response(200, item)
    raise resource_not_found(f"Microsoft.Network/{kind}/{p['name']}", p["rg"])


def get_nsg(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return _named(ctx.topology.nsgs(ctx.subscription, p["rg"]), "networkSecurityGroups", p)


def list_load_balancers(ctx: "ArmContext", req: Request, p: dict) -> Response:
    ctx.resource_groups.require(p["rg"])
    return Response(200, paginate(req, ctx.topology.load_balancers(ctx.subscription, p["rg"]), ctx.page_size))


def get_load_balancer(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return _named(ctx.topology.load_balancers(ctx.subscription, p["rg"]), "loadBalancers", p)
