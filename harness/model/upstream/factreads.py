"""Which facts of a release profile a run read where the fact's other value would have answered otherwise.

Core switches remember their reads (harness/model/upstream/corebehaviour.py SwitchValues); provider facts and
core's probes are read through the profile, so harness/why/deciding.py had to run the scenario again to clear any
of them. Some act in one place only, and the run notes them there: four provider facts in what an instance-type
build makes of each SKU (harness/model/azure/instancetypes.py; two of them change only a size's offerings, which
matter only where a NodePool or NodeClaim of the run can take the size), core's two probes in requirements that
name their keys or values (harness/model/labels/semantics.py), two provider facts in the one controller that
reads each. A fact a whole run never noted is one no value of it could have changed, so a counterfactual leaves
it out (docs/architecture/runner.md, `harness/why/deciding.py`). Over-noting is allowed and costs only a
counterfactual run; under-noting would be a wrong answer.
"""
from __future__ import annotations

from typing import Callable, Mapping

SPOT_NEEDS_LOW_PRIORITY = "provider.offerings.spotRequiresLowPriorityCapable"
PRICE_GATES = "provider.offerings.availabilityRequiresPrice"
QUOTA_GATES = "provider.offerings.quotaGatesOnDemand"
UNKNOWN_SKUS = "provider.unknownSKUPolicy"
# karpenter.sh/registered and initialized In [true] on every NodeClaim template (kubernetes-sigs/karpenter#2161)
SIMULATION_KEYS = "core.schedulingSimulationKeys"
# the CSI driver's zone "" read as "0" (github.com/Azure/karpenter-provider-azure v1.14.2
# pkg/utils/zones/normalization.go RegisterCSIZoneNormalization)
LABEL_VALUES = "core.normalizedLabelValues"
# read by core's node health controller only, run with the NodeRepair gate on (harness/loop/lifecycle/health.py)
REPAIR_POLICIES = "provider.repairPolicies"
# read only where a NodeClaim's AKS machine is named (the AKS Machine API modes: harness/loop/azure/provider.py)
MACHINE_NAME_LENGTH = "provider.aksMachine.nameMaxLength"
# the facts a build notes, those the requirement algebra notes, then the two read by one controller each; any
# other fact is taken as read wherever it differs
NOTED = (SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES, QUOTA_GATES, UNKNOWN_SKUS, SIMULATION_KEYS, LABEL_VALUES,
         REPAIR_POLICIES, MACHINE_NAME_LENGTH)
# the facts that change a size's offerings alone (its availability, and the zones and capacity types that follow)
SIZED = (SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES)
NOT_KNOWN_REASON = "not in known SKUs"      # the drop unknownSKUPolicy `exclude` makes (azure/staticpart.py)


class FactReads:
    """One run's noted facts (`noted`, in first-note order), and whether it read the offerings of every size of a
    build (`every_size`: a NodeOverlay's, a topology's zones, a message's least DaemonSet overhead)."""

    __slots__ = ("noted", "every_size")

    def __init__(self) -> None:
        self.noted: dict[str, None] = {}
        self.every_size = False

    def note(self, fact: str) -> None:
        self.noted[fact] = None

    def read_every_size(self) -> None:
        self.every_size = True


class ProviderReads(FactReads):
    """One run's facts noted by its instance-type builds, and what they are noted for. `quota_preview(sku)`:
    whether the family's quota would admit the SKU as the provider's first quota read would see it, without
    reading it (a read is a request the run did not make), or None when that cannot be told (the request itself
    could matter); where the release's builds gate on quota, their own answer is read and the preview says only
    whether the request could matter. The SIZED facts change only a size's offerings, which matter only where a
    NodePool or NodeClaim of the run can take the size (`take`): `consulted` says which were."""

    __slots__ = ("quota_preview", "sized", "takers")

    def __init__(self, quota_preview: Callable[[Mapping], bool | None] | None = None):
        super().__init__()
        self.quota_preview = quota_preview
        self.sized: dict[str, dict[int, object]] = {f: {} for f in SIZED}   # fact -> the static parts it changes
        self.takers: dict[str, object] = {}         # text -> Requirements (core's) a NodePool or NodeClaim holds

    def dropped(self, dropped: Mapping[str, str]) -> None:
        """A build's dropped SKUs: one dropped as unknown is priced 999 under the other policy."""
        if UNKNOWN_SKUS not in self.noted and NOT_KNOWN_REASON in dropped.values():
            self.note(UNKNOWN_SKUS)

    def static(self, st, prices: tuple, quota_ok: bool | None) -> None:
        """One SKU of a build: `prices` as _prices_for gives them, `quota_ok` the quota's answer when the build
        gated on it, None when it did not."""
        if st.unknown:
            self.note(UNKNOWN_SKUS)
        if not st.low_priority:
            self.sized[SPOT_NEEDS_LOW_PRIORITY][id(st)] = st
        if not (prices[2] and prices[3]):
            self.sized[PRICE_GATES][id(st)] = st
        if QUOTA_GATES not in self.noted:
            # the preview is None too where the read could meet a fault rule: a read made or not made matters
            seen = self.quota_preview(st.sku) if self.quota_preview is not None else None
            if not (seen if quota_ok is None else quota_ok and seen is not None):
                self.note(QUOTA_GATES)

    def take(self, text: str, requirements) -> None:
        """A NodePool's or NodeClaim's requirements (`text`: what tells them apart)."""
        if text not in self.takers:
            self.takers[text] = requirements

    def consulted(self, taken: Callable[[object], bool]) -> tuple[list[str], list[str]]:
        """(the noted facts, the SIZED facts noted only for static parts no one took (`taken(part)`:
        harness/model/azure/instancetypes.py size_taken): those change only the run's list of instance types)."""
        noted, unused = dict(self.noted), []
        for fact, parts in self.sized.items():
            if not parts:
                continue
            if self.every_size or any(taken(st) for st in parts.values()):
                noted[fact] = None
            else:
                unused.append(fact)
        return list(noted), unused


__all__ = ["FactReads", "ProviderReads", "NOTED"]
