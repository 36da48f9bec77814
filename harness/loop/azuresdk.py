"""How the provider talks to ARM through the Azure SDK: the retry policy it keeps, the error text it
logs, and the custom data that carries the kubelet's --node-labels.

Split from harness/loop/azure.py (the provider) so that file holds decisions, this one the wire.
"""
from __future__ import annotations

import base64
import hashlib
import json

from azure.core.exceptions import HttpResponseError

from fakeazure.transport import InProcessResponse

# The Azure SDK retry policy the provider keeps at its defaults (provider v1.14.0
# pkg/utils/clientopts/armopts.go DefaultRetryOpts; azure-sdk-for-go sdk/azcore v1.22.0
# runtime/policy_retry.go setDefaults, calcDelay): 3 retries on 408/429/500/502/503/504, delay
# (2^try - 1) * 800 ms with a [0.8, 1.3) jitter, capped at 60 s; a Retry-After header wins, and one
# beyond the cap ends the retries. The harness advances its clock instead of sleeping.
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_RETRIES = 3
RETRY_DELAY = 0.8
MAX_RETRY_DELAY = 60.0


def bootstrap_custom_data(labels: dict[str, str]) -> str:
    """Custom data carrying the kubelet's --node-labels as the KUBELET_NODE_LABELS variable (provider
    v1.14.0 pkg/providers/imagefamily/bootstrap/cse_cmd.sh.gtpl, filled by aksbootstrap.go;
    azure-provider.md §4.4). Harness simplification: only that line, not the whole script."""
    line = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return base64.b64encode(f"KUBELET_NODE_LABELS={line}\n".encode()).decode()


def parse_bootstrap(custom_data: str) -> dict[str, str]:
    """What the node's bootstrap reads back from custom data: the --node-labels map."""
    text = base64.b64decode(custom_data).decode()
    for line in text.splitlines():
        if line.startswith("KUBELET_NODE_LABELS="):
            pairs = line.split("=", 1)[1]
            return dict(p.split("=", 1) for p in pairs.split(",") if p)
    return {}


def retry_after(e: HttpResponseError) -> float | None:
    resp = getattr(e, "response", None)
    value = resp.headers.get("Retry-After") if resp is not None and getattr(resp, "headers", None) else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def error_code(e: HttpResponseError) -> str:
    err = getattr(e, "error", None)
    return getattr(err, "code", None) or ""


def error_text(e: HttpResponseError) -> str:
    err = getattr(e, "error", None)
    msg = getattr(err, "message", None) or str(e)
    return f"{error_code(e)}: {msg}" if error_code(e) else msg


def lower_rg(vm_id: str) -> str:
    parts = vm_id.split("/")
    for i, p in enumerate(parts):
        if p.lower() == "resourcegroups" and i + 1 < len(parts):
            parts[i + 1] = parts[i + 1].lower()
    return "/".join(parts)


# -- the SKU list ------------------------------------------------------------------------------------
# The VM SKUs of a ResourceSkus_List page, as the SDK's models give them (`as_dict()`), by the page's
# response body: the SDK parses the same bytes into the same models, so a page it has parsed once in
# this process is not parsed again. Every page is still requested through the SDK's pipeline (policies,
# paging, error mapping, the fake's faults and request log); only the deserialization of a body seen
# before is skipped. Bounded: cleared when it holds more than _SKU_PAGES_MAX pages.
_SKU_PAGES: dict[bytes, tuple[str | None, list[dict]]] = {}
_SKU_PAGES_MAX = 512


def list_vm_skus(compute, region: str) -> list[dict]:
    """`compute.resource_skus.list(filter="location eq '<region>'")` (azure-mgmt-compute 39.0.0
    ResourceSkusOperations.list; the provider lists the region's SKUs through skewer: provider v1.14.0
    pkg/providers/instancetype/instancetypes.go), keeping resourceType virtualMachines, as plain
    dicts. A page whose body was parsed before is handed to the SDK's paging as a page with no items
    and the same nextLink (azure-core's raw_response_hook runs before the page is deserialized), and
    its SKUs come from the cache. The returned dicts are shared between runs: read them, never change them."""
    seen: list[tuple[bytes, tuple[str | None, list[dict]] | None]] = []

    def hook(pipeline_response) -> None:
        http = pipeline_response.http_response
        if http.status_code != 200:
            return
        key = hashlib.sha256(http.body()).digest()
        hit = _SKU_PAGES.get(key)
        seen.append((key, hit))
        if hit is not None:
            page = {"value": [], "nextLink": hit[0]} if hit[0] else {"value": []}
            pipeline_response.http_response = InProcessResponse(
                http.request, 200, dict(http.headers), json.dumps(page).encode())

    out: list[dict] = []
    pages = compute.resource_skus.list(filter=f"location eq '{region}'", raw_response_hook=hook).by_page()
    for page in pages:
        items = list(page)
        key, hit = seen[-1]
        if hit is None:
            hit = (pages.continuation_token, [s.as_dict() for s in items if s.resource_type == "virtualMachines"])
            if len(_SKU_PAGES) >= _SKU_PAGES_MAX:
                _SKU_PAGES.clear()
            _SKU_PAGES[key] = hit
        out.extend(hit[1])
    return out
