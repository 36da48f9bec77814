"""Karpenter core's requirement algebra: sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go
(Requirement) and requirements.go (Requirements); sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go;
pre-v1.9 bound semantics sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/labels.go, pkg/scheduling/requirement.go.

A `Requirement` is one key's allowed-value set: a concrete set (`In`, empty = `DoesNotExist`) or a
complement (`NotIn`, no exclusions = `Exists`), with optional integer bounds and minValues.
`Requirements` maps keys to requirements and implements `Intersects` vs `Compatible`, the two
checks whose difference decides most of design 0006's FAQ. Error strings are upstream's.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping

from harness.model.values.gostrconv import MAX_INT64, parse_int64
from harness.model.labels.semantics import Semantics

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"
GT, LT, GTE, LTE = "Gt", "Lt", "Gte", "Lte"
NEGATIVE_OPERATORS = frozenset({NOT_IN, DOES_NOT_EXIST})


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    complement: bool
    values: frozenset[str]
    gte: int | None = None          # inclusive bounds (pre-v1.9 Gt N is stored as gte=N+1)
    lte: int | None = None
    min_values: int | None = None
    exclusive: bool = False         # pre-v1.9: print and serialize bounds as Gt/Lt

    # -- construction ---------------------------------------------------------------------------
    @staticmethod
    def new(key: str, operator: str, values: Iterable[str] = (), sem: Semantics | None = None,
            min_values: int | None = None) -> "Requirement":
        """core NewRequirementWithFlexibility (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go): normalize the key,
        then map the operator."""
        if sem is not None:
            key = sem.normalize_key(key)
            values = sem.normalize_values(key, values)
            if key in sem.either_simulation_keys:
                sem.note_keys((key,))
        values = list(values)
        exclusive = sem is not None and not sem.inclusive_bounds
        if operator == IN:
            return Requirement(key, False, frozenset(values), min_values=min_values)
        if operator == NOT_IN:
            return Requirement(key, True, frozenset(values), min_values=min_values)
        if operator == EXISTS:
            return Requirement(key, True, frozenset(), min_values=min_values)
        if operator == DOES_NOT_EXIST:
            return Requirement(key, False, frozenset(), min_values=min_values)
        n = parse_int64(values[0]) if values else None   # Go strconv.Atoi (64-bit int)
        # NewRequirementWithFlexibility ignores the Atoi error (sigs.k8s.io/karpenter v1.14.0
        # pkg/scheduling/requirement.go)
        n = 0 if n is None else n
        if operator == GT:
            if n == MAX_INT64:
                return Requirement(key, False, frozenset(), min_values=min_values)
            return Requirement(key, True, frozenset(), gte=n + 1, min_values=min_values, exclusive=exclusive)
        if operator == LT:
            return Requirement(key, True, frozenset(), lte=n - 1, min_values=min_values, exclusive=exclusive)
        if operator == GTE:
            return Requirement(key, True, frozenset(), gte=n, min_values=min_values)
        if operator == LTE:
            return Requirement(key, True, frozenset(), lte=n, min_values=min_values)
        raise ValueError(f"unsupported operator {operator!r}")

    # -- queries --------------------------------------------------------------------------------
    @property
    def operator(self) -> str:
        if self.complement:
            return NOT_IN if self.values else EXISTS
        return IN if self.values else DOES_NOT_EXIST

    def __len__(self) -> int:
        return MAX_INT64 - len(self.values) if self.complement else len(self.values)

    def has(self, value: str) -> bool:
        if self.complement:
            return value not in self.values and _in_bounds(value, self.gte, self.lte)
        return value in self.values and _in_bounds(value, self.gte, self.lte)

    def single_value(self) -> str | None:
        """The value of a single-valued (`In [x]`) requirement, else None (as provider
        karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go GetAllSingleValuedRequirementLabels
        reads it; sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go NewRequirement, pkg/apis/v1/labels.go
        NormalizedLabels)."""
        if not self.complement and len(self.values) == 1:
            return next(iter(self.values))
        return None

    # -- algebra --------------------------------------------------------------------------------
    def intersection(self, other: "Requirement") -> "Requirement":
        """core Requirement.Intersection (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Intersection)."""
        complement = self.complement and other.complement
        gte = _max_opt(self.gte, other.gte)
        lte = _min_opt(self.lte, other.lte)
        min_values = _max_opt(self.min_values, other.min_values)
        exclusive = self.exclusive or other.exclusive
        if _bounds_empty(gte, lte, exclusive):
            return Requirement(self.key, False, frozenset(), min_values=min_values, exclusive=exclusive)
        if self.complement and other.complement:
            values = self.values | other.values
        elif self.complement:
            values = other.values - self.values
        elif other.complement:
            values = self.values - other.values
        else:
            values = self.values & other.values
        if gte is not None or lte is not None:
            values = frozenset(v for v in values if _in_bounds(v, gte, lte))
        if not complement:
            gte = lte = None
        return Requirement(self.key, complement, frozenset(values), gte, lte, min_values, exclusive)

    def has_intersection(self, other: "Requirement") -> bool:
        """core Requirement.HasIntersection (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Intersection) (excluded values of
        two complements are ignored)."""
        gte = _max_opt(self.gte, other.gte)
        lte = _min_opt(self.lte, other.lte)
        if _bounds_empty(gte, lte, self.exclusive or other.exclusive):
            return False
        if self.complement and other.complement:
            return True
        if self.complement:
            return any(v not in self.values and _in_bounds(v, gte, lte) for v in other.values)
        if other.complement:
            return any(v not in other.values and _in_bounds(v, gte, lte) for v in self.values)
        small, big = (self.values, other.values) if len(self.values) <= len(other.values) else (other.values, self.values)
        return any(v in big and _in_bounds(v, gte, lte) for v in small)

    def any(self, rng: random.Random) -> str:
        """core Requirement.Any (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go): a member, a random
        integer,
        or "" (seeded here)."""
        if not self.complement:
            return rng.choice(sorted(self.values)) if self.values else ""
        low = self.gte if self.gte is not None else 0
        high = self.lte + 1 if self.lte is not None else MAX_INT64
        if high <= low:
            return ""   # Requirement.Any panics in rand.Intn(0) here (sigs.k8s.io/karpenter v1.14.0
                        # pkg/scheduling/requirement.go); we report no value
        for _ in range(16):
            candidate = str(rng.randrange(low, high))
            if candidate not in self.values:
                return candidate
        return str(rng.randrange(low, high))

    # -- rendering ------------------------------------------------------------------------------
    def __str__(self) -> str:
        """core Requirement.String (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go), e.g. `zone In [a
        b]`,
        `cpu Exists >=2`."""
        op = self.operator
        if op in (EXISTS, DOES_NOT_EXIST):
            text = f"{self.key} {op}"
        else:
            vals = sorted(self.values)
            if len(vals) > 5:
                vals = vals[:5] + [f"and {len(vals) - 5} others"]
            text = f"{self.key} {op} [{' '.join(vals)}]"
        if self.exclusive:
            if self.gte is not None:
                text += f" >{self.gte - 1}"
            if self.lte is not None:
                text += f" <{self.lte + 1}"
        else:
            if self.gte is not None:
                text += f" >={self.gte}"
            if self.lte is not None:
                text += f" <={self.lte}"
        if self.min_values is not None:
            text += f" minValues {self.min_values}"
        return text

    def node_selector(self) -> list[dict]:
        """Serialization as NodeSelectorRequirement(s) (core Requirement.NodeSelectorRequirement,
        BoundedNodeSelectorRequirements, sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go; lossy like upstream)."""
        base = {"key": self.key}
        if self.min_values is not None:
            base["minValues"] = self.min_values
        out: list[dict] = []
        if self.gte is not None:
            op, v = (GT, self.gte - 1) if self.exclusive else (GTE, self.gte)
            out.append({**base, "operator": op, "values": [str(v)]})
        if self.lte is not None:
            op, v = (LT, self.lte + 1) if self.exclusive else (LTE, self.lte)
            out.append({**base, "operator": op, "values": [str(v)]})
        if out:
            return out
        entry = {**base, "operator": self.operator}
        if self.values:
            entry["values"] = sorted(self.values)
        return [entry]


def _in_bounds(value: str, gte: int | None, lte: int | None) -> bool:
    """Whether `value` lies within the inclusive bounds; with a bound, a non-integer never does."""
    if gte is None and lte is None:
        return True
    n = parse_int64(value)
    if n is None:
        return False
    return (gte is None or n >= gte) and (lte is None or n <= lte)


def _bounds_empty(gte: int | None, lte: int | None, exclusive: bool) -> bool:
    """Whether the bounds admit nothing: v1.9+ inclusive gte > lte; before, exclusive greaterThan >=
    lessThan (core pkg/scheduling/requirement.go Intersection at v1.14.0, before v1.9 its exclusive bounds;
    sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirement.go Intersection, sigs.k8s.io/karpenter v1.6.2
    pkg/apis/v1/labels.go, pkg/scheduling/requirement.go; the stored bounds are gte = greaterThan+1, lte =
    lessThan-1)."""
    if gte is None or lte is None:
        return False
    return gte > lte + 1 if exclusive else gte > lte


def _max_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _min_opt(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)


def exists(key: str) -> Requirement:
    return Requirement(key, True, frozenset())


class LabelRequirements:
    """`key In [value]` of a label, per Semantics (by identity, held) and label: a NodeClaim's or Node's
    labels are read as requirements at every disruption pass and for every existing node the scheduler
    sees, the same pairs run after run (~1 % of a small run). A Requirement is frozen, so sharing one
    changes nothing. Cleared when it holds MAX pairs (every run names new hosts)."""

    MAX = 50_000

    def __init__(self) -> None:
        self._by: dict[tuple, tuple[Semantics, Requirement]] = {}

    def clear(self) -> None:
        self._by.clear()

    def get(self, key: str, value: str, sem: Semantics) -> Requirement:
        """Requirement.new(key, In, [value], sem), but a label's key notes no simulation key (Semantics.note_keys:
        a Node carries karpenter.sh/registered; the caller notes a NodePool's labels)."""
        k = (id(sem), key, value)
        hit = self._by.get(k)
        if hit is not None and hit[0] is sem:
            return hit[1]
        nk = sem.normalize_key(key)
        r = Requirement(nk, False, frozenset(sem.normalize_values(nk, (value,))))
        if len(self._by) >= self.MAX:
            self._by.clear()
        self._by[k] = (sem, r)
        return r


LABEL_REQUIREMENTS = LabelRequirements()


class Requirements(Mapping[str, Requirement]):
    """core Requirements (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go):
    key -> Requirement, with Add,
    Compatible and Intersects."""

    __slots__ = ("_reqs", "_sig")

    def __init__(self, reqs: Iterable[Requirement] = ()):
        self._reqs: dict[str, Requirement] = {}
        self._sig: frozenset | None = None
        self.add(*reqs)

    def signature(self) -> frozenset:
        """A hashable identity of the requirement set (for memoizing scheduling decisions)."""
        if self._sig is None:
            self._sig = frozenset(self._reqs.values())
        return self._sig

    # Mapping protocol
    def __getitem__(self, key: str) -> Requirement:
        return self._reqs[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._reqs)

    def __len__(self) -> int:
        return len(self._reqs)

    def __contains__(self, key: object) -> bool:
        return key in self._reqs        # Mapping's default goes through __getitem__ and KeyError

    def get(self, key: str, default=None) -> Requirement:  # type: ignore[override]
        """A missing key reads as Exists (core Requirements.Get, sigs.k8s.io/karpenter v1.14.0
        pkg/scheduling/requirements.go)."""
        r = self._reqs.get(key)
        if r is not None:
            return r
        return default if default is not None else exists(key)

    @classmethod
    def of(cls, reqs: dict[str, "Requirement"]) -> "Requirements":
        """A set over `reqs` (key -> Requirement, one per key) taken as is: nothing to intersect."""
        new = cls()
        new._reqs = reqs
        return new

    def copy(self) -> "Requirements":
        new = Requirements()
        new._reqs = dict(self._reqs)
        new._sig = self._sig
        return new

    def add(self, *reqs: Requirement) -> "Requirements":
        if reqs:
            self._sig = None
        for r in reqs:
            existing = self._reqs.get(r.key)
            self._reqs[r.key] = existing.intersection(r) if existing is not None else r
        return self

    def without(self, *keys: str) -> "Requirements":
        new = Requirements()
        new._reqs = {k: v for k, v in self._reqs.items() if k not in keys}
        return new

    # -- constructors ---------------------------------------------------------------------------
    @staticmethod
    def from_node_selector_terms(items: Iterable[Mapping], sem: Semantics) -> "Requirements":
        return Requirements(Requirement.new(i["key"], i["operator"], i.get("values") or (), sem,
                                            i.get("minValues")) for i in items)

    @staticmethod
    def from_labels(labels: Mapping[str, str], sem: Semantics) -> "Requirements":
        return Requirements(LABEL_REQUIREMENTS.get(k, v, sem) for k, v in labels.items())

    # -- the core semantics ---------------------------------------------------------------------
    def _conflicts(self, incoming: "Requirements", first_only: bool) -> list[str]:
        """Keys defined on both sides whose requirements cannot intersect (core Requirements.Intersects,
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go), unless both
        sides are negative (NotIn/DoesNotExist)."""
        mine, theirs = self._reqs, incoming._reqs
        small, big = (mine, theirs) if len(mine) <= len(theirs) else (theirs, mine)
        bad = []
        for key in small:
            if key not in big:
                continue
            existing, other = mine[key], theirs[key]
            if existing is other or existing.has_intersection(other):
                continue
            if other.operator in NEGATIVE_OPERATORS and existing.operator in NEGATIVE_OPERATORS:
                continue
            bad.append(key)
            if first_only:
                break
        return bad

    def intersects(self, incoming: "Requirements") -> str | None:
        """core Requirements.Intersects (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go Compatible): only keys defined on
        both sides; errors joined with "; "."""
        bad = self._conflicts(incoming, first_only=False)
        if not bad:
            return None
        return "; ".join(f"key {k}, {incoming._reqs[k]} not in {self._reqs[k]}" for k in sorted(bad))

    def intersects_ok(self, incoming: "Requirements") -> bool:
        """Intersects without building the error text (the hot path of instance-type filtering)."""
        return not self._conflicts(incoming, first_only=True)

    def _undefined(self, incoming: "Requirements", allow_undefined: frozenset[str]) -> list[str]:
        mine = self._reqs
        return [key for key, r in incoming._reqs.items()
                if key not in allow_undefined and key not in mine and r.operator not in NEGATIVE_OPERATORS]

    def compatible(self, incoming: "Requirements", allow_undefined: frozenset[str] = frozenset()) -> str | None:
        """core Requirements.Compatible (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go;
        sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go Compatible): undefined custom keys
        fail unless negative; then Intersects. Upstream
        reports the first undefined key in Go map order; we report the first in sorted order."""
        undefined = self._undefined(incoming, allow_undefined)
        if undefined:
            key = min(undefined)
            return f'label "{key}" does not have known values{self._typo_hint(key, allow_undefined)}'
        return self.intersects(incoming)

    def is_compatible(self, incoming: "Requirements", allow_undefined: frozenset[str] = frozenset()) -> bool:
        return not self._undefined(incoming, allow_undefined) and self.intersects_ok(incoming)

    def _typo_hint(self, key: str, allow_undefined: frozenset[str]) -> str:
        """core labelHint (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go): a
        candidate containing the key, or
        ending with its name part. Upstream picks by Go
        map order (nondeterministic); we take the first in sorted order of each candidate set."""
        name = key.split("/", 1)[-1]
        for candidates in (allow_undefined, self._reqs.keys()):
            for cand in sorted(candidates):
                if cand != key and (key in cand or cand.endswith(name)):
                    return f' (typo of "{cand}"?)'
        return ""

    # -- rendering ------------------------------------------------------------------------------
    def to_string(self, omit: frozenset[str] = frozenset({"kubernetes.io/hostname"})) -> str:
        """core Requirements.String (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go): sorted, ",
        "-joined,
        RestrictedLabels omitted."""
        return ", ".join(str(self._reqs[k]) for k in sorted(self._reqs) if k not in omit)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return f"Requirements({self.to_string(frozenset())})"

    def node_selector_requirements(self) -> list[dict]:
        out: list[dict] = []
        for key in sorted(self._reqs):
            out.extend(self._reqs[key].node_selector())
        return out

    def single_valued_labels(self) -> dict[str, str]:
        """Every `In [x]` requirement as a label (provider v1.14.0
        pkg/providers/labels/labels.go GetAllSingleValuedRequirementLabels)."""
        out = {}
        for key, r in self._reqs.items():
            v = r.single_value()
            if v is not None:
                out[key] = v
        return out

    def has_min_values(self) -> bool:
        return any(r.min_values is not None for r in self._reqs.values())
