"""How the provider talks to ARM through the Azure SDK: the retry policy it keeps, the error text it
logs, and the custom data that carries the kubelet's --node-labels.

Split from harness/loop/azure/provider.py (the provider) so that file holds decisions, this one the wire.
"""
from __future__ import annotations

import base64
import hashlib
import json

from azure.core.exceptions import HttpResponseError
from azure.core.polling import PollingMethod
from azure.mgmt.core.polling.arm_polling import ARMPolling

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


def _json_of(pipeline_response):
    return pipeline_response.http_response.json()


class PollWhenAsked(PollingMethod):
    """ARM polling (the SDK's own ARMPolling, interval 0) run in the caller's thread when the result is
    asked for. Passed as `polling=` to a `begin_*` call: azure-core's LROPoller starts a thread for
    every operation whose polling method is not finished at once (azure-core 1.41.0
    azure/core/polling/_poller.py LROPoller.__init__), which cost the simulation two thread starts and
    joins per launch. The provider always waits for the result right after it begins (the Go SDK's
    PollUntilDone), so nothing runs in between; errors surface from `result()`, as with the thread.

    `raw`: the result is the final response's JSON (a dict) instead of the SDK's model, for an operation whose
    result the provider reads a field of or none (as `_read_pages`' raw lists): the same requests, without
    building a model of every nested property (~4 % of a small run's CPU each, for the VM and the NIC)."""

    def __init__(self, raw: bool = False) -> None:
        self._arm = ARMPolling(0)
        self._ran = False
        self._raw = raw

    def initialize(self, client, initial_response, deserialization_callback) -> None:
        self._arm.initialize(client, initial_response, _json_of if self._raw else deserialization_callback)

    def run(self) -> None:
        if not self._ran:
            self._ran = True
            if not self._arm.finished():
                self._arm.run()

    def finished(self) -> bool:
        return True                      # to LROPoller: nothing to start; `resource()` polls

    def status(self) -> str:
        return self._arm.status()

    def resource(self):
        self.run()
        return self._arm.resource()

    def get_continuation_token(self) -> str:
        return self._arm.get_continuation_token()

    @classmethod
    def from_continuation_token(cls, continuation_token: str, **kwargs):
        return ARMPolling.from_continuation_token(continuation_token, **kwargs)


def bootstrap_custom_data(labels: dict[str, str]) -> str:
    """Custom data carrying the kubelet's --node-labels as the KUBELET_NODE_LABELS variable (provider
    v1.14.0 pkg/providers/imagefamily/bootstrap/cse_cmd.sh.gtpl, filled by aksbootstrap.go;
    github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/launchtemplate/launchtemplate.go
    getStaticParameters). Harness simplification: only that line, not the whole script."""
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


# -- lists read page by page, parsed once per page body -----------------------------------------------
# What a list operation's page holds, as the harness reads it, by the page's response body: the SDK
# parses the same bytes into the same models, so a page it has parsed once in this process is not
# parsed again. Every page is still requested through the SDK's pipeline (policies, paging, error
# mapping, the fake's faults and request log); only the deserialization of a body seen before is
# skipped: the SDK's paging gets that page with no items and the same nextLink (azure-core's
# raw_response_hook runs before a page is deserialized). Bounded: cleared past _PAGES_MAX pages.
# A list whose every page body was seen before is answered with the same list object as last time
# (_LISTS, by the pages' keys), so what is cached by that list's identity downstream (the built
# instance types' static parts: harness/model/azure/itcache.py) is found again by the next run that reads
# the same SKUs.
_PAGES: dict[tuple[str, bytes], tuple[str | None, list]] = {}
_LISTS: dict[tuple, list] = {}
_PAGES_MAX = 1024


_DIGESTS: dict[str, dict[int, tuple[bytes, bytes]]] = {}
_DIGESTS_PER_KIND = 4


def _digest(kind: str, body: bytes) -> bytes:
    """The sha256 of a page body, worked out once per bytes object: the fake answers a catalog's SKU list
    page with the same bytes object every time (fakeazure/compute/skus.py EncodedPages), and hashing it was
    the largest part of a run's SKU list read. Keyed by identity and holding the object (so an id is never
    reused for another body while its entry lives); at most _DIGESTS_PER_KIND bodies of a kind are held, so
    the lists answered with new bytes every time (usages, VMs) hold little memory."""
    held = _DIGESTS.setdefault(kind, {})
    hit = held.get(id(body))
    if hit is not None and hit[0] is body:
        return hit[1]
    digest = hashlib.sha256(body).digest()
    if len(body) >= 4096:                    # a small body hashes faster than it is looked up
        if len(held) >= _DIGESTS_PER_KIND:
            held.clear()
        held[id(body)] = (body, digest)
    return digest


def _read_pages(kind: str, pager_of, convert, raw=None) -> list:
    """The items of every page of `pager_of(raw_response_hook=...)`, each page's models turned into
    what the harness keeps by `convert(models) -> list`; or, with `raw`, by `raw(items)` from the page's
    JSON itself (a list read for a few fields: no page is deserialized into models at all, which for
    a resource group of thousands of VMs is most of the list's cost)."""
    seen: list[tuple[tuple[str, bytes], tuple[str | None, list] | None]] = []

    def hook(pipeline_response) -> None:
        http = pipeline_response.http_response
        if http.status_code != 200:
            return
        body = http.body()
        key = (kind, _digest(kind, body))
        hit = _PAGES.get(key)
        if hit is None and raw is not None:
            doc = json.loads(body)
            hit = (doc.get("nextLink") or None, raw(doc.get("value") or []))
            if len(_PAGES) >= _PAGES_MAX:
                _PAGES.clear()
                _LISTS.clear()
            _PAGES[key] = hit
        seen.append((key, hit))
        if hit is not None:
            page = {"value": [], "nextLink": hit[0]} if hit[0] else {"value": []}
            pipeline_response.http_response = InProcessResponse(
                http.request, 200, dict(http.headers), json.dumps(page).encode())

    out: list = []
    keys: list = []                  # the pages' keys, None for one never seen before
    pages = pager_of(raw_response_hook=hook).by_page()
    for page in pages:
        items = list(page)
        key, hit = seen.pop() if seen else (None, None)     # no response seen: a pager without a pipeline
        keys.append(key if hit is not None else None)
        if hit is None:
            hit = (pages.continuation_token, convert(items))
            if key is not None:
                if len(_PAGES) >= _PAGES_MAX:
                    _PAGES.clear()
                    _LISTS.clear()
                _PAGES[key] = hit
        out.extend(hit[1])
    if keys and None not in keys:
        joined = _LISTS.get(tuple(keys))
        if joined is not None:
            return joined
        if len(_LISTS) >= _PAGES_MAX:
            _LISTS.clear()
        _LISTS[tuple(keys)] = out
    return out


def list_vm_skus(compute, region: str) -> list[dict]:
    """`compute.resource_skus.list(filter="location eq '<region>'")` (azure-mgmt-compute 39.0.0
    ResourceSkusOperations.list; the provider lists the region's SKUs through skewer: provider v1.14.0
    pkg/providers/instancetype/instancetypes.go), keeping resourceType virtualMachines, as the models'
    `as_dict()`. Parsed once per page body (_read_pages): the dicts, and the list when every page was
    seen before, are shared between runs, so read them, never change them."""
    return _read_pages("skus", lambda **kw: compute.resource_skus.list(filter=f"location eq '{region}'", **kw),
                       lambda items: [s.as_dict() for s in items if s.resource_type == "virtualMachines"])


def list_vm_names(compute, resource_group: str) -> set[str]:
    """Lower-case names of `compute.virtual_machines.list(resource_group)` (the instance garbage
    collector's list: provider v1.14.0 pkg/controllers/nodeclaim/garbagecollection/instance_garbagecollection.go),
    parsed once per page body (_read_pages)."""
    return set(_read_pages("vm-names", lambda **kw: compute.virtual_machines.list(resource_group, **kw),
                           lambda items: [vm.name.lower() for vm in items],
                           raw=lambda items: [str(vm.get("name") or "").lower() for vm in items]))


def list_nic_names(network, resource_group: str) -> list[str]:
    """The names of `network.network_interfaces.list(resource_group)` (the NIC garbage collector's list:
    provider v1.14.0 pkg/controllers/nodeclaim/garbagecollection/nic_garbagecollection.go), read from the
    pages' JSON (_read_pages raw)."""
    return list(_read_pages("nic-names", lambda **kw: network.network_interfaces.list(resource_group, **kw),
                            lambda items: [n.name for n in items],
                            raw=lambda items: [str(n.get("name") or "") for n in items]))


def list_usages(compute, region: str) -> dict[str, dict]:
    """`compute.usage.list(region)` (the provider's quota controller: provider v1.14.0
    pkg/controllers/quota/controller.go) as {family: {"limit", "current"}}, parsed once per page
    body (_read_pages)."""
    rows = _read_pages("usages", lambda **kw: compute.usage.list(region, **kw),
                       lambda items: [(u.name.value, u.limit, u.current_value) for u in items])
    return {name: {"limit": limit, "current": current} for name, limit, current in rows}
