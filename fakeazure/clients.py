"""Real Azure SDK clients configured for the fake (azure-mgmt-compute 39.0.0
azure/mgmt/compute/_compute_management_client.py).

* credential: :class:`FakeCredential` (a duck-typed TokenCredential);
* ``polling_interval=0`` so long-running operations never sleep (azure-core 1.41.0
  azure/core/polling/base_polling.py): the :class:`PollAtOwnInterval`
  policy drops the ``Retry-After`` the fake puts on running operations (which the SDK would
  otherwise honour over ``polling_interval``);
* ``retry_total=0`` so injected 429/5xx faults surface instead of being retried (azure-core 1.41.0
  azure/core/pipeline/policies/_retry.py);
* ``base_url``: https://management.azure.com for the in-process mock, the server's
  ``http://127.0.0.1:PORT`` with the :class:`AllowHttp` policy that lets the bearer
  token policy run over plain HTTP (azure-core 1.41.0 azure/core/pipeline/policies/_authentication.py), or a TLS
  server's ``https://127.0.0.1:PORT``
  with ``connection_verify`` set to the server's CA (nothing relaxed);
* :class:`RefuseRealAzure`: a request to a real Azure host raises
  :class:`~fakeazure.guard.RealAzureBlocked` unless ``mock_azure`` is active to serve it;
* :class:`RandomRequestId`: each request's ``x-ms-client-request-id`` a random version-4 UUID instead of the
  SDK's ``uuid.uuid1()``, which asks libuuid for a time-based id under a lock (~0.4 ms a request here);
* ``in_process=True``: only the SDK policies that act on an answer from the in-process transport
  (:func:`_in_process_policies`).
"""
from __future__ import annotations

import random
import time
from typing import Any

from azure.core.credentials import AccessToken
from azure.core.pipeline.policies import ContentDecodePolicy, RequestIdPolicy, SansIOHTTPPolicy

from .arm import WELL_KNOWN_SUBSCRIPTION, guid4
from .guard import refuse_real_azure

ARM_URL = "https://management.azure.com"
FAKE_TOKEN = "fakeazure-token"

try:  # azure-core >= 1.31
    from azure.core.credentials import AccessTokenInfo
except ImportError:  # pragma: no cover
    AccessTokenInfo = None  # type: ignore[assignment]


class FakeCredential:
    """Returns a fixed bearer token (``fakeazure-token``) valid for an hour."""

    def __init__(self, token: str = FAKE_TOKEN):
        self.token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken(self.token, int(time.time()) + 3600)

    if AccessTokenInfo is not None:
        def get_token_info(self, *scopes: str, options: Any = None) -> "AccessTokenInfo":
            return AccessTokenInfo(self.token, int(time.time()) + 3600)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


class AllowHttp(SansIOHTTPPolicy):
    """Lets BearerTokenCredentialPolicy send the token over http:// (loopback server)."""

    def on_request(self, request) -> None:
        request.context["enforce_https"] = False


class PollAtOwnInterval(SansIOHTTPPolicy):
    """Removes ``Retry-After`` from successful answers (long-running operations), so the poller
    waits ``polling_interval`` (0 here) instead.  Error answers (429/5xx) keep it for the retry
    policy."""

    def on_response(self, request, response) -> None:
        http = response.http_response
        if http.status_code < 400:
            for name in ("Retry-After", "retry-after-ms", "x-ms-retry-after-ms"):
                if name in http.headers:
                    del http.headers[name]


class RefuseRealAzure(SansIOHTTPPolicy):
    """Checks every request (initial calls, pages, status polls) before it is sent: a real Azure
    host is refused unless ``mock_azure`` is active."""

    def on_request(self, request) -> None:
        refuse_real_azure(request.http_request.url)


class RandomRequestId(SansIOHTTPPolicy):
    """Stamps ``x-ms-client-request-id`` with a random version-4 UUID where the SDK's RequestIdPolicy
    (azure-core 1.41.0 azure/core/pipeline/policies/_universal.py), built with ``auto_request_id=False``,
    left none: unique per request as before, without ``uuid.uuid1()``'s call into libuuid, the largest C
    cost of a small run's requests. A caller's own ``request_id`` is still set by the SDK's policy."""

    HEADER = "x-ms-client-request-id"
    _rng = random.Random()

    def on_request(self, request) -> None:
        headers = request.http_request.headers
        if self.HEADER not in headers:
            headers[self.HEADER] = guid4(self._rng.getrandbits(128))


def _resolve(target: Any) -> tuple[str, str, str | None]:
    """(base_url, subscription_id, CA path or None) for None | FakeAzure | FakeAzureServer | URL str."""
    from .state import FakeAzure
    if target is None:
        return ARM_URL, WELL_KNOWN_SUBSCRIPTION, None
    if isinstance(target, FakeAzure):
        return ARM_URL, target.subscription_id, None
    if isinstance(target, str):
        return target.rstrip("/"), WELL_KNOWN_SUBSCRIPTION, None
    url = getattr(target, "url", None)
    state = getattr(target, "state", None)
    if url:
        return (str(url).rstrip("/"), getattr(state, "subscription_id", WELL_KNOWN_SUBSCRIPTION),
                getattr(target, "ca_path", None))
    raise TypeError(f"expected None, a FakeAzure, a FakeAzureServer or a URL, not {type(target).__name__}")


def _kwargs(base: str, ca: str | None, overrides: dict) -> dict:
    kw: dict[str, Any] = {"base_url": base, "polling_interval": 0, "retry_total": 0,
                          "auto_request_id": False}
    if ca:
        kw["connection_verify"] = ca
    if base.startswith("http://"):
        kw["per_call_policies"] = [AllowHttp()]
    kw.update(overrides)
    extra = kw.get("per_call_policies") or []
    own = [RefuseRealAzure(), RandomRequestId()] + ([PollAtOwnInterval()] if not kw.get("polling_interval") else [])
    kw["per_call_policies"] = own + (list(extra) if isinstance(extra, (list, tuple)) else [extra])
    return kw


def _in_process_policies(credential: FakeCredential, moniker: str, kwargs: dict) -> list:
    """An azure-mgmt client's own pipeline (azure-mgmt-compute 39.0.0 azure/mgmt/compute/_client.py
    ComputeManagementClient.__init__ and _configuration.py, which names the client ``mgmt-compute/<version>`` to
    UserAgentPolicy; azure-mgmt-network the same) without the policies that do nothing to a request the
    in-process transport answers: ProxyPolicy (no proxies), RedirectPolicy and SensitiveHeaderCleanupPolicy (the
    fake never redirects), RetryPolicy (``retry_total=0``: it passes every answer and error through; the
    provider's retries are the harness's, harness/loop/azure/provider.py call), NetworkTraceLoggingPolicy
    (``logging_enable`` unset), DistributedTracingPolicy (tracing off) and ARMHttpLoggingPolicy (INFO lines
    only). Each cost a few µs a request in azure-core's policy runner: ~4 % of a small scenario's CPU. The
    requests and the answers are the same."""
    from azure.core.pipeline.policies import CustomHookPolicy, HeadersPolicy, UserAgentPolicy
    from azure.mgmt.core.policies import ARMAutoResourceProviderRegistrationPolicy, ARMChallengeAuthenticationPolicy
    return [RequestIdPolicy(**kwargs), HeadersPolicy(**kwargs), UserAgentPolicy(sdk_moniker=moniker, **kwargs),
            ContentDecodePolicy(**kwargs), ARMAutoResourceProviderRegistrationPolicy(),
            ARMChallengeAuthenticationPolicy(credential, *kwargs["credential_scopes"], **kwargs),
            CustomHookPolicy(**kwargs)]


def _client(cls: Any, moniker: str, state_or_url: Any, subscription_id: str | None, in_process: bool,
            kwargs: dict):
    base, sub, ca = _resolve(state_or_url)
    kw = _kwargs(base, ca, kwargs)
    credential = FakeCredential()
    if in_process:
        kw.setdefault("credential_scopes", [ARM_URL + "/.default"])
        kw["policies"] = _in_process_policies(credential, moniker, kw)
    return cls(credential, subscription_id or sub, **kw)


def compute_client(state_or_url: Any = None, subscription_id: str | None = None, *, in_process: bool = False,
                   **kwargs: Any):
    """A real ``azure.mgmt.compute.ComputeManagementClient`` pointed at the fake. `in_process`: for
    fakeazure.transport's InProcessTransport only (:func:`_in_process_policies`)."""
    from azure.mgmt.compute import ComputeManagementClient, __version__
    return _client(ComputeManagementClient, f"mgmt-compute/{__version__}", state_or_url, subscription_id, in_process,
                   kwargs)


def network_client(state_or_url: Any = None, subscription_id: str | None = None, *, in_process: bool = False,
                   **kwargs: Any):
    """A real ``azure.mgmt.network.NetworkManagementClient`` pointed at the fake. `in_process`: as for
    :func:`compute_client`."""
    from azure.mgmt.network import NetworkManagementClient, __version__
    return _client(NetworkManagementClient, f"mgmt-network/{__version__}", state_or_url, subscription_id, in_process,
                   kwargs)


# the api-version the provider v1.14.0's machines client sends (its go.mod: github.com/Azure/azure-sdk-for-go/sdk/
# resourcemanager/containerservice/armcontainerservice/v9 v9.4.0-beta.1, machines_client.go version20260402Preview;
# the fake accepts any, dispatch.py)
CONTAINERSERVICE_API_VERSION = "2026-04-02-preview"


class ContainerServicePipeline:
    """An ARM pipeline for Microsoft.ContainerService's agent pools and machines, configured as the compute and
    network clients are: there is no azure-mgmt-containerservice among the harness's dependencies, so the caller
    builds the requests (``azure.core.rest.HttpRequest``) and sends them with :meth:`send`, through the same
    policies (credential, request ids, error mapping) and transport as the other clients."""

    def __init__(self, credential: Any, subscription_id: str, base_url: str = ARM_URL, **kwargs: Any):
        from azure.core.pipeline import policies as p
        from azure.mgmt.core import ARMPipelineClient
        from azure.mgmt.core.policies import (ARMAutoResourceProviderRegistrationPolicy,
                                              ARMChallengeAuthenticationPolicy, ARMHttpLoggingPolicy)
        self.subscription_id = subscription_id
        self.api_version = CONTAINERSERVICE_API_VERSION
        policies = kwargs.pop("policies", None)
        if policies is None:
            scopes = kwargs.pop("credential_scopes", [ARM_URL + "/.default"])
            policies = [p.RequestIdPolicy(**kwargs), p.HeadersPolicy(**kwargs),
                        p.UserAgentPolicy(sdk_moniker="harness-containerservice", **kwargs), p.ProxyPolicy(**kwargs),
                        p.ContentDecodePolicy(**kwargs), ARMAutoResourceProviderRegistrationPolicy(),
                        p.RedirectPolicy(**kwargs), p.RetryPolicy(**kwargs),
                        ARMChallengeAuthenticationPolicy(credential, *scopes, **kwargs), p.CustomHookPolicy(**kwargs),
                        p.NetworkTraceLoggingPolicy(**kwargs), p.DistributedTracingPolicy(**kwargs),
                        p.SensitiveHeaderCleanupPolicy(**kwargs), ARMHttpLoggingPolicy(**kwargs)]
        self.client = ARMPipelineClient(base_url=base_url, policies=policies, **kwargs)

    def send(self, request: Any) -> Any:
        """The pipeline response to `request` (its URL relative to the base URL)."""
        request.url = self.client.format_url(request.url)
        return self.client.send_request(request, stream=False, _return_pipeline_response=True)


def containerservice_client(state_or_url: Any = None, subscription_id: str | None = None, *,
                            in_process: bool = False, **kwargs: Any) -> ContainerServicePipeline:
    """A :class:`ContainerServicePipeline` pointed at the fake. `in_process`: as for :func:`compute_client`."""
    return _client(ContainerServicePipeline, "harness-containerservice", state_or_url, subscription_id, in_process,
                   kwargs)
