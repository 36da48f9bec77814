"""fakeazure as the real controller sees it: the scenario's fake (built exactly as the simulated
engine builds it, harness/runner/engine.py `_fake_azure`) served on a loopback port, with a wire tap
that keeps every request's host and the VM/NIC PUT bodies (the fake itself strips customData from
what it stores, as Azure does: fake-azure.md §2.3), so the kubelet stand-in can read the bootstrap
data the controller sent and the conformance report can compare PUT bodies.

TLS: azcore refuses bearer tokens over http (azcore v1.22.0 runtime/policy_bearer_token.go), so the
controller talks https. The sandbox forwarder terminates TLS (harness/runner/real/sandbox.py) and the
tap hands the fake an https URL, so every absolute URL the fake returns (Azure-AsyncOperation,
Location, nextLink) is https as well.
"""
from __future__ import annotations

import json
import re
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.pki import PKI

PUT_BODY = re.compile(r"/providers/Microsoft\.(Compute/virtualMachines|Network/networkInterfaces)/([^/]+)$", re.I)


@dataclass
class Put:
    kind: str          # "vm" | "nic"
    name: str
    path: str
    body: dict
    status: int


@dataclass
class WireTap:
    """Stands in front of a FakeAzure state for FakeAzureServer (it only calls `handle`)."""
    state: object
    scheme: str = "https"
    hosts: set[str] = field(default_factory=set)
    puts: list[Put] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, method: str, url: str, headers=None, body=None):
        if url.startswith("http://") and self.scheme == "https":
            url = "https://" + url[len("http://"):]
        host = (dict(headers or {}).get("Host") or "").lower()
        status, out_headers, data = self.state.handle(method, url, headers, body)
        with self._lock:
            self.hosts.add(host)
            path = url.split("?", 1)[0]
            m = PUT_BODY.search(path) if method.upper() == "PUT" else None
            if m and body:
                try:
                    parsed = json.loads(body)
                except ValueError:
                    parsed = None
                if isinstance(parsed, dict):
                    kind = "vm" if m.group(1).lower().startswith("compute") else "nic"
                    self.puts.append(Put(kind, m.group(2), path, parsed, status))
        return status, out_headers, data

    def vm_puts(self) -> dict[str, Put]:
        """The last accepted (2xx) VM PUT per VM name."""
        with self._lock:
            return {p.name: p for p in self.puts if p.kind == "vm" and 200 <= p.status < 300}

    def nic_puts(self) -> dict[str, Put]:
        with self._lock:
            return {p.name: p for p in self.puts if p.kind == "nic" and 200 <= p.status < 300}


def tls_context(pki_dir: Path) -> tuple[ssl.SSLContext, Path]:
    """A server context for the fake's port (a serving certificate for IP:127.0.0.1 from a fresh
    CA) and the CA file the controller trusts."""
    pki = PKI(pki_dir)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(pki.serving.cert), str(pki.serving.key))
    return ctx, Path(pki.ca.cert)


def serve(state) -> tuple[object, WireTap]:
    """The fake on a loopback port (plain HTTP; TLS is terminated in front of it)."""
    from fakeazure.server import FakeAzureServer
    tap = WireTap(state)
    server = FakeAzureServer(tap)
    server.start()
    return server, tap
