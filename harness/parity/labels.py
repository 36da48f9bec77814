"""The label table of design 0006 as data (`harness/data/design-0006-labels.yaml`): one entry per
label with the doc's own columns, how to probe it, and the decision a behavior change belongs to."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Iterable

from harness.model.data import load_yaml

DATA_FILE = Path(str(resources.files("harness") / "data" / "design-0006-labels.yaml"))


class ParityUsageError(Exception):
    """A `harness parity` option that cannot work (unknown label, family, profile or format):
    reported before any probe runs, exit 2."""


@dataclass
class Probe:
    """One probe context: where the label is looked at and which value a Node really carries."""

    value: str
    region: str = "southcentralus"
    catalog: str | None = None
    skus: list = field(default_factory=lambda: ["Standard_D2s_v3"])
    nodeclass: dict = field(default_factory=lambda: {"imageFamily": "Ubuntu2204"})
    cluster: dict = field(default_factory=dict)
    capacity_types: list = field(default_factory=lambda: ["on-demand"])
    aks_value: str | None = None
    name: str = ""

    def context_key(self) -> str:
        """Probes with the same context share one `written` run."""
        blob = json.dumps({"region": self.region, "catalog": self.catalog, "skus": self.skus,
                           "nodeclass": self.nodeclass, "cluster": self.cluster,
                           "capacityTypes": self.capacity_types}, sort_keys=True)
        return hashlib.sha1(blob.encode()).hexdigest()[:12]


@dataclass
class LabelEntry:
    key: str
    table: str
    drafts: list
    family: str
    aks_documented: bool | None
    aks_observed: bool | None
    doc_schedulable: bool | None
    doc_written: bool | None
    notes: str
    probe: Probe
    variants: list = field(default_factory=list)     # [Probe] with a name
    bold: bool = False
    draft_notes: str | None = None
    refs: str = ""
    model_issues: list = field(default_factory=list)   # [{profiles, variant, note}]
    decision: str | None = None        # the design 0006 decision a diff row of this label belongs to
    blocked_decision: str = ""         # the table's decision for every other kubernetes.azure.com label

    def model_issue(self, profile: str, variant: str) -> str | None:
        """The known harness defect that distorts this cell, if the data file lists one."""
        for m in self.model_issues:
            if profile in (m.get("profiles") or []) and (m.get("variant") or "main") == (variant or "main"):
                return " ".join(str(m.get("note") or "").split())
        return None


def _probe(raw: dict, defaults: dict) -> Probe:
    merged = {**defaults, **raw}
    return Probe(value=str(merged["value"]), region=str(merged.get("region") or "southcentralus"),
                 catalog=merged.get("catalog"), skus=list(merged.get("skus") or []),
                 nodeclass=dict(merged.get("nodeclass") or {}), cluster=dict(merged.get("cluster") or {}),
                 capacity_types=list(merged.get("capacityTypes") or ["on-demand"]),
                 aks_value=None if merged.get("aksValue") is None else str(merged["aksValue"]),
                 name=str(raw.get("name") or ""))


def load_labels(path: str | Path | None = None) -> list[LabelEntry]:
    data = load_yaml(Path(path or DATA_FILE).read_text())
    defaults = dict((data.get("defaults") or {}).get("probe") or {})
    out = []
    for e in data["labels"]:
        main = _probe(e["probe"], defaults)
        variants = []
        for v in e.get("variants") or []:
            # a variant starts from the defaults, not from the main probe
            variants.append(_probe(v, defaults))
        out.append(LabelEntry(
            key=e["key"], table=e["table"], drafts=list(e.get("drafts") or []), family=e["family"],
            aks_documented=e.get("aks_documented"), aks_observed=e.get("aks_observed"),
            doc_schedulable=e.get("doc_schedulable"), doc_written=e.get("doc_written"),
            notes=str(e.get("notes") or ""), probe=main, variants=variants, bold=bool(e.get("bold")),
            draft_notes=e.get("draft_notes"), refs=str(e.get("refs") or ""),
            model_issues=list(e.get("model_issues") or []), decision=e.get("decision"),
            blocked_decision=str(data.get("blocked_decision") or "")))
    return out


def select_labels(entries: list[LabelEntry], keys: Iterable[str] = (), families: Iterable[str] = ()) -> list[LabelEntry]:
    """The entries named by --label / --family; an unknown name is a usage error (it would select
    nothing and print an empty table)."""
    keys, families = list(keys), list(families)
    if not keys and not families:
        return entries
    known = {e.key for e in entries}
    known_families = sorted({e.family for e in entries})
    for k in keys:
        if k not in known:
            raise ParityUsageError(f"--label {k}: not a label of design 0006 (not in {DATA_FILE.name})")
    for f in families:
        if f not in known_families:
            raise ParityUsageError(f"--family {f}: unknown label family; known families: {', '.join(known_families)}")
    return [e for e in entries if e.key in keys or e.family in families]
