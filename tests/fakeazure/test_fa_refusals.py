"""Every refusal in the ARM error envelope ({"error": {"code", "message"}}, the shape azure-mgmt-core
1.6.0 azure/mgmt/core/exceptions.py ARMErrorFormat parses), through the real SDK and raw HTTP:
405 MethodNotAllowed with `Allow` for a method a route does not serve (RFC 9110 section 15.5.6),
404 for a path no route has, http.server's own refusals (414, 400) as JSON; a client hanging up is
one quiet log line, never a traceback."""
from __future__ import annotations

import logging
import socket
import struct
import time

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.core.rest import HttpRequest
from azure.mgmt.core.exceptions import ARMErrorFormat

from fakeazure import FakeAzure, FakeAzureServer


def _skus_path(env) -> str:
    return f"/subscriptions/{env.sub}/providers/Microsoft.Compute/skus"


def _arm_error(resp) -> dict:
    assert resp.headers["content-type"].startswith("application/json")
    return resp.json()["error"]


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_method_a_route_does_not_serve_is_405(fake, method):
    r = fake.http.request(method, fake.url(_skus_path(fake), **{"api-version": "2021-07-01"}))
    assert r.status_code == 405
    assert r.headers["Allow"] == "GET, HEAD"
    assert _arm_error(r) == {"code": "MethodNotAllowed",
                             "message": f"The requested resource does not support http method '{method}'."}


def test_405_through_the_sdk(fake):
    """The SDK's pipeline parses the envelope: HttpResponseError with the ARM code."""
    req = HttpRequest("POST", fake.url(_skus_path(fake), **{"api-version": "2021-07-01"}))
    resp = fake.compute._client.send_request(req)
    assert resp.status_code == 405
    with pytest.raises(HttpResponseError) as e:
        raise HttpResponseError(response=resp, error_format=ARMErrorFormat)
    assert e.value.error.code == "MethodNotAllowed"
    # a PUT route serves PUT, GET, PATCH and DELETE, not POST
    vm = fake.url(fake.vm_path("vm1"), **{"api-version": "2024-07-01"})
    r = fake.http.post(vm)
    assert r.status_code == 405 and r.headers["Allow"] == "DELETE, GET, HEAD, PATCH, PUT"


def test_unknown_route_is_404_through_the_sdk(fake):
    with pytest.raises(ResourceNotFoundError) as e:
        list(fake.compute.galleries.list())
    assert e.value.error.code == "NotImplementedInFakeAzure"
    assert "does not serve GET /subscriptions/" in e.value.error.message


def test_head_is_get_without_a_body(fake):
    r = fake.http.head(fake.url("/_fakeazure/health") if fake.mode == "server" else
                       fake.url(_skus_path(fake), **{"api-version": "2021-07-01"}))
    assert r.status_code == 200 and r.content == b""


@pytest.fixture
def server():
    srv = FakeAzureServer(FakeAzure())
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _raw(srv: FakeAzureServer, data: bytes) -> bytes:
    host, port = srv.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as s:
        s.sendall(data)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk


@pytest.mark.parametrize("request_line, status, code", [
    (b"TRACE /_fakeazure/health HTTP/1.1", 405, "MethodNotAllowed"),
    (b"TRACE /anything HTTP/1.1", 404, "NotImplementedInFakeAzure"),
    (b"BREW /_fakeazure/health HTTP/1.1", 405, "MethodNotAllowed"),
    (b"GET /" + b"x" * 70000 + b" HTTP/1.1", 414, "RequestUriTooLong"),
    (b"GET / HTTP/1.1 extra", 400, "BadRequest"),
    (b"GET / HTTP/2.0", 505, "HttpVersionNotSupported"),
])
def test_raw_refusals_are_arm_json(server, request_line, status, code):
    raw = _raw(server, request_line + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b"\r\n")[0].split(b" ")[1] == str(status).encode()
    assert b"content-type: application/json" in head.lower()
    assert b"<html" not in body.lower()
    import json
    assert json.loads(body)["error"]["code"] == code


@pytest.mark.parametrize("request_line", [b"GET /_fakeazure/health", b"POST /subscriptions"])
def test_an_http09_request_is_answered_at_once(server, request_line):
    """A request line without a version (HTTP/0.9) and no header block after it: answered 505 in the
    ARM envelope and closed, not held until the socket timeout waiting for headers 0.9 never sends.
    The client keeps its side open, so only the server's answer and close end _raw."""
    host, port = server.url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(request_line + b"\r\n")
        raw = b""
        while chunk := s.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == b"505"
    import json
    assert json.loads(body)["error"]["code"] == "HttpVersionNotSupported"


def test_client_hang_up_is_one_quiet_line(server, caplog, capfd):
    """A client that resets the connection before the answer is written: one INFO line on the
    `fakeazure.server` logger, nothing on stderr (no traceback)."""
    real_handle = server.state.handle

    def slow(*args, **kwargs):
        time.sleep(0.3)         # the client is gone by the time the answer is written
        return real_handle(*args, **kwargs)
    server.state.handle = slow
    host, port = server.url.split("//")[1].split(":")
    with caplog.at_level(logging.INFO, logger="fakeazure.server"):
        for _ in range(3):
            s = socket.create_connection((host, int(port)))
            s.sendall(b"GET /_fakeazure/state.json HTTP/1.1\r\nHost: x\r\n\r\n")
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))   # close with RST
            s.close()
        deadline = time.monotonic() + 10
        while len([r for r in caplog.records if "hung up" in r.getMessage()]) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records if r.name == "fakeazure.server"]
    hangups = [m for m in lines if "hung up" in m]
    assert len(hangups) == 3, lines
    assert all(m.startswith("client 127.0.0.1:") and m.endswith(("(ConnectionResetError)", "(BrokenPipeError)"))
               for m in hangups)
    assert not any(r.exc_info for r in caplog.records)
    assert "Traceback" not in capfd.readouterr().err
