"""How the provider talks to ARM through the Azure SDK: the retry policy it keeps, the error text it
logs, and the custom data that carries the kubelet's --node-labels.

Split from harness/loop/azure.py (the provider) so that file holds decisions, this one the wire.
"""
from __future__ import annotations

import base64

from azure.core.exceptions import HttpResponseError

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
