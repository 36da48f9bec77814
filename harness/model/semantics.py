"""The per-profile knobs the requirement algebra needs (key normalization, bound semantics).

Built once per profile and passed explicitly, so two profiles can run side by side in one process.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from harness.model.profile import Profile, load_profile


@dataclass(frozen=True)
class Semantics:
    profile: str
    inclusive_bounds: bool                      # core >= v1.9 (karpenter-core.md §2.1 vs §8.1)
    operators: frozenset[str]
    normalized_labels: tuple[tuple[str, str], ...]
    normalized_label_values: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    well_known: frozenset[str]

    @functools.cached_property
    def _norm(self) -> dict[str, str]:
        return dict(self.normalized_labels)

    @functools.cached_property
    def _norm_values(self) -> dict[str, dict[str, str]]:
        return {k: dict(v) for k, v in self.normalized_label_values}

    def normalize_key(self, key: str) -> str:
        """karpenter-core.md §1.2 NormalizedLabels (+ the provider's CSI zone key, azure-provider.md §1.1)."""
        return self._norm.get(key, key)

    def normalize_values(self, key: str, values) -> list[str]:
        table = self._norm_values.get(key)
        if not table:
            return list(values)
        return [table.get(v, v) for v in values]


@functools.lru_cache(maxsize=None)
def semantics_for(profile: str | Profile) -> Semantics:
    p = load_profile(profile) if isinstance(profile, str) else profile
    return Semantics(
        profile=p.name,
        inclusive_bounds=p.inclusive_bounds,
        operators=frozenset(p.operators),
        normalized_labels=tuple(sorted(p.normalized_labels.items())),
        normalized_label_values=tuple(sorted((k, tuple(sorted(v.items()))) for k, v in p.normalized_label_values.items())),
        well_known=p.well_known_labels,
    )
