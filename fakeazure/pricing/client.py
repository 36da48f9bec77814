"""A Retail Prices client that pages and classifies the way Karpenter does
(karpenter-provider-azure v1.14.0 pkg/providers/pricing/client/pricingapi.go GetProductsPricePages,
pkg/providers/pricing/pricing.go processPage;
https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices).  Works against
the in-process mock
(default base URL) or a loopback server (pass its URL)."""
from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

import requests

from ..guard import refuse_real_azure

DEFAULT_BASE = "https://prices.azure.com"
API_VERSION = "2023-01-01-preview"


class PricingError(RuntimeError):
    """A non-200 answer from the prices API (Karpenter treats any non-200 as an error)."""


def karpenter_filter(region: str) -> str:
    return ("priceType eq 'Consumption' and currencyCode eq 'USD' and serviceFamily eq 'Compute' and "
            f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}'")


def _query_escape(s: str) -> str:
    # Go's url.QueryEscape: spaces become '+', everything but [A-Za-z0-9-_.~] is %-escaped.
    return quote_plus(s, safe="~")


def fetch_prices(region: str, session_or_base_url: Any = None, *, max_pages: int = 1000
                 ) -> dict[str, dict[str, float]]:
    """Page through ``/api/retail/prices`` for ``region``; return
    ``{armSkuName: {"on-demand": price, "spot": price}}`` (keys present when priced).

    Items whose productName ends with " Windows" or meterName with " Low Priority" are
    skipped; skuName ending with " Spot" is the spot price (karpenter-provider-azure v1.14.0
    pkg/providers/pricing/pricing.go processPage, categorizePrices).

    Every page URL on a real Azure host (the default base) raises
    :class:`~fakeazure.guard.RealAzureBlocked` unless ``mock_azure`` is active."""
    base = DEFAULT_BASE
    session = None
    if isinstance(session_or_base_url, str):
        base = session_or_base_url.rstrip("/")
    elif session_or_base_url is not None:
        session = session_or_base_url
        base = getattr(session_or_base_url, "base_url", DEFAULT_BASE)
    own = session is None
    session = session or requests.Session()
    url = f"{base}/api/retail/prices?api-version={API_VERSION}&$filter={_query_escape(karpenter_filter(region))}"
    out: dict[str, dict[str, float]] = {}
    try:
        for _ in range(max_pages):
            refuse_real_azure(url)
            resp = session.get(url, timeout=30)
            if resp.status_code != 200:
                raise PricingError(f"prices API returned {resp.status_code}: {resp.text[:300]}")
            data = resp.json()
            for item in data.get("Items") or []:
                if str(item.get("productName", "")).endswith(" Windows"):
                    continue
                if str(item.get("meterName", "")).endswith(" Low Priority"):
                    continue
                sku = item.get("armSkuName")
                if not sku:
                    continue
                kind = "spot" if str(item.get("skuName", "")).endswith(" Spot") else "on-demand"
                out.setdefault(sku, {})[kind] = float(item.get("retailPrice"))
            url = data.get("NextPageLink") or ""
            if not url:
                break
        else:
            raise PricingError(f"prices API: more than {max_pages} pages")
    finally:
        if own:
            session.close()
    return out
