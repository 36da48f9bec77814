"""The in-process SDK transport (fakeazure/transport.py) answers as `mock_azure` does: the same
SDK results, LRO outcomes, error messages and fake state, call for call. It is used inside a
`mock_azure` (whose guard the clients' RefuseRealAzure policy checks), as the engine does."""
from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError, ServiceRequestError

from fakeazure import FakeAzure, mock_azure
from fakeazure.clients import compute_client, network_client
from fakeazure.guard import RealAzureBlocked
from fakeazure.transport import InProcessTransport

from fa_helpers import RG, nic_body, vm_body


def _script(compute, network, state: FakeAzure) -> list:
    """A run of calls covering paging, LROs, a 404, an injected fault and a delete."""
    out: list = []
    out.append(sorted(s.name for s in compute.resource_skus.list(filter="location eq 'southcentralus'"))[:20])
    nic = network.network_interfaces.begin_create_or_update(RG, "n1", nic_body()).result()
    out.append(nic.as_dict())
    vm = compute.virtual_machines.begin_create_or_update(RG, "vm1", vm_body(nic_id=nic.id)).result()
    out.append(vm.as_dict())
    out.append(sorted(v.name for v in compute.virtual_machines.list(RG)))
    out.append({u.name.value: u.current_value for u in compute.usage.list("southcentralus")})
    for name in ("missing", "vm2"):
        if name == "vm2":
            state.add_fault({"code": "SkuNotAvailable", "match": {"size": "Standard_D2s_v3"}, "times": 1})
        try:
            if name == "missing":
                compute.virtual_machines.get(RG, name)
            else:
                compute.virtual_machines.begin_create_or_update(RG, name, vm_body(nic_id=nic.id)).result()
        except HttpResponseError as e:
            out.append((type(e).__name__, e.status_code, e.reason, str(e)))
    compute.virtual_machines.begin_delete(RG, "vm1", force_deletion=True).result()
    out.append([v["name"] for v in state.vms()])
    snap = state.snapshot()
    out.append({k: snap[k] for k in ("requests", "fault_log")})
    return out


def test_transport_answers_like_mock_azure():
    via_mock = FakeAzure(seed=7)
    with mock_azure(via_mock):
        expected = _script(compute_client(via_mock), network_client(via_mock), via_mock)
    via_transport = FakeAzure(seed=7)
    t = InProcessTransport()
    with mock_azure(via_transport), t.serving(via_transport):
        got = _script(compute_client(via_transport, transport=t), network_client(via_transport, transport=t),
                      via_transport)
    assert got == expected


def test_in_process_clients_send_the_same_requests_and_get_the_same_answers():
    """`in_process=True` leaves out only policies that act on nothing the fake answers in-process."""
    sent: dict[str, list] = {}
    results = {}
    for tag, in_process in (("full", False), ("lean", True)):
        fake, t = FakeAzure(seed=7), InProcessTransport()
        handle = fake.handle

        def logged(method, url, headers=None, body=None, handle=handle, tag=tag):
            kept = {k: v for k, v in (headers or {}).items() if k.lower() != "x-ms-client-request-id"}
            sent.setdefault(tag, []).append((method, url, kept, body))
            return handle(method, url, headers, body)
        fake.handle = logged
        with mock_azure(fake), t.serving(fake):
            results[tag] = _script(compute_client(fake, transport=t, in_process=in_process),
                                   network_client(fake, transport=t, in_process=in_process), fake)
    assert results["lean"] == results["full"] and sent["lean"] == sent["full"]


def test_one_transport_serves_one_fake_after_another():
    t = InProcessTransport()
    compute = compute_client(None, transport=t)
    for seed in (1, 2):
        state = FakeAzure(seed=seed)
        with mock_azure(state), t.serving(state):
            assert list(compute.virtual_machines.list(RG)) == []
        assert state.snapshot()["requests"] == 1


def test_unbound_transport_refuses():
    compute = compute_client(None, transport=InProcessTransport())
    with mock_azure(FakeAzure()), pytest.raises(ServiceRequestError, match="no FakeAzure is being served"):
        list(compute.virtual_machines.list(RG))


def test_real_azure_and_other_hosts_are_refused():
    t = InProcessTransport()
    state = FakeAzure()
    with mock_azure(state), t.serving(state):
        with pytest.raises(RealAzureBlocked):
            list(compute_client("https://eastus.management.azure.com", transport=t).virtual_machines.list(RG))
        with pytest.raises(ServiceRequestError, match="serves ARM only"):
            list(compute_client("https://127.0.0.1:9", transport=t).virtual_machines.list(RG))


def test_each_request_carries_its_own_client_request_id():
    """The clients stamp x-ms-client-request-id themselves (fakeazure/clients.py RandomRequestId, not the SDK's
    uuid1): one per request, a version-4 UUID, echoed as the fake's correlation id; a caller's own id wins."""
    import uuid
    state = FakeAzure(seed=1)
    t = InProcessTransport()
    compute = compute_client(state, transport=t)
    seen = []
    with mock_azure(state), t.serving(state):
        for _ in range(3):
            list(compute.virtual_machines.list(RG, raw_response_hook=lambda r: seen.append(
                dict(r.http_request.headers, correlation=r.http_response.headers["x-ms-correlation-request-id"]))))
        list(compute.virtual_machines.list(RG, request_id="mine", raw_response_hook=lambda r: seen.append(
            dict(r.http_request.headers, correlation=r.http_response.headers["x-ms-correlation-request-id"]))))
    ids = [h["x-ms-client-request-id"] for h in seen]
    assert len(ids) == 4 and len(set(ids)) == 4 and ids[-1] == "mine"
    assert all(uuid.UUID(i).version == 4 for i in ids[:3])
    assert all(h["correlation"] == h["x-ms-client-request-id"] for h in seen)
