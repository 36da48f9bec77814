"""Guard rails: nothing in fakeazure may reach a real Azure host.

* In-process (``mock_azure``): ``responses`` intercepts every ``requests`` call;
  ARM and Retail Prices are served by the fake, any other Azure/Microsoft host
  raises :class:`RealAzureBlocked`, and anything else fails as unmatched.
* :func:`block_real_azure` additionally refuses name resolution of Azure hosts for
  *any* library in the process (urllib, aiohttp, requests without a mock) by
  wrapping ``socket.getaddrinfo``.  It is re-entrant and thread-safe.
* fakeazure's own clients (``fakeazure.clients``, ``fetch_prices``, ``RemoteFakeAzure``) default
  to the real hosts' URLs; :func:`refuse_real_azure` makes them raise
  :class:`RealAzureBlocked` instead of sending there unless a ``mock_azure`` is active.
* The loopback server only answers; it never makes outbound calls, and binds loopback only.
"""
from __future__ import annotations

import re
import socket
import threading
from urllib.parse import unquote, urlsplit

AZURE_DOMAINS = ("azure.com", "microsoft.com", "windows.net", "azure.net", "microsoftonline.com",
                 "azure-api.net", "azurecr.io", "visualstudio.com")
_HOST_RE = re.compile(r"(^|\.)(" + "|".join(re.escape(d) for d in AZURE_DOMAINS) + r")$")


class RealAzureBlocked(ConnectionError):
    """Raised instead of contacting a real Azure endpoint."""


def normalize_host(host: str) -> str:
    """The name a resolver would look up: percent-escapes decoded (until none is left), case
    folded, surrounding space and the trailing root dots removed, IDNA labels decoded.
    ``management%2eazure%2ecom`` and ``MANAGEMENT.AZURE.COM.`` both become ``management.azure.com``."""
    name = str(host or "")
    for _ in range(5):
        decoded = unquote(name)
        if decoded == name:
            break
        name = decoded
    name = name.strip().lower().rstrip(".")
    try:
        name = name.encode("ascii").decode("idna") if "xn--" in name else name
    except (UnicodeError, ValueError):
        pass
    return name


def is_azure_host(host: str) -> bool:
    name = normalize_host(host)
    return bool(name) and bool(_HOST_RE.search(name))


def is_azure_url(url: str) -> bool:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:  # e.g. an invalid port: judge the raw authority
        host = url.split("://", 1)[-1].split("/", 1)[0].rsplit("@", 1)[-1].rsplit(":", 1)[0]
    return is_azure_host(host)


def blocked(url_or_host: str) -> RealAzureBlocked:
    return RealAzureBlocked(
        f"fakeazure guard: refusing to contact real Azure endpoint {url_or_host!r}. Only "
        f"https://management.azure.com (ARM) and https://prices.azure.com are served, in-process by "
        f"fakeazure.mock_azure(), or use a FakeAzureServer URL.")


_lock = threading.Lock()
_depth = 0
_real_getaddrinfo = socket.getaddrinfo
_mocks = 0  # active mock_azure() instances: they serve ARM and Retail Prices in-process


def mock_serving(delta: int) -> None:
    """Called by ``mock_azure`` start (+1) and stop (-1)."""
    global _mocks
    with _lock:
        _mocks += delta


def fake_serving() -> bool:
    """Whether a ``mock_azure`` is active, i.e. the real hosts' URLs reach the fake."""
    return _mocks > 0


def refuse_real_azure(url: str) -> None:
    """Raise :class:`RealAzureBlocked` if ``url`` is on a real Azure host and no ``mock_azure``
    is active to serve it: a fakeazure client never sends a request to real Azure."""
    if not fake_serving() and is_azure_url(url):       # serving: nothing to parse
        raise blocked(url)


def _guarded_getaddrinfo(host, *args, **kwargs):
    if isinstance(host, (bytes, bytearray)):
        name = host.decode("ascii", "ignore")
    else:
        name = str(host or "")
    if is_azure_host(name):
        raise blocked(name)
    return _real_getaddrinfo(host, *args, **kwargs)


class block_real_azure:
    """Context manager (also ``start()``/``stop()``) that makes resolving any
    ``*.azure.com`` / ``*.microsoft.com`` / ``*.windows.net`` (...) host raise
    :class:`RealAzureBlocked`."""

    def __init__(self) -> None:
        self._active = False

    def start(self) -> "block_real_azure":
        global _depth
        with _lock:
            if not self._active:
                if _depth == 0:
                    socket.getaddrinfo = _guarded_getaddrinfo
                _depth += 1
                self._active = True
        return self

    def stop(self) -> None:
        global _depth
        with _lock:
            if self._active:
                _depth -= 1
                if _depth == 0:
                    socket.getaddrinfo = _real_getaddrinfo
                self._active = False

    def __enter__(self) -> "block_real_azure":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def guard_active() -> bool:
    return socket.getaddrinfo is _guarded_getaddrinfo
