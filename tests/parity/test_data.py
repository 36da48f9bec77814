"""The label table data file: every label of design 0006 (both drafts), well-formed probes."""
from __future__ import annotations

import re

import pytest

from harness import parity
from harness.backends.binaries.controlplane import BinariesError, go_binary, go_module_dir

# Design 0006 as the provider ships it in its Go module. v1.7.1 carries the Nov 07 2025 text the data file
# copies (the same from v1.6.6 to v1.10.2); v1.12.0 and later carry the April 2026 revision (#1658: a
# kubernetes.azure.com/priority row, four cells "✅ (added)"). The Oct 30 draft is only a commit of PR #1245
# (937cb8f7, designs/0006-labels.md), in no module version; its tables name the same 76 labels (the
# data file's `drafts` column; test_every_entry_is_well_formed and test_counts hold it to that).
DESIGN_MODULE, DESIGN_VERSION = "github.com/Azure/karpenter-provider-azure", "v1.7.1"
DESIGN_PATH = "designs/0006-requirements-and-labels.md"
ROW = re.compile(r"^\|\s*\**([A-Za-z0-9./_-]+)\**\s*\|", re.M)


@pytest.fixture(scope="module")
def design() -> str:
    """The final draft's text, from the Go module cache (downloaded through the module proxy if absent)."""
    if go_binary() is None:
        pytest.skip(f"Go is missing: design 0006 is read from {DESIGN_MODULE}@{DESIGN_VERSION} {DESIGN_PATH}")
    try:
        return (go_module_dir(DESIGN_MODULE, DESIGN_VERSION) / DESIGN_PATH).read_text()
    except BinariesError as e:
        pytest.fail(str(e))


def _table_keys(text: str) -> set[str]:
    return {m.group(1) for m in ROW.finditer(text) if m.group(1) not in ("Label",) and not m.group(1).startswith("-")}


def test_every_entry_is_well_formed(labels):
    keys = [e.key for e in labels]
    assert len(keys) == len(set(keys)), "duplicate keys"
    for e in labels:
        assert e.table in ("main", "karpenter", "text", "extra"), e.key
        assert e.probe.value is not None and e.probe.skus, e.key
        assert e.refs, f"{e.key}: cite the reference"
        if e.table in ("main", "karpenter"):
            assert e.doc_schedulable is not None and e.doc_written is not None, e.key
            assert set(e.drafts) == {"final", "draft"}, e.key
        for v in e.variants:
            assert v.name, f"{e.key}: variants need a name"
        for m in e.model_issues:
            names = {"main"} | {v.name for v in e.variants}
            assert (m.get("variant") or "main") in names, f"{e.key}: model issue for an unknown variant"


def test_counts(labels):
    assert sum(e.table == "main" for e in labels) == 63
    assert sum(e.table == "karpenter" for e in labels) == 13


def test_covers_the_designs_tables(labels, design):
    """Every row of the design's tables has an entry."""
    keys = _table_keys(design)
    assert len(keys) == 76
    missing = keys - {e.key for e in labels}
    assert not missing, f"labels in design 0006 without an entry: {sorted(missing)}"


def test_doc_columns_copied_from_final_draft(labels, design):
    """The data file's doc columns are the final draft's cells (✅/❌), row by row."""
    by_key = {e.key: e for e in labels}
    for line in design.splitlines():
        m = ROW.match(line)
        if not m or m.group(1) not in by_key:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        e = by_key[m.group(1)]
        yn = {"✅": True, "❌": False, "": None}
        assert [yn[c] for c in cells[1:5]] == [e.aks_documented, e.aks_observed, e.doc_schedulable, e.doc_written], e.key
        assert e.bold == cells[0].startswith("**"), e.key


def test_select_labels_rejects_unknown(labels):
    with pytest.raises(parity.ParityUsageError, match="--label example.com/not-in-design: not a label"):
        parity.select_labels(labels, ["example.com/not-in-design"])
    with pytest.raises(parity.ParityUsageError, match="--family foo: unknown label family; known families: "):
        parity.select_labels(labels, families=["foo"])
    assert [e.key for e in parity.select_labels(labels, families=["podnetwork"])][0].startswith(
        "kubernetes.azure.com/pod")
