"""The run report (`harness run --report DIR`, `pytest --harness-report DIR`): one page per run and an
index, self-contained HTML (styles, script and the timeline's SVG inline; nothing fetched).

A run's page is built from a plain JSON document (`page_data`) that the process which ran it writes to
DIR/runs/ (`write_run`); `write_site` then renders every page from those files, so xdist workers write
their runs and the controller writes the pages. Each page shows the run's timeline
(harness/report/timelinesvg.py over harness/loop/history.py), per NodePool the why view's eliminations
(harness/loop/scheduling/why.py's wording), per Node its labels by writer, the expectations with pass/fail at
their file:line (the scenario's source is on the page), an explored run's outcome distribution, and
across the profiles of one scenario where the outcome changes. docs/report.md shows a page.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from harness.loop.history import history
from harness.runner.engines.base import Outcome
from harness.judge.outcome import digest
from harness.report.console import happened, node_count, outcome_summary, shown_verdict, unmade_entries

RUNS = "runs"                 # DIR/runs/<id>.json: one run's page data
MAX_SOURCE_LINES = 3000       # a scenario file longer than this is linked, not copied into the page


def run_id(o: Outcome) -> str:
    return digest([str(o.scenario.file), o.scenario.name, o.profile, o.backend, o.engine])


def _release(result) -> str:
    rel = result.release or {}
    covers = rel.get("covers") or []
    return covers[0] if len(covers) == 1 else (f"{covers[0]}-{covers[-1]}" if covers else str(rel.get("release", "")))


def _expectation_entries(expect: dict, root: str) -> list[tuple[str, tuple, object]]:
    """The scenario's expectations a level below each top key (`expect.nodePools.default`,
    `expect.pods.web`, `expect.nodeCount`): what one row of the page says."""
    parts = tuple(int(p) if p.isdigit() else p for p in _parts(root))
    out = []
    for k, v in (expect or {}).items():
        if isinstance(v, dict) and v and k not in ("loop",):
            out += [(f"{root}.{k}.{sub}", parts + (k, sub), w) for sub, w in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            out += [(f"{root}.{k}[{i}]", parts + (k, i), w) for i, w in enumerate(v)]
        else:
            out.append((f"{root}.{k}", parts + (k,), v))
    return out


def _parts(path: str) -> tuple:
    """`expect.pods["web"].scheduled` and `expect.pods.web.scheduled` alike (expect.py Checker.fail)."""
    return tuple(re.findall(r'[^.\[\]"]+', path))


def _under(path: str, prefix: str) -> bool:
    p, q = _parts(path), _parts(prefix)
    return p[:len(q)] == q


def expectations(o: Outcome) -> list[dict]:
    """Every expectation of the run with its line and verdict: `fail` with the mismatches under it,
    `n/a` where the engine cannot answer it, else `pass`; mismatches under no listed expectation
    (a step that could not be played) follow as their own rows."""
    sc = o.scenario
    blocks = [("expect", sc.expect_for(o.profile))]
    for i, step in enumerate(sc.steps):
        blocks.append((f"steps[{i}].expect", sc.expect_for(o.profile, step.get("expect") or {},
                                                           step.get("expectByProfile") or {})))
    rows, used = [], set()
    for root, block in blocks:
        for path, parts, value in _expectation_entries(block, root):
            hits = [m for m in o.mismatches if _under(m.path, path)]
            used |= {id(m) for m in hits}
            na = [n.reason for n in o.not_applicable if _under(n.path, path) or _under(path, n.path)]
            status = "fail" if hits else ("n/a" if na else "pass")
            line = next((m.line for m in hits if m.line), None) or sc.doc.line(parts)
            rows.append({"path": path, "line": line, "want": _brief(value), "status": status,
                         "failures": [m.render() for m in hits] + na})
    for m in o.mismatches:
        if id(m) not in used:
            rows.append({"path": m.path, "line": m.line or sc.line, "want": "", "status": "fail",
                         "failures": [m.render()]})
    if o.error:
        rows.append({"path": "(run)", "line": sc.line, "want": "", "status": "fail", "failures": [o.error]})
    return rows


def _brief(value, limit: int = 160) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _why(o: Outcome) -> list[dict]:
    out = []
    for w in o.why.values():
        said = w.render("")[0]
        out.append({"pod": w.pod, "said": said,
                    "nodePools": [{"name": np.nodepool, "lines": np.render("")} for np in w.nodepools]})
    return out


def _labels(h: dict) -> dict:
    return {node: [{"key": k, "value": v["value"], "writer": v["writer"],
                    "also": [w for w in v["writers"] if w != v["writer"]]} for k, v in labels.items()]
            for node, labels in (h.get("nodeLabels") or {}).items()}


def _exploration(o: Outcome) -> dict | None:
    ex = o.exploration
    if ex is None:
        return None
    from harness.judge.explore import describe, headline
    return {"headline": headline(ex), "runs": len(ex.views),
            "outcomes": [{"count": len(s), "summary": describe(v), "seeds": s[:10]} for v, s in ex.distinct()]}


def _source(path: Path) -> list[str]:
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return []
    return lines if len(lines) <= MAX_SOURCE_LINES else []


def page_data(o: Outcome) -> dict:
    """One run as the report's pages read it (plain JSON)."""
    sc, r = o.scenario, o.final
    labels = happened(r, labels=True)
    timeline = history(r).to_json()
    return {
        "id": run_id(o), "file": str(sc.file), "line": sc.line, "scenario": sc.name,
        "description": sc.description or "", "profile": o.profile,
        "profileIndex": sc.profiles.index(o.profile) if o.profile in sc.profiles else len(sc.profiles),
        "release": _release(o.result), "backend": o.backend, "engine": o.engine, "verdict": shown_verdict(o),
        "seed": sc.seed, "seconds": round(o.seconds, 3), "error": o.error, "skipped": o.skipped,
        "outcome": outcome_summary(r), "nodes": node_count(r).replace(" node(s)", ""),
        "notCreated": unmade_entries(r),
        "timeline": timeline,
        "why": _why(o), "nodeLabels": _labels(labels), "expectations": expectations(o),
        "exploration": _exploration(o), "source": _source(Path(sc.file)),
        "decisions": [d.to_json(r.started) for d in r.decisions],
        "deciding": o.deciding.to_json(r.started) if o.deciding is not None else None,
    }


def clear(out_dir: Path) -> None:
    """Start a report afresh: an earlier report's runs and pages in DIR would read as this run's."""
    d = Path(out_dir)
    for f in [*(d / RUNS).glob("*.json"), *d.glob("*.html")]:
        f.unlink()


def write_run(out_dir: Path, o: Outcome) -> Path:
    """The run's page data under a name unique to the run (xdist workers write in parallel)."""
    d = Path(out_dir) / RUNS
    d.mkdir(parents=True, exist_ok=True)
    f = d / f"{run_id(o)}.json"
    f.write_text(json.dumps(page_data(o), default=str))
    return f


def read_runs(out_dir: Path) -> list[dict]:
    d = Path(out_dir) / RUNS
    runs = [json.loads(f.read_text()) for f in sorted(d.glob("*.json"))] if d.is_dir() else []
    return sorted(runs, key=lambda r: (r["file"], r["line"], r["scenario"], r["profileIndex"], r["profile"], r["backend"]))


def across_profiles(runs: list[dict]) -> dict[str, list[dict]]:
    """Per scenario run under several profiles (scenario file:line), its runs in the scenario's
    profile order, each marked where its outcome differs from the run above."""
    groups: dict[str, list[dict]] = {}
    for r in runs:
        groups.setdefault(f"{r['file']}:{r['line']}:{r['backend']}:{r['engine']}", []).append(r)
    out = {}
    for key, group in groups.items():
        if len(group) < 2:
            continue
        prev, rows = None, []
        for r in group:
            rows.append({"id": r["id"], "profile": r["profile"], "release": r["release"], "verdict": r["verdict"],
                         "outcome": r["outcome"], "changed": prev is not None and r["outcome"] != prev})
            prev = r["outcome"]
        out[group[0]["id"]] = rows
        for r in group[1:]:
            out[r["id"]] = rows
    return out


def page_name(run: dict) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "-", f"{run['scenario']}-{run['profile']}").strip("-").lower()[:80]
    return f"{slug}-{run['id'][:8]}.html"


def write_site(out_dir: Path, conformance: Path | None = None) -> Path | None:
    """index.html and one page per run from DIR/runs/*.json (and conformance.html from the
    conformance report's JSON when there is one); returns the index, or None when no run was written."""
    from harness.report.site import render_site
    runs = read_runs(out_dir)
    if not runs:
        return None
    return render_site(Path(out_dir), runs, across_profiles(runs), page_name, conformance)
