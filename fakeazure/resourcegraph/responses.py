"""HTTP handler for ``POST /providers/Microsoft.ResourceGraph/resources`` (the Resources query).
REST reference: https://learn.microsoft.com/rest/api/azureresourcegraph/resourcegraph/resources/resources
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..arm import ARMError, Request, Response
from .models import invalid_query

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ArmContext

DEFAULT_TOP = 1000  # ARG's page size without $top (also its maximum)


def _bad(message: str) -> ARMError:
    # (harness assumption, not in reference: ARG's wording for a malformed request body)
    return ARMError("BadRequest", message, 400)


def query_resources(ctx: "ArmContext", req: Request, p: dict) -> Response:
    body = req.json()
    if not isinstance(body, dict):
        raise _bad("The request body must be a JSON object.")
    if not isinstance(body.get("query"), str):
        raise invalid_query("'query' must be a string")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise _bad("'options' must be an object.")
    subs = body.get("subscriptions")
    if subs is not None and not isinstance(subs, list):
        raise _bad("'subscriptions' must be an array.")
    rows = ctx.resource_graph.query(body["query"], subs)
    try:
        top = int(options.get("$top") or DEFAULT_TOP)
        start = int(options.get("$skipToken") or 0)
    except (TypeError, ValueError):
        raise _bad("'$top' and '$skipToken' must be integers as returned by the service.") from None
    top = max(1, min(top, DEFAULT_TOP))
    start = max(0, start) + int(options.get("$skip") or 0)
    page = rows[start:start + top]
    out = {"totalRecords": len(rows), "count": len(page), "data": page, "facets": [],
           "resultTruncated": "false"}
    if start + top < len(rows):
        out["$skipToken"] = str(start + top)
    return Response(200, out)
