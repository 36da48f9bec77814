"""fakeazure as the real controller sees it: the scenario's fake (built exactly as the simulated
engine builds it, harness/runner/engines/azureside.py `fake_azure`) served on a loopback port, with a wire tap
that keeps every request's host and the VM/NIC PUT bodies (the fake itself strips customData from
what it stores, as Azure does: https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update), so the
kubelet stand-in can read the bootstrap
data the controller sent and the conformance report can compare PUT bodies.

TLS: azcore refuses bearer tokens over http (azcore v1.22.0 runtime/policy_bearer_token.go), so the
fake serves https (`FakeAzureServer(tls=True)`: its own CA, every absolute URL it returns is https);
the sandbox forwards the port as raw bytes.
"""
from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.loop.azure.sdk import MAX_RETRIES, RETRY_DELAY, RETRY_STATUS

# azcore v1.22.0 runtime/policy_retry.go calcDelay: RetryDelay * (2^try - 1), jittered by up to 1.3x, for
# the provider's DefaultRetryOpts (pkg/utils/clientopts/armopts.go: 3 retries, 800 ms)
SDK_BACKOFF = RETRY_DELAY * (2 ** MAX_RETRIES - 1) * 1.3
# ... and every try of one request, the first and its retries, before the SDK gives the provider the error
SDK_CHAIN = sum(RETRY_DELAY * (2 ** n - 1) for n in range(1, MAX_RETRIES + 1)) * 1.3
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
    hosts: set[str] = field(default_factory=set)
    puts: list[Put] = field(default_factory=list)
    # time.monotonic() when the last refusal that carried Retry-After may be retried: the controller's
    # SDK sleeps that long before it asks again (azcore v1.22.0 runtime/policy_retry.go honours the
    # header), so until then "nothing changed" says nothing about what it will do
    retry_until: float = 0.0
    # A refusal by a fault rule that refuses every time (no `times`, no `probability`) holds only within
    # the first tries of its request (until the SDK gives up and the provider acts on the error): the same
    # request asked again is answered the same. A launch refused so is retried by core until its
    # LaunchTimeout (5 min, core v1.14.0 nodeclaim/lifecycle/liveness.go), a failed VM's delete by the
    # garbage collector on every period, each time the same request refused the same way: a loop, not
    # progress. While a NodeClaim is in flight the engine holds on `retry_until`, where that holds per
    # request (another NodeClaim's launch is another request) ...
    repeat_since: dict = field(default_factory=dict)       # (method, path) -> when such a rule first refused it
    # ... and once nothing is in flight on `first_tries_until`, where it holds per rule: a background
    # controller asking again and again on its error backoff (the quota controller, core v1.14.0
    # singleton) would hold the run for minutes
    first_tries_until: float = 0.0
    permanent_since: dict = field(default_factory=dict)    # such a rule's id -> when it first refused
    # answers of 400 or more other than 404 (the provider asks for what may not exist before it creates
    # it): what the controller learnt from them it may keep (keeper.py)
    refused: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _permanent(self, since: int) -> list:
        """The fault rules that fired since log entry `since` when every one refuses every time, else []."""
        faults = getattr(self.state, "faults", None)
        if faults is None:
            return []
        ids = {e["fault"] for e in faults.log[since:]}
        rules = [r for r in faults.rules if r.id in ids]
        return rules if rules and all(r.times is None and r.probability is None for r in rules) else []

    def handle(self, method: str, url: str, headers=None, body=None):
        host = (dict(headers or {}).get("Host") or "").lower()
        faults = getattr(self.state, "faults", None)
        since = len(faults.log) if faults is not None else 0
        status, out_headers, data = self.state.handle(method, url, headers, body)
        with self._lock:
            self.hosts.add(host)
            self.refused += status >= 400 and status != 404
            now = time.monotonic()
            after = next((v for k, v in (out_headers or {}).items() if k.lower() == "retry-after"), None)
            try:
                wait = float(after) if status >= 400 and after is not None else None
            except ValueError:
                wait = None
            if wait is None and status in RETRY_STATUS:
                wait = SDK_BACKOFF       # no Retry-After: the SDK's exponential backoff, at most this long a try
            path = url.split("?", 1)[0]
            if wait is not None:
                until = request_until = now + wait
                permanent = self._permanent(since) if status in RETRY_STATUS else []
                if permanent:
                    chain = SDK_CHAIN if after is None else wait * (MAX_RETRIES + 1)
                    first = min(self.permanent_since.setdefault(r.id, now) for r in permanent)
                    until = min(until, first + chain)
                    request_until = min(request_until, self.repeat_since.setdefault((method.upper(), path), now) + chain)
                self.retry_until = max(self.retry_until, request_until)
                self.first_tries_until = max(self.first_tries_until, until)
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

    def machine_vm_puts(self) -> dict[str, Put]:
        """The VMs AKS made for machines (the AKS Machine API modes), as if put: their bodies keep the bootstrap
        AKS gives the kubelet (fakeazure/containerservice/models.py)."""
        bodies = getattr(self.state, "machine_vm_bodies", None)
        return {name: Put("vm", name, "", body, 201) for name, body in (bodies() if bodies else {}).items()}

    def nic_puts(self) -> dict[str, Put]:
        with self._lock:
            return {p.name: p for p in self.puts if p.kind == "nic" and 200 <= p.status < 300}


class Switch:
    """What the fake's server answers with: the current run's wire tap. A controller kept across runs
    (keeper.py) talks to one server for its lifetime, and each run plugs its own fake in."""

    def __init__(self):
        self.tap: WireTap | None = None

    def plug(self, state) -> WireTap:
        self.tap = WireTap(state)
        return self.tap

    def handle(self, method: str, url: str, headers=None, body=None):
        tap = self.tap
        if tap is None:          # between runs: the controller is stopped, nothing should ask
            return 503, {"Content-Type": "application/json"}, b'{"error": {"code": "ServiceUnavailable"}}'
        return tap.handle(method, url, headers, body)


def serve(switch: Switch, tls_dir: Path, names: tuple[str, ...] = ()):
    """The fake behind `switch` on a loopback https port; its CA is `server.ca_path`; its certificate
    is valid for `names` too (the Azure host names the sandbox resolves to it)."""
    from fakeazure.server import FakeAzureServer
    server = FakeAzureServer(switch, tls=True, tls_dir=str(tls_dir), tls_names=names)
    server.start()
    return server


def serve_plain(switch: Switch):
    """The fake behind `switch` on a loopback plain-http port: the node bootstrapping client speaks http to
    NODEBOOTSTRAPPING_SERVER_URL (provider v1.14.0 pkg/providers/imagefamily/nodebootstrappingclient.go Get)."""
    from fakeazure.server import FakeAzureServer
    server = FakeAzureServer(switch, tls=False)
    server.start()
    return server
