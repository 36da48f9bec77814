"""Warnings about a scenario that do not stop it from running: a synthesized SKU, a borrowed price, a
manifest field the simulation does not model. Each names its source line, like a SourceError. And the notes
`harness new` prints about a dump's objects, one line for each kind of note however many objects it names."""
from __future__ import annotations

import warnings
from dataclasses import dataclass


class HarnessWarning(UserWarning):
    """What pytest shows for a scenario notice (`-W error::harness.scenario.notices.HarnessWarning`
    turns them into failures)."""


@dataclass(frozen=True)
class Notice:
    file: str
    line: int
    message: str
    kind: str = "unmodeled"          # unmodeled | synthesized | catalog | version | cluster (dumpcatalog.py) | assumed

    def render(self) -> str:
        return f"{self.file}:{self.line}: warning: {self.message}"


def emit(notices: list[Notice]) -> None:
    """Each notice as a Python warning (pytest collects and prints them in its summary)."""
    for n in notices:
        # attributed to the scenario line, so pytest's summary points there and not at the plugin
        warnings.warn_explicit(HarnessWarning(n.message), HarnessWarning, n.file, n.line)


def print_notices(scenarios, file) -> int:
    """Print each scenario's notices once (scenarios of one file share most of them); the count."""
    seen: set[str] = set()
    for sc in scenarios:
        for n in getattr(sc, "warnings", []):
            text = n.render()
            if text not in seen:
                seen.add(text)
                print(text, file=file)
    return len(seen)


# kinds whose resource name is the kind's own, plural or not (k8s.io/apimachinery pkg/api/meta/restmapper.go
# unpluralizedSuffixes @81d44ec)
_UNPLURALIZED = ("endpoints", "securitycontextconstraints")
GROUP_AT = 3          # notes of one kind about this many objects or more print as one line
EXAMPLES = 3          # the objects such a line names


class ObjectNote(str):
    """A `harness new` note about one object, of a kind a dump may give for thousands (a skipped ReplicaSet, a
    NodeClaim's lastPodEventTime taken from its pods): its text is the line for that object alone; the notes of
    one `key` read together as `{lead}{count} {plural} ({names}){tail}` (group_notes)."""

    key: tuple
    name: str
    lead: str
    plural: str
    tail: str

    def __new__(cls, text: str, name: str, key: tuple, lead: str, plural: str, tail: str) -> ObjectNote:
        note = super().__new__(cls, text)
        note.name, note.key, note.lead, note.plural, note.tail = name, key, lead, plural, tail
        return note

    def __reduce__(self):
        return ObjectNote, (str(self), self.name, self.key, self.lead, self.plural, self.tail)


def plural_kind(kind: str) -> str:
    """A kind's plural as Kubernetes guesses a resource's from its kind, in the kind's own case: Ingresses,
    NetworkPolicies, Endpoints (k8s.io/apimachinery pkg/api/meta/restmapper.go UnsafeGuessKindToResource
    @81d44ec)."""
    low = kind.lower()
    if low.endswith(_UNPLURALIZED):
        return kind
    if low.endswith("s"):
        return kind + "es"
    if low.endswith("y"):
        return kind[:-1] + "ies"
    return kind + "s"


def group_notes(notes: list[str]) -> list[str]:
    """The notes as `harness new` prints them: the ObjectNotes of one key as one line at the first one's place
    when they name GROUP_AT objects or more (a count and the first EXAMPLES names), every other note as it is."""
    groups: dict[tuple, list[ObjectNote]] = {}
    for n in notes:
        if isinstance(n, ObjectNote):
            groups.setdefault(n.key, []).append(n)
    out: list[str] = []
    for n in notes:
        group = groups[n.key] if isinstance(n, ObjectNote) else []
        if len(group) < GROUP_AT:
            out.append(str(n))
        elif group[0] is n:
            out.append(_many(group))
    return out


def _many(group: list[ObjectNote]) -> str:
    first = group[0]
    names = ", ".join(n.name for n in group[:EXAMPLES])
    more = f" and {len(group) - EXAMPLES:,} more" if len(group) > EXAMPLES else ""
    return f"{first.lead}{len(group):,} {first.plural} ({names}{more}){first.tail}"
