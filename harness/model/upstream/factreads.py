"""Which provider facts a run's instance-type builds read where the fact's other value would have answered otherwise.

Core switches remember their reads (harness/model/upstream/corebehaviour.py SwitchValues); provider facts are read through the
profile, so harness/why/deciding.py had to run the scenario again to clear any of them. Four of them act only on
what one instance-type build makes of each SKU (harness/model/azure/instancetypes.py), and whether their value matters
there is a property of that SKU alone: a SKU with both prices does not care whether an offering needs a price, one
that is LowPriorityCapable whether spot needs it. A build notes each such fact where the answer would differ;
a fact a whole run never noted is one no value of it could have changed, so a counterfactual setting only such
facts runs exactly as the run did, and is not run (docs/architecture/runner.md, `harness/why/deciding.py`).
Over-noting is allowed and costs only a counterfactual run.
"""
from __future__ import annotations

from typing import Callable, Mapping

SPOT_NEEDS_LOW_PRIORITY = "provider.offerings.spotRequiresLowPriorityCapable"
PRICE_GATES = "provider.offerings.availabilityRequiresPrice"
QUOTA_GATES = "provider.offerings.quotaGatesOnDemand"
UNKNOWN_SKUS = "provider.unknownSKUPolicy"
# the facts a build notes; any other provider fact is taken as read wherever it differs
NOTED = (SPOT_NEEDS_LOW_PRIORITY, PRICE_GATES, QUOTA_GATES, UNKNOWN_SKUS)
NOT_KNOWN_REASON = "not in known SKUs"      # the drop unknownSKUPolicy `exclude` makes (azure/staticpart.py)


class ProviderReads:
    """One run's noted facts (`noted`, in first-note order). `quota_preview(sku)`: whether the family's quota
    would admit the SKU as the provider's first quota read would see it, without reading it (a read is a
    request the run did not make), or None when that cannot be told (the request itself could matter); where
    the release's builds gate on quota, their own answer is read and the preview says only whether the
    request could matter."""

    __slots__ = ("noted", "quota_preview")

    def __init__(self, quota_preview: Callable[[Mapping], bool | None] | None = None):
        self.noted: dict[str, None] = {}
        self.quota_preview = quota_preview

    def note(self, fact: str) -> None:
        self.noted[fact] = None

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
            self.note(SPOT_NEEDS_LOW_PRIORITY)
        if not (prices[2] and prices[3]):
            self.note(PRICE_GATES)
        if QUOTA_GATES not in self.noted:
            # the preview is None too where the read could meet a fault rule: a read made or not made matters
            seen = self.quota_preview(st.sku) if self.quota_preview is not None else None
            if not (seen if quota_ok is None else quota_ok and seen is not None):
                self.note(QUOTA_GATES)


__all__ = ["ProviderReads", "NOTED"]
