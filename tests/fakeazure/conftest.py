"""Fixtures for the fakeazure tests: every endpoint test runs in both serving modes.

``fake`` is parametrized: ``inprocess`` (``responses``, no sockets) and ``server``
(a FakeAzureServer on 127.0.0.1).  Each gives the state, real SDK clients, and a
plain ``requests`` session plus the base URLs to reach ARM and the prices API.
"""
from __future__ import annotations

import pathlib
import sys
import threading
from dataclasses import dataclass, field
from urllib.parse import urlencode

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
for _p in (ROOT, HERE):  # the repo is not necessarily pip-installed; fa_helpers sits next to us
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from fakeazure import FakeAzure, FakeAzureServer, mock_azure  # noqa: E402
from fakeazure.clients import compute_client, network_client  # noqa: E402

from fa_helpers import RG, SUB  # noqa: E402,F401


@dataclass
class Env:
    mode: str
    state: FakeAzure
    base: str
    prices_base: str
    http: requests.Session
    server: FakeAzureServer | None = None
    _clients: dict = field(default_factory=dict)

    @property
    def compute(self):
        if "compute" not in self._clients:
            self._clients["compute"] = compute_client(self.server if self.server else self.state)
        return self._clients["compute"]

    @property
    def network(self):
        if "network" not in self._clients:
            self._clients["network"] = network_client(self.server if self.server else self.state)
        return self._clients["network"]

    @property
    def sub(self) -> str:
        return self.state.subscription_id

    def url(self, path: str, **query) -> str:
        q = urlencode(query, safe="$'") if query else ""
        return f"{self.base}{path}" + (f"?{q}" if q else "")

    def vm_path(self, name: str, rg: str = RG) -> str:
        return f"/subscriptions/{self.sub}/resourceGroups/{rg}/providers/Microsoft.Compute/virtualMachines/{name}"

    def nic_path(self, name: str, rg: str = RG) -> str:
        return f"/subscriptions/{self.sub}/resourceGroups/{rg}/providers/Microsoft.Network/networkInterfaces/{name}"

    def nic_id(self, name: str, rg: str = RG) -> str:
        return self.nic_path(name, rg)

    def close(self) -> None:
        for c in self._clients.values():
            c.close()
        self.http.close()


@pytest.fixture
def make_env():
    """Factory: make_env(mode, **FakeAzure kwargs) -> Env; torn down after the test."""
    made: list[tuple[Env, object]] = []

    def factory(mode: str = "inprocess", state: FakeAzure | None = None, **kwargs) -> Env:
        state = state if state is not None else FakeAzure(**kwargs)
        if mode == "inprocess":
            m = mock_azure(state)
            m.start()
            env = Env(mode, state, "https://management.azure.com", "https://prices.azure.com", requests.Session())
            made.append((env, m))
        elif mode == "server":
            srv = FakeAzureServer(state)
            url = srv.start()
            env = Env(mode, state, url, url, requests.Session(), server=srv)
            made.append((env, srv))
        else:
            raise ValueError(mode)
        return env

    yield factory
    for env, owner in reversed(made):
        env.close()
        owner.stop()


@pytest.fixture(params=["inprocess", "server"])
def mode(request) -> str:
    return request.param


@pytest.fixture
def fake(make_env, mode) -> Env:
    return make_env(mode)


@pytest.fixture(autouse=True)
def _no_leaked_threads():
    before = {t.ident for t in threading.enumerate()}
    yield
    leaked = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()
              and (t.name.startswith("fakeazure") or "process_request_thread" in t.name)]
    assert not leaked, f"threads left running: {leaked}"
