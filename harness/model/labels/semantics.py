"""The per-profile knobs the requirement algebra needs (key normalization, bound semantics).

Built once per profile and passed explicitly, so two profiles can run side by side in one process.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Mapping

from harness.model.upstream.profile import Profile, load_profile


@dataclass(frozen=True)
class Semantics:
    profile: str
    # core >= v1.9 (pkg/scheduling/requirement.go: Gte/Lte operators, inclusive gte/lte;
    # sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go vs sigs.k8s.io/karpenter v1.6.2
    # pkg/apis/v1/labels.go, pkg/scheduling/requirement.go)
    inclusive_bounds: bool
    # The profile's tables, read-only by convention; equality and hashing go by the fields above.
    normalized_labels: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    normalized_label_values: Mapping[str, Mapping[str, str]] = field(default_factory=dict, compare=False,
                                                                     repr=False)

    def normalize_key(self, key: str) -> str:
        """core NormalizedLabels (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go)
        + the provider's CSI zone key (karpenter-provider-azure v1.14.0 pkg/utils/zones/normalization.go
        RegisterCSIZoneNormalization; sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go NewRequirement)."""
        return self.normalized_labels.get(key, key)

    def normalize_values(self, key: str, values) -> list[str]:
        table = self.normalized_label_values.get(key)
        if not table:
            return list(values)
        return [table.get(v, v) for v in values]


@functools.lru_cache(maxsize=None)
def semantics_for(profile: str | Profile) -> Semantics:
    p = load_profile(profile) if isinstance(profile, str) else profile
    return Semantics(
        profile=p.name,
        inclusive_bounds=p.inclusive_bounds,
        normalized_labels=p.normalized_labels,
        normalized_label_values=p.normalized_label_values,
    )
