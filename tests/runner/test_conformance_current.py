"""The checked-in conformance report (docs/conformance/) describes the library as it is: every
upstream-profile scenario of the folders it covers is in it, with the document and the simulated
outcome it was made from. A scenario edited, added or removed, or a change to the simulated loop that
changes an outcome, makes this fail until `bash scripts/regen-conformance.sh` is run again (the real
engine's side can only be remade there)."""
import json
from pathlib import Path

from harness.runner.conformance import stale
from harness.runner.scenario import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "docs" / "conformance" / "conformance.json"


def covered_folders(report: dict) -> list[Path]:
    """The library folders the report was made over (scenarios/<folder>), from its entries."""
    return sorted({ROOT / Path(e["file"]).parts[0] / Path(e["file"]).parts[1] for e in report["entries"]})


def test_checked_in_report_is_current(monkeypatch):
    monkeypatch.chdir(ROOT)                   # entries name files relative to the repository root
    report = json.loads(REPORT.read_text())
    scenarios = [sc for folder in covered_folders(report)
                 for f in sorted(folder.rglob("*.scenario.yaml")) for sc in load_scenarios(str(f))]
    found = stale(report, scenarios)
    assert not found, (f"docs/conformance/ is stale in {len(found)} run(s); regenerate it with "
                       "`bash scripts/regen-conformance.sh docs/conformance "
                       + " ".join(str(f.relative_to(ROOT)) for f in covered_folders(report)) + "`:\n  "
                       + "\n  ".join(found[:40]))
