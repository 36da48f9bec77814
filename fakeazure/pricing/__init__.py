"""Azure Retail Prices API (prices.azure.com) and a Karpenter-style client."""
from .client import PricingError, fetch_prices, karpenter_filter

__all__ = ["PricingError", "fetch_prices", "karpenter_filter"]
