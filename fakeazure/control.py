"""The control API: ``/_fakeazure/...`` on the fake's own host, for tests and
harnesses in other processes; :class:`RemoteFakeAzure` mirrors it in Python.

=======  ==========================  ===============================================
method   path                        effect
=======  ==========================  ===============================================
GET      /_fakeazure/health          ``{"ok": true, "subscription_id": ...}``
POST     /_fakeazure/reset           ``FakeAzure.reset()``
GET      /_fakeazure/faults          the rules, with ``seen``/``fired`` counters
POST     /_fakeazure/faults          add a rule, a list of rules, or ``{"faults": [...]}``
DELETE   /_fakeazure/faults          remove every rule
GET      /_fakeazure/state.json      ``FakeAzure.snapshot()``
GET      /_fakeazure/requests        ``[{"method", "path", "status"}, ...]``
POST     /_fakeazure/usages          ``{"family", "limit", "current"?, "region"?}`` or
                                     ``{"regional": N}`` / ``{"lowPriority": N}``
POST     /_fakeazure/evict           ``{"resourceGroup", "name"}``
POST     /_fakeazure/advance         ``{"seconds": N}`` (fake clock)
POST     /_fakeazure/settle          finish pending operations
POST     /_fakeazure/skus            add ResourceSku objects (list or ``{"value": [...]}``)
POST     /_fakeazure/catalog         ``{"name": "eastus"}`` (or a path on the server)
POST     /_fakeazure/lro             ``{"lro": "immediate" | "sync" | {"after_polls": N}}``
POST     /_fakeazure/network         ``{"networkSecurityGroups": [names], "resourceGroup"?,
                                     "subnets": [ids], "backendPools": [ids]}`` (each optional)
POST     /_fakeazure/resourcegraph   ``{"lag": seconds}``
=======  ==========================  ===============================================
"""
from __future__ import annotations

import json
from typing import Any, Protocol

from .arm import ARMError, Request, Response
from .guard import refuse_real_azure

PREFIX = "/_fakeazure"


class Configurable(Protocol):
    """The configuration API these handlers drive: ``FakeAzure``'s public methods, nothing else
    (the control API is that API over HTTP)."""

    subscription_id: str
    region: str
    faults: Any
    requests: list
    clock: Any
    lro_after_polls: int | None

    def reset(self) -> None: ...
    def snapshot(self) -> dict: ...
    def set_usage(self, family: str, limit: int | None, current: int = 0, region: str | None = None) -> None: ...
    def set_regional_quota(self, limit: int, region: str | None = None) -> None: ...
    def set_low_priority_quota(self, limit: int, region: str | None = None) -> None: ...
    def usages(self, region: str | None = None) -> list[dict]: ...
    def evict(self, rg: str, name: str) -> dict: ...
    def advance(self, seconds: float) -> None: ...
    def settle(self) -> int: ...
    def add_skus(self, skus: list) -> list[dict]: ...
    def load_catalog(self, name_or_path) -> list[dict]: ...
    def set_lro(self, lro) -> None: ...
    def set_network_security_groups(self, names, resource_group: str | None = None) -> None: ...
    def add_subnet(self, subnet_id: str) -> None: ...
    def add_backend_pool(self, pool_id: str) -> None: ...
    def set_resource_graph_lag(self, seconds: float) -> None: ...


def _body(req: Request) -> Any:
    try:
        return req.json()
    except ARMError:
        raise
    except Exception as exc:  # pragma: no cover
        raise ARMError("InvalidRequestContent", str(exc), 400) from None


def _bad(msg: str) -> ARMError:
    return ARMError("InvalidControlRequest", msg, 400)


def _object(req: Request, what: str, allowed: tuple[str, ...] = (), one_of: tuple[str, ...] = ()) -> dict:
    """The body as an object (an empty body is ``{}``); anything else is 400, and so is a key
    not in `allowed` (keys are case-sensitive: ``{"LRO": ...}`` is not ``{"lro": ...}``) or a
    body with none of `one_of` (what the call is for): a body the call does not understand is
    refused, never taken as a request for the defaults."""
    body = _body(req)
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise _bad(f"{what} takes a JSON object")
    unknown = sorted(str(k) for k in body if k not in allowed)
    if unknown:
        raise _bad(f"{what}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                   f"(allowed: {', '.join(allowed) or 'none'})")
    if one_of and not any(k in body for k in one_of):
        raise _bad(f"{what} needs {' or '.join(map(repr, one_of))}")
    return body


def _number(value: Any, what: str, integer: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise _bad(f"{what} must be {'an integer' if integer else 'a number'}, not {value!r}")
    if not -1e15 < value < 1e15:
        raise _bad(f"{what} is out of range: {value!r}")
    return value


def health(state: Configurable, req: Request, p: dict) -> Response:
    return Response(200, {"ok": True, "subscription_id": state.subscription_id, "region": state.region})


def reset(state: Configurable, req: Request, p: dict) -> Response:
    _object(req, "reset")
    state.reset()
    return Response(200, {"reset": True})


def list_faults(state: Configurable, req: Request, p: dict) -> Response:
    return Response(200, {"faults": state.faults.to_list(), "log": list(state.faults.log)})


def add_faults(state: Configurable, req: Request, p: dict) -> Response:
    body = _body(req)
    if isinstance(body, dict) and "faults" in body:
        body = _object(req, "faults", ("faults",))
    specs = body.get("faults") if isinstance(body, dict) and "faults" in body else body
    if isinstance(specs, dict):
        specs = [specs]
    if not isinstance(specs, list):
        raise _bad("POST /_fakeazure/faults takes a fault object, a list, or {\"faults\": [...]}")
    try:
        added = [state.faults.add(s).to_dict() for s in specs]
    except (TypeError, ValueError) as exc:
        raise _bad(str(exc)) from None
    return Response(201, {"faults": added})


def clear_faults(state: Configurable, req: Request, p: dict) -> Response:
    state.faults.clear()
    return Response(200, {"faults": []})


def snapshot(state: Configurable, req: Request, p: dict) -> Response:
    return Response(200, state.snapshot())


def requests_log(state: Configurable, req: Request, p: dict) -> Response:
    return Response(200, {"requests": [r._asdict() for r in state.requests]})


def usages(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "usages", ("family", "limit", "current", "region", "regional", "lowPriority"),
                   one_of=("family", "regional", "lowPriority"))
    region = body.get("region")
    if region is not None and not isinstance(region, str):
        raise _bad("usages: 'region' must be a string")
    if "regional" in body:
        state.set_regional_quota(int(_number(body["regional"], "usages: 'regional'", True)), region)
    if "lowPriority" in body:
        state.set_low_priority_quota(int(_number(body["lowPriority"], "usages: 'lowPriority'", True)), region)
    if "family" in body:
        if "limit" not in body or not isinstance(body["family"], str):
            raise _bad("usages: 'family' (a name) needs 'limit'")
        limit = None if body["limit"] is None else int(_number(body["limit"], "usages: 'limit'", True))
        state.set_usage(body["family"], limit, int(_number(body.get("current", 0), "usages: 'current'", True)),
                        region)
    return Response(200, {"usages": state.usages(region)})


def evict(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "evict", ("resourceGroup", "resource_group", "name"))
    rg = body.get("resourceGroup") or body.get("resource_group")
    name = body.get("name")
    if not isinstance(rg, str) or not isinstance(name, str) or not rg or not name:
        raise _bad("evict takes {\"resourceGroup\": ..., \"name\": ...}")
    # a missing VM (404 ResourceNotFound) or one that is not Spot (409 OperationNotAllowed) is the
    # ARM error itself, as simulateEviction answers it
    return Response(200, state.evict(rg, name))


def advance(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "advance", ("seconds",), one_of=("seconds",))
    seconds = float(_number(body["seconds"], "advance: 'seconds'"))
    if seconds < 0:
        raise _bad(f"advance: 'seconds' must not be negative (time does not run backwards), not {seconds!r}")
    state.advance(seconds)
    return Response(200, {"time": state.clock.time()})


def settle(state: Configurable, req: Request, p: dict) -> Response:
    _object(req, "settle")
    return Response(200, {"completed": state.settle()})


def add_skus(state: Configurable, req: Request, p: dict) -> Response:
    body = _body(req)
    skus = _object(req, "skus", ("value",), one_of=("value",))["value"] if isinstance(body, dict) else body
    if not isinstance(skus, list) or not all(isinstance(s, dict) and isinstance(s.get("name"), str) for s in skus):
        raise _bad("skus takes a list of ResourceSku objects or {\"value\": [...]}")
    try:
        return Response(201, {"added": len(state.add_skus(skus))})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise _bad(f"skus: not a ResourceSku: {exc!r}") from None


def load_catalog(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "catalog", ("name", "path"), one_of=("name", "path"))
    name = body.get("name") or body.get("path")
    if not name or not isinstance(name, str):
        raise _bad("catalog takes {\"name\": ...}")
    try:
        return Response(201, {"added": len(state.load_catalog(name))})
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise _bad(str(exc)) from None


def set_lro(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "lro", ("lro",), one_of=("lro",))
    try:
        state.set_lro(body.get("lro"))
    except ValueError as exc:
        raise _bad(str(exc)) from None
    return Response(200, {"after_polls": state.lro_after_polls})


def configure_network(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "network", ("networkSecurityGroups", "resourceGroup", "subnets", "backendPools"),
                   one_of=("networkSecurityGroups", "subnets", "backendPools"))
    names = body.get("networkSecurityGroups")
    if names is not None:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _bad("network: 'networkSecurityGroups' must be a list of names")
        state.set_network_security_groups(names, body.get("resourceGroup"))
    for key, add in (("subnets", state.add_subnet), ("backendPools", state.add_backend_pool)):
        ids = body.get(key) or []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise _bad(f"network: {key!r} must be a list of resource IDs")
        for rid in ids:
            add(rid)
    return Response(200, {"ok": True})


def configure_resource_graph(state: Configurable, req: Request, p: dict) -> Response:
    body = _object(req, "resourcegraph", ("lag",))
    lag = body.get("lag")
    if isinstance(lag, bool) or not isinstance(lag, (int, float)) or not 0 <= lag < 1e9:
        raise _bad("resourcegraph takes {\"lag\": seconds} with 0 <= seconds < 1e9")
    state.set_resource_graph_lag(float(lag))
    return Response(200, {"lag": float(lag)})


url_patterns = [
    ("GET", PREFIX + r"/health", health, "control"),
    ("POST", PREFIX + r"/reset", reset, "control"),
    ("GET", PREFIX + r"/faults", list_faults, "control"),
    ("POST", PREFIX + r"/faults", add_faults, "control"),
    ("DELETE", PREFIX + r"/faults", clear_faults, "control"),
    ("GET", PREFIX + r"/state\.json", snapshot, "control"),
    ("GET", PREFIX + r"/requests", requests_log, "control"),
    ("POST", PREFIX + r"/usages", usages, "control"),
    ("POST", PREFIX + r"/evict", evict, "control"),
    ("POST", PREFIX + r"/advance", advance, "control"),
    ("POST", PREFIX + r"/settle", settle, "control"),
    ("POST", PREFIX + r"/skus", add_skus, "control"),
    ("POST", PREFIX + r"/catalog", load_catalog, "control"),
    ("POST", PREFIX + r"/lro", set_lro, "control"),
    ("POST", PREFIX + r"/network", configure_network, "control"),
    ("POST", PREFIX + r"/resourcegraph", configure_resource_graph, "control"),
]


class RemoteControlError(RuntimeError):
    pass


class RemoteFakeAzure:
    """The control API of a running server, mirrored in Python (``requests`` under the hood)."""

    def __init__(self, url: str, session=None, ca_path: str | None = None):
        """ca_path: the CA to trust for an https server (``FakeAzureServer.ca_path``).  It is passed
        on every call, because ``requests`` lets REQUESTS_CA_BUNDLE override a session's ``verify``."""
        import requests
        self.url = url.rstrip("/")
        self.session = session or requests.Session()
        self.verify = ca_path if ca_path else True

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        refuse_real_azure(self.url)  # the in-process mock serves /_fakeazure on the ARM host too
        resp = self.session.request(method, f"{self.url}{PREFIX}{path}",
                                    data=None if body is None else json.dumps(body),
                                    headers={"Content-Type": "application/json"}, timeout=30,
                                    verify=self.verify)
        if resp.status_code >= 400:
            raise RemoteControlError(f"{method} {PREFIX}{path}: {resp.status_code} {resp.text}")
        return resp.json() if resp.content else None

    def health(self) -> dict:
        return self._call("GET", "/health")

    def reset(self) -> None:
        self._call("POST", "/reset")

    def add_fault(self, spec: dict) -> dict:
        return self._call("POST", "/faults", spec)["faults"][0]

    def add_faults(self, specs: list) -> list:
        return self._call("POST", "/faults", {"faults": specs})["faults"]

    def faults(self) -> list:
        return self._call("GET", "/faults")["faults"]

    def clear_faults(self) -> None:
        self._call("DELETE", "/faults")

    def snapshot(self) -> dict:
        return self._call("GET", "/state.json")

    def requests(self) -> list[tuple[str, str, int]]:
        return [(r["method"], r["path"], r["status"]) for r in self._call("GET", "/requests")["requests"]]

    def set_usage(self, family: str, limit: int, current: int = 0, region: str | None = None) -> list:
        return self._call("POST", "/usages", {"family": family, "limit": limit, "current": current,
                                              "region": region})["usages"]

    def set_regional_quota(self, limit: int, region: str | None = None) -> None:
        self._call("POST", "/usages", {"regional": limit, "region": region})

    def set_low_priority_quota(self, limit: int, region: str | None = None) -> None:
        self._call("POST", "/usages", {"lowPriority": limit, "region": region})

    def evict(self, rg: str, name: str) -> dict:
        return self._call("POST", "/evict", {"resourceGroup": rg, "name": name})

    def advance(self, seconds: float) -> None:
        self._call("POST", "/advance", {"seconds": seconds})

    def settle(self) -> int:
        return self._call("POST", "/settle")["completed"]

    def add_skus(self, skus: list) -> int:
        return self._call("POST", "/skus", skus)["added"]

    def load_catalog(self, name: str) -> int:
        return self._call("POST", "/catalog", {"name": name})["added"]

    def set_lro(self, lro) -> None:
        self._call("POST", "/lro", {"lro": lro})

    def set_network_security_groups(self, names: list[str], resource_group: str | None = None) -> None:
        self._call("POST", "/network", {"networkSecurityGroups": list(names), "resourceGroup": resource_group})

    def add_subnet(self, subnet_id: str) -> None:
        self._call("POST", "/network", {"subnets": [subnet_id]})

    def add_backend_pool(self, pool_id: str) -> None:
        self._call("POST", "/network", {"backendPools": [pool_id]})

    def set_resource_graph_lag(self, seconds: float) -> None:
        self._call("POST", "/resourcegraph", {"lag": seconds})

    def close(self) -> None:
        self.session.close()
