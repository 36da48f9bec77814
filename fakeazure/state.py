"""``FakeAzure``: the one in-memory state behind every serving mode.

All mutation happens under one re-entrant lock, so the loopback server can serve
many threads (and through them, other processes) at once.  ``handle`` is the single
entry point both transports call: ``fakeazure.mock`` (``responses``, in-process) and
``fakeazure.server`` (``http.server`` on 127.0.0.1).
"""
from __future__ import annotations

import copy
import random
import re
import threading
from urllib.parse import unquote
import time
import traceback
from collections import namedtuple
from typing import Any, Callable, Iterable, Mapping

from . import catalog as cat
from .arm import (ARMError, FakeClock, Request, Response, WELL_KNOWN_SUBSCRIPTION, error_response, iso,
                  new_guid)
from .compute import exceptions as cexc
from .compute.models import ComputeModel, is_spot, vm_resource_id
from .compute.urls import url_patterns as compute_urls
from .control import url_patterns as control_urls
from .faults import Fault, FaultEngine, SERVER_CODES
from .network.models import NetworkModel
from .network.urls import url_patterns as network_urls
from .operations import Operation, OperationStore
from .pricing.models import build_items
from .pricing.urls import url_patterns as pricing_urls

RequestRecord = namedtuple("RequestRecord", "method path status")

_DEFAULT_LRO = {"after_polls": 2}


def _compile(patterns, service):
    out = []
    for method, path, handler, op in patterns:
        out.append((method, re.compile(path + r"/?", re.IGNORECASE), handler, op, service))
    return out


_ROUTES = (_compile(compute_urls, "arm") + _compile(network_urls, "arm") + _compile(pricing_urls, "prices")
           + _compile(control_urls, "control"))


class FakeAzure:
    """The fake's state: SKUs, prices, quota, VMs, NICs, operations, faults, request log.

    Parameters
    ----------
    region: default region (used by ``skus()``, quota setters, and as the catalog to
        load when neither ``skus`` nor ``catalog`` is given).
    subscription_id: the subscription the fake serves; other subscriptions get 404.
    seed: seeds GUIDs and fault probabilities: same seed, same run.
    skus: ResourceSku dicts to serve instead of a bundled catalog.
    catalog: a catalog name (``"eastus"``) or a path (file/dir), or a list of them.
    lro: ``"immediate"`` (first status poll finishes), ``{"after_polls": N}``
        (default ``N=2``: one ``InProgress`` then ``Succeeded``) or ``"sync"`` (no
        long-running operations: 200 with the final state).
    clock: time source (default :class:`~fakeazure.arm.FakeClock`, which never sleeps).
    page_size: page ARM lists (SKUs, usages, VMs, NICs) by this many items (default: one page,
        as the real SKU API does).
    prices_page_size: Retail Prices page size (100 as the classic API).
    """

    def __init__(self, region: str = "southcentralus", subscription_id: str = WELL_KNOWN_SUBSCRIPTION,
                 seed: int = 0, skus: list[dict] | None = None, catalog: str | list | None = None,
                 lro: str | Mapping | None = None, clock=None, page_size: int | None = None,
                 prices_page_size: int = 100, faults: Iterable | None = None,
                 resource_groups: Iterable[str] | None = None):
        self.lock = threading.RLock()
        self.region = region.lower()
        self.subscription_id = subscription_id
        self.seed = seed
        self.rng = random.Random(seed)
        self._own_clock = clock is None
        self.clock = clock if clock is not None else FakeClock()
        self._clock_start = self.clock.time()
        self.page_size = page_size
        self.prices_page_size = int(prices_page_size)
        self.lro_after_polls: int | None = 2
        self.set_lro(lro)
        self._skus: dict[str, dict[str, dict]] = {}
        self._prices: dict[str, dict[str, dict]] = {}
        self._price_items: dict[str, list] = {}
        self.compute = ComputeModel(self)
        self.network = NetworkModel(self)
        self.operations = OperationStore(self.clock)
        self.faults = FaultEngine(self.rng)
        self.requests: list[RequestRecord] = []
        self.max_log = 200000
        self.request_details: list[dict] = []
        self.internal_errors: list[str] = []
        self.resource_groups: set[str] | None = (
            {rg.lower() for rg in resource_groups} if resource_groups is not None else None)
        self._pending_latency = 0.0
        self._succeeded_at: dict[tuple[str, str], float] = {}
        if skus is not None:
            self.add_skus(skus)
        if catalog is not None:
            for c in ([catalog] if isinstance(catalog, (str, bytes)) or hasattr(catalog, "__fspath__")
                      else catalog):
                self.load_catalog(c)
        if skus is None and catalog is None and self.region in cat.available_catalogs():
            self.load_catalog(self.region)
        self.add_faults(faults or [])

    # ================================================================== configuration
    def set_lro(self, lro: str | Mapping | None) -> None:
        """Change LRO progression (see class docstring)."""
        if lro is None:
            lro = _DEFAULT_LRO
        if isinstance(lro, str):
            if lro == "immediate":
                self.lro_after_polls = 1
            elif lro == "sync":
                self.lro_after_polls = None
            else:
                raise ValueError(f"lro must be 'immediate', 'sync' or {{'after_polls': N}}, not {lro!r}")
        elif isinstance(lro, Mapping) and "after_polls" in lro:
            n = int(lro["after_polls"])
            if n < 1:
                raise ValueError("lro after_polls must be >= 1 (use lro='sync' for no operations)")
            self.lro_after_polls = n
        else:
            raise ValueError(f"lro must be 'immediate', 'sync' or {{'after_polls': N}}, not {lro!r}")

    def load_catalog(self, name_or_path) -> list[dict]:
        """Load a bundled catalog by name or a catalog file/dir; returns the SKUs added."""
        added = []
        with self.lock:
            for f in cat.resolve_catalog(name_or_path):
                skus, prices = cat.load_catalog_file_shared(f)  # add_skus copies
                added += self.add_skus(skus)
                for region, table in prices.items():
                    self.set_prices(region, table)
        return added

    def add_skus(self, skus: Iterable[dict]) -> list[dict]:
        """Add (or replace, by region and name) ResourceSku dicts."""
        out = []
        with self.lock:
            for raw in skus:
                sku = cat.normalize_sku(raw)
                regions = [r.lower() for r in sku.get("locations") or []] or [self.region]
                for region in regions:
                    self._skus.setdefault(region, {})[sku["name"].lower()] = sku
                out.append(sku)
        return out

    def skus(self, region: str | None = None) -> list[dict]:
        """The catalog of ``region`` (default: the state's region; ``"*"``: every region)."""
        with self.lock:
            return copy.deepcopy(self._sku_list(None if region == "*" else (region or self.region).lower()))

    def _sku_list(self, region: str | None) -> list[dict]:
        if region is None:
            return [s for r in self._skus for s in self._skus[r].values()]
        return list(self._skus.get(region.lower(), {}).values())

    def region_zones(self, region: str) -> bool:
        return any((li.get("zones") for s in self._skus.get(region.lower(), {}).values()
                    for li in s.get("locationInfo") or []))

    @property
    def prices(self) -> dict[str, dict[str, dict]]:
        """region -> {sku: {"on-demand": float, "spot": float}} (a copy)."""
        with self.lock:
            return copy.deepcopy(self._prices)

    def set_prices(self, region: str, table: Mapping[str, Mapping[str, float]], replace: bool = False) -> None:
        with self.lock:
            region = region.lower()
            cur = {} if replace else self._prices.setdefault(region, {})
            for sku, p in table.items():
                cur[sku] = {k: float(v) for k, v in p.items() if v is not None}
            self._prices[region] = cur
            self._price_items.pop(region, None)

    def pricing_items(self) -> list[dict]:
        items: list[dict] = []
        for region in sorted(self._prices):
            if region not in self._price_items:
                fams = {name: cat.sku_family(s) for name, s in self._skus.get(region, {}).items()}
                self._price_items[region] = build_items(region, self._prices[region], fams)
            items += self._price_items[region]
        return items

    def set_usage(self, family: str, limit: int | None, current: int = 0, region: str | None = None) -> None:
        """Quota for a VM family: ``limit`` cores, ``current`` cores already used elsewhere."""
        with self.lock:
            self.compute.set_usage(region or self.region, family, limit, current)

    def set_regional_quota(self, limit: int, region: str | None = None) -> None:
        with self.lock:
            self.compute.regional_limit[(region or self.region).lower()] = int(limit)

    def set_low_priority_quota(self, limit: int, region: str | None = None) -> None:
        with self.lock:
            self.compute.lowpri_limit[(region or self.region).lower()] = int(limit)

    def usages(self, region: str | None = None) -> list[dict]:
        with self.lock:
            return copy.deepcopy(self.compute.usage_rows(region or self.region))

    def add_resource_group(self, name: str) -> None:
        """Opt into resource-group checks: once any group is added, others are 404."""
        with self.lock:
            if self.resource_groups is None:
                self.resource_groups = set()
            self.resource_groups.add(name.lower())

    def add_subnet(self, subnet_id: str) -> None:
        """Opt into subnet reference checks on NIC PUT (400 InvalidResourceReference)."""
        with self.lock:
            self.network.known_refs["subnet"].add(subnet_id.lower())

    def add_backend_pool(self, pool_id: str) -> None:
        with self.lock:
            self.network.known_refs["pool"].add(pool_id.lower())

    def add_network_security_group(self, nsg_id: str) -> None:
        with self.lock:
            self.network.known_refs["nsg"].add(nsg_id.lower())

    # ================================================================== faults
    def add_fault(self, spec: Fault | Mapping[str, Any]) -> Fault:
        """Add one fault rule (dict or :class:`~fakeazure.faults.Fault`)."""
        with self.lock:
            return self.faults.add(spec)

    def add_faults(self, specs: Iterable) -> list[Fault]:
        with self.lock:
            return self.faults.extend(specs)

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    # ================================================================== inspection
    def vms(self, resource_group: str | None = None) -> list[dict]:
        """VMs as ARM resources (the GET body, with ``provisioningState``)."""
        with self.lock:
            self._apply_evictions()
            return [self.compute.view(vm) for vm in self.compute.list(resource_group)]

    def nics(self, resource_group: str | None = None) -> list[dict]:
        with self.lock:
            return [self.network.view(n) for n in self.network.list(resource_group)]

    def get_vm(self, rg: str, name: str) -> dict | None:
        with self.lock:
            self._apply_evictions()
            vm = self.compute.get(rg, name)
            return None if vm is None else self.compute.view(vm, "instanceView")

    def get_nic(self, rg: str, name: str) -> dict | None:
        with self.lock:
            nic = self.network.get(rg, name)
            return None if nic is None else self.network.view(nic)

    def evict(self, rg: str, name: str) -> dict:
        """Evict a Spot VM now (as Azure does when it needs the capacity back)."""
        with self.lock:
            vm = self.compute.require(rg, name)
            if not vm.spot:
                raise ValueError(f"{rg}/{name} is not a Spot VM (priority {vm.priority})")
            return dict(self.compute.evict(vm, "manual"))

    @property
    def evictions(self) -> list[dict]:
        with self.lock:
            self._apply_evictions()
            return copy.deepcopy(self.compute.evictions)

    def settle(self) -> int:
        """Complete every pending long-running operation; returns how many."""
        with self.lock:
            return self.operations.settle()

    def advance(self, seconds: float) -> None:
        """Move the (fake) clock forward and apply time-based faults (Spot eviction)."""
        with self.lock:
            self.clock.advance(seconds)
            self._apply_evictions()

    def reset(self) -> None:
        """Forget resources, operations, faults, quota settings and the request log; keep
        the catalogs and prices.  Re-seeds the RNG (and rewinds the default clock)."""
        with self.lock:
            self.compute.clear()
            self.compute.family_quota.clear()
            self.compute.regional_limit.clear()
            self.compute.lowpri_limit.clear()
            self.network.clear()
            self.operations.clear()
            self.faults.clear()
            self.requests.clear()
            self.request_details.clear()
            self.internal_errors.clear()
            self._succeeded_at.clear()
            self.rng.seed(self.seed)
            if self._own_clock and isinstance(self.clock, FakeClock):
                self.clock._t = self._clock_start

    def snapshot(self) -> dict:
        """JSON-able picture of the state for reports and diffs."""
        with self.lock:
            self._apply_evictions()
            sub = self.subscription_id
            regions = sorted(set(self._skus) | {vm.location.lower() for vm in self.compute.vms.values()})
            return {
                "subscription_id": sub,
                "region": self.region,
                "time": iso(self.clock.time()),
                "vms": [self.compute.snapshot_vm(sub, vm) for vm in self.compute.list()],
                "nics": [self.network.snapshot_nic(sub, n) for n in self.network.list()],
                "usages": {r: [{"name": u["name"]["value"], "current": u["currentValue"], "limit": u["limit"]}
                               for u in self.compute.usage_rows(r)
                               if u["currentValue"] or _explicit(self, r, u["name"]["value"])]
                           for r in regions},
                "operations": [o.to_dict() for o in self.operations.ops.values()],
                "pending_operations": len(self.operations.pending()),
                "faults": self.faults.to_list(),
                "fault_log": list(self.faults.log),
                "evictions": list(self.compute.evictions),
                "requests": len(self.requests),
                "skus": {r: len(v) for r, v in self._skus.items()},
            }

    # ================================================================== HTTP entry point
    def handle(self, method: str, url: str, headers: Mapping[str, str] | None = None,
               body: bytes | str | None = None) -> tuple[int, dict[str, str], bytes]:
        resp = self.handle_request(Request(method, url, dict(headers or {}), body))
        return resp.status, resp.all_headers(), resp.body_bytes()

    def handle_request(self, req: Request) -> Response:
        t0 = time.perf_counter()
        with self.lock:
            self._pending_latency = 0.0
            op_name = "unmatched"
            try:
                route, params = self._route(req)
                if route is None:
                    raise ARMError("NotImplementedInFakeAzure",
                                   f"fakeazure does not serve {req.method} {req.path}. Nothing is forwarded to "
                                   f"Azure; add a route in fakeazure/*/urls.py if this call is needed.", 501)
                _method, _rx, handler, op, service = route
                op_name = op(self, params, req.method) if callable(op) else op
                req.operation = op_name
                if service == "arm":
                    self._arm_checks(req, params)
                if service != "control":
                    self._apply_evictions()
                    ctx = {"operation": op_name, "resource_group": params.get("rg"), "name": params.get("name"),
                           "location": params.get("location"), "method": req.method, "path": req.path}
                    self._request_faults({k: v for k, v in ctx.items() if v is not None}, body_pass=False)
                resp = handler(self, req, params)
            except ARMError as e:
                resp = error_response(e)
            except Exception as e:  # a bug in the fake: answer loudly, keep serving
                self.internal_errors.append(traceback.format_exc())
                resp = error_response(ARMError("FakeAzureInternalError", f"fakeazure bug: {e!r}", 500))
            resp.headers.setdefault("x-ms-request-id", new_guid(self.rng))
            resp.headers.setdefault("x-ms-correlation-request-id", req.header("x-ms-client-request-id")
                                    or resp.headers["x-ms-request-id"])
            if req.method in ("PUT", "DELETE", "PATCH", "POST"):
                resp.headers.setdefault("x-ms-ratelimit-remaining-subscription-writes", "1199")
            else:
                resp.headers.setdefault("x-ms-ratelimit-remaining-subscription-reads", "11999")
            if len(self.requests) >= self.max_log:  # a long-lived server must not grow forever
                del self.requests[: self.max_log // 2]
                del self.request_details[: self.max_log // 2]
            self.requests.append(RequestRecord(req.method, req.path, resp.status))
            latency = self._pending_latency
            self.request_details.append({"method": req.method, "path": req.path, "query": req.raw_query,
                                         "status": resp.status, "operation": op_name,
                                         "simulated_latency": latency,
                                         "ms": round((time.perf_counter() - t0) * 1000, 3)})
        if latency:
            self.clock.sleep(latency)  # FakeClock: advances time; RealClock: really waits
        return resp

    # ------------------------------------------------------------------ internals
    def _route(self, req: Request):
        path = req.path
        for route in _ROUTES:
            method, rx, handler, op, service = route
            if method != req.method:
                continue
            m = rx.fullmatch(path)
            if m:
                # path segments arrive percent-encoded (the SDK quotes e.g. "(" in resource
                # group names as %28): match on the raw path, use the decoded values
                return route, {k: unquote(v) if isinstance(v, str) else v for k, v in m.groupdict().items()}
        return None, {}

    def _arm_checks(self, req: Request, params: dict) -> None:
        # fake-azure.md §0: any api-version is accepted, but one is required.
        if "api-version" not in req.query_ci:
            raise ARMError("MissingApiVersionParameter",
                           "The api-version query parameter (?api-version=) is required for all requests.", 400)
        sub = params.get("sub")
        if sub is not None and sub.lower() != self.subscription_id.lower():
            # (harness assumption, not in reference: code and wording for a foreign subscription)
            raise ARMError("SubscriptionNotFound", f"The subscription '{sub}' could not be found.", 404)
        rg = params.get("rg")
        if rg is not None and req.method in ("PUT", "PATCH"):
            self._require_rg(rg)

    def _require_rg(self, rg: str) -> None:
        if self.resource_groups is not None and rg.lower() not in self.resource_groups:
            raise cexc.resource_group_not_found(rg)

    def _request_faults(self, ctx: dict, body_pass: bool) -> None:
        latency, f = self.faults.request_phase(ctx, body_pass)
        self._pending_latency += latency
        if f is None:
            return
        status = int(f.status or (429 if f.code == "TooManyRequests" else SERVER_CODES.get(f.code, 500)))
        headers = {}
        if f.code == "TooManyRequests":
            # fake-azure.md §5.4: Retry-After (integer seconds) makes SDKs retry.
            headers["Retry-After"] = str(int(f.retry_after if f.retry_after is not None else 10))
            headers["x-ms-ratelimit-remaining-subscription-reads"] = "0"
            # Throttling text: (harness assumption, not in reference; §4.2 says only "throttling").
            msg = f.message or ("The request is being throttled as the limit has been reached for operation type - "
                                f"{'Write' if ctx.get('method') in ('PUT', 'DELETE', 'PATCH') else 'Read'}"
                                "_ObservationWindow_00:05:00. For more information, see - "
                                "https://aka.ms/srpthrottlinglimits")
            raise ARMError("TooManyRequests", msg, status, headers=headers)
        if f.retry_after is not None:
            headers["Retry-After"] = str(int(f.retry_after))
        # 5xx texts: (harness assumption, not in reference).
        default_msgs = {
            "InternalServerError": "The server encountered an internal error. Please retry the request.",
            "BadGateway": "The gateway did not receive a response from the service. Please retry the request.",
            "ServiceUnavailable": "The service is currently unavailable. Please retry the request.",
            "GatewayTimeout": "The gateway did not receive a response within the specified time period.",
        }
        raise ARMError(f.code, f.message or default_msgs.get(f.code, f"Injected fault {f.code}."), status,
                       target=f.target, headers=headers)

    def _provision_faults(self, ctx: dict, sku: dict | None, parsed: dict | None) -> ARMError | None:
        """Fire the first provisioning fault rule that matches a write.  A synchronous fault is
        raised here; an asynchronous one is returned for the operation to deliver (fake-azure.md
        §4.2 says which is which).  None: no fault fired."""
        ctx = dict(ctx)
        if sku is not None and parsed is not None:
            ctrl = (cat.capability(sku, "DiskControllerTypes") or "").replace(" ", "").lower().split(",")
            ctx["disk_controller_mismatch"] = (ctrl != [""] and "scsi" not in ctrl
                                               and (parsed.get("disk_controller") or "").lower() != "nvme")
        f = self.faults.first("provision", ctx)
        if f is None:
            return None
        self._pending_latency += float(f.latency or 0.0)
        err = self._fault_error(f, ctx, sku, parsed)
        if f.message:
            err.message = f.message
        if f.target:
            err.target = f.target
        if f.effective_delivery() == "async":
            return err
        if f.status:
            err.status = int(f.status)
            raise err
        raise err.as_sync()  # e.g. an allocation failure forced to arrive synchronously

    def _operation_error(self, err: ARMError | None) -> ARMError | None:
        """The error a new operation is to carry.  lro="sync" has no operation to fail, so the
        error is answered now, before anything changes, as a synchronous fault would be
        (``err.as_sync()``: 409 for an allocation failure; README "Differences")."""
        if err is not None and self.lro_after_polls is None:
            raise err.as_sync()
        return err

    def _fault_error(self, f: Fault, ctx: dict, sku: dict | None, parsed: dict | None) -> ARMError:
        sub = self.subscription_id
        region = (ctx.get("location") or self.region).lower()
        zone = ctx.get("zone") or ""
        spot = is_spot(ctx.get("priority"))
        size = ctx.get("size") or (sku or {}).get("name") or ""
        vm_id = vm_resource_id(sub, ctx.get("resource_group"), ctx.get("name"))
        code = f.code
        if code == "SkuNotAvailable":
            return cexc.sku_not_available(sub, vm_id, region, [zone] if zone else [])
        if code == "ZonalAllocationFailed":
            return cexc.zonal_allocation_failed(size, zone)
        if code == "AllocationFailed":
            return cexc.allocation_failed()
        if code == "OverconstrainedZonalAllocationRequest":
            return cexc.overconstrained_zonal(spot)
        if code == "OverconstrainedAllocationRequest":
            return cexc.overconstrained(bool((parsed or {}).get("ephemeral")), spot)
        if code in ("FamilyQuota", "RegionalQuota", "LowPriorityQuota"):
            fake_sku = sku or {"name": size, "family": "", "capabilities": []}
            return self.compute.quota_fault_error(f, sub, region, fake_sku, spot)
        if code == "DiskControllerTypeMismatch":
            return cexc.disk_controller_mismatch(size)
        if code in SERVER_CODES:
            return cexc.internal_execution_error()
        return ARMError(code, f.message or f"Injected fault {code}.", int(f.status or 400), target=f.target)

    def _start_operation(self, kind: str, namespace: str, location: str, target: str,
                         error: ARMError | None, on_complete: Callable | None,
                         after_polls: int | None = None) -> Operation:
        n = self.lro_after_polls
        if n is None:
            n = 0  # lro="sync": complete now
        elif after_polls is not None:
            n = min(n, after_polls)
        op = Operation(id=new_guid(self.rng), namespace=namespace, location=location.lower(), kind=kind,
                       target=target, start=self.clock.time(), after_polls=n, error=error,
                       on_complete=on_complete)
        return self.operations.add(op)

    def _operation_headers(self, req: Request, op: Operation, location_header: bool) -> dict[str, str]:
        """Absolute status URLs on the host the client used (fake-azure.md §2.3/§2.4)."""
        api = req.query_ci.get("api-version", "2026-04-01")
        url = (f"{req.base_url}/subscriptions/{self.subscription_id}/providers/{op.namespace}/locations/"
               f"{op.location}/operations/{op.id}")
        h: dict[str, str] = {}
        if op.namespace == "Microsoft.Compute":
            p = new_guid(self.rng)
            h["Azure-AsyncOperation"] = f"{url}?p={p}&api-version={api}"
            h["Azure-AsyncNotification"] = "Enabled"
            if location_header:
                h["Location"] = f"{url}?p={p}&monitor=true&api-version={api}"
        else:
            h["Azure-AsyncOperation"] = f"{url}?api-version={api}"
            if location_header:
                h["Location"] = f"{url}?monitor=true&api-version={api}"
        return h

    def _lro_reply(self, req: Request, op: Operation, status: int, body: Any = None, *,
                   location_header: bool = False, done_status: int = 200) -> Response:
        """The answer to the request that started ``op``: ``status`` with an absolute
        Azure-AsyncOperation URL (+ a Location monitor URL for deletes), fake-azure.md
        §2.3/§2.4/§2.5, and no Retry-After, so a client with polling_interval=0 never sleeps
        (§5.3).  lro="sync": the operation is already done, so ``done_status`` with the final
        body and no async headers (§2.4 item 3).  The body must be taken after the operation
        started, so that lro="sync" shows the final state."""
        if op.done and self.lro_after_polls is None:
            return Response(done_status, body)
        return Response(status, body, self._operation_headers(req, op, location_header))

    def _apply_evictions(self) -> None:
        rules = self.faults.eviction_rules()
        now = self.clock.time()
        # Stamp when each VM is first seen Succeeded (eviction rules count after_seconds from
        # then).  Only VMs queued by a change to Succeeded can need a stamp.
        for vm in self.compute.newly_succeeded:
            if (self.compute.vms.get(vm.key) is vm and vm.provisioning_state == "Succeeded"
                    and vm.key not in self._succeeded_at):
                self._succeeded_at[vm.key] = now
        self.compute.newly_succeeded.clear()
        if not rules:
            return
        for vm in list(self.compute.vms.values()):
            if not vm.spot or vm.evicted or vm.provisioning_state != "Succeeded":
                continue
            since = self._succeeded_at.get(vm.key, now)
            ctx = vm.fault_ctx("vm.evict")
            for f in rules:
                if f.exhausted or not f.matches(ctx):
                    continue
                # Time must have moved past success (FakeClock: via advance() or latency).
                if now <= since or now - since < float(f.after_seconds or 0):
                    continue
                if self.faults._fires(f):
                    self.faults._record(f, ctx)
                    self.compute.evict(vm, f"fault {f.id}")
                    self._succeeded_at.pop(vm.key, None)
                    if self.compute.vms.get(vm.key) is vm:  # Deallocate: stamped again next pass
                        self.compute.newly_succeeded.append(vm)
                    break


def _explicit(state: FakeAzure, region: str, name: str) -> bool:
    n = name.lower()
    if n == "cores":
        return region in state.compute.regional_limit
    if n == "lowprioritycores":
        return region in state.compute.lowpri_limit
    return (region, n) in state.compute.family_quota
