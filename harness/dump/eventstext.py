"""`kubectl get events` (and `kubectl events`) as printed, read back into Event objects for `harness new`.

`kubectl get events [-A] [-o wide]` prints `[NAMESPACE] LAST SEEN TYPE REASON OBJECT [SUBOBJECT SOURCE] MESSAGE
[FIRST SEEN COUNT NAME]`, the object as `node/<name>` (k8s.io/kubernetes v1.36.3
pkg/printers/internalversion/printers.go printEvent); `kubectl events` prints `[NAMESPACE] LAST SEEN TYPE REASON
OBJECT MESSAGE`, the object as `Node/<name>` and a repeated event's LAST SEEN as `3s (x16500 over 2d1h)` (k8s.io/kubectl
pkg/cmd/events/events.go printOneEvent). A tabwriter aligns both, so each row is cut at its header's column
starts. The ages (`3s`, `2d1h`) count back from when the table was printed, which the text does not say: an
event read here has no time. `-o yaml|json` output is read as any other dump (harness/dump/new.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from harness.scenario.yamlsource import MAX_DUMP_BYTES, SourceError, read_text

_HEADER = re.compile(r"^\s*(NAMESPACE\s+)?LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+(.*\s+)?MESSAGE\b")
_COLUMN_GAP = re.compile(r"\s{2,}")        # header names hold one space at most (LAST SEEN, FIRST SEEN)
# duration.HumanDuration's forms (k8s.io/apimachinery pkg/util/duration): 45s, 3m20s, 2h5m, 2d1h, 3y12d
_AGE_PART = re.compile(r"(\d+)([smhdy])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 365 * 86400}
CLUSTER_SCOPED = ("Node", "NodeClaim", "NodePool", "AKSNodeClass")
_SERIES = re.compile(r"^(\S+)\s+\(x(\d+)\s+over\s+(\S+)\)$")


@dataclass(frozen=True)
class TextEvent:
    """One row: its line, and the Event it stands for (ages in seconds before the table was printed)."""
    line: int
    namespace: str
    type: str
    reason: str
    kind: str
    name: str
    message: str
    count: int
    last_age: float | None
    first_age: float | None

    def as_object(self) -> dict:
        """The row as the Event object `kubectl get events -o yaml` would have shown (without times)."""
        return {"apiVersion": "v1", "kind": "Event",
                "metadata": {"name": f"{self.name}.row{self.line}", "namespace": self.namespace or "default"},
                "involvedObject": {"kind": self.kind, "name": self.name,
                                   **({"namespace": self.namespace} if self.kind not in CLUSTER_SCOPED else {})},
                "reason": self.reason, "message": self.message, "type": self.type, "count": self.count}


def as_events(tables: dict[str, list[TextEvent]]) -> list[tuple[dict, str]]:
    """Every row of the tables as an Event object, with the file and line it was read from."""
    return [(row.as_object(), f"{file}:{row.line}") for file, rows in tables.items() for row in rows]


def looks_like_table(text: str) -> bool:
    """Whether `text` is a printed events table: its first non-empty line is the header."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    return bool(_HEADER.match(first))


def age_seconds(text: str) -> float | None:
    """`2d1h` -> 176400; None for `<unknown>` or anything else."""
    text = text.strip()
    parts = _AGE_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return float(sum(int(n) * _UNIT[u] for n, u in parts))


def read(file: str, text: str) -> list[TextEvent]:
    """The rows of a printed events table; a row the columns cannot cut is `file:line: reason`."""
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip())
    header = lines[at]
    names = _COLUMN_GAP.split(header.strip())
    starts, pos = [], 0
    for name in names:
        pos = header.index(name, pos)
        starts.append(pos)
        pos += len(name)
    out = []
    for n, row in enumerate(lines[at + 1:], at + 2):
        if not row.strip():
            continue
        cut = starts[names.index("MESSAGE")]
        if len(row) <= cut or row[cut - 1] not in " \t":
            raise SourceError(file, n, "not a row of the events table above (its columns do not line up with "
                                       "the header: give the table as kubectl printed it, or `-o yaml`)")
        cells = {name: row[s:(starts[i + 1] if i + 1 < len(starts) else None)].strip()
                 for i, (name, s) in enumerate(zip(names, starts))}
        kind, _, name = cells["OBJECT"].partition("/")
        if not name:
            raise SourceError(file, n, f"OBJECT {cells['OBJECT']!r} is not kind/name")
        last, count, first = cells["LAST SEEN"], 1, None
        if (m := _SERIES.match(last)):
            last, count, first = m.group(1), int(m.group(2)), age_seconds(m.group(3))
        if cells.get("COUNT", "").isdigit():
            count = int(cells["COUNT"])
        if cells.get("FIRST SEEN"):
            first = age_seconds(cells["FIRST SEEN"])
        out.append(TextEvent(n, cells.get("NAMESPACE", ""), cells["TYPE"], cells["REASON"], _kind(kind), name,
                             cells["MESSAGE"], count, age_seconds(last),
                             first if first is not None else age_seconds(last)))
    return out


def _kind(kind: str) -> str:
    """`node` (kubectl get events) or `Node` (kubectl events) -> the Kind."""
    known = {k.lower(): k for k in ("Node", "NodeClaim", "NodePool", "Pod", "PodDisruptionBudget", "Deployment",
                                     "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "AKSNodeClass")}
    return known.get(kind.lower(), kind[:1].upper() + kind[1:])


def partition(paths: list[str]) -> tuple[list[str], dict[str, list[TextEvent]]]:
    """The paths of objects (YAML, JSON), and the printed events tables among `paths` read into rows."""
    objects, tables = [], {}
    for p in paths:
        text = read_text(p, MAX_DUMP_BYTES)
        if looks_like_table(text):
            tables[str(p)] = read(str(p), text)
        else:
            objects.append(p)
    return objects, tables
