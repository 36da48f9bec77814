"""docs/parity/ is current: regenerating it gives exactly the committed files. One regeneration runs
each profile's probes once (3 profiles, about 10 s of CPU); it is one test item, so CI runs it once."""
from __future__ import annotations

import difflib
from pathlib import Path

from harness.parity.docs import DOCS_DIR, DOCUMENTS, regenerate

ROOT = Path(__file__).resolve().parents[2]


def test_docs_parity_equals_a_regeneration(cluster):
    stale = []
    for name, text in regenerate(cluster).items():
        committed = (ROOT / DOCS_DIR / name).read_text()
        if committed != text:
            first = next(difflib.unified_diff(committed.splitlines(), text.splitlines(), lineterm="", n=0), "")
            diff = "\n".join(list(difflib.unified_diff(committed.splitlines(), text.splitlines(), lineterm="",
                                                       n=0))[2:8]) or first
            stale.append(f"{DOCS_DIR}/{name}:\n{diff}")
    assert not stale, "docs/parity/ is stale: run `bash scripts/regen-parity.sh`\n" + "\n".join(stale)
    assert {n for n, _ in DOCUMENTS} <= {p.name for p in (ROOT / DOCS_DIR).iterdir()}
