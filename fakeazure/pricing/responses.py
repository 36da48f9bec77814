"""HTTP handler for ``GET /api/retail/prices``
(https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..arm import ARMError, Request, Response, with_query
from .models import compile_filter

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ArmContext


def list_prices(ctx: "ArmContext", req: Request, p: dict) -> Response:
    api_version = req.query_ci.get("api-version", "")
    # Values compare case-sensitively in 2023-01-01-preview
    # (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices).
    pred = compile_filter(req.query_ci.get("$filter"), case_sensitive=api_version.startswith("2023-01-01"))
    items = [it for it in ctx.prices.items() if pred(it)]
    try:
        skip = max(0, int(req.query_ci.get("$skip", "0") or 0))
    except ValueError:
        raise ARMError("BadRequest", "Invalid $skip value.", 400) from None
    size = ctx.prices.page_size
    page = items[skip:skip + size]
    nxt = None
    if skip + size < len(items):
        params = [(k, v) for k, v in req.query_list if k.lower() != "$skip"] + [("$skip", str(skip + size))]
        base = req.base_url
        if req.host == "prices.azure.com" and req.scheme == "https" and ":" not in req.netloc:
            # the real service's NextPageLink form
            # (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)
            base = "https://prices.azure.com:443"
        nxt = with_query(base, req.path, params)
    # PascalCase envelope, camelCase items (karpenter-provider-azure v1.14.0
    # pkg/providers/pricing/client/pricingapi_types.go).
    return Response(200, {"BillingCurrency": "USD", "CustomerEntityId": "Default",
                          "CustomerEntityType": "Retail", "Items": page, "NextPageLink": nxt, "Count": len(page)})
