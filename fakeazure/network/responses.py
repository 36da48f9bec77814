"""HTTP handlers for Microsoft.Network network interfaces (fake-azure.md §3)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..arm import Request, Response, paginate

if TYPE_CHECKING:  # pragma: no cover
    from ..state import FakeAzure


def _ctx(p: dict, op: str, method: str) -> dict:
    return {"operation": op, "resource_group": p["rg"], "name": p["name"], "method": method}


def nic_operation_name(state: "FakeAzure", p: dict, method: str) -> str:
    if method == "PUT":
        return "nic.update" if state.network.get(p["rg"], p["name"]) else "nic.create"
    return {"GET": "nic.get", "DELETE": "nic.delete", "PATCH": "nic.update"}.get(method, "nic.other")


def put_nic(state: "FakeAzure", req: Request, p: dict) -> Response:
    """201 (new) / 200 (update) with provisioningState Succeeded and assigned IPs, plus
    an Azure-AsyncOperation the client polls once (NRP behaviour, fake-azure.md §3)."""
    sub = state.subscription_id
    op_name = req.operation
    async_err = state._operation_error(state._provision_faults(_ctx(p, op_name, "PUT"), None, None))
    nic, created = state.network.create_or_update(sub, p["rg"], p["name"], req.json())
    if async_err is not None:
        nic.body["properties"]["provisioningState"] = "Failed"
    op = state._start_operation(op_name, "Microsoft.Network", nic.location, nic.id(sub), async_err, None,
                                after_polls=1)
    status = 201 if created else 200
    # lro="sync" keeps 201/200: NRP answers with the final body either way (fake-azure.md §3).
    return state._lro_reply(req, op, status, state.network.view(nic), done_status=status)


def get_nic(state: "FakeAzure", req: Request, p: dict) -> Response:
    return Response(200, state.network.view(state.network.require(p["rg"], p["name"])))


def patch_nic(state: "FakeAzure", req: Request, p: dict) -> Response:
    nic = state.network.require(p["rg"], p["name"])
    body = req.json() or {}
    if "tags" in body:
        nic.body["tags"] = dict(body.get("tags") or {})
    return Response(200, state.network.view(nic))


def delete_nic(state: "FakeAzure", req: Request, p: dict) -> Response:
    """204 when missing (verified SDK behaviour, fake-azure.md §3); 400 NicInUse while a VM
    holds it; otherwise 202 + Azure-AsyncOperation + Location."""
    sub = state.subscription_id
    nic = state.network.get(p["rg"], p["name"])
    if nic is None:
        return Response(204)
    state.network.delete_check(sub, nic)
    async_err = state._operation_error(state._provision_faults(_ctx(p, "nic.delete", "DELETE"), None, None))
    nic.body["properties"]["provisioningState"] = "Deleting"

    def finish(o, nic=nic):
        if o.error is None:
            state.network.remove(nic)
        else:
            nic.body["properties"]["provisioningState"] = "Succeeded"

    op = state._start_operation("nic.delete", "Microsoft.Network", nic.location, nic.id(sub), async_err, finish,
                                after_polls=1)
    return state._lro_reply(req, op, 202, location_header=True)


def _page(state: "FakeAzure", req: Request, nics) -> Response:
    return Response(200, paginate(req, [state.network.view(n) for n in nics], state.page_size))


def list_nics_rg(state: "FakeAzure", req: Request, p: dict) -> Response:
    state._require_rg(p["rg"])
    return _page(state, req, state.network.list(p["rg"]))


def list_nics_all(state: "FakeAzure", req: Request, p: dict) -> Response:
    return _page(state, req, state.network.list())
