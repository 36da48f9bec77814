"""Renders the run report's HTML from the runs' page data (harness/report/runpage.py) with the Jinja2
templates in harness/report/templates/: index.html, one page per run, conformance.html when the
conformance report's JSON is given. Styles and script are copied into every page, so each page opens
on its own (no network, no file beside it)."""
from __future__ import annotations

import json
from pathlib import Path

from jinja2 import Environment, PackageLoader, select_autoescape

from harness.report.timelinesvg import timeline_svg

# anything else: bad; a dump's scenario reads reproduced / moved on, a log's not reproduced (report.shown_verdict)
VERDICT_CLASS = {"pass": "ok", "reproduced": "ok", "xfail": "warn", "moved on": "warn", "not reproduced": "warn",
                 "skipped": "muted"}


def _env() -> Environment:
    env = Environment(loader=PackageLoader("harness.report", "templates"), autoescape=select_autoescape(["html", "j2"]),
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["verdict_class"] = lambda v: VERDICT_CLASS.get(v, "bad")
    return env


def moments(tl: dict) -> list[dict]:
    """The disruption steps and the events of one run's timeline, merged in time order (steps first at a
    tie: the step is why the events follow)."""
    rows = [(s["at"]["offset"], 0, i, {**s["at"], "kind": "step", "what": s["action"],
                                       "object": f"NodeClaim {s['nodeclaim']}" + (f" (Node {s['node']})" if s["node"] else ""),
                                       "detail": s.get("detail") or ""})
            for i, s in enumerate(tl.get("steps") or [])]
    rows += [((e.get("at") or {}).get("offset") or 0.0, 1, i,
              {**(e.get("at") or {"offsetText": "", "utc": ""}), "kind": "event", "what": e["reason"],
               "object": f"{e['kind']}/" + (f"{e['namespace']}/" if e.get("namespace") else "") + (e.get("name") or "?"),
               "detail": e["message"]})
             for i, e in enumerate(tl.get("events") or [])]
    return [row for *_, row in sorted(rows, key=lambda r: r[:3])]


def render_site(out_dir: Path, runs: list[dict], across: dict[str, list[dict]], page_name,
                conformance: Path | None = None) -> Path:
    env = _env()
    names = {r["id"]: page_name(r) for r in runs}
    counts: dict[str, int] = {}
    for r in runs:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    conf = None
    if conformance is not None and Path(conformance).is_file():
        from harness.judge.conformance import status_text
        conf = json.loads(Path(conformance).read_text())
        for e in conf.get("entries") or []:
            e["statusText"] = status_text(e)
        (out_dir / "conformance.html").write_text(env.get_template("conformance.html.j2").render(
            report=conf, title="Conformance: simulated loop vs the real controller"))
    for r in runs:
        html = env.get_template("run.html.j2").render(
            run=r, svg=timeline_svg(r["timeline"]), moments=moments(r["timeline"]), across=across.get(r["id"]), names=names,
            title=f"{r['scenario']} [{r['profile']}]")
        (out_dir / names[r["id"]]).write_text(html)
    index = out_dir / "index.html"
    index.write_text(env.get_template("index.html.j2").render(
        runs=runs, across=across, names=names, counts=counts, conformance=conf is not None,
        title=f"Run report: {len(runs)} run(s)"))
    return index
