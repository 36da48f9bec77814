"""URL table for Microsoft.ResourceGraph (a tenant-level route: no subscription in the path)."""
from __future__ import annotations

from . import responses as r

url_patterns = [
    ("POST", r"/providers/Microsoft\.ResourceGraph/resources", r.query_resources, "resourcegraph.query"),
]
