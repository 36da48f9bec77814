"""`harness parity --check-doc`: every cell where behavior and design 0006's own Karpenter columns
disagree, each with the upstream source of the behavior (`harness/data/parity-sources.yaml`) and
the label's reference note."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from harness.model.data import load_yaml
from harness.parity.labels import LabelEntry
from harness.parity.probes import Cell, Row
from harness.parity.text import yes_no

SOURCES_FILE = Path(str(resources.files("harness") / "data" / "parity-sources.yaml"))


@dataclass
class Disagreement:
    key: str
    variant: str
    column: str          # "Karpenter (schedulable)" | "Karpenter (written to node)" | "value"
    doc: str
    behavior: str
    reason: str
    kind: str = "disagree"   # disagree | qualification
    sources: list = field(default_factory=list)   # upstream file:line citations, then the reference note


def load_sources(path: str | Path | None = None) -> list[tuple[re.Pattern, re.Pattern, str]]:
    """(label key pattern, behavior text pattern, citation) per entry of the sources file."""
    data = load_yaml(Path(path or SOURCES_FILE).read_text())
    return [(re.compile(s.get("key") or ""), re.compile(s["match"]), str(s["cite"])) for s in data["sources"]]


def cite(d: Disagreement, entry: LabelEntry, sources: list[tuple[re.Pattern, re.Pattern, str]]) -> list[str]:
    """The upstream places whose behavior a row reports (matched on its behavior text), then the
    label's reference note: a reader can follow each to the code or the section."""
    out: list[str] = []
    for key, pattern, where in sources:
        if key.search(d.key) and pattern.search(d.reason) and where not in out:
            out.append(where)
    if entry.refs:
        out.append(entry.refs)
    return out


def check_doc(rows: list[Row]) -> list[Disagreement]:
    """Every cell where behavior and design 0006's own Karpenter columns disagree.

    The main probe of each label is compared with the doc's cells (`disagree`). An extra probe
    context is reported only where it behaves differently from the main probe and so from the doc
    (`qualification`: the doc's cell holds only under some conditions), or where the Node's value
    differs from what AKS writes."""
    out: list[Disagreement] = []
    for row in rows:
        e = row.entry
        main = row.main
        for i, c in enumerate(row.cells):
            kind = "disagree" if i == 0 else "qualification"
            label = e.key if i == 0 else f"{e.key} [{c.variant}]"
            issue = e.model_issue(row.profile, c.variant)
            note = f" (known harness issue: {issue})" if issue else ""
            sched_differs = i == 0 or c.schedulable.ok != main.schedulable.ok
            written_differs = i == 0 or c.written.present != main.written.present
            if e.doc_schedulable is not None and sched_differs and c.schedulable.ok != e.doc_schedulable:
                out.append(Disagreement(e.key, c.variant, "Karpenter (schedulable)", yes_no(e.doc_schedulable),
                                        yes_no(c.schedulable.ok), _sched_reason(e, c) + note, kind))
            if e.doc_written is not None and written_differs and c.written.present != e.doc_written:
                out.append(Disagreement(e.key, c.variant, "Karpenter (written to node)", yes_no(e.doc_written),
                                        yes_no(c.written.present), _written_reason(e, c) + note, kind))
            if c.aks_value is not None and c.written.present and c.written.value != c.aks_value:
                out.append(Disagreement(e.key, c.variant, "value", repr(c.aks_value), repr(c.written.value),
                                        f"{label}: the Node carries {c.written.value!r} where AKS writes "
                                        f"{c.aks_value!r}" + note, "qualification"))
    sources = load_sources()
    by_key = {row.entry.key: row.entry for row in rows}
    for d in out:
        d.sources = cite(d, by_key[d.key], sources)
    return out


def _sched_reason(e: LabelEntry, c: Cell) -> str:
    s = c.schedulable
    if s.ok:
        how = f"a pod selecting {e.key}={c.value} gets {s.nodes} node(s) and binds"
        if s.label is not None and s.label.present:
            how += f"; the Node carries it via {' + '.join(s.label.writers)}"
        return how
    return f"a pod selecting {e.key}={c.value}: {s.text()}"


def _written_reason(e: LabelEntry, c: Cell) -> str:
    if c.written.present:
        return f"a plain Node carries {e.key}={c.written.value!r}, written by {' + '.join(c.written.writers)}"
    return f"a plain Node does not carry {e.key}" + (f" ({c.written.text()})" if c.written.text() != "absent" else "")
