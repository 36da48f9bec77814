"""URL table for the Retail Prices API (host prices.azure.com in-process; same path on the server)."""
from __future__ import annotations

from . import responses as r

url_patterns = [
    ("GET", r"/api/retail/prices", r.list_prices, "prices.list"),
]
