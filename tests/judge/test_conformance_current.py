"""The checked-in conformance reports (docs/conformance/ and each provision mode's, docs/conformance/modes/<mode>/)
describe the library as it is: every upstream-profile scenario of the folders a report covers is in it, with the
document and the simulated outcome it was made from (a mode's simulated in that mode). A scenario edited, added or
removed, or a change to the simulated loop that changes an outcome, makes this fail until
`bash scripts/regen-conformance.sh` is run again (the real engine's side can only be remade there)."""
import json
from pathlib import Path

import pytest

from harness.judge.conformance import covered_folders, covered_scenarios, stale
from harness.model.upstream.provisionmodes import DEFAULT_MODE, MODE_ENV

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "docs" / "conformance"
MODE_REPORTS = sorted(p.parent.name for p in (REPORTS / "modes").glob("*/conformance.json"))


def _check(report_dir: Path, mode: str | None, monkeypatch):
    monkeypatch.chdir(ROOT)                   # entries name files relative to the repository root
    if mode is None:
        monkeypatch.delenv(MODE_ENV, raising=False)
    else:
        monkeypatch.setenv(MODE_ENV, mode)    # what regen-conformance.sh's MODE= gives every scenario naming none
    report = json.loads((report_dir / "conformance.json").read_text())
    found = stale(report, covered_scenarios(report))
    where = report_dir.relative_to(ROOT)
    prefix = f"MODE={mode} " if mode else ""
    assert not found, (f"{where}/ is stale in {len(found)} run(s); regenerate it with "
                       f"`{prefix}bash scripts/regen-conformance.sh --stale {where}` (only these runs) or "
                       f"`{prefix}bash scripts/regen-conformance.sh {where} "
                       + " ".join(map(str, covered_folders(report))) + "`:\n  "
                       + "\n  ".join(found[:40]))


def test_checked_in_report_is_current(monkeypatch):
    _check(REPORTS, None, monkeypatch)


@pytest.mark.parametrize("name", MODE_REPORTS)
def test_checked_in_mode_report_is_current(name, monkeypatch):
    """A provision mode's report (modes/<mode>, or modes/<mode>-<release> at another release) holds runs of that
    mode only, and is current in it."""
    report = json.loads((REPORTS / "modes" / name / "conformance.json").read_text())
    (mode,) = {e.get("provisionMode") or DEFAULT_MODE for e in report["entries"]}
    assert name == mode or name.startswith(mode + "-")
    _check(REPORTS / "modes" / name, mode, monkeypatch)
