"""Long-running operations (ARM async pattern, fake-azure.md §2.4).

An :class:`Operation` is the status resource behind an ``Azure-AsyncOperation``
URL.  It moves from ``InProgress`` to a terminal status after a configured number
of status polls (``FakeAzure(lro={"after_polls": N})``) or when the state is
settled; its ``on_complete`` callback applies the effect to the model (VM becomes
``Succeeded``/``Failed``, a delete really removes the VM and frees quota).
No model code knows about HTTP; the URLs are built by the state and the responses
layer.  :func:`get_operation` is the one status-URL handler both namespaces route to.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from .arm import ARMError, Request, Response, error_response, iso

if TYPE_CHECKING:  # pragma: no cover
    from .state import FakeAzure


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

    @property
    def done(self) -> bool:
        return self.status != "InProgress"

    def status_body(self) -> dict:
        """The operation status resource.  Compute returns name/startTime/endTime
        (fake-azure.md §2.4); Network returns just ``status`` (+ ``error``) (§3)."""
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

    def add(self, op: Operation) -> Operation:
        if len(self.ops) >= self.MAX_KEPT:
            for key in [k for k, o in self.ops.items() if o.done][: self.MAX_KEPT // 2]:
                del self.ops[key]
        self.ops[op.id.lower()] = op
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

    def complete(self, op: Operation) -> None:
        if op.done:
            return
        op.status = "Failed" if op.error is not None else "Succeeded"
        op.end = self.clock.time()
        if op.on_complete is not None:
            op.on_complete(op)

    def settle(self) -> int:
        """Finish every pending operation (as if the client had polled to the end)."""
        n = 0
        for op in list(self.ops.values()):
            if not op.done:
                self.complete(op)
                n += 1
        return n

    def pending(self) -> list[Operation]:
        return [o for o in self.ops.values() if not o.done]

    def clear(self) -> None:
        self.ops.clear()


def get_operation(state: "FakeAzure", req: Request, p: dict) -> Response:
    """GET on an ``Azure-AsyncOperation`` (or ``Location`` monitor) URL, either namespace."""
    op = state.operations.get(p["op"])
    if op is None:
        # (harness assumption, not in reference: the code and wording of an unknown operation ID)
        raise ARMError("NotFound", f"The operation '{p['op']}' could not be found.", 404)
    state.operations.poll(op)
    if req.query_ci.get("monitor", "").lower() == "true":
        # Location (monitor) polling, fake-azure.md §2.4 item 2: 202 while running, then the
        # outcome as a status code.
        if not op.done:
            return Response(202, None, {"Location": req.url})
        if op.status == "Failed" and op.error is not None:
            # §2.4: a poll answer other than 200/201/202/204 surfaces as HttpResponseError; that a
            # failed monitor poll answers 409 (or the error's own 4xx/5xx) is a harness assumption.
            return error_response(op.error.as_sync())
        return Response(200)
    return Response(200, op.status_body())
