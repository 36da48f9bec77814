"""In-process serving through ``responses``: no sockets, no threads.

``mock_azure(state)`` routes https://management.azure.com and https://prices.azure.com
to a :class:`~fakeazure.state.FakeAzure`; every other Azure/Microsoft host raises
:class:`~fakeazure.guard.RealAzureBlocked`; anything else is unmatched and fails
(``responses`` raises ``ConnectionError``) -- unless another ``responses`` mock was
already active, in which case non-Azure URLs are handed to it, so both coexist.
"""
from __future__ import annotations

import functools
import inspect
import re
from typing import Any

import requests
import responses

from .guard import AZURE_DOMAINS, block_real_azure, blocked, mock_serving
from .state import FakeAzure

_METHODS = ("GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE")
SERVED_URL = re.compile(r"^https?://(?:management|prices)\.azure\.com(?::\d+)?(?:[/?#]|$)", re.IGNORECASE)


def _escaped(text: str) -> str:
    """``text`` where each character may also arrive percent-encoded (``.`` as ``%2e``)."""
    return "".join(f"(?:{re.escape(c)}|%{ord(c):02x})" for c in text)


# An Azure/Microsoft host as the guard sees it (fakeazure/guard.py normalize_host): any case,
# percent-encoded characters, trailing root dots.  Matched on the raw URL, since responses
# matches registrations by regular expression only.
_DOT = "(?:\\.|%2e)"
_AZURE_HOST = (r"(?:[^/?#@]*@)?(?:[^/?#:]*" + _DOT + r")?(?:" + "|".join(_escaped(d) for d in AZURE_DOMAINS)
               + r")" + _DOT + r"*(?::\d+)?(?:[/?#]|$)")
# Azure/Microsoft hosts that the fake does not serve (never overlaps SERVED_URL: responses pops
# the first of several matching registrations, so patterns must be disjoint).
OTHER_AZURE_URL = re.compile(r"^https?://(?!(?:management|prices)\.azure\.com(?::\d+)?(?:[/?#]|$))" + _AZURE_HOST,
                             re.IGNORECASE)
NOT_AZURE_URL = re.compile(r"^(?!https?://" + _AZURE_HOST + ")", re.IGNORECASE)


class mock_azure:
    """Context manager and decorator.

    >>> with mock_azure() as state:           # doctest: +SKIP
    ...     compute_client().resource_skus.list()

    As a decorator the state is passed as the keyword argument ``fakeazure`` when the
    function has such a parameter.
    """

    def __init__(self, state: FakeAzure | None = None, *, guard: bool = True, passthrough: bool = False,
                 **state_kwargs: Any):
        """passthrough: let requests to non-Azure hosts (e.g. a loopback kube-apiserver) through
        to the network; Azure hosts other than the served ones stay blocked either way."""
        self.state = state if state is not None else FakeAzure(**state_kwargs)
        self._guard_enabled = guard
        self._passthrough = passthrough
        self._guard = block_real_azure()
        self._mock: responses.RequestsMock | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FakeAzure:
        if self._mock is not None:
            return self.state
        current_send = requests.adapters.HTTPAdapter.send
        outer = current_send is not responses._real_send
        mock = responses.RequestsMock(assert_all_requests_are_fired=False, real_adapter_send=current_send)
        for method in _METHODS:
            mock.add_callback(method, SERVED_URL, callback=self._serve, content_type=None)
            mock.add_callback(method, OTHER_AZURE_URL, callback=_refuse, content_type=None)
        if outer or self._passthrough:
            # Another responses mock (or transport patch) is active, or the caller talks to real
            # non-Azure endpoints: hand non-Azure URLs to it / to the network.
            mock.add_passthru(NOT_AZURE_URL)
        mock.start()
        self._mock = mock
        mock_serving(+1)
        if self._guard_enabled:
            self._guard.start()
        return self.state

    def stop(self) -> None:
        if self._mock is not None:
            self._mock.stop()
            self._mock.reset()
            self._mock = None
            mock_serving(-1)
        self._guard.stop()

    def __enter__(self) -> FakeAzure:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __call__(self, func):
        wants_state = "fakeazure" in inspect.signature(func).parameters

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self as state:
                if wants_state:
                    kwargs.setdefault("fakeazure", state)
                return func(*args, **kwargs)
        if wants_state:
            sig = inspect.signature(func)
            wrapper.__signature__ = sig.replace(  # hide the injected parameter from pytest
                parameters=[p for n, p in sig.parameters.items() if n != "fakeazure"])
        return wrapper

    # ------------------------------------------------------------------ callback
    def _serve(self, request):
        body = request.body
        if hasattr(body, "read"):
            body = body.read()
        status, headers, data = self.state.handle(request.method, request.url, dict(request.headers), body)
        return status, headers, (b"" if request.method == "HEAD" else data)   # a HEAD answer has no body


def _refuse(request):
    raise blocked(request.url)
