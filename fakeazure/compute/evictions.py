"""Spot eviction by fault rule: a running Spot VM is evicted once it has been ``Succeeded``
for ``after_seconds`` on the state clock (``SpotEviction`` rules, docs/fakeazure.md "Faults").
Azure's own description of Spot eviction: https://learn.microsoft.com/azure/virtual-machines/spot-vms
"""
from __future__ import annotations

from ..faults import FaultEngine
from .models import ComputeModel


class SpotEvictions:
    def __init__(self, compute: ComputeModel, faults: FaultEngine, clock):
        self.compute = compute
        self.faults = faults
        self.clock = clock
        self.succeeded_at: dict[tuple[str, str], float] = {}

    def clear(self) -> None:
        self.succeeded_at.clear()

    def apply(self) -> None:
        """Stamp newly succeeded VMs, then evict the ones a rule says are due."""
        compute = self.compute
        rules = self.faults.eviction_rules()
        now = self.clock.time()
        # Only VMs queued by a change to Succeeded can need a stamp.
        for vm in compute.newly_succeeded:
            if (compute.vms.get(vm.key) is vm and vm.provisioning_state == "Succeeded"
                    and vm.key not in self.succeeded_at):
                self.succeeded_at[vm.key] = now
        compute.newly_succeeded.clear()
        if not rules:
            return
        for vm in list(compute.vms.values()):
            if not vm.spot or vm.evicted or vm.provisioning_state != "Succeeded":
                continue
            since = self.succeeded_at.get(vm.key, now)
            ctx = vm.fault_ctx("vm.evict")
            for f in rules:
                if f.exhausted or not f.matches(ctx):
                    continue
                # Time must have moved past success (FakeClock: via advance() or latency).
                if now <= since or now - since < float(f.after_seconds or 0):
                    continue
                if self.faults.fire(f, ctx):
                    compute.evict(vm, f"fault {f.id}")
                    self.succeeded_at.pop(vm.key, None)
                    if compute.vms.get(vm.key) is vm:  # Deallocate: stamped again next pass
                        compute.newly_succeeded.append(vm)
                    break

    def next_due(self) -> float | None:
        """When the next running Spot VM an eviction rule matches comes due: ``after_seconds`` past its
        success (a VM not stamped yet counts from now, as ``apply`` stamps it). A rule with a
        ``probability`` draws then and at each look after. Looks only: nothing is stamped or evicted."""
        rules = self.faults.eviction_rules()
        if not rules:
            return None
        now = self.clock.time()
        out = []
        for vm in self.compute.vms.values():
            if not vm.spot or vm.evicted or vm.provisioning_state != "Succeeded":
                continue
            ctx = vm.fault_ctx("vm.evict")
            out += [self.succeeded_at.get(vm.key, now) + float(f.after_seconds or 0)
                    for f in rules if not f.exhausted and f.matches(ctx)]
        return min(out, default=None)
