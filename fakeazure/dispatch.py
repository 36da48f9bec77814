"""Routing, the checks ARM makes before any resource provider sees a request, the error
envelope, and the request log.

Every serving mode hands a transport-independent :class:`~fakeazure.arm.Request` to
:meth:`Dispatcher.handle` (``fakeazure.mock`` in-process, ``fakeazure.server`` on loopback),
so both share one implementation.  Route tables live next to their handlers
(``<service>/urls.py``); each entry is ``(method, path regex, handler, operation)`` where the
operation is a name (``"vm.get"``) or ``callable(ctx, params, method) -> name``.
ARM request conventions: https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling
and https://github.com/microsoft/api-guidelines/blob/vNext/azure/Guidelines.md (error envelope).
"""
from __future__ import annotations

import re
import threading
import time
import traceback
from collections import namedtuple
from typing import Any, Callable
from urllib.parse import unquote

from .arm import ARMError, Request, Response, error_response, new_guid
from .compute.urls import url_patterns as compute_urls
from .containerservice.urls import bootstrap_patterns as bootstrap_urls
from .containerservice.urls import url_patterns as containerservice_urls
from .context import ArmContext
from .control import url_patterns as control_urls
from .network.urls import url_patterns as network_urls
from .pricing.urls import url_patterns as pricing_urls
from .resourcegraph.urls import url_patterns as resourcegraph_urls

RequestRecord = namedtuple("RequestRecord", "method path status")


def _compile(patterns, service: str) -> list[tuple]:
    return [(method, re.compile(path + r"/?", re.IGNORECASE), handler, op, service)
            for method, path, handler, op in patterns]


ROUTES = (_compile(compute_urls, "arm") + _compile(network_urls, "arm") + _compile(resourcegraph_urls, "arm")
          + _compile(containerservice_urls, "arm") + _compile(bootstrap_urls, "bootstrap")
          + _compile(pricing_urls, "prices") + _compile(control_urls, "control"))
# The routes a method may take, in ROUTES' order (HEAD takes GET's): the first of them whose path matches
# is the route, as it is of ROUTES; the others' paths are matched only to word a 405.
ROUTES_BY_METHOD = {m: tuple(r for r in ROUTES if r[0] == m or (m == "HEAD" and r[0] == "GET"))
                    for m in {r[0] for r in ROUTES} | {"HEAD"}}


# (method, path) -> (its route, its parameters): the route table is fixed, so a path routes the same every time;
# a run asks for the same resources, lists and operations again and again, and runs after runs for the same lists
_ROUTED: dict[tuple[str, str], tuple[tuple, dict]] = {}
_ROUTED_MAX = 4096


_BAD_NAME_CHARS = re.compile(r"[/\\\x00-\x1f\x7f]")


def check_name(name: str) -> None:
    """A path segment that decodes to something no ARM resource can be called (a ``/`` or ``\\``
    smuggled in as ``%2f``/``%5c``, a control character, ``.`` or ``..``, nothing) is 400
    InvalidResourceName, before any handler sees it.  Wording: NRP's InvalidResourceName
    message (CRP and ARM word their own name checks differently; harness simplification)."""
    if not name or name in (".", "..") or _BAD_NAME_CHARS.search(name):
        shown = name.encode("unicode_escape").decode()
        raise ARMError("InvalidResourceName",
                       f"Resource name {shown} is invalid. The name can be up to 80 characters long. It must "
                       f"begin with a word character, and it must end with a word character or with '_'. The name "
                       f"may contain word characters or '.', '-', '_'.", 400)


def not_implemented(req: Request) -> ARMError:
    """No route has this path: 404, as ARM answers a path it does not know (the code names the fake,
    so a missing route is never mistaken for a missing resource when read; harness assumption)."""
    return ARMError("NotImplementedInFakeAzure",
                    f"fakeazure does not serve {req.method} {req.path}. Nothing is forwarded to "
                    f"Azure; add a route in fakeazure/*/urls.py if this call is needed.", 404)


def method_not_allowed(req: Request, allowed: list[str]) -> ARMError:
    """A route has this path but not this method: 405 with `Allow` (RFC 9110 section 15.5.6), in
    the ARM envelope with the wording ASP.NET-based resource providers use (harness assumption)."""
    return ARMError("MethodNotAllowed", f"The requested resource does not support http method '{req.method}'.",
                    405, headers={"Allow": ", ".join(allowed)})


def _write_body(req: Request) -> Any:
    """The parsed JSON body of a write (PUT/PATCH/POST): what expectations on sent fields read."""
    if req.method not in ("PUT", "PATCH", "POST") or not req.body:
        return None
    try:
        return req.json()
    except ARMError:
        return None


class Dispatcher:
    """Routes one request to its handler under the state's lock and logs it.

    ``ctx`` goes to ARM and prices handlers; ``control`` (the configuration API, i.e. the
    ``FakeAzure`` itself) goes to the ``/_fakeazure`` handlers only.  ``before_service`` runs
    before every non-control request (time-based effects such as Spot eviction)."""

    max_log = 200000

    def __init__(self, ctx: ArmContext, control: Any, lock: threading.RLock, rng, clock,
                 before_service: Callable[[], None]):
        self.ctx = ctx
        self.clock = clock
        self.control = control
        self.lock = lock
        self.rng = rng
        self.before_service = before_service
        self.requests: list[RequestRecord] = []
        self.request_details: list[dict] = []
        self.internal_errors: list[str] = []

    def clear_log(self) -> None:
        self.requests.clear()
        self.request_details.clear()
        self.internal_errors.clear()

    def route(self, req: Request) -> tuple[tuple | None, dict]:
        hit = _ROUTED.get((req.method, req.path))
        if hit is not None:
            return hit[0], dict(hit[1])
        for route in ROUTES_BY_METHOD.get(req.method, ()):
            m = route[1].fullmatch(req.path)
            if m:
                params = self._params(m)
                if len(_ROUTED) >= _ROUTED_MAX:
                    _ROUTED.clear()
                _ROUTED[(req.method, req.path)] = (route, params)
                return route, dict(params)
        # no route of this method has the path: which methods do (HEAD is GET without the body, RFC 9110
        # section 9.3.2; the transports drop the body)
        allowed: list[str] = []
        for method, rx, *_ in ROUTES:
            if method != req.method and rx.fullmatch(req.path):
                allowed += [m for m in (method, "HEAD" if method == "GET" else None) if m and m not in allowed]
        if allowed:
            raise method_not_allowed(req, sorted(allowed))
        return None, {}

    @staticmethod
    def _params(m: re.Match) -> dict:
        # path segments arrive percent-encoded (the SDK quotes e.g. "(" in resource
        # group names as %28): match on the raw path, use the decoded values
        params = m.groupdict()
        for key, value in params.items():
            if value is None:
                continue
            if "%" in value:
                value = params[key] = unquote(value)
            if key != "sub":
                check_name(value)
        return params

    def arm_checks(self, req: Request, params: dict) -> None:
        # any api-version is accepted, but one is required (SDKs pin different ones, e.g.
        # azure-mgmt-compute 39.0.0 azure/mgmt/compute/operations/_operations.py;
        # https://learn.microsoft.com/rest/api/azure/).
        if "api-version" not in req.query_ci:
            raise ARMError("MissingApiVersionParameter",
                           "The api-version query parameter (?api-version=) is required for all requests.", 400)
        sub = params.get("sub")
        if sub is not None and sub.lower() != self.ctx.subscription.lower():
            # (harness assumption, not in reference: code and wording for a foreign subscription)
            raise ARMError("SubscriptionNotFound", f"The subscription '{sub}' could not be found.", 404)
        rg = params.get("rg")
        if rg is not None and req.method in ("PUT", "PATCH"):
            self.ctx.resource_groups.require(rg)

    def handle(self, req: Request) -> Response:
        t0 = time.perf_counter()
        faults = self.ctx.faults
        with self.lock:
            faults.pending_latency = 0.0
            op_name = "unmatched"
            try:
                route, params = self.route(req)
                if route is None:
                    raise not_implemented(req)
                _method, _rx, handler, op, service = route
                op_name = op(self.ctx, params, req.method) if callable(op) else op
                req.operation = op_name
                if service == "arm":
                    self.arm_checks(req, params)
                if service == "control":
                    resp = handler(self.control, req, params)
                else:
                    self.before_service()
                    name = (params.get("name") or params.get("subnet") or params.get("vnet") or params.get("image")
                            or params.get("machine"))
                    fctx = {"operation": op_name, "resource_group": params.get("rg"), "name": name,
                            "location": params.get("location"), "method": req.method, "path": req.path}
                    faults.check_request({k: v for k, v in fctx.items() if v is not None}, body_pass=False)
                    resp = handler(self.ctx, req, params)
            except ARMError as e:
                resp = error_response(e)
            except Exception as e:  # a bug in the fake: answer loudly, keep serving
                self.internal_errors.append(traceback.format_exc())
                resp = error_response(ARMError("FakeAzureInternalError", f"fakeazure bug: {e!r}", 500))
            self._stamp(req, resp)
            latency = faults.pending_latency
            self._log(req, resp, op_name, latency, t0)
        if latency:
            self.clock.sleep(latency)  # FakeClock: advances time; RealClock: really waits
        return resp

    def _stamp(self, req: Request, resp: Response) -> None:
        resp.headers.setdefault("x-ms-request-id", new_guid(self.rng))
        resp.headers.setdefault("x-ms-correlation-request-id", req.header("x-ms-client-request-id")
                                or resp.headers["x-ms-request-id"])
        if req.method in ("PUT", "DELETE", "PATCH", "POST"):
            resp.headers.setdefault("x-ms-ratelimit-remaining-subscription-writes", "1199")
        else:
            resp.headers.setdefault("x-ms-ratelimit-remaining-subscription-reads", "11999")

    def _log(self, req: Request, resp: Response, op_name: str, latency: float, t0: float) -> None:
        if len(self.requests) >= self.max_log:  # a long-lived server must not grow forever
            del self.requests[: self.max_log // 2]
            del self.request_details[: self.max_log // 2]
        self.requests.append(RequestRecord(req.method, req.path, resp.status))
        self.request_details.append({"method": req.method, "path": req.path, "query": req.raw_query,
                                     "status": resp.status, "operation": op_name,
                                     "simulated_latency": latency, "body": _write_body(req),
                                     "ms": round((time.perf_counter() - t0) * 1000, 3)})
