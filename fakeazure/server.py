"""Loopback HTTP(S) server: the same dispatcher as the in-process mock, for other
threads, processes and containers.  Binds 127.0.0.1 by default.

    server = FakeAzureServer(state).start()            # -> "http://127.0.0.1:PORT"
    server = FakeAzureServer(state, tls=True).start()  # -> "https://127.0.0.1:PORT"; trust server.ca_path
    ...
    server.stop()

ARM paths (``/subscriptions/...``), the Retail Prices path (``/api/retail/prices``)
and the control API (``/_fakeazure/...``) share the one port.  Clients use the URL as
their ``base_url`` (see ``fakeazure.clients``; over plain HTTP, bearer tokens need the policy
of azure-core 1.41.0 azure/core/pipeline/policies/_authentication.py, since azure-core 1.41.0
azure/core/pipeline/policies/_authentication.py
_enforce_https refuses them).  Every absolute URL the fake returns (Azure-AsyncOperation, Location,
nextLink) is built on the server's own address and scheme, never on an arbitrary Host header: only
a name the server was told it answers for (``tls_names``: Azure's host names a sandbox resolves to
it) is kept, so a client that reached it as https://management.azure.com polls there too.
"""
from __future__ import annotations

import http
import ipaddress
import json
import logging
import re
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import tls as tlsmod
from .state import FakeAzure

LOOPBACK = "127.0.0.1"
log = logging.getLogger("fakeazure.server")
# A client that goes away mid-request (closed keep-alive socket, reset, TLS close without notify).
HANGUPS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, ssl.SSLEOFError)
# ARM-style codes for the refusals http.server makes itself, before a request reaches the dispatcher
# (status phrases of RFC 9110 / RFC 6585, as PascalCase codes; harness assumption: ARM's front door
# answers these with its own pages).
_SERVER_ERROR_CODES = {400: "BadRequest", 408: "RequestTimeout", 414: "RequestUriTooLong",
                       431: "RequestHeaderFieldsTooLarge", 501: "NotImplemented", 505: "HttpVersionNotSupported"}


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


MAX_BODY = 64 * 1024 * 1024  # bytes; ARM itself refuses far smaller request bodies
# A TLS client has this long to finish its handshake (one that never starts it holds a thread no
# longer), and stop() waits this long for the connections' threads once their sockets are shut.
HANDSHAKE_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0
_DECIMAL = re.compile(r"[0-9]{1,19}")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_METHOD_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")      # RFC 9110 section 5.6.2 token
CRLF, LF, EMPTY = b"\r\n", b"\n", b""


class BadFraming(ValueError):
    """A request whose body cannot be delimited: answered 400 (413 when too large) and closed."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


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

    def parse_request(self) -> bool:
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        words = line.split()
        if len(words) == 2:
            # HTTP/0.9 (a request line without a version): http.server would go on to read header
            # lines a 0.9 client never sends, holding the connection until the socket timeout
            self.requestline, (self.command, self.path) = line, words
            self.request_version, self.close_connection = "HTTP/0.9", True
            self.send_error(http.HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "HTTP/0.9 is not supported")
            return False
        return super().parse_request()

    def _read_body(self) -> bytes:
        """The request body, framed strictly (RFC 9112 section 6): one decimal Content-Length, or
        chunks with hexadecimal sizes; anything else raises :class:`BadFraming`."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(1024).split(b";")[0].strip()
                if not _HEX.fullmatch(line):
                    raise BadFraming(f"invalid chunk size {line[:40]!r}")
                size = int(line, 16)
                total += size
                if total > MAX_BODY:
                    raise BadFraming("request body too large", 413)
                if size == 0:
                    while self.rfile.readline(1024) not in (CRLF, LF, EMPTY):  # trailer fields
                        pass
                    break
                chunks.append(self._read_exactly(size))
                if self.rfile.readline(1024) not in (CRLF, LF):
                    raise BadFraming("chunk data not followed by CRLF")
            return EMPTY.join(chunks)
        values = self.headers.get_all("Content-Length") or []
        if not values:
            return EMPTY
        if len({v.strip() for v in values}) != 1 or not _DECIMAL.fullmatch(values[0].strip()):
            raise BadFraming("invalid Content-Length " + repr(", ".join(values)[:60]))
        length = int(values[0])
        if length > MAX_BODY:
            raise BadFraming("request body too large", 413)
        return self._read_exactly(length) if length else EMPTY

    def _read_exactly(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if len(data) != n:
            raise BadFraming("request body shorter than announced")
        return data

    def _refuse_framing(self, err: "BadFraming") -> None:
        """400 (or 413) in the ARM envelope, then close: the rest of the stream cannot be trusted.
        (The front end's code and wording for bad framing are a harness assumption.)"""
        code = "InvalidRequestFormat" if err.status == 400 else "RequestEntityTooLarge"
        data = json.dumps({"error": {"code": code, "message": f"Cannot parse the request: {err}."}}).encode()
        self.close_connection = True
        self.send_response(err.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _serve(self) -> None:
        try:
            body = self._read_body()
        except BadFraming as err:
            self._refuse_framing(err)
            return
        host = (self.headers.get("Host") or "").strip().lower()
        # a client names the default port when its URL does (`https://prices.azure.com:443/...`, the
        # Retail Prices API's own NextPageLink form): still the name the server answers for
        name = host[:-len(":443")] if host.endswith(":443") else host
        base = f"https://{host}" if name in self.server.names else self.server.base_url
        url = f"{base}{self.path}"
        status, headers, data = self.server.state.handle(self.command, url, dict(self.headers.items()), body)
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def __getattr__(self, name: str):
        # every other method token (TRACE, CONNECT, `get`: methods are case-sensitive, RFC 9110
        # section 9.1) goes to the dispatcher too, which answers 405 MethodNotAllowed on a known path
        # and 404 elsewhere (http.server would send a 501)
        if name.startswith("do_") and _METHOD_TOKEN.fullmatch(name[3:]):
            return self._serve
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (414 URI too long, 400 bad request line, 431 too many headers,
        505, ...) in the ARM error envelope instead of its HTML page; the connection is closed, as
        BaseHTTPRequestHandler.send_error does."""
        try:
            short = http.HTTPStatus(code).phrase
        except ValueError:
            short = "Error"
        text = message or short
        self.log_error("code %d, message %s", code, text)
        if self.request_version == "HTTP/0.9":
            # a request line http.server could not parse leaves it at HTTP/0.9, which has no status
            # line or headers; nobody speaks 0.9 to an ARM endpoint, so answer in HTTP/1.0
            self.request_version = "HTTP/1.0"
        body = json.dumps({"error": {"code": _SERVER_ERROR_CODES.get(code, short.replace(" ", "").replace("-", "")),
                                     "message": f"{text}."}}, separators=(",", ":")).encode()
        self.send_response(code, short)
        self.send_header("Connection", "close")
        self.close_connection = True
        if code >= 200 and code not in (http.HTTPStatus.NO_CONTENT, http.HTTPStatus.RESET_CONTENT,
                                        http.HTTPStatus.NOT_MODIFIED):
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        else:
            self.end_headers()

    def log_message(self, fmt, *args) -> None:  # quiet unless asked
        if self.server.verbose:
            sys.stderr.write("fakeazure: %s - %s\n" % (self.address_string(), fmt % args))


class _Server(ThreadingHTTPServer):
    # the server tracks its connections' threads itself (`_workers`) and stop() joins them for at
    # most STOP_TIMEOUT once their sockets are shut (socketserver's block_on_close joins without end)
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # listen() backlog: socketserver's default of 5 reset ~10% of 20 simultaneous connections
    request_queue_size = 128

    def __init__(self, addr, state: FakeAzure, verbose: bool, ssl_context: ssl.SSLContext | None = None,
                 names: tuple[str, ...] = ()):
        self.state = state
        self.verbose = verbose
        self.ssl_context = ssl_context
        # the host names this server answers for over https (its certificate names them); others
        # get the server's own address in the URLs it returns
        self.names = frozenset(n.lower() for n in names) if ssl_context is not None else frozenset()
        self._conns: set[socket.socket] = set()
        self._workers: set[threading.Thread] = set()
        self._conns_lock = threading.Lock()
        super().__init__(addr, _Handler)
        host, port = self.server_address[:2]
        self.base_url = f"{'https' if ssl_context else 'http'}://{host}:{port}"

    def finish_request(self, request, client_address):
        if self.ssl_context is None:
            return super().finish_request(request, client_address)
        # The TLS handshake runs here, in the connection's own thread, so a slow or silent
        # client cannot stall the accept loop. wrap_socket takes the descriptor over from
        # `request` (closing that object): the TLS socket is what close_connections must shut,
        # before the handshake, or a client that never sends a byte holds stop() until it times out.
        request.settimeout(HANDSHAKE_TIMEOUT)
        try:
            conn = self.ssl_context.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        except (OSError, ssl.SSLError):
            return None
        with self._conns_lock:
            self._conns.add(conn)
        try:
            try:
                conn.do_handshake()
            except (OSError, ssl.SSLError):
                return None
            conn.settimeout(_Handler.timeout)
            return super().finish_request(conn, client_address)
        finally:
            with self._conns_lock:
                self._conns.discard(conn)
            try:
                conn.close()
            except OSError:  # pragma: no cover
                pass

    def handle_error(self, request, client_address) -> None:
        """A client hanging up is one quiet line (logger `fakeazure.server`, INFO; on stderr with
        verbose); anything else is a bug in the fake and keeps socketserver's traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, HANGUPS):
            host, port = client_address[:2] if isinstance(client_address, tuple) else (client_address, "")
            line = f"client {host}:{port} hung up ({type(exc).__name__})"
            log.info("%s", line)
            if self.verbose:
                sys.stderr.write(f"fakeazure: {line}\n")
            return
        super().handle_error(request, client_address)

    def process_request(self, request, client_address):
        thread = threading.Thread(target=self.process_request_thread, args=(request, client_address), daemon=True)
        with self._conns_lock:
            self._conns.add(request)
            self._workers.add(thread)
        thread.start()

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._conns_lock:
                self._workers.discard(threading.current_thread())

    def shutdown_request(self, request):
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._conns_lock:
            conns = list(self._conns)
        for c in conns:
            try:
                # the descriptor's own shutdown: SSLSocket.shutdown would drop its TLS object first,
                # under a thread that may be inside the handshake
                socket.socket.shutdown(c, socket.SHUT_RDWR)
            except OSError:
                pass

    def join_workers(self, timeout: float) -> list[threading.Thread]:
        """Wait up to `timeout` in all for the connections' threads; the ones still running."""
        deadline = time.monotonic() + timeout
        while True:
            with self._conns_lock:
                alive = [t for t in self._workers if t.is_alive()]
            if not alive or time.monotonic() >= deadline:
                return alive
            alive[0].join(max(0.0, min(0.1, deadline - time.monotonic())))


class FakeAzureServer:
    """A threaded loopback server around a :class:`FakeAzure` state.  Any ``host`` that is not
    loopback (:func:`is_loopback_host`) raises ``ValueError``: the fake is never exposed."""

    def __init__(self, state: FakeAzure | None = None, host: str = LOOPBACK, port: int = 0,
                 verbose: bool = False, tls: bool = False, tls_dir: str | None = None,
                 tls_names: tuple[str, ...] = ()):
        """tls: serve https with a certificate from a CA generated for this server (``ca_path``).
        tls_dir: where to write ``ca.pem``/``server.pem``/``server-key.pem`` (kept after stop);
        default: a temporary directory removed by ``stop()``. tls_names: more names the certificate
        is valid for (Azure's host names, for a client whose name resolution points them here)."""
        if not is_loopback_host(host):
            raise ValueError(f"fakeazure serves loopback only: {host!r} is not a loopback address "
                             f"(use 127.0.0.1 or localhost)")
        self.state = state if state is not None else FakeAzure()
        self.host = host
        self.port = port
        self.verbose = verbose
        self.tls = bool(tls or tls_dir)
        self._tls_dir = tls_dir
        self._tls_names = tuple(tls_names)
        self._own_tls_dir: str | None = None
        self.tls_files: tlsmod.TLSFiles | None = None
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http(s)://ADDRESS:PORT``: the base URL for clients (also ``endpoint``)."""
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.base_url

    endpoint = url

    @property
    def ca_path(self) -> str | None:
        """The CA certificate (PEM) that signed the server certificate, or None without TLS."""
        return str(self.tls_files.ca) if self.tls_files else None

    def _ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls:
            return None
        if self.tls_files is None:
            directory = self._tls_dir
            if directory is None:
                directory = self._own_tls_dir = tempfile.mkdtemp(prefix="fakeazure-tls-")
            self.tls_files = tlsmod.generate(directory, tuple(dict.fromkeys((self.host, "127.0.0.1", "localhost")
                                                                            + self._tls_names)))
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.load_cert_chain(str(self.tls_files.cert), str(self.tls_files.key))
        return ctx

    def start(self) -> str:
        if self._httpd is None:
            self._httpd = _Server((self.host, self.port), self.state, self.verbose, self._ssl_context(), self._tls_names)
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                            name=f"fakeazure-server-{self._httpd.server_address[1]}",
                                            daemon=True)
            self._thread.start()
        return self.url

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        try:
            httpd.shutdown()
            httpd.server_close()
            # a connection opened while the loop was stopping is shut too: a second pass
            for _ in range(2):
                httpd.close_connections()
                stuck = httpd.join_workers(STOP_TIMEOUT / 2)
            if stuck:
                log.warning("stopped with %d connection thread(s) still running", len(stuck))
            if self._thread is not None:
                self._thread.join(timeout=STOP_TIMEOUT)
                self._thread = None
        finally:
            self._remove_tls_dir()

    def _remove_tls_dir(self) -> None:
        if self._own_tls_dir is not None:
            shutil.rmtree(self._own_tls_dir, ignore_errors=True)
            self._own_tls_dir = None
            self.tls_files = None

    def __enter__(self) -> "FakeAzureServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
