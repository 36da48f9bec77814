"""Loopback HTTP server: the same handlers as the in-process mock, for other
threads, processes and containers.  Binds 127.0.0.1 by default.

    server = FakeAzureServer(state).start()   # -> "http://127.0.0.1:PORT"
    ...
    server.stop()

ARM paths (``/subscriptions/...``), the Retail Prices path (``/api/retail/prices``)
and the control API (``/_fakeazure/...``) share the one port.  Clients use the URL as
their ``base_url`` (see ``fakeazure.clients``; HTTP bearer tokens need the policy of
fake-azure.md §5.2).
"""
from __future__ import annotations

import ipaddress
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .state import FakeAzure

LOOPBACK = "127.0.0.1"


def is_loopback_host(host: str) -> bool:
    """``localhost`` or an IPv4 loopback address (127.0.0.0/8).  The server is IPv4-only
    (``ThreadingHTTPServer``), so ``::1`` cannot be bound and does not qualify."""
    if host.lower() == "localhost":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.version == 4 and ip.is_loopback


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the SDK's requests session reuses connections
    server_version = "fakeazure"
    sys_version = ""
    timeout = 120  # a stuck client cannot hold a handler thread forever

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without TCP_NODELAY, Nagle plus the
        # client's delayed ACK add ~40 ms to every keep-alive response.
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:  # pragma: no cover
            pass

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        body = self._read_body()
        host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
        url = f"http://{host}{self.path}"
        status, headers, data = self.server.state.handle(self.command, url, dict(self.headers.items()), body)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def log_message(self, fmt, *args) -> None:  # quiet unless asked
        if self.server.verbose:
            sys.stderr.write("fakeazure: %s - %s\n" % (self.address_string(), fmt % args))


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins handler threads: nothing is left running
    block_on_close = True
    allow_reuse_address = True

    def __init__(self, addr, state: FakeAzure, verbose: bool):
        self.state = state
        self.verbose = verbose
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__(addr, _Handler)

    def process_request(self, request, client_address):
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class FakeAzureServer:
    """A threaded loopback server around a :class:`FakeAzure` state.  Any ``host`` that is not
    loopback (:func:`is_loopback_host`) raises ``ValueError``: the fake is never exposed."""

    def __init__(self, state: FakeAzure | None = None, host: str = LOOPBACK, port: int = 0,
                 verbose: bool = False):
        if not is_loopback_host(host):
            raise ValueError(f"fakeazure serves loopback only: {host!r} is not a loopback address "
                             f"(use 127.0.0.1 or localhost)")
        self.state = state if state is not None else FakeAzure()
        self.host = host
        self.port = port
        self.verbose = verbose
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> str:
        if self._httpd is None:
            self._httpd = _Server((self.host, self.port), self.state, self.verbose)
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                            name=f"fakeazure-server-{self._httpd.server_address[1]}",
                                            daemon=True)
            self._thread.start()
        return self.url

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> "FakeAzureServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
