"""PodDisruptionBudgets: the status kube-controller-manager keeps on them, the eviction API's check,
and the limits Karpenter reads before disrupting a node.

- Status (k8s.io/kubernetes v1.36.3 pkg/controller/disruption/disruption.go trySync,
  getExpectedPodCount, getExpectedScale, countHealthyPods, updatePdbStatus): an integer
  minAvailable counts the matching pods; maxUnavailable and a percentage minAvailable use the
  summed scale of the pods' controllers (pods without a controller are unmanaged and not counted);
  disruptionsAllowed = currentHealthy - desiredHealthy, never below 0, and 0 while no pod is expected.
- Eviction (pkg/registry/core/pod/storage/eviction.go): a pod matched by more than one PDB cannot be
  evicted ("This pod has more than one PodDisruptionBudget, which the eviction subresource does not
  support."); otherwise the PDB must allow a disruption, which the eviction then uses up.
- Karpenter's view (sigs.k8s.io/karpenter v1.14.0 pkg/utils/pdb/pdb.go Limits): CanEvictPods
  (every evictable pod's single PDB allows a disruption), isFullyBlocked (maxUnavailable 0 / "0%"
  or minAvailable "100%") and IsCurrentlyReschedulable.

A pod's PDBs are found through `PDBIndex`, not a scan of every PDB: a pass costs pods + PDBs, not
their product.

Harness assumptions: a bound pod is Ready (its containers start at once); a pod's controller is its
Deployment, whose scale is the number of its live pods (the ReplicaSet keeps it there).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from harness.loop.scheduling.topology import selector_matches

# kubernetes v1.36.3 pkg/registry/core/pod/storage/eviction.go
MULTIPLE_PDBS_ERROR = ("This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
                       "support.")
VIOLATES_PDB_ERROR = "Cannot evict pod as it would violate the pod's disruption budget."


def scaled_value(value, total: int, round_up: bool = True) -> int:
    """intstr.GetScaledValueFromIntOrPercent."""
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        pct = int(text[:-1])
        v = pct * total / 100
        return math.ceil(v) if round_up else math.floor(v)
    return int(text)


@dataclass
class PDB:
    namespace: str
    name: str
    selector: dict | None
    min_available: int | str | None
    max_unavailable: int | str | None
    always_allow_unhealthy: bool
    disruptions_allowed: int = 0
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0

    @property
    def key(self) -> str:
        """client.ObjectKey's String form, as Karpenter's messages print it."""
        return f"{self.namespace}/{self.name}"

    @staticmethod
    def from_manifest(obj: dict) -> "PDB":
        spec = obj.get("spec") or {}
        return PDB(obj["metadata"].get("namespace") or "default", obj["metadata"]["name"],
                   spec.get("selector"), spec.get("minAvailable"), spec.get("maxUnavailable"),
                   spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow")

    def matches(self, namespace: str, labels: dict[str, str]) -> bool:
        return namespace == self.namespace and selector_matches(self.selector, labels)

    @property
    def fully_blocking(self) -> bool:
        """pdb.go newPdb isFullyBlocking."""
        mu, ma = self.max_unavailable, self.min_available
        return (isinstance(mu, int) and mu == 0) or (isinstance(mu, str) and mu == "0%") or \
            (isinstance(ma, str) and ma == "100%")


@dataclass
class PodInfo:
    """What the PDB machinery needs of a pod."""

    namespace: str
    name: str
    labels: dict[str, str]
    bound: bool
    controller: str | None           # "<kind>/<name>" of its controller, None when unmanaged


class PDBIndex:
    """The PDBs that can match a pod, without a scan of them all: by namespace and one matchLabels pair of the
    selector (a pod matches only if it carries that label with that value, compared as `selector_matches`
    does, by the value's str), the rest (only matchExpressions, or an empty selector: every pod of the
    namespace) in a list per namespace; a nil selector matches nothing and is left out. Each one found is
    still checked with `PDB.matches`. The answer is kept per (namespace, labels): the pods of one
    controller share their labels. Positions index `pdbs`, in its order."""

    def __init__(self, pdbs: Sequence[PDB]):
        self.pdbs = pdbs
        self._by_label: dict[tuple[str, str, str], list[int]] = {}
        self._rest: dict[str, list[int]] = {}
        self._found: dict[tuple[str, frozenset], tuple[int, ...]] = {}
        for i, p in enumerate(pdbs):
            if p.selector is None:
                continue
            pairs = p.selector.get("matchLabels") or {}
            if pairs:
                k, v = next(iter(pairs.items()))
                self._by_label.setdefault((p.namespace, k, str(v)), []).append(i)
            else:
                self._rest.setdefault(p.namespace, []).append(i)

    def positions(self, namespace: str, labels: Mapping[str, str], key: tuple | None = None) -> tuple[int, ...]:
        """Where in `pdbs` the PDBs matching a pod of `namespace` with `labels` are (`key`: (namespace, the
        labels' items as a frozenset), when the caller keeps it)."""
        if not self.pdbs:             # no PDB: nothing to match (a pass asks for every pod of every node)
            return ()
        if key is None:
            key = (namespace, frozenset(labels.items()))
        found = self._found.get(key)
        if found is None:
            maybe = list(self._rest.get(namespace, ()))
            for k, v in labels.items():
                maybe += self._by_label.get((namespace, k, v), ())
            found = self._found[key] = tuple(i for i in sorted(maybe) if self.pdbs[i].matches(namespace, labels))
        return found

    def matching(self, namespace: str, labels: Mapping[str, str], key: tuple | None = None) -> list[PDB]:
        return [self.pdbs[i] for i in self.positions(namespace, labels, key)]


def compute_statuses(pdbs: Sequence[PDB], pods: Iterable[PodInfo]) -> Sequence[PDB]:
    """The disruption controller's trySync for every PDB, in one pass over the pods; fills the status
    fields in place."""
    index = PDBIndex(pdbs)
    matched: list[list[PodInfo]] = [[] for _ in pdbs]
    for p in pods:
        for i in index.positions(p.namespace, p.labels):
            matched[i].append(p)
    return sync_statuses(pdbs, matched)


def sync_statuses(pdbs: Sequence[PDB], matched: Sequence[list[PodInfo]]) -> Sequence[PDB]:
    """trySync for every PDB from the pods each one matches (`matched[i]`: those of `pdbs[i]`); fills the
    status fields in place."""
    for pdb, pods_of in zip(pdbs, matched):
        _sync(pdb, pods_of)
    return pdbs


def compute_status(pdb: PDB, pods: Iterable[PodInfo]) -> PDB:
    """The disruption controller's trySync for one PDB; fills the status fields in place."""
    return compute_statuses([pdb], pods)[0]


def _sync(pdb: PDB, matching: list[PodInfo]) -> None:
    """trySync's status from the pods the PDB matches."""
    if pdb.max_unavailable is not None or isinstance(pdb.min_available, str):
        scale: dict[str, int] = {}
        for p in matching:
            if p.controller is not None:
                scale[p.controller] = scale.get(p.controller, 0) + 1
        expected = sum(scale.values())
        if pdb.max_unavailable is not None:
            desired = max(expected - scaled_value(pdb.max_unavailable, expected), 0)
        else:
            desired = scaled_value(pdb.min_available, expected)
    elif pdb.min_available is not None:
        desired, expected = int(pdb.min_available), len(matching)
    else:
        desired, expected = 0, 0
    healthy = sum(1 for p in matching if p.bound)
    allowed = healthy - desired
    pdb.expected_pods, pdb.desired_healthy, pdb.current_healthy = expected, desired, healthy
    pdb.disruptions_allowed = 0 if expected <= 0 or allowed <= 0 else allowed


class Limits:
    """Karpenter's pdb.Limits over the PDBs' current status."""

    def __init__(self, pdbs: list[PDB]):
        self.pdbs = pdbs
        self._index = PDBIndex(pdbs)

    def matching(self, namespace: str, labels: Mapping[str, str], key: tuple | None = None) -> list[PDB]:
        return self._index.matching(namespace, labels, key)

    def positions(self, namespace: str, labels: Mapping[str, str], key: tuple | None = None) -> tuple[int, ...]:
        """Where in `pdbs` the PDBs matching the pod are (PDBIndex.positions)."""
        return self._index.positions(namespace, labels, key)

    def is_evictable(self, namespace: str, labels: dict[str, str], fully: bool = False,
                     multiple_block: bool = True, key: tuple | None = None) -> tuple[list[str], bool]:
        """pdb.go isEvictable for an evictable pod: (blocking PDB keys, evictable). `multiple_block=False`: core
        before v1.7.0 (#2379, core-behaviour.yaml multiplePdbsEviction) judges each matching PDB on its own.
        `key`: PDBIndex.positions's."""
        found = self.matching(namespace, labels, key)
        if len(found) > 1 and multiple_block:
            return [p.key for p in found], False
        for p in found:
            if fully and p.fully_blocking:
                return [p.key], False
            if not fully and p.disruptions_allowed == 0:
                return [p.key], False
        return [], True

    def evict(self, namespace: str, labels: dict[str, str]) -> str | None:
        """The eviction API's PDB check; None when allowed (the PDB's allowance is used up)."""
        found = self.matching(namespace, labels)
        if len(found) > 1:
            return MULTIPLE_PDBS_ERROR
        for p in found:
            if p.disruptions_allowed <= 0:
                return VIOLATES_PDB_ERROR
            p.disruptions_allowed -= 1
        return None
