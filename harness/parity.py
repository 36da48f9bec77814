"""`harness parity`: design 0006's label table regenerated from behavior.

For every label named in design 0006 (`harness/data/design-0006-labels.yaml`) and one profile, the
command builds small probe scenarios in memory and runs them through the same runner the scenario
library uses (fakeazure -> loop -> model, embedded backend):

  schedulable   a pod whose nodeSelector asks for the label, with the value a Node really carries,
                against a NodePool that does not set it: does it get a node and bind? (or the exact
                pending / ignore reason, or runaway provisioning)
  written       a plain pod on a plain NodePool: is the label on the Node, with which value, and
                which writers put it there (kubelet, kubelet-node-labels, cloud-node-controller,
                karpenter-core)?
  nodepool      a NodePool whose template sets the label: accepted, or rejected with the message and
                the stage (admission = the CRD's CEL rules, runtime = Karpenter's Go validation);
                when accepted, whether the Node then comes up carrying it

The AKS columns and the doc's own Karpenter columns are read from the data file; every behavior
column is computed by running the probes. `--diff OTHER` compares two profiles, `--check-doc` lists
every cell where behavior and the doc disagree. Output: Markdown (default), JSON, SVG (hand-rendered),
PNG (only when matplotlib is installed).
"""
from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import yaml

DATA_FILE = Path(str(resources.files("harness") / "data" / "design-0006-labels.yaml"))
PROBE_POD = "probe"
PLAIN_POD = "plain"
WRITER_ORDER = ("kubelet", "kubelet-node-labels", "cloud-node-controller", "karpenter-core")
CHECK = "✅"
CROSS = "❌"

# design 0006 "Decisions" (final draft numbering) each diff row is attributed to, by label
DECISIONS = {
    "kubernetes.azure.com/scalesetpriority": "Decision 2: new well-known requirement",
    "kubernetes.azure.com/node-image-version": "Decision 2: new well-known requirement",
    "kubernetes.azure.com/fips_enabled": "Decision 2: new well-known requirement",
    "kubernetes.azure.com/os-sku": "Decision 2: new well-known requirement",
    "kubernetes.azure.com/mode": "Decision 2: new well-known requirement",
    "kubernetes.azure.com/ebpf-dataplane": "Decision 2: allowed on NodePools",
    "kubernetes.azure.com/cluster-health-monitor-checker-synthetic": "Decision 2: allowed on NodePools",
}
BLOCK_DECISION = "Decision 2: every other kubernetes.azure.com label blocked"


# == the data file ==================================================================================
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
    data = yaml.safe_load(Path(path or DATA_FILE).read_text())
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
            model_issues=list(e.get("model_issues") or [])))
    return out


def select_labels(entries: list[LabelEntry], keys: Iterable[str] = (), families: Iterable[str] = ()) -> list[LabelEntry]:
    keys, families = list(keys), list(families)
    if not keys and not families:
        return entries
    known = {e.key for e in entries}
    for k in keys:
        if k not in known:
            raise SystemExit(f"harness parity: unknown label {k!r} (not in {DATA_FILE.name})")
    return [e for e in entries if e.key in keys or e.family in families]


# == probe scenarios ================================================================================
def _nodeclass(probe: Probe) -> dict:
    return {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": "default"},
            "spec": copy.deepcopy(probe.nodeclass)}


def _nodepool(probe: Probe, labels: dict | None = None, name: str = "default",
              instance_types: list[str] | None = None) -> dict:
    reqs = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(probe.capacity_types)}]
    if instance_types:
        reqs.insert(0, {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(instance_types)})
    tmpl: dict = {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
                           "requirements": reqs}}
    if labels:
        tmpl["metadata"] = {"labels": dict(labels)}
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": {"template": tmpl}}


def _pod(name: str, selector: dict | None = None, cpu: str = "100m") -> dict:
    spec: dict = {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}
    if selector:
        spec["nodeSelector"] = dict(selector)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def scenario_text(name: str, profile: str, probe: Probe, manifests: list[dict]) -> str:
    from harness.runner.scenario import API_VERSION
    given: dict = {"profiles": [profile], "region": probe.region, "skus": list(probe.skus),
                   "loop": {"runawayThreshold": 3, "maxIterations": 40}}
    if probe.catalog:
        given["catalog"] = probe.catalog
    if probe.cluster:
        given["cluster"] = dict(probe.cluster)
    doc = {"apiVersion": API_VERSION, "kind": "Scenario",
           "metadata": {"name": name}, "given": given, "manifests": manifests}
    return yaml.safe_dump(doc, sort_keys=False)


def _run(text: str, name: str, profile: str, cluster):
    from harness.runner.engine import run
    from harness.runner.scenario import load_scenarios_text
    sc = load_scenarios_text(text, f"<parity:{name}>")[0]
    return run(sc, profile, cluster).result


# == observations ===================================================================================
@dataclass
class NodeLabel:
    present: bool
    value: str | None = None
    writers: list = field(default_factory=list)      # accepted writers, in WRITER_ORDER
    winner: str | None = None
    refused: list = field(default_factory=list)      # writers whose write was refused
    kubelet_dropped: bool = False

    def text(self) -> str:
        if not self.present:
            extra = []
            if self.kubelet_dropped:
                extra.append("dropped from --node-labels")
            if self.refused:
                extra.append("refused: " + ", ".join(self.refused))
            return "absent" + (f" ({'; '.join(extra)})" if extra else "")
        return f"{self.value!r} via {' + '.join(self.writers) or '?'}"


def _node_label(node, key: str) -> NodeLabel:
    if node is None:
        return NodeLabel(False)
    refused = sorted({w.writer for w in node.provenance.get(key, []) if not w.accepted})
    if key not in node.labels:
        return NodeLabel(False, None, [], None, refused, key in node.kubelet_dropped)
    return NodeLabel(True, node.labels[key], sorted(node.writers(key), key=WRITER_ORDER.index), node.writer(key),
                     refused, key in node.kubelet_dropped)


@dataclass
class Schedulable:
    outcome: str          # scheduled | pending | ignored | runaway
    reason: str | None = None
    nodes: int = 0
    nodeclaims: int = 0
    label: NodeLabel | None = None     # the key on the Node launched for the pod

    @property
    def ok(self) -> bool:
        return self.outcome == "scheduled"

    def text(self) -> str:
        if self.outcome == "scheduled":
            return "yes: binds"
        if self.outcome == "runaway":
            why = f"runaway: {self.nodeclaims} NodeClaims, never binds"
            if self.label is not None and self.label.present:
                why += f" (Node has {self.label.value!r})"
            elif self.label is not None:
                why += " (label absent on the Node)"
            return why
        return f"{self.outcome}: {self.reason}"


@dataclass
class NodePoolVerdict:
    accepted: bool
    stage: str | None = None
    message: str | None = None         # the rule's own message(s) / the runtime message
    node: str | None = None            # what happened to a plain pod on it when accepted
    label: NodeLabel | None = None

    def text(self, short: bool = True) -> str:
        if not self.accepted:
            return f"rejected ({self.stage}): {shorten(self.message) if short else self.message}"
        return "accepted" + (f"; {self.node}" if self.node else "")


@dataclass
class Cell:
    """One probe context of one label under one profile."""

    variant: str
    value: str
    aks_value: str | None
    schedulable: Schedulable
    written: NodeLabel
    nodepool: NodePoolVerdict


@dataclass
class Row:
    entry: LabelEntry
    profile: str
    cells: list                        # [Cell]; cells[0] is the main probe

    @property
    def main(self) -> Cell:
        return self.cells[0]


def _schedulable(result, key: str) -> Schedulable:
    pods = result.pods_of(PROBE_POD)
    p = pods[0]
    launched = sum(1 for c in result.nodeclaims if c.launched)
    node = next((n for n in result.nodes if n.name == p.node), None)
    if node is None:
        claims = set(p.nodeclaims)
        node = next((n for n in reversed(result.nodes) if n.nodeclaim in claims), None)
    label = _node_label(node, key) if node is not None else None
    if p.state == "scheduled":
        return Schedulable("scheduled", None, len(result.nodes), launched, label)
    if result.runaway:
        return Schedulable("runaway", result.runaway_reason, len(result.nodes), launched, label)
    return Schedulable(p.state, p.reason, len(result.nodes), launched, label)


def _nodepool_verdict(result, key: str) -> NodePoolVerdict:
    np = result.nodepools.get("default")
    if np is None:
        return NodePoolVerdict(False, "admission", "NodePool not created")
    if np.rejected:
        msg = "; ".join(np.causes) if np.stage == "admission" and np.causes else np.message
        return NodePoolVerdict(False, np.stage, msg)
    pods = result.pods_of(PLAIN_POD)
    p = pods[0]
    node = next((n for n in result.nodes if n.name == p.node), None) or (result.nodes[-1] if result.nodes else None)
    label = _node_label(node, key) if node is not None else None
    if p.state == "scheduled":
        what = f"Node has it via {' + '.join(label.writers)}" if label and label.present else "label absent on the Node"
        return NodePoolVerdict(True, node=what, label=label)
    refused = next((n.kubelet_refused for n in result.nodes if n.kubelet_refused), None)
    if refused:
        first = refused.splitlines()[0]
        return NodePoolVerdict(True, node=f"kubelet refuses to start ({first}); "
                                          + ("runaway" if result.runaway else "no node"), label=label)
    denied = next((n.node_restriction_denied for n in result.nodes if n.node_restriction_denied), None)
    if denied:
        return NodePoolVerdict(True, node=f"kubelet registration denied ({denied})", label=label)
    return NodePoolVerdict(True, node=f"pod {p.state}: {p.reason}" + ("; runaway" if result.runaway else ""),
                           label=label)


class Prober:
    """Runs probe scenarios for one profile on one embedded cluster; caches the shared `written` runs."""

    def __init__(self, profile: str, cluster=None):
        from harness.backends.embedded import EmbeddedBackend
        self.profile = profile
        self.cluster = cluster or EmbeddedBackend().start()
        self._written: dict[str, Any] = {}
        self.runs = 0
        self.seconds = 0.0

    def _go(self, name: str, probe: Probe, manifests: list[dict]):
        t0 = time.perf_counter()
        result = _run(scenario_text(name, self.profile, probe, manifests), name, self.profile, self.cluster)
        self.runs += 1
        self.seconds += time.perf_counter() - t0
        return result

    def written_result(self, probe: Probe):
        ck = probe.context_key()
        if ck not in self._written:
            self._written[ck] = self._go(f"written-{ck}", probe, [_nodeclass(probe), _nodepool(probe), _pod(PLAIN_POD)])
        return self._written[ck]

    def cell(self, key: str, probe: Probe) -> Cell:
        r = self._go("schedulable", probe, [_nodeclass(probe), _nodepool(probe), _pod(PROBE_POD, {key: probe.value})])
        sched = _schedulable(r, key)
        w = self.written_result(probe)
        plain = w.pods_of(PLAIN_POD)[0]
        node = next((n for n in w.nodes if n.name == plain.node), None) or (w.nodes[0] if w.nodes else None)
        written = _node_label(node, key)
        r = self._go("nodepool", probe, [_nodeclass(probe), _nodepool(probe, {key: probe.value}), _pod(PLAIN_POD)])
        return Cell(probe.name, probe.value, probe.aks_value, sched, written, _nodepool_verdict(r, key))

    def row(self, entry: LabelEntry) -> Row:
        cells = [self.cell(entry.key, entry.probe)]
        for v in entry.variants:
            cells.append(self.cell(entry.key, v))
        return Row(entry, self.profile, cells)

    def close(self) -> None:
        self.cluster.close()


def run_matrix(profile: str, entries: list[LabelEntry], cluster=None) -> tuple[list[Row], dict]:
    prober = Prober(profile, cluster)
    t0 = time.perf_counter()
    try:
        rows = [prober.row(e) for e in entries]
    finally:
        if cluster is None:
            prober.close()
    stats = {"profile": profile, "labels": len(entries), "runs": prober.runs,
             "seconds": round(time.perf_counter() - t0, 3)}
    return rows, stats


# == text helpers ===================================================================================
_LIST_RE = re.compile(r"\[[^\[\]]{100,}\]")


def shorten(message: str | None) -> str:
    """Long Go `[a b c ...]` lists (the well-known label list) are abbreviated for tables."""
    if message is None:
        return ""
    return _LIST_RE.sub(lambda m: f"[… {len(m.group(0)[1:-1].split())} keys]", message)


def _yn(v: bool | None) -> str:
    return "" if v is None else (CHECK if v else CROSS)


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# == doc check =======================================================================================
@dataclass
class Disagreement:
    key: str
    variant: str
    column: str          # "Karpenter (schedulable)" | "Karpenter (written to node)" | "value"
    doc: str
    behavior: str
    reason: str
    kind: str = "disagree"   # disagree | qualification


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
                out.append(Disagreement(e.key, c.variant, "Karpenter (schedulable)", _yn(e.doc_schedulable),
                                        _yn(c.schedulable.ok), _sched_reason(e, c) + note, kind))
            if e.doc_written is not None and written_differs and c.written.present != e.doc_written:
                out.append(Disagreement(e.key, c.variant, "Karpenter (written to node)", _yn(e.doc_written),
                                        _yn(c.written.present), _written_reason(e, c) + note, kind))
            if c.aks_value is not None and c.written.present and c.written.value != c.aks_value:
                out.append(Disagreement(e.key, c.variant, "value", repr(c.aks_value), repr(c.written.value),
                                        f"{label}: the Node carries {c.written.value!r} where AKS writes "
                                        f"{c.aks_value!r}" + note, "qualification"))
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


# == rendering =======================================================================================
COLUMNS = ("Label", "AKS (documented)", "AKS (observed or code)", "Doc: schedulable", "Doc: written",
           "Karpenter schedulable", "Written to node (path)", "NodePool may set")


def _cells_of(row: Row) -> list[tuple[str, list[str]]]:
    """(label text, [the 8 column texts]) per probe context."""
    e = row.entry
    out = []
    for i, c in enumerate(row.cells):
        name = e.key if i == 0 else f"↳ {c.variant}"
        name = f"**{name}**" if e.bold and i == 0 else name
        sched = (CHECK + " " if c.schedulable.ok else CROSS + " ") + c.schedulable.text()
        written = (CHECK + " " if c.written.present else CROSS + " ") + c.written.text()
        np_ = (CHECK + " " if c.nodepool.accepted else CROSS + " ") + c.nodepool.text()
        docs = [_yn(e.aks_documented), _yn(e.aks_observed), _yn(e.doc_schedulable), _yn(e.doc_written)] if i == 0 \
            else ["", "", "", ""]
        out.append((name, [name, *docs, shorten(sched), written, np_]))
    return out


def render_markdown(rows: list[Row], stats: dict, command: str, title: str | None = None) -> str:
    profile = stats["profile"]
    lines = [f"<!-- generated by `{command}`; do not edit by hand -->",
             f"# Design 0006 label table regenerated from behavior: profile `{profile}`", "",
             f"Regenerate with `{command}`.", "",
             "The AKS columns and the doc's own Karpenter columns are copied from design 0006 "
             "(`harness/data/design-0006-labels.yaml`); every other column is computed by running probe "
             "scenarios on the embedded backend: a pod selecting the label with the value a Node really "
             "carries (against a NodePool that does not set it), a plain pod on a plain NodePool, and a "
             "NodePool setting the label as a template label. Rows marked ↳ are extra probe contexts. "
             "Write paths: `kubelet` (its own labels), `kubelet-node-labels` (the provider's --node-labels), "
             "`cloud-node-controller`, `karpenter-core` (NodeClaim -> Node sync).", "",
             f"{stats['labels']} labels, {stats['runs']} probe runs.", ""]
    families: dict[str, list[Row]] = {}
    for r in rows:
        families.setdefault(r.entry.family, []).append(r)
    notes: list[str] = []
    for fam, frows in families.items():
        lines += [f"## {fam}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        for r in frows:
            for c, (_, cols) in zip(r.cells, _cells_of(r)):
                issue = r.entry.model_issue(profile, c.variant)
                if issue:
                    notes.append(issue)
                    cols = [cols[0] + f" [^{len(notes)}]", *cols[1:]]
                lines.append("| " + " | ".join(_md(x) for x in cols) + " |")
        lines.append("")
    if notes:
        lines += ["## Known harness issues in this table", ""]
        lines += [f"[^{i}]: {n}" for i, n in enumerate(notes, 1)]
        lines.append("")
    return "\n".join(lines)


def row_json(row: Row) -> dict:
    e = row.entry
    return {
        "key": e.key, "family": e.family, "table": e.table, "drafts": e.drafts, "bold": e.bold,
        "aks_documented": e.aks_documented, "aks_observed": e.aks_observed,
        "doc_schedulable": e.doc_schedulable, "doc_written": e.doc_written, "notes": e.notes,
        "cells": [{
            "variant": c.variant or "main", "value": c.value, "aks_value": c.aks_value,
            "schedulable": {"ok": c.schedulable.ok, "outcome": c.schedulable.outcome, "reason": c.schedulable.reason,
                            "nodes": c.schedulable.nodes, "nodeclaims": c.schedulable.nodeclaims,
                            "label": asdict(c.schedulable.label) if c.schedulable.label else None},
            "written": asdict(c.written),
            "nodepool": {"accepted": c.nodepool.accepted, "stage": c.nodepool.stage, "message": c.nodepool.message,
                         "node": c.nodepool.node},
        } for c in row.cells],
    }


# -- diff ---------------------------------------------------------------------------------------------
_GO_LIST_RE = re.compile(r"\[[^\[\]]*\]")
_HINT_RE = re.compile(r' \(typo of "([^"]+)"\?\)')


def _normalized(text: str) -> str:
    """Texts compared across profiles: Go-printed lists (the well-known label list grows with every
    new well-known label) are compared as `[…]`."""
    return _GO_LIST_RE.sub("[…]", text)


def _signature(c: Cell) -> dict:
    return {"schedulable": c.schedulable.text(), "written": c.written.text(), "nodepool": c.nodepool.text(short=False)}


def diff_rows(a: list[Row], b: list[Row]) -> list[dict]:
    """Cells whose behavior differs between two profiles' rows (same label order)."""
    out = []
    by_key = {r.entry.key: r for r in b}
    for ra in a:
        rb = by_key.get(ra.entry.key)
        if rb is None:
            continue
        for ca, cb in zip(ra.cells, rb.cells):
            sa, sb = _signature(ca), _signature(cb)
            changed = [k for k in sa if _normalized(sa[k]) != _normalized(sb[k])]
            for k in changed:
                issue = rb.entry.model_issue(rb.profile, cb.variant) or ra.entry.model_issue(ra.profile, ca.variant)
                out.append({"key": ra.entry.key, "variant": ca.variant, "aspect": k, "a": sa[k], "b": sb[k],
                            "decision": _decision_for(ra.entry.key, k, sa[k], sb[k]), "model_issue": issue})
    return out


def _decision_for(key: str, aspect: str, a: str, b: str) -> str:
    if aspect == "nodepool" and key.startswith("kubernetes.azure.com/") and key not in DECISIONS:
        return BLOCK_DECISION
    if key in DECISIONS:
        return DECISIONS[key]
    hint = _HINT_RE.search(b) or _HINT_RE.search(a)
    if aspect == "schedulable" and hint and _HINT_RE.sub("", a) == _HINT_RE.sub("", b):
        return (f"side effect of Decision 2: {hint.group(1)} became well-known, so core's typo hint "
                f"names it (karpenter-core.md §2.4)")
    return "not a decision of design 0006"


def render_diff_markdown(a_profile: str, b_profile: str, diffs: list[dict], rows_a: list[Row], command: str) -> str:
    lines = [f"<!-- generated by `{command}`; do not edit by hand -->",
             f"# Design 0006 labels: `{a_profile}` -> `{b_profile}`, computed from behavior", "",
             f"Regenerate with `{command}`.", "",
             f"Every probe cell (the rows of `harness parity --profile ...`) whose outcome differs between "
             f"`{a_profile}` and `{b_profile}`, with the design 0006 decision it belongs to. Go-printed lists "
             f"in messages (the well-known label list grows with the decision) are compared as `[…]`.", ""]
    cols = ("Label", "Aspect", a_profile, b_profile, "Decision")
    lines += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    names = {"schedulable": "Karpenter schedulable", "written": "Written to node", "nodepool": "NodePool may set"}
    notes: list[str] = []
    for d in diffs:
        label = d["key"] + (f" ↳ {d['variant']}" if d["variant"] else "")
        if d.get("model_issue"):
            notes.append(d["model_issue"])
            label += f" [^{len(notes)}]"
        lines.append("| " + " | ".join(_md(x) for x in (label, names[d["aspect"]], shorten(d["a"]), shorten(d["b"]),
                                                        d["decision"])) + " |")
    changed_keys = {d["key"] for d in diffs}
    unchanged = [k for k in DECISIONS if k not in changed_keys and any(r.entry.key == k for r in rows_a)]
    lines += ["", "## Decision items with no behavior change", ""]
    if unchanged:
        for k in unchanged:
            row = next(r for r in rows_a if r.entry.key == k)
            lines.append(f"- `{k}` ({DECISIONS[k]}): NodePool label {row.main.nodepool.text()} under both profiles.")
    else:
        lines.append("- none")
    by_decision: dict[str, list[str]] = {}
    for d in diffs:
        by_decision.setdefault(d["decision"], [])
        if d["key"] not in by_decision[d["decision"]]:
            by_decision[d["decision"]].append(d["key"])
    lines += ["", "## Labels per decision", ""]
    for dec, keys in by_decision.items():
        lines.append(f"- {dec}: " + ", ".join(f"`{k}`" for k in keys))
    if notes:
        lines += ["", "## Known harness issues in this diff", ""]
        lines += [f"[^{i}]: {n}" for i, n in enumerate(notes, 1)]
    return "\n".join(lines) + "\n"


# -- svg ------------------------------------------------------------------------------------------------
def _esc(s: str) -> str:
    return (str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;"))


def _clip(s: str, n: int) -> str:
    s = str(s)
    return s if len(s) <= n else s[: n - 1] + "…"


def render_svg(rows: list[Row], stats: dict, command: str) -> str:
    """A hand-rendered SVG table: one line per probe context, colored by outcome."""
    widths = (430, 60, 60, 60, 60, 330, 330, 330)
    heads = ("Label", "AKS doc", "AKS obs", "Doc sched", "Doc written", "Karpenter schedulable",
             "Written to node (path)", "NodePool may set")
    chars = [w // 7 for w in widths]
    line_h, top = 18, 58
    body = [c for r in rows for c in _cells_of(r)]
    height = top + line_h * (len(body) + 1) + 20
    width = sum(widths) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="DejaVu Sans Mono, monospace" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="10" y="20" font-size="15" font-weight="bold">Design 0006 labels from behavior: '
           f'profile {_esc(stats["profile"])}</text>',
           f'<text x="10" y="38" fill="#555">{_esc(command)} ({stats["runs"]} probe runs)</text>']
    y = top
    x = 10
    for w, h in zip(widths, heads):
        out.append(f'<rect x="{x}" y="{y - 13}" width="{w}" height="{line_h}" fill="#dde3ea"/>')
        out.append(f'<text x="{x + 3}" y="{y}" font-weight="bold">{_esc(h)}</text>')
        x += w
    for i, (_, cols) in enumerate(body):
        y += line_h
        x = 10
        for j, (w, text) in enumerate(zip(widths, cols)):
            fill = "#ffffff" if i % 2 else "#f6f8fa"
            t = str(text).replace("**", "")
            if j >= 5:
                fill = "#e6f4ea" if t.startswith(CHECK) else "#fce8e6"
                if "runaway" in t or "refuses" in t:
                    fill = "#fff4d6"
            elif 1 <= j <= 4 and t:
                fill = "#e6f4ea" if t == CHECK else "#fce8e6"
            out.append(f'<rect x="{x}" y="{y - 13}" width="{w}" height="{line_h}" fill="{fill}" stroke="#e1e4e8"/>')
            shown = t[2:] if j >= 5 and t[:1] in (CHECK, CROSS) else t
            if 1 <= j <= 4:
                shown = {"✅": "yes", "❌": "no"}.get(t, t)
            out.append(f'<text x="{x + 3}" y="{y}">{_esc(_clip(shown, chars[j]))}</text>')
            x += w
    out.append("</svg>")
    return "\n".join(out) + "\n"


def render_png(rows: list[Row], stats: dict, command: str, path: str) -> None:
    """Only when matplotlib happens to be installed (no new dependency)."""
    import matplotlib  # noqa: F401 - raises ImportError when absent
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    body = [cols for r in rows for _, cols in _cells_of(r)]
    text = [[str(c).replace("**", "")[:60] for c in cols] for cols in body]
    fig, ax = plt.subplots(figsize=(26, 0.28 * (len(text) + 2)))
    ax.axis("off")
    tbl = ax.table(cellText=text, colLabels=list(COLUMNS), loc="upper left", cellLoc="left")
    tbl.auto_set_font_size(False)
    tbl.set_fontsize(7)
    ax.set_title(f"Design 0006 labels from behavior: profile {stats['profile']}")
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


# == CLI ================================================================================================
def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "parity", help="design 0006's label table regenerated from behavior (one profile, or a diff of two)",
        description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="upstream", help="label profile (default: upstream)")
    p.add_argument("--diff", metavar="OTHER", default=None,
                   help="compare with another profile: only the cells whose behavior differs")
    p.add_argument("--check-doc", action="store_true",
                   help="list every cell where behavior and design 0006's Karpenter columns disagree")
    p.add_argument("--format", choices=("markdown", "json", "svg", "png"), default="markdown")
    p.add_argument("-o", "--output", default=None, help="write to a file (required for png)")
    p.add_argument("--label", action="append", default=[], metavar="KEY", help="only these labels (repeatable)")
    p.add_argument("--family", action="append", default=[], help="only these label families (repeatable)")
    p.add_argument("--data", default=None, help="label table file (default: harness/data/design-0006-labels.yaml)")
    p.set_defaults(fn=main)


def _command_line(args) -> str:
    parts = ["harness parity", f"--profile {args.profile}"]
    if args.diff:
        parts.append(f"--diff {args.diff}")
    if args.check_doc:
        parts.append("--check-doc")
    if args.format != "markdown":
        parts.append(f"--format {args.format}")
    for k in args.label:
        parts.append(f"--label {k}")
    for f in args.family:
        parts.append(f"--family {f}")
    if args.output:
        parts.append(f"-o {args.output}")
    return " ".join(parts)


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


def main(args) -> int:
    from harness.model.profile import available_profiles
    for p in [args.profile] + ([args.diff] if args.diff else []):
        if p not in available_profiles():
            print(f"harness parity: unknown profile {p!r}; available: {', '.join(available_profiles())}",
                  file=sys.stderr)
            return 2
    entries = select_labels(load_labels(args.data), args.label, args.family)
    command = _command_line(args)
    rows, stats = run_matrix(args.profile, entries)
    if args.diff:
        rows_b, stats_b = run_matrix(args.diff, entries)
        diffs = diff_rows(rows, rows_b)
        if args.format == "json":
            _emit(json.dumps({"from": args.profile, "to": args.diff, "differences": diffs,
                              "stats": [stats, stats_b]}, indent=2, ensure_ascii=False) + "\n", args.output)
        elif args.format == "markdown":
            _emit(render_diff_markdown(args.profile, args.diff, diffs, rows, command), args.output)
        else:
            print("harness parity: --diff supports --format markdown or json", file=sys.stderr)
            return 2
        return 0
    if args.check_doc:
        found = check_doc(rows)
        if args.format == "json":
            _emit(json.dumps([asdict(d) for d in found], indent=2, ensure_ascii=False) + "\n", args.output)
            return 0
        lines = [f"<!-- generated by `{command}` -->",
                 f"# Design 0006 vs behavior under `{args.profile}`: {sum(d.kind == 'disagree' for d in found)} "
                 f"disagreement(s), {sum(d.kind == 'qualification' for d in found)} qualification(s)", "",
                 "| Label | Context | Column | Doc | Behavior | Kind | Reason |", "|---|---|---|---|---|---|---|"]
        lines += ["| " + " | ".join(_md(x) for x in (d.key, d.variant or "main", d.column, d.doc, d.behavior,
                                                     d.kind, shorten(d.reason))) + " |" for d in found]
        _emit("\n".join(lines) + "\n", args.output)
        return 0
    if args.format == "json":
        _emit(json.dumps({"profile": args.profile, "stats": stats, "rows": [row_json(r) for r in rows]},
                         indent=2, ensure_ascii=False) + "\n", args.output)
    elif args.format == "svg":
        _emit(render_svg(rows, stats, command), args.output)
    elif args.format == "png":
        if not args.output:
            print("harness parity: --format png needs -o FILE", file=sys.stderr)
            return 2
        try:
            render_png(rows, stats, command, args.output)
        except ImportError:
            print("harness parity: PNG needs matplotlib, which is not installed; use --format svg", file=sys.stderr)
            return 2
    else:
        _emit(render_markdown(rows, stats, command) + "\n", args.output)
    return 0
