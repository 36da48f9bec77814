"""An Azure SDK transport that hands each request straight to a FakeAzure in the calling thread.

The SDK's pipeline (policies, serialization, LRO polling, paging, error mapping) runs unchanged;
only the last hop differs from ``mock_azure``: no ``requests`` session and no ``responses``
matcher, which cost more CPU than the fake's own handling of a call. The request the fake sees
and the response the SDK gets are built the way that path builds them: the URL re-quoted as
``requests`` prepares it (requests.utils.requote_uri), the reason phrase from
``http.client.responses`` (as ``responses`` sets it), the headers case-insensitive.

Bound to a fake per use (:meth:`InProcessTransport.serving`), so clients built once can serve one
scenario after another. Used inside ``mock_azure`` (fakeazure's clients refuse an ARM URL unless
one is active, and it keeps the process-wide guard on). Only the hosts ``mock_azure`` serves are answered; a real Azure host
raises :class:`~fakeazure.guard.RealAzureBlocked`, anything else ``ServiceRequestError``.
Transport contract: azure-core ``azure.core.pipeline.transport.HttpTransport`` and
``azure.core.rest.HttpResponse`` (https://learn.microsoft.com/python/api/azure-core/azure.core.pipeline.transport.httptransport).
"""
from __future__ import annotations

import contextlib
import functools
import http.client
import re
from typing import Any, Iterator

from azure.core.exceptions import ServiceRequestError
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest._helpers import get_charset_encoding
from azure.core.rest._http_response_impl import HttpResponseImpl
from azure.core.utils import CaseInsensitiveDict
from requests.utils import requote_uri

from .guard import block_real_azure, blocked, is_azure_url, mock_serving
from .mock import SERVED_URL


# A URL of only the characters requests.utils.requote_uri leaves as they are (urllib's always-safe ones and
# its `safe` set; no "%", so nothing to unquote): requoting returns it unchanged (requests 2.32 utils.py).
_REQUOTED_AS_IS = re.compile(r"[A-Za-z0-9_.~!#$&'()*+,/:;=?@\[\]-]*")


def _requote(url: str) -> str:
    return url if _REQUOTED_AS_IS.fullmatch(url) else requote_uri(url)


class _Closed:
    """The `internal_response` of an answer that was never on a socket."""

    def close(self) -> None:
        pass


def _whole_body(pipeline: Any, response: "InProcessResponse", **kwargs: Any) -> Iterator[bytes]:
    yield response.content


class _ContentTypeOnly:
    """What azure-core's get_charset_encoding reads of a response: its Content-Type header."""

    def __init__(self, content_type: str | None):
        self.headers = {"Content-Type": content_type}


@functools.lru_cache(maxsize=64)
def _charset(content_type: str | None) -> str | None:
    """azure-core's own charset of a Content-Type (parsed with ``email.message``, a few hundred Python calls),
    worked out once per distinct header value: the fake answers with a handful."""
    return get_charset_encoding(_ContentTypeOnly(content_type))


def _headers(headers: dict[str, str]) -> CaseInsensitiveDict:
    """``CaseInsensitiveDict(headers)``, its store filled at once rather than through MutableMapping.update's
    ``__setitem__`` per header (azure-core 1.41.0 azure/core/utils/_utils.py: ``_store`` maps each lower-case
    key to the (key, value) last set under it, in the order the keys were first set)."""
    h = CaseInsensitiveDict()
    store = getattr(h, "_store", None)
    if type(store) is not dict:
        return CaseInsensitiveDict(headers)
    store.update({k.lower(): (k, v) for k, v in headers.items()})
    return h


def _plain(headers: Any) -> dict[str, str]:
    """``dict(headers)`` of a request's headers, read from a CaseInsensitiveDict's store (see _headers) rather than
    through the Mapping protocol's Python-level iteration and lookups."""
    store = getattr(headers, "_store", None) if type(headers) is CaseInsensitiveDict else None
    return dict(store.values()) if type(store) is dict else dict(headers)


class InProcessResponse(HttpResponseImpl):
    """A fully read response: the fake's status, headers and body. Its `encoding` is set up front, the
    value azure-core's `HttpResponseImpl.encoding` would work out on first read (``_charset``).

    Built from a copy of the attributes azure-core's own ``__init__`` gave a prototype (``_PROTOTYPE``),
    with this answer's set over them: the same attributes and values, without the ~18 calls of the
    backcompat mixin's ``__setattr__`` an ``__init__`` makes (a few % of a small run's CPU). An azure-core
    whose ``__init__`` sets other attributes than ``_PER_ANSWER`` expects is built by its ``__init__``."""

    def __init__(self, request: Any, status: int, headers: dict[str, str], body: bytes):
        h = _headers(headers)
        content_type = h.get("content-type")
        if _PROTOTYPE is not None:
            d = self.__dict__
            d.update(_PROTOTYPE)
            d["_request"], d["_status_code"], d["_reason"] = request, status, http.client.responses.get(status)
            d["_content_type"], d["_headers"], d["_internal_response"] = content_type, h, _Closed()
            d["_content"], d["_encoding"] = body, _charset(content_type)
            return
        super().__init__(request=request, internal_response=_Closed(), status_code=status,
                         reason=http.client.responses.get(status), content_type=content_type,
                         headers=h, stream_download_generator=_whole_body)
        self._content = body
        self._encoding = _charset(content_type)


# The attributes InProcessResponse sets per answer; every other one azure-core's __init__ sets is the same
# for every answer (azure-core 1.41.0 azure/core/rest/_http_response_impl.py _HttpResponseBaseImpl.__init__).
_PER_ANSWER = frozenset({"_request", "_status_code", "_reason", "_content_type", "_headers", "_internal_response",
                         "_content", "_encoding"})
_PROTOTYPE: dict | None = None


def _prototype() -> dict | None:
    probe = InProcessResponse(None, 200, {"Content-Type": "application/json"}, b"")
    attrs = dict(probe.__dict__)
    return attrs if _PER_ANSWER <= set(attrs) and "_stream_download_generator" in attrs else None


_PROTOTYPE = _prototype()


class InProcessTransport(HttpTransport):
    """Serves the SDK's requests from ``self.state`` (a FakeAzure), set for a while by `serving`."""

    def __init__(self) -> None:
        self.state = None

    @contextlib.contextmanager
    def serving(self, state, guard: bool = False):
        """Answer from `state` inside the block; outside it every request fails. `guard`: also what
        ``mock_azure`` gives these clients, for a caller that sends nothing through ``requests``: fakeazure's
        clients may address the real ARM host (``fake_serving``) and the process-wide guard refuses to resolve
        an Azure host (``block_real_azure``); ``requests`` is not patched (building and starting a
        ``responses`` mock was ~1 % of a small scenario's CPU)."""
        previous, self.state = self.state, state
        resolver = block_real_azure() if guard else None
        if resolver is not None:
            mock_serving(+1)
            resolver.start()
        try:
            yield state
        finally:
            self.state = previous
            if resolver is not None:
                resolver.stop()
                mock_serving(-1)

    def send(self, request, **kwargs: Any) -> InProcessResponse:
        url = _requote(request.url)
        if not SERVED_URL.match(url):
            if is_azure_url(url):
                raise blocked(url)
            raise ServiceRequestError(f"fakeazure in-process transport serves ARM only, not {url!r}")
        if self.state is None:
            raise ServiceRequestError("fakeazure in-process transport: no FakeAzure is being served")
        body = request.content
        if hasattr(body, "read"):
            body = body.read()
        status, headers, data = self.state.handle(request.method, url, _plain(request.headers), body)
        return InProcessResponse(request, status, headers, data)

    def sleep(self, duration: float) -> None:
        """The poller's wait between polls: the fake's clients poll at interval 0 (fakeazure/clients.py), and
        ``time.sleep(0)`` would still give up the CPU at each poll."""
        if duration > 0:
            super().sleep(duration)

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "InProcessTransport":
        return self

    def __exit__(self, *args: Any) -> None:
        pass
