"""Retail Prices API errors.  The real API answers bad filters with a 400 and a
plain JSON error (unverified shape); Karpenter treats any non-200 as an error
(karpenter-provider-azure v1.14.0 pkg/providers/pricing/client/pricingapi.go GetProductsPricePages;
https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)."""
from __future__ import annotations

from ..arm import ARMError

__all__ = ["ARMError", "invalid_filter"]


def invalid_filter(detail: str) -> ARMError:
    return ARMError("BadRequest", f"Invalid OData filter: {detail}", 400)
