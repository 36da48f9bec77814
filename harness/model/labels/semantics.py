"""The per-profile knobs the requirement algebra needs (key normalization, bound semantics).

Built once per profile and passed explicitly, so two profiles can run side by side in one process; a run
takes its own copy (`for_run`) that notes where core's two probes read through the profile,
core.schedulingSimulationKeys and core.normalizedLabelValues, could answer otherwise
(harness/model/upstream/factreads.py).
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from harness.model.upstream.factreads import LABEL_VALUES, SIMULATION_KEYS, FactReads
from harness.model.upstream.profile import DEFAULT_PROFILE, Profile, load_profile


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
    # what either value of the two probes names (this profile's and the newest release's): the simulation keys,
    # and per normalized key the values a table maps
    either_simulation_keys: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    either_mapped_values: Mapping[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)
    reads: FactReads | None = field(default=None, compare=False, repr=False)     # a run's (for_run)

    def for_run(self) -> "Semantics":
        """A copy that notes the probes' reads for one run (`reads`): a Semantics cached across runs must not carry
        one run's notes into another, nor a requirement cached by an earlier run hide a note. (LabelRequirements
        holds a run's copy after the run: `reads` holds nothing of the run but its notes.)"""
        return dataclasses.replace(self, reads=FactReads())

    def normalize_key(self, key: str) -> str:
        """core NormalizedLabels (sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/labels.go)
        + the provider's CSI zone key (karpenter-provider-azure v1.14.0 pkg/utils/zones/normalization.go
        RegisterCSIZoneNormalization; sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go NewRequirement)."""
        return self.normalized_labels.get(key, key)

    def normalize_values(self, key: str, values: Iterable[str]) -> list[str]:
        """core NormalizedLabelValues (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go
        NewRequirementWithFlexibility); a value either table maps notes core.normalizedLabelValues."""
        values = list(values)
        either = self.either_mapped_values.get(key)
        if either is not None and self.reads is not None and not either.isdisjoint(values):
            self.reads.note(LABEL_VALUES)
        table = self.normalized_label_values.get(key)
        if not table:
            return values
        return [table.get(v, v) for v in values]

    def note_keys(self, keys: Iterable[str]) -> None:
        """Where a pod's, volume's or NodePool's requirement, a NodePool's label or a topology key names a key
        either value of core.schedulingSimulationKeys adds to every NodeClaim template: there the two values
        answer otherwise (elsewhere only in a message that prints the requirements, note_filter_message: the keys
        are taken off the NodeClaim again, and no label resolves from them). A Node's own labels are no such
        place."""
        either = self.either_simulation_keys
        if self.reads is not None and either and not either.isdisjoint(keys):
            self.reads.note(SIMULATION_KEYS)

    def note_filter_message(self) -> None:
        """A message of core's InstanceTypeFilterError: it prints the NodeClaim's requirements (at one value of
        core.schedulingSimulationKeys they hold the template's simulation keys, at the other not) and the least
        DaemonSet overhead over every instance type of the template, every size's offerings read."""
        self.note_keys(self.either_simulation_keys)
        if self.reads is not None:
            self.reads.read_every_size()


@functools.lru_cache(maxsize=None)
def semantics_for(profile: str | Profile) -> Semantics:
    p = load_profile(profile) if isinstance(profile, str) else profile
    newest = load_profile(DEFAULT_PROFILE)
    tables = (p.normalized_label_values, newest.normalized_label_values)
    return Semantics(
        profile=p.name,
        inclusive_bounds=p.inclusive_bounds,
        normalized_labels=p.normalized_labels,
        normalized_label_values=p.normalized_label_values,
        either_simulation_keys=frozenset((*p.scheduling_simulation_keys, *newest.scheduling_simulation_keys)),
        either_mapped_values={k: frozenset(v for t in tables for v in t.get(k, {})) for t0 in tables for k in t0},
    )
