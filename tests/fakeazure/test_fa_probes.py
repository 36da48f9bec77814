"""Seeded hostile requests to the loopback server (issue 56's server probes, bounded): random request
lines, methods, paths, versions, headers, framing and bodies - the control API's included - sent raw
to `FakeAzureServer` on 127.0.0.1. Each is answered (never held: the client shuts its side once sent,
so a server still waiting for bytes is the only way to reach the socket timeout), never with a 5xx other
than 505 for a version it does not speak, every refusal in the ARM error envelope, no internal error;
and the server stops with every connection thread gone."""
from __future__ import annotations

import json
import random
import socket

import pytest

from fakeazure import FakeAzure, FakeAzureServer

from fa_helpers import RG, SUB

PROBES = 240
SEED = 56
METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "CONNECT", "BREW", "get", "G\tT"]
VM = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Compute/virtualMachines/vm1"
PATHS = [VM, VM + "?api-version=2024-07-01", f"/subscriptions/{SUB}/providers/Microsoft.Compute/skus",
         f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/networkInterfaces/n1?api-version=x",
         f"/subscriptions/{SUB}/providers/Microsoft.Compute/locations/eastus/operations/nope?api-version=x",
         "/_fakeazure/lro", "/_fakeazure/advance", "/_fakeazure/usages", "/_fakeazure/faults", "/_fakeazure/evict",
         "/_fakeazure/network", "/_fakeazure/skus", "/_fakeazure/catalog", "/_fakeazure/resourcegraph",
         "/_fakeazure/reset", "/_fakeazure/settle", "/_fakeazure/nope", "/", "*", "/%00", "/%zz", "/../../etc/passwd",
         "http://other.example/x", "/subscriptions/" + "a" * 3000, "/api/retail/prices?$filter=((((",
         "/subscriptions/%2e%2e/x?api-version=1&api-version=2"]
VERSIONS = ["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/9.9", "HTTP/1.1 extra", "", "HTTX/1.1"]
BODIES = [b"", b"{}", b"[]", b"null", b"5", b'"x"', b"{", b"\xff\xfe", b'{"LRO": "sync"}', b'{"lro": "sync"}',
          b'{"seconds": -1}', b'{"seconds": 1e308}', b'{"seconds": "soon"}', b'{"regional": 5, "x": 1}',
          b'{"faults": [{"code": "Nope"}]}', b'{"code": "TooManyRequests", "times": -1}', b'{"value": [5]}',
          b'{"name": "../../../etc/passwd"}', b'{"lag": 1e99}', b'{"location": 5, "properties": []}',
          json.dumps({"a" * 50: ["b"] * 50}).encode(), b'{"properties": {"hardwareProfile": {"vmSize": []}}}']


def _probe(rng: random.Random) -> bytes:
    """One hostile request, as bytes."""
    method, path, version = rng.choice(METHODS), rng.choice(PATHS), rng.choice(VERSIONS)
    line = f"{method} {path} {version}".rstrip() if rng.random() < 0.9 else f"{method} {path}"   # 0.9 too
    body = rng.choice(BODIES)
    headers = ["Host: 127.0.0.1", "Connection: close"]
    framing = rng.random()
    if framing < 0.5:
        headers.append(f"Content-Length: {len(body)}")
    elif framing < 0.6:
        headers.append(f"Content-Length: {rng.choice(['-1', 'abc', '99999999999999999999', str(len(body) + 40)])}")
    elif framing < 0.7:
        headers += [f"Content-Length: {len(body)}", f"Content-Length: {len(body) + 1}"]
    elif framing < 0.8:
        size = rng.choice([f"{len(body):x}", "zz", "-1", "ffffffffffffffff"])
        headers.append("Transfer-Encoding: chunked")
        body = size.encode() + b"\r\n" + body + b"\r\n0\r\n\r\n"
    if rng.random() < 0.3:
        headers.append(rng.choice(["Content-Type: application/json", "Content-Type: text/html",
                                   "X-Big: " + "x" * 70000, "Host: management.azure.com:443",
                                   "Authorization: Bearer x", "Bad Header Line", "X-Null: a\x00b"]))
    if rng.random() < 0.05:
        headers = [f"X-{i}: {i}" for i in range(120)] + headers          # many header fields
    return ("\r\n".join([line] + headers) + "\r\n\r\n").encode("latin-1", "replace") + body


def _send(url: str, data: bytes) -> bytes:
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)    # nothing more comes: a server waiting for bytes sees the end
        except OSError:
            pass                          # refused and closed before all was sent (an over-long line)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                return out
            if not chunk:
                return out
            out += chunk


@pytest.fixture
def server():
    srv = FakeAzureServer(FakeAzure(seed=SEED))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def test_seeded_hostile_requests_are_answered_in_the_arm_envelope(server):
    rng = random.Random(SEED)
    problems, statuses = [], {}
    for i in range(PROBES):
        data = _probe(rng)
        raw = _send(server.url, data)
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line = head.split(b"\r\n")[0].split(b" ")
        if len(status_line) < 2 or not status_line[1].isdigit():
            problems.append(f"probe {i}: no status line in {raw[:120]!r} for {data[:160]!r}")
            continue
        status = int(status_line[1])
        statuses[status] = statuses.get(status, 0) + 1
        if status >= 500 and status != 505:
            problems.append(f"probe {i}: {status} for {data[:160]!r}")
        if status >= 400 and body and not data.startswith(b"HEAD "):
            try:
                err = json.loads(body)["error"]
                assert isinstance(err["code"], str) and isinstance(err["message"], str)
            except (ValueError, KeyError, TypeError, AssertionError):
                problems.append(f"probe {i}: {status} without an ARM error body: {body[:120]!r}")
    assert not problems, "\n".join(problems[:5])
    assert not server.state.internal_errors, server.state.internal_errors[:1]
    assert sum(n for s, n in statuses.items() if 400 <= s < 500) > PROBES // 2, statuses
