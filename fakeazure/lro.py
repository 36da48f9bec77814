"""Long-running operations (the ARM async pattern,
https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations).

An :class:`Operation` is the status resource behind an ``Azure-AsyncOperation`` URL.  It
moves from ``InProgress`` to a terminal status after a configured number of status polls
(``FakeAzure(lro={"after_polls": N})``), or once that many poll intervals have passed on the
state clock whether or not anyone polls (Azure finishes an accepted operation without its client:
a delete whose polls were throttled still removes the VM), or when the state is settled; its
``on_complete`` callback applies the effect to the model (VM becomes ``Succeeded``/``Failed``, a
delete removes the VM and frees quota).

:class:`Lro` is what a handler sees (``ctx.lro``): it starts operations, decides how the
request that started one is answered, and builds the absolute status URLs.
:func:`get_operation` is the one status-URL handler both namespaces route to.
Documented protocol: https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .arm import ARMError, Request, Response, error_response, iso, new_guid

DEFAULT_AFTER_POLLS = 2
# Retry-After (integer seconds) on the answer that starts an operation and on every poll while it
# runs, as ARM sends it (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations
# "Retry-After").  Without it an SDK client waits its default polling interval (30 s in the Python
# and Go SDKs) between polls; both honour the header (azure.core.polling.base_polling
# LROBasePolling._extract_delay; azcore v1.22.0 runtime/poller.go PollUntilDone).  Integer seconds,
# because Go's azcore ignores a fractional Retry-After (internal/shared/shared.go RetryAfter).
DEFAULT_RETRY_AFTER: int | None = 1
# The interval a client polls at without Retry-After (azure-core 1.41.0 azure/core/polling/
# base_polling.py LROBasePolling: polling_interval 30; azcore v1.22.0 runtime/poller.go: 30 s), the
# length of one poll on the clock when the fake sends no Retry-After.
SDK_POLL_INTERVAL = 30
# A faster hint a client may take instead: `x-ms-retry-after-ms`, which Go's azcore prefers to
# Retry-After (azcore v1.22.0 internal/shared/shared.go RetryAfter: retry-after-ms, x-ms-retry-after-ms,
# then retry-after) and Python's azure-core reads only when Retry-After is absent (azure-core 1.41.0
# azure/core/pipeline/policies/_utils.py get_retry_after). ARM sends it on throttled answers; the
# harness sends it on operations only when asked (the real engine: a Go controller polling an
# operation that is already done need not wait a whole second).
RETRY_AFTER_MS_HEADER = "x-ms-retry-after-ms"
# the polls an operation of a timed kind (``Lro.seconds``) would need: more than any client makes, so only its
# time on the state clock finishes it
TIMED_POLLS = 2 ** 31


@dataclass
class Operation:
    id: str
    namespace: str  # "Microsoft.Compute" | "Microsoft.Network"
    location: str
    kind: str  # "vm.create", "vm.update", "vm.delete", "nic.create", "nic.delete", ...
    target: str  # resource id
    start: float
    after_polls: int
    error: ARMError | None = None
    on_complete: Callable[["Operation"], None] | None = None
    status: str = "InProgress"
    polls: int = 0
    end: float | None = None
    due: float | None = None     # on the state clock, it finishes by itself (None: only by polls)

    @property
    def done(self) -> bool:
        return self.status != "InProgress"

    def status_body(self) -> dict:
        """The operation status resource
        (https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations).  Compute
        returns name/startTime/endTime; Network returns just ``status`` (+ ``error``)
        (https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces)."""
        body: dict = {"status": self.status}
        if self.namespace != "Microsoft.Network":
            body = {"startTime": iso(self.start), "status": self.status, "name": self.id}
            if self.end is not None:
                body["endTime"] = iso(self.end)
        if self.status == "Failed" and self.error is not None:
            body["error"] = self.error.error_body()
        return body

    def to_dict(self) -> dict:
        d = {"id": self.id, "kind": self.kind, "target": self.target, "status": self.status,
             "polls": self.polls}
        if self.error is not None:
            d["error"] = {"code": self.error.code, "message": self.error.message}
        return d


class OperationStore:
    MAX_KEPT = 20000  # finished operations beyond this are forgotten, oldest first

    def __init__(self, clock):
        self.clock = clock
        self.ops: dict[str, Operation] = {}
        self.running: dict[str, Operation] = {}    # the ops not done: what every request looks at

    def add(self, op: Operation) -> Operation:
        if len(self.ops) >= self.MAX_KEPT:
            for key in [k for k, o in self.ops.items() if o.done][: self.MAX_KEPT // 2]:
                del self.ops[key]
        self.ops[op.id.lower()] = op
        self.running[op.id.lower()] = op
        if op.after_polls <= 0:
            self.complete(op)
        return op

    def get(self, op_id: str) -> Operation | None:
        return self.ops.get(op_id.lower())

    def poll(self, op: Operation) -> Operation:
        """One status poll: count it, and finish the operation when it is due."""
        if not op.done:
            op.polls += 1
            if op.polls >= op.after_polls:
                self.complete(op)
        return op

    def complete_due(self, now: float) -> int:
        """Finish, in the order they fall due, the pending operations whose time has come."""
        due = sorted((o for o in self.running.values() if o.due is not None and o.due <= now), key=lambda o: o.due)
        for op in due:
            self.complete(op)
        return len(due)

    def complete(self, op: Operation) -> None:
        if op.done:
            return
        op.status = "Failed" if op.error is not None else "Succeeded"
        op.end = self.clock.time()
        self.running.pop(op.id.lower(), None)
        if op.on_complete is not None:
            op.on_complete(op)

    def settle(self) -> int:
        """Finish every pending operation (as if the client had polled to the end)."""
        n = 0
        for op in list(self.running.values()):
            self.complete(op)
            n += 1
        return n

    def pending(self) -> list[Operation]:
        return list(self.running.values())

    def clear(self) -> None:
        self.ops.clear()
        self.running.clear()


def parse_lro_mode(lro: str | Mapping | None) -> int | None:
    """``"immediate"`` -> 1 poll, ``{"after_polls": N}`` -> N, ``"sync"`` -> None (no operations)."""
    if lro is None:
        return DEFAULT_AFTER_POLLS
    if isinstance(lro, str):
        if lro == "immediate":
            return 1
        if lro == "sync":
            return None
    elif isinstance(lro, Mapping) and "after_polls" in lro:
        n = int(lro["after_polls"])
        if n < 1:
            raise ValueError("lro after_polls must be >= 1 (use lro='sync' for no operations)")
        return n
    raise ValueError(f"lro must be 'immediate', 'sync' or {{'after_polls': N}}, not {lro!r}")


class Lro:
    """Operations as handlers use them (``ctx.lro``)."""

    def __init__(self, rng, clock, subscription_id: str, lro: str | Mapping | None = None,
                 retry_after: int | None = DEFAULT_RETRY_AFTER):
        self.rng = rng
        self.clock = clock
        self.subscription_id = subscription_id
        self.store = OperationStore(clock)
        self.after_polls: int | None = parse_lro_mode(lro)
        self.retry_after: int | None = None if retry_after is None else int(retry_after)
        self.retry_after_ms: int | None = None      # also send x-ms-retry-after-ms (see RETRY_AFTER_MS_HEADER)
        # operation kind -> seconds an operation of it runs on the state clock, however often it is polled
        # (``FakeAzure.set_operation_seconds``; e.g. how long Azure takes to delete a VM)
        self.seconds: dict[str, float] = {}

    @property
    def sync(self) -> bool:
        """lro="sync": no operations, every write answers with its final state."""
        return self.after_polls is None

    def carry(self, err: ARMError | None) -> ARMError | None:
        """The error a new operation is to carry.  lro="sync" has no operation to fail, so the
        error is answered now, before anything changes, as a synchronous fault would be
        (``err.as_sync()``: 409 for an allocation failure; docs/fakeazure.md "Differences from Azure")."""
        if err is not None and self.sync:
            raise err.as_sync()
        return err

    def start(self, kind: str, namespace: str, location: str, target: str, error: ARMError | None,
              on_complete: Callable | None, after_polls: int | None = None, timed_as: tuple[str, ...] = ()) -> Operation:
        """An operation of `kind`; it runs as long as the seconds set for `kind`, else for the first of `timed_as`
        set (an operation that does another's work: deleting an AKS machine deletes its VM)."""
        n = self.after_polls
        if n is None:
            n = 0  # lro="sync": complete now
        elif after_polls is not None:
            n = min(n, after_polls)
        now = self.clock.time()
        # as long as its polls take at the interval the answers advertise (Retry-After)
        interval = SDK_POLL_INTERVAL if self.retry_after is None else self.retry_after
        due = now + n * interval
        held = next((self.seconds[k] for k in (kind, *timed_as) if k in self.seconds), None)
        if held is not None and n > 0:
            n, due = TIMED_POLLS, now + held     # its polls do not finish it; the clock does
        op = Operation(id=new_guid(self.rng), namespace=namespace, location=location.lower(), kind=kind,
                       target=target, start=now, after_polls=n, error=error,
                       on_complete=on_complete, due=due)
        return self.store.add(op)

    def headers(self, req: Request, op: Operation, location_header: bool) -> dict[str, str]:
        """Absolute status URLs on the request's base URL (the SDK polls them as given: azure-core 1.41.0
        azure/core/polling/base_polling.py OperationResourcePolling.get_polling_url;
        https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update,
        https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations)."""
        api = req.query_ci.get("api-version", "2026-04-01")
        url = (f"{req.base_url}/subscriptions/{self.subscription_id}/providers/{op.namespace}/locations/"
               f"{op.location}/operations/{op.id}")
        h: dict[str, str] = {}
        if op.namespace == "Microsoft.Compute":
            p = new_guid(self.rng)
            h["Azure-AsyncOperation"] = f"{url}?p={p}&api-version={api}"
            h["Azure-AsyncNotification"] = "Enabled"
            if location_header:
                h["Location"] = f"{url}?p={p}&monitor=true&api-version={api}"
        else:
            h["Azure-AsyncOperation"] = f"{url}?api-version={api}"
            if location_header:
                h["Location"] = f"{url}?monitor=true&api-version={api}"
        return {**h, **self._retry_headers()}

    def _retry_headers(self) -> dict[str, str]:
        h = {} if self.retry_after is None else {"Retry-After": str(self.retry_after)}
        if self.retry_after_ms is not None:
            h[RETRY_AFTER_MS_HEADER] = str(self.retry_after_ms)
        return h

    def reply(self, req: Request, op: Operation, status: int, body: Any = None, *,
              location_header: bool = False, done_status: int = 200) -> Response:
        """The answer to the request that started ``op``: ``status`` with an absolute
        Azure-AsyncOperation URL (+ a Location monitor URL for deletes;
        https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations),
        https://learn.microsoft.com/rest/api/compute/virtual-machines/create-or-update,
        https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations,
        https://learn.microsoft.com/rest/api/compute/virtual-machines/delete.  lro="sync": the operation is already
        done, so ``done_status`` with the
        final body and no async headers.  The body must be taken after the
        operation started, so that lro="sync" shows the final state."""
        if op.done and self.sync:
            return Response(done_status, body)
        return Response(status, body, self.headers(req, op, location_header))

    def poll_reply(self, req: Request, op_id: str) -> Response:
        """GET on an ``Azure-AsyncOperation`` (or ``Location`` monitor) URL."""
        op = self.store.get(op_id)
        if op is None:
            # (harness assumption, not in reference: the code and wording of an unknown operation ID)
            raise ARMError("NotFound", f"The operation '{op_id}' could not be found.", 404)
        self.store.poll(op)
        extra = {} if op.done else self._retry_headers()
        if req.query_ci.get("monitor", "").lower() == "true":
            # Location (monitor) polling,
            # https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations: 202 while running,
            # then the
            # outcome as a status code (azure-core 1.41.0 azure/core/polling/base_polling.py LocationPolling).
            if not op.done:
                return Response(202, None, {"Location": req.url, **extra})
            if op.status == "Failed" and op.error is not None:
                # a poll answer other than 200/201/202/204 surfaces as HttpResponseError (azure-core 1.41.0
                # azure/core/polling/base_polling.py _raise_if_bad_http_status_and_method;
                # https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations); that a
                # failed monitor poll answers 409 (or the error's own 4xx/5xx) is a harness assumption.
                return error_response(op.error.as_sync())
            return Response(200)
        return Response(200, op.status_body(), extra)


def get_operation(ctx, req: Request, p: dict) -> Response:
    """Route handler for the status URLs of both namespaces."""
    return ctx.lro.poll_reply(req, p["op"])
