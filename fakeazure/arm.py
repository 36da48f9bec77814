"""ARM plumbing shared by every service: the error type, the request/response
objects the handlers see, the clock, and small wire helpers.

Nothing here knows about sockets or ``responses``; ``fakeazure.mock`` and
``fakeazure.server`` adapt their transports to :class:`Request`/:class:`Response`.
"""
from __future__ import annotations

import datetime as _dt
import functools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping
from urllib.parse import parse_qsl, quote, urlsplit

WELL_KNOWN_SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"

# Path fragments shared by every ARM URL table (matched case-insensitively, as ARM treats resource
# names: https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules;
# https://learn.microsoft.com/rest/api/azure/).
SUB_PATH = r"/subscriptions/(?P<sub>[^/]+)"
RG_PATH = SUB_PATH + r"/resourceGroups/(?P<rg>[^/]+)"


_ATOMS = frozenset({str, int, float, bool, type(None)})


def clone_json(obj):
    """A deep copy of JSON-shaped data (dicts, lists, scalars), without copy.deepcopy's memo and
    dispatch: request and resource bodies are copied on every read."""
    if isinstance(obj, dict):
        return {k: v if type(v) in _ATOMS else clone_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [v if type(v) in _ATOMS else clone_json(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(clone_json(v) for v in obj)
    return obj


class ARMError(Exception):
    """An error that is answered in the ARM envelope (the shape azure-mgmt-core 1.6.0
    azure/mgmt/core/exceptions.py ARMErrorFormat parses;
    https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors).

    ``status`` is the HTTP status, ``code``/``message``/``target`` go in the body.
    ``headers`` are extra response headers (``Retry-After`` for throttling only;
    azure-core 1.41.0 azure/core/pipeline/policies/_retry.py RetryPolicy.get_retry_after honors it, so
    never put Retry-After on other 4xx errors).
    """

    def __init__(self, code: str, message: str, status: int = 400, target: str | None = None,
                 details: list[dict] | None = None, headers: Mapping[str, str] | None = None):
        super().__init__(f"({code}) {message}")
        self.code = code
        self.message = message
        self.status = int(status)
        self.target = target
        self.details = list(details or [])
        self.headers = dict(headers or {})

    def error_body(self) -> dict:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.target is not None:
            err["target"] = self.target
        if self.details:
            err["details"] = self.details
        return err

    def envelope(self) -> dict:
        return {"error": self.error_body()}

    def as_sync(self) -> "ARMError":
        """A copy to answer on the request itself.  An error an operation carries has the
        status poll's 200 (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations;
        https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations); answered synchronously
        it needs an error
        status: 409, as ARM's synchronous provisioning failures
        (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors).  Error
        statuses
        (400, 5xx, ...) are kept."""
        return ARMError(self.code, self.message, self.status if self.status >= 400 else 409, self.target,
                        self.details, self.headers)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"ARMError({self.code!r}, status={self.status})"


# An http(s) URL that urllib.parse.urlsplit splits as this pattern does and whose query parse_qsl returns as
# it is (cpython 3.11 Lib/urllib/parse.py): no fragment, IPv6 host, whitespace or control character to strip,
# no percent-escape or "+" to decode, a lower-case scheme. Others go through urlsplit and parse_qsl.
_PLAIN_URL = re.compile(r"(https?)://([A-Za-z0-9_.~!$&'()*,;=:@-]*)(/[A-Za-z0-9_.~!$&'()*,;=:@/-]*)?"
                        r"(?:\?([A-Za-z0-9_.~!$&'()*,;=:@/?-]*))?")
_UNPARSED = object()


@dataclass
class Request:
    """One incoming HTTP request, transport independent."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | str | None = None
    # The operation name the dispatcher resolved ("vm.create", ...): fault matching and the log.
    operation: str | None = None

    def __post_init__(self) -> None:
        self.method = self.method.upper()
        self._json = _UNPARSED
        plain = _PLAIN_URL.fullmatch(self.url)
        if plain is not None:       # what urlsplit and parse_qsl make of it, without their calls
            self.scheme, self.netloc, path, query = plain.groups(default="")
            self.path = path or "/"
            self.raw_query = query
            self.query_list = [(k, v) for k, _, v in (kv.partition("=") for kv in query.split("&") if kv)]
        else:
            parts = urlsplit(self.url)
            self.scheme = parts.scheme or "http"
            self.netloc = parts.netloc
            self.path = parts.path or "/"
            self.raw_query = parts.query
            # parse_qsl decodes '+' as a space: the Retail Prices client (Go url.QueryEscape)
            # sends spaces as '+' (karpenter-provider-azure v1.14.0 pkg/providers/pricing/client/pricingapi.go;
            # https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices).
            self.query_list = parse_qsl(parts.query, keep_blank_values=True)
        self.query_ci = {k.lower(): v for k, v in self.query_list}

    @property
    def base_url(self) -> str:
        """Scheme and authority the client used; LRO and paging links are built on it."""
        return f"{self.scheme}://{self.netloc}"

    @property
    def host(self) -> str:
        return self.netloc.split(":")[0].lower()

    def json(self) -> Any:
        """The body parsed, once: the handler and the request log read the same object, so neither changes
        it (the models store copies)."""
        if self._json is not _UNPARSED:
            return self._json
        if self.body in (None, b"", ""):
            return None
        try:
            raw = self.body.decode("utf-8") if isinstance(self.body, (bytes, bytearray)) else self.body
            self._json = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            # ARM's wording for an undeserializable body (unverified exact text).  RecursionError:
            # nesting deeper than the interpreter's limit.
            detail = "nesting too deep" if isinstance(exc, RecursionError) else str(exc)
            raise invalid_request_content(detail) from None
        return self._json

    def header(self, name: str, default: str | None = None) -> str | None:
        low = name.lower()
        for k, v in self.headers.items():
            if k.lower() == low:
                return v
        return default


@dataclass
class Response:
    status: int
    body: Any = None  # dict/list -> JSON, str/bytes -> as is, None -> empty
    headers: dict[str, str] = field(default_factory=dict)

    def body_bytes(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json_bytes(self.body)

    def all_headers(self) -> dict[str, str]:
        h = dict(self.headers)
        if self.body is not None and not any(k.lower() == "content-type" for k in h):
            h["Content-Type"] = "application/json; charset=utf-8"
        return h


def json_bytes(body: Any) -> bytes:
    """`body` as Response.body_bytes encodes it: for a handler that serializes a view sharing a model's stored
    values under the dispatcher's lock, before anything can change them."""
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def invalid_request_content(detail: str) -> ARMError:
    return ARMError("InvalidRequestContent",
                    f"The request content was invalid and could not be deserialized: '{detail}'.", 400)


# JSON types a body field may have, by the names request shapes use (``catalogs/shapes/<service>.json``).
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
          "number": (int, float), "integer": int}


class _ShapeNode:
    """One path of a request shape and the paths below it: its type name (None: not checked), its fields'
    nodes, its items' node (``a[]``)."""

    __slots__ = ("want", "fields", "items")

    def __init__(self) -> None:
        self.want: str | None = None
        self.fields: dict[str, "_ShapeNode"] = {}
        self.items: "_ShapeNode | None" = None


@functools.lru_cache(maxsize=64)
def _shape_tree(paths: tuple[tuple[str, str], ...]) -> _ShapeNode | None:
    """The shape as a tree, or None when a path's field name holds ``.`` or ``[`` in a way the tree cannot
    say (check_shape then walks the path strings)."""
    root = _ShapeNode()
    for key, want in paths:
        node = root
        if key:
            for step in _STEP.findall(key):
                if step == "[]":
                    node.items = node.items or _ShapeNode()
                    node = node.items
                else:
                    node = node.fields.setdefault(step, _ShapeNode())
            if _rebuild(key) != key:
                return None
        node.want = want
    return root


_STEP = re.compile(r"[^.\[\]]+|\[\]")


def _rebuild(key: str) -> str:
    """The path string of `key`'s steps: `key` itself when the tree says what it says."""
    out = ""
    for step in _STEP.findall(key):
        out += step if step == "[]" or not out else "." + step
    return out


@functools.lru_cache(maxsize=64)
def _prefixes(paths: tuple[str, ...]) -> frozenset[str]:
    """Every path of `paths` and each of their parents (``""`` the body): where check_shape descends."""
    prefixes = {""}
    for key in paths:
        for i, ch in enumerate(key):
            if ch in ".[":
                prefixes.add(key[:i])
        prefixes.add(key)
    return frozenset(prefixes)


def check_shape(body: Any, shape: Mapping[str, str]) -> None:
    """Refuse a request body whose fields have the wrong JSON type, before any model reads it.

    ``shape`` maps a dotted path (``""`` is the body itself; ``a[]`` is every item of the array
    ``a``) to a type name; ``null`` is accepted for every field but the body (ARM treats it as
    absent).  Fields not in ``shape`` are not checked.  A mismatch is 400 InvalidRequestContent
    (the message's detail text is a harness assumption)."""
    tree = _shape_tree(tuple(shape.items()))
    if tree is None or not _walk_tree(body, tree, ""):
        _walk_paths(body, shape)


def _bad_type(path: str, want: str) -> ARMError:
    return invalid_request_content(f"Unexpected value at path '{path or '$'}': expected {want}")


def _type_ok(value: Any, want: str, path: str) -> bool:
    if value is None and path:
        return True
    return isinstance(value, _TYPES[want]) and not (want in ("number", "integer") and isinstance(value, bool))


def _walk_tree(value: Any, node: _ShapeNode, path: str) -> bool:
    """check_shape over the tree, the body's fields in their order (the first mismatch is the one the path walk
    finds). False when a field name is empty or holds ``.`` or ``[`` (its path string could name another node)."""
    want = node.want
    if want is not None and not _type_ok(value, want, path):
        raise _bad_type(path, want)
    if isinstance(value, dict):
        fields = node.fields
        if fields:
            for k, v in value.items():
                if type(k) is not str or not k or "." in k or "[" in k:
                    return False
                child = fields.get(k)
                if child is not None and not _walk_tree(v, child, f"{path}.{k}" if path else k):
                    return False
    elif isinstance(value, list):
        items = node.items
        if items is not None:
            sub = f"{path}[]"
            for v in value:
                if not _walk_tree(v, items, sub):
                    return False
    return True


def _walk_paths(body: Any, shape: Mapping[str, str]) -> None:
    prefixes = _prefixes(tuple(shape))

    def walk(value: Any, path: str) -> None:  # descends only where the shape names fields
        if path not in prefixes:
            return
        want = shape.get(path)
        if want is not None and not _type_ok(value, want, path):
            raise _bad_type(path, want)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, f"{path}[]")
    walk(body, "")


def error_response(err: ARMError) -> Response:
    # errors in the envelope (azure-mgmt-core 1.6.0 azure/mgmt/core/exceptions.py ARMErrorFormat), JSON
    # content type, no Retry-After unless the error itself asks for it (429; azure-core 1.41.0
    # azure/core/pipeline/policies/_retry.py).
    return Response(err.status, err.envelope(), dict(err.headers))


# --------------------------------------------------------------------------- errors every RP shares


def resource_not_found(resource: str, rg: str) -> ARMError:
    """404 ``ResourceNotFound`` for ``resource`` = ``"<Namespace>/<type>/<name>[/<child>/<name>]"``
    (real template: https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors
    lists ResourceNotFound)."""
    return ARMError("ResourceNotFound",
                    f"The Resource '{resource}' under resource group '{rg}' was not found. For more details "
                    f"please go to https://aka.ms/ARMResourceNotFoundFix", 404)


def invalid_resource_reference(ref_id: str, referrer_id: str, target: str | None = None) -> ARMError:
    """400 ``InvalidResourceReference``: the message names the missing resource ID
    (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces;
    Karpenter's karpenter-provider-azure v1.14.0 pkg/providers/instance/lberrors.go
    isMissingSubmittedBackendPool looks for the submitted backend-pool ID in it).  ARM's wording for a
    dangling reference (unverified; CRP and NRP use the same text here)."""
    return ARMError("InvalidResourceReference",
                    f"Resource {ref_id} referenced by resource {referrer_id} was not found. Please make sure that "
                    f"the referenced resource exists, and that both resources are in the same region.", 400,
                    target=target)


def resource_group_not_found(rg: str) -> ARMError:
    return ARMError("ResourceGroupNotFound", f"Resource group '{rg}' could not be found.", 404)


class ResourceGroups:
    """Resource groups exist implicitly until one is added; from then on only the added ones
    do (others: 404 ResourceGroupNotFound)."""

    def __init__(self, names=None):
        self.names: set[str] | None = {n.lower() for n in names} if names is not None else None

    def add(self, name: str) -> None:
        if self.names is None:
            self.names = set()
        self.names.add(name.lower())

    def require(self, rg: str) -> None:
        if self.names is not None and rg.lower() not in self.names:
            raise resource_group_not_found(rg)


# --------------------------------------------------------------------------- clock


class FakeClock:
    """A manual clock: time only moves when told (``advance``/``sleep``).

    LRO progression by time and simulated latency use it, so nothing needs a
    real sleep.  ``sleep`` advances the clock instead of blocking.
    """

    def __init__(self, start: float | _dt.datetime | None = None):
        if start is None:
            start = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
        if isinstance(start, _dt.datetime):
            start = start.timestamp()
        self._t = float(start)
        self._lock = threading.Lock()
        self.slept: float = 0.0  # total simulated sleep, for reports

    def time(self) -> float:
        with self._lock:
            return self._t

    def advance(self, seconds: float) -> float:
        with self._lock:
            self._t += float(seconds)
            return self._t

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept += float(seconds)
            self._t += float(seconds)

    def rewind(self, t: float) -> None:
        """Set the time back (``FakeAzure.reset`` returns its own clock to the start)."""
        with self._lock:
            self._t = float(t)

    def now(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(self.time(), tz=_dt.timezone.utc)


class RealClock:
    """Wall-clock time; ``sleep`` really sleeps.  Opt-in (``FakeAzure(clock=RealClock())``)."""

    slept = 0.0

    def time(self) -> float:
        return time.time()

    def advance(self, seconds: float) -> float:  # pragma: no cover - nothing to advance
        raise RuntimeError("RealClock cannot be advanced")

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        time.sleep(seconds)

    def now(self) -> _dt.datetime:
        return _dt.datetime.now(tz=_dt.timezone.utc)


@functools.lru_cache(maxsize=4096)
def iso(ts: float) -> str:
    """ARM-style timestamp with 7 fractional digits (the status bodies of
    https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations;
    https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations)."""
    d = _dt.datetime.fromtimestamp(ts, tz=_dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond:06d}0+00:00"


# --------------------------------------------------------------------------- ids & links


def guid4(bits: int) -> str:
    """``str(uuid.UUID(int=bits, version=4))`` for a 128-bit int: the variant and version bits set as
    ``uuid.UUID`` sets them (cpython 3.11 Lib/uuid.py UUID.__init__), formatted without building the object
    (a request makes two)."""
    h = "%032x" % ((bits & _GUID_KEEP) | _GUID_SET)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


_GUID_KEEP = ~((0xc000 << 48) | (0xf000 << 64)) & ((1 << 128) - 1)
_GUID_SET = (0x8000 << 48) | (4 << 76)


def new_guid(rng) -> str:
    """A GUID from the state's seeded RNG so runs are reproducible."""
    return guid4(rng.getrandbits(128))


def resource_id(sub: str, rg: str, namespace: str, rtype: str, name: str) -> str:
    return f"/subscriptions/{sub}/resourceGroups/{rg}/providers/{namespace}/{rtype}/{name}"


def parse_resource_id(rid: str) -> dict[str, str]:
    """Split an ARM resource ID (case-insensitive keys).  Returns {} when malformed."""
    parts = [p for p in rid.strip().split("/") if p]
    out: dict[str, str] = {}
    i = 0
    while i + 1 < len(parts):
        key = parts[i].lower()
        if key == "providers" and i + 3 < len(parts):
            out["namespace"] = parts[i + 1]
            out["type"] = parts[i + 2]
            out["name"] = parts[i + 3]
            i += 4
            continue
        out[key] = parts[i + 1]
        i += 2
    return out


def rg_and_name(rid: str) -> tuple[str, str]:
    """(resource group, name) of an ARM resource ID; empty strings when absent."""
    parts = parse_resource_id(rid)
    return parts.get("resourcegroups", ""), parts.get("name", "")


def with_query(base: str, path: str, params: list[tuple[str, str]]) -> str:
    """An absolute link that keeps every continuation parameter (https://learn.microsoft.com/rest/api/azure/: the
    Python SDK re-issues nextLink verbatim, azure-mgmt-compute 39.0.0
    azure/mgmt/compute/operations/_operations.py prepare_request, so it must carry api-version and filter)."""
    q = "&".join(f"{quote(k, safe='$')}={quote(str(v), safe='')}" for k, v in params)
    return f"{base}{path}?{q}" if q else f"{base}{path}"


def paginate(req: Request, items: list, page_size: int | None, token: str = "$skiptoken") -> dict:
    """``{"value": page, "nextLink": absolute-url}``; the last page has no nextLink.

    The nextLink repeats every query parameter of the request (api-version, $filter,
    ...) plus the skip token, because the SDK re-issues it verbatim (azure-mgmt-compute 39.0.0
    azure/mgmt/compute/operations/_operations.py prepare_request; https://learn.microsoft.com/rest/api/azure/)."""
    start = 0
    raw = req.query_ci.get(token.lower())
    if raw:
        try:
            start = max(0, int(raw))
        except ValueError:
            raise ARMError("InvalidSkipToken", f"The skip token '{raw}' is not valid.", 400) from None
    if not page_size or page_size <= 0:
        return {"value": items[start:]}
    page = items[start:start + page_size]
    body: dict = {"value": page}
    nxt = start + page_size
    if nxt < len(items):
        params = [(k, v) for k, v in req.query_list if k.lower() != token.lower()]
        params.append((token, str(nxt)))
        body["nextLink"] = with_query(req.base_url, req.path, params)
    return body
