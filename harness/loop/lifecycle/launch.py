"""NodeClaim launch (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/launch.go).

Reconcile calls cloudProvider.Create (harness/loop/azure/provider.py AzureProvider.create, standing for the
Azure provider v1.14.0 pkg/cloudprovider/cloudprovider.go Create). A success is written back with
PopulateNodeClaimDetails and the Launched condition; an InsufficientCapacity error (which includes
NodeClassNotFound) deletes the NodeClaim (launchNodeClaim), as does the provider itself when a VM it
already returned fails (from provider v1.4: provider.asyncProvisioning); any other error is retried on
the next pass; a retry that fails exactly as the attempt before it is no change, so the loop can settle
while core keeps retrying. A NodeClaim not launched within its timeout is deleted first (lifecycle/liveness.go,
liveness.py). Each launch, failure and timeout goes to the decision record with its reason
(harness/loop/provisioning/reasons.py): the offering and why that one, Azure's error code, what was marked
unavailable.
"""
from __future__ import annotations

from harness.backends.base import KARPENTER, APIRejected
from harness.loop.provisioning import reasons
from harness.loop.azure.provider import Launched, LaunchFailure, PendingMachine
from harness.loop.lifecycle.liveness import unlaunched_timeout
from harness.loop.state import Claim, LoopState
from harness.loop.lifecycle.termination import Termination
from harness.loop.azure.machinetags import INPLACE_UPDATE_HASH
from harness.model.azure.aksmachines import MACHINE_ANNOTATION
from harness.model.values.resources import format_resource_list
from harness.model.labels.writers import resolved_requirement_labels

# the reason label the provider counts its own NodeClaim delete under (provider v1.14.0
# pkg/cloudprovider/cloudprovider.go handleInstancePromise)
ASYNC_PROVISIONING_REASON = "async_provisioning"
ASYNC_PROVISIONING_EVENT = "AsyncProvisioningError"       # events.go AsyncProvisioningReason


class Launch:
    def __init__(self, state: LoopState, termination: Termination):
        self.state = state
        self.termination = termination
        # NodeClaim -> how many of its failed launches repeated the failure before them exactly
        self.retried: dict[str, int] = {}
        self._rules: dict[str, tuple | None] = {}     # NodeClaim -> the fault rules its last failure met (FaultEngine.settled)

    def reconcile(self) -> bool:
        s = self.state
        progress = False
        todo = [c for c in s.claims if not c.done and c.launched is None]
        if len(todo) > 1:
            # the lifecycle controller launches NodeClaims in parallel workers: which create reaches Azure
            # first is a race (the seed decides), and each chose its offering before any of the others failed
            s.launch_rng.shuffle(todo)
        with s.provider.unavailable.concurrent() as batch:
            pending: list[tuple[Claim, PendingMachine]] = []
            for i, c in enumerate(todo):
                if i and s.cfg.launches == "staggered" and batch.held() and s.stagger_rng.random() < 0.5:
                    # given.loop.launches: staggered - on a busy controller this worker started once the ones
                    # ahead of it were done: what their failures marked unavailable is gone for it
                    # (loop/outcome-sets concurrent-launches-race-for-one-allocation-failure)
                    batch.release()
                out = self._launch(c)
                if isinstance(out, PendingMachine):
                    pending.append((c, out))
                else:
                    progress |= out
            if pending:
                # aksmachineapiheaderbatch: the round's creates went into header batches, sent once the round has
                # queued them all (the batcher's idle timer), then each Create finishes with its machine's answer
                s.provider.flush_batch()
                for c, p in pending:
                    progress |= self._launched(c, p.finish())
        return progress

    def repeating(self) -> list[Claim]:
        """Live NodeClaims whose last launches failed again exactly as before: what core keeps retrying
        until its launch timeout (liveness.go) while nothing changes."""
        return [c for c in self.state.claims if not c.done and c.launched is None and self.retried.get(c.result.name)]

    def _launch(self, c: Claim) -> "bool | PendingMachine":
        """One NodeClaim's Launch reconcile; True when something changed (a retry that fails as the one
        before it did changes nothing); a PendingMachine when its create waits for a header batch."""
        s = self.state
        at, reason = unlaunched_timeout(s, c)
        if s.clock.now() > at:
            if s.decisions.enabled:
                last = c.result.failures[-1] if c.result.failures else None
                s.decide("launch", "nodeclaim-launch-timed-out", f"NodeClaim/{c.result.name}",
                         f"not launched {int(s.clock.now() - c.created_at)}s after its creation: deleted ({reason})"
                         + (f"; its last launch failed: {last['reason']}: {last['message']}" if last else ""),
                         (f"NodePool/{c.template.name}",))
            self.termination.delete_claim(c, reason)
            return True
        nodeclass = s.cluster.get("AKSNodeClass", c.nodeclass_name) if c.nodeclass_name else None
        out = s.provider.create(c.obj, c.requirements, c.nodeclass, c.nodeclass_name,
                                lambda its: s.overlays.instance_types(s, c.template.name, its),
                                nodeclass_tags=((nodeclass or {}).get("spec") or {}).get("tags"))
        if isinstance(out, PendingMachine):
            return out
        return self._launched(c, out)

    def _launched(self, c: Claim, out: "Launched | LaunchFailure") -> bool:
        """What Create returned, on the NodeClaim: its failure recorded (and the NodeClaim deleted where core
        deletes it), or its launch."""
        s = self.state
        if isinstance(out, LaunchFailure):
            failure = {"kind": out.kind, "reason": out.reason, "message": out.message,
                       "code": out.code, "attempted": out.attempted}
            kept = not out.asynchronous and out.kind != "InsufficientCapacity"     # the NodeClaim stays
            # what anyone sees of a failure: the Launched condition's reason and message, the refused request
            # (the same VM name); not the offering the provider happened to try (a random zone among equals)
            seen = {k: v for k, v in failure.items() if k != "attempted"}
            # ... and only while the fake answers a repeat the same way: a fault rule that counts (`times`,
            # `skip`) or draws (`probability`) changes with each request, so each retry is progress towards
            # the launch that succeeds once the rule is used up, as core's backoff reaches it
            rules = s.fake.faults_settled()
            repeat = kept and bool(c.result.failures) and rules is not None and \
                {k: v for k, v in c.result.failures[-1].items() if k != "attempted"} == seen and \
                self._rules.get(c.result.name) == rules
            self._rules[c.result.name] = rules
            c.result.failure = failure
            c.result.failures.append(failure)
            if repeat:
                # core requeues a failed Create with backoff (launch.go launchNodeClaim returns the error);
                # the same error leaves the Launched condition as it was (SetUnknownWithReason, same reason
                # and message) and Azure as it was: nothing anyone observes changed, which the real engine's
                # settle does not count as a change either (runner/engines/real/outcome/observe.py _azure_writes)
                self.retried[c.result.name] = self.retried.get(c.result.name, 0) + 1
                s.trace(f"launch of {c.result.name} failed again as before ({out.reason}; "
                        f"{self.retried[c.result.name]} identical retr{'y' if self.retried[c.result.name] == 1 else 'ies'})")
                return False
            s.trace(f"launch of {c.result.name} failed: {out.reason}: {out.message}")
            if s.decisions.enabled:
                self._record_failure(c, out, kept)
            if out.asynchronous:
                # the provider's own event and delete after the VM failed (azure/provider.py create,
                # provider.asyncProvisioning; provider v1.14.0 pkg/cloudprovider/events/events.go
                # NodeClaimFailedToRegister, truncateMessage at 500 characters)
                text = out.message if len(out.message) < 500 else out.message[:500] + "..."
                s.record_event("NodeClaim", c.result.name, ASYNC_PROVISIONING_EVENT, f"Failed to register: {text}")
                self.termination.delete_claim(c, ASYNC_PROVISIONING_REASON)
            elif out.kind == "InsufficientCapacity":
                self.termination.delete_claim(c, f"insufficient capacity, {out.message}")
            return True
        self.populate(c, out)
        return True

    def populate(self, c: Claim, out: Launched, seeded: bool = False) -> None:
        """PopulateNodeClaimDetails (launch.go; sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/nodeclaim/lifecycle/launch.go): the provider's labels under
        the NodeClaim's own; providerID, capacity, allocatable; Launched=True. Profiles with
        `labelResolution: requirementsLabels` resolve single-valued requirements into labels here,
        as core did before v1.9 (sigs.k8s.io/karpenter v1.6.2 pkg/controllers/nodeclaim/lifecycle/
        launch.go PopulateNodeClaimDetails; sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go,
        pkg/scheduling/requirement.go); later cores do it in
        scheduling/nodeclaimtemplate.go ToNodeClaim (provisioner.py). `seeded`: a node the scenario gives
        (loop/seed.py), pinned to its instance type, zone and capacity type."""
        s = self.state
        c.launched, c.launched_at = out, s.clock.now()
        own = dict(c.obj["metadata"].get("labels") or {})
        labels = dict(out.nodeclaim_labels)
        if s.profile.label_resolution == "requirementsLabels":
            labels.update(resolved_requirement_labels(s.profile, c.requirements, s.rng))
        labels.update(own)
        c.obj["metadata"]["labels"] = labels
        if out.machine_id:
            # BuildNodeClaimFromAKSMachineTemplate: the NodeClaim names its AKS machine (provider v1.14.0
            # pkg/providers/instance/aksmachineinstanceutils.go)
            c.obj["metadata"]["annotations"] = {**(c.obj["metadata"].get("annotations") or {}),
                                                MACHINE_ANNOTATION: out.machine_id, INPLACE_UPDATE_HASH: out.inplace_hash}
        it = out.instance_type
        c.obj["status"] = {"providerID": out.provider_id,
                           "capacity": format_resource_list(it.capacity),
                           "allocatable": format_resource_list(it.allocatable()),
                           "conditions": [s.condition("Launched", True, "Launched")]}
        try:
            updated = s.cluster.update(c.obj, KARPENTER)
            c.obj = s.cluster.update_status({**updated, "status": c.obj["status"]}, KARPENTER)
        except APIRejected as e:
            s.trace(f"NodeClaim {c.result.name} update refused: {e.message}")
        c.result.launched, c.result.labels, c.result.failure = True, dict(labels), None
        c.result.at["launched"] = c.launched_at
        s.trace(f"launched {c.result.name}: {it.name} zone={out.zone!r} {out.capacity_type}")
        if s.decisions.enabled:
            n = out.candidates
            among = ("an existing node (given.existingNodes), pinned to its instance type, zone and capacity type"
                     if seeded else
                     "the cheapest compatible available offering"
                     + (" of the only instance type left" if n == 1 else f" among {n} instance types" if n else "")
                     + " (lowest price, then spot before on-demand, then zonal before regional)")
            cheaper = out.cheaper_unavailable
            if cheaper:
                among += f"; {len(cheaper)} cheaper offering(s) it allows are unavailable: " + \
                    reasons.offerings_phrase(cheaper)
            s.decide("launch", "nodeclaim-launched", f"NodeClaim/{c.result.name}",
                     f"{reasons.offering_phrase(it.name, out.zone, out.capacity_type, out.price)}: {among}",
                     (f"Node/{out.vm_name}", f"NodePool/{c.template.name}"),
                     {"instanceType": it.name, "zone": out.zone, "capacityType": out.capacity_type,
                      "price": out.price, "candidates": n})

    def _record_failure(self, c: Claim, out: LaunchFailure, kept: bool) -> None:
        """A failed Create: Azure's error, what the provider marked unavailable, what happens to the NodeClaim."""
        s = self.state
        tried = out.attempted
        text = f"{out.kind} {out.reason}: {out.message}"
        if out.code:
            text += f" (Azure error code {out.code})"
        if tried:
            text += "; tried " + reasons.offering(tried.get("size", ""), tried.get("zone", ""),
                                                  tried.get("capacityType", ""))
        marked = reasons.marked_phrase(out.classified, tried.get("size", ""))
        if marked:
            text += f"; {marked}"
        if out.unavailable:
            text += (f"; the {len(out.unavailable)} offering(s) it allows are unavailable: "
                     + reasons.offerings_phrase(out.unavailable, 4))
        if out.asynchronous:
            text += "; the provider deletes the NodeClaim: its VM failed after Create had returned"
        elif not kept:
            text += "; the NodeClaim is deleted as insufficient capacity and the provisioner plans its pods again"
        else:
            text += "; core retries the launch with backoff until its launch timeout"
        data = {"kind": out.kind, "reason": out.reason, "code": out.code, "attempted": dict(tried)}
        if out.classified is not None and out.classified.marked:
            data["marked"] = [list(m) for m in out.classified.marked]
        s.decide("launch", "nodeclaim-launch-failed", f"NodeClaim/{c.result.name}", text,
                 (f"NodePool/{c.template.name}",), data)
