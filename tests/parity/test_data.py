"""The label table data file: every label of design 0006 (both drafts), well-formed probes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness import parity

# the design documents sit beside the repository, in ../shared/seeds
SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"
FINAL, DRAFT = "000_494de8dbc9129fab.txt", "001_58c4136b4b524bb8.txt"
ROW = re.compile(r"^\|\s*\**([A-Za-z0-9./_-]+)\**\s*\|", re.M)


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


@pytest.mark.skipif(not (SEEDS / FINAL).exists(), reason="design 0006 seeds not available")
@pytest.mark.parametrize("seed", [FINAL, DRAFT])
def test_covers_both_drafts_tables(labels, seed):
    """Every row of the design's tables, in either draft, has an entry."""
    keys = _table_keys((SEEDS / seed).read_text())
    assert len(keys) == 76
    missing = keys - {e.key for e in labels}
    assert not missing, f"labels in {seed} without an entry: {sorted(missing)}"


@pytest.mark.skipif(not (SEEDS / FINAL).exists(), reason="design 0006 seeds not available")
def test_doc_columns_copied_from_final_draft(labels):
    """The data file's doc columns are the final draft's cells (✅/❌), row by row."""
    text = (SEEDS / FINAL).read_text()
    by_key = {e.key: e for e in labels}
    for line in text.splitlines():
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
