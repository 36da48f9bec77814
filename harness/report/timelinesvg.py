"""The run report's timeline chart as inline SVG: each NodeClaim a bar from creation through launch,
registration and initialization to its disruption or deletion (labelled with instance type, zone,
capacity type, price and the reason it went), each pod from pending to bound, the events as marks on
the same time axis. Drawn from the JSON form of harness/loop/history.py's History, so the pages can be
written by a process that never ran the scenario (pytest's xdist controller).
"""
from __future__ import annotations

from html import escape

from harness.loop.history import offset_text

WIDTH = 1240                 # the viewBox; the page scales it to its column
LABEL = 370                  # the left column: names and what each NodeClaim is
RIGHT = 250                  # room for the reason a NodeClaim went, right of its bar's end
CLAIM_ROW, POD_ROW, EVENT_ROW = 40, 20, 16
MAX_PODS = 40                # more pods than this: the rest are counted, not drawn
DAY = 86400
NICE_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, DAY,
              2 * DAY, 5 * DAY, 7 * DAY, 14 * DAY, 30 * DAY, 60 * DAY, 90 * DAY, 180 * DAY, 365 * DAY)

# the stage each bar segment stands for, by the phase it starts at
SEGMENTS = {"created": "launching", "launched": "registering", "registered": "initializing",
            "initialized": "running", "disrupting": "disrupting"}


def _ticks(end: float) -> list[float]:
    step = next((s for s in NICE_STEPS if end / s <= 8), max(NICE_STEPS[-1], end / 8))
    n = int(end // step)
    return [i * step for i in range(n + 1)]


def _t(text) -> str:
    return str(escape(str(text)))


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "\u2026"


def timeline_svg(tl: dict) -> str:
    """The chart for one run's `timeline` (History.to_json)."""
    claims, pods, events = tl.get("nodeClaims") or [], tl.get("pods") or [], tl.get("events") or []
    end = max(float((tl.get("end") or {}).get("offset") or 0.0), 10.0) * 1.04
    plot = WIDTH - LABEL - RIGHT

    def x(offset: float | None) -> float:
        return LABEL + plot * (min(max(offset or 0.0, 0.0), end) / end)

    shown_pods = pods[:MAX_PODS]
    # events at one second share a column: they stack up, so each keeps its own mark and tooltip
    columns: dict[float, int] = {}
    stacked = []
    for e in events:
        off = (e.get("at") or {}).get("offset") or 0.0
        k = columns.get(off, 0)
        columns[off] = k + 1
        stacked.append((e, off, k))
    event_rows = min(max(columns.values(), default=0), 6)
    top = 34
    events_h = max(event_rows, 1) * EVENT_ROW + 12
    claims_y = top + events_h + 18
    pods_y = claims_y + len(claims) * CLAIM_ROW + (30 if shown_pods else 0)
    height = pods_y + len(shown_pods) * POD_ROW + (22 if len(pods) > MAX_PODS else 0) + 34
    out = [f'<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" '
           f'role="img" aria-label="timeline of the run">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" class="hatch-bg"/>'
           '<line x1="0" y1="0" x2="0" y2="6" class="hatch-line"/></pattern></defs>']
    # the axis: ticks as offsets from the start; the grid runs through every lane
    for tick in _ticks(end / 1.04):
        tx = x(tick)
        out.append(f'<line class="grid" x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - 24}"/>')
        out.append(f'<text class="tick" x="{tx:.1f}" y="{top - 12}" text-anchor="middle">{_t(offset_text(tick))}</text>')
    out.append(f'<text class="lane" x="8" y="{top - 12}">time since {_t(tl.get("start", ""))}</text>')
    # events
    out.append(f'<text class="lane" x="8" y="{top + 14}">events ({len(events)})</text>')
    for e, off, k in stacked:
        if k >= event_rows:
            continue
        ex, ey = x(off), top + 4 + k * EVENT_ROW
        kind = "warn" if e.get("reason") in WARNING_REASONS else "info"
        at = e.get("at") or {}
        tip = f"{at.get('offsetText', '')} {at.get('utc', '')}  {e.get('kind')}/{e.get('name')} {e.get('reason')}: {e.get('message')}"
        out.append(f'<g class="event {kind}"><title>{_t(tip)}</title>'
                   f'<path d="M{ex:.1f} {ey}l5 6l-5 6l-5 -6z"/></g>')
    hidden = sum(1 for _, _, k in stacked if k >= event_rows)
    if hidden:
        out.append(f'<text class="note" x="{WIDTH - 8}" y="{top + 14}" text-anchor="end">+{hidden} more at the same times '
                   '(table below)</text>')
    # NodeClaims
    out.append(f'<text class="lane" x="8" y="{claims_y - 6}">NodeClaims ({len(claims)})</text>')
    for i, c in enumerate(claims):
        y = claims_y + i * CLAIM_ROW
        phases = c.get("phases") or {}
        what = " \u00b7 ".join(v for v in (c.get("instanceType"), c.get("zone"), c.get("capacityType")) if v)
        price = c.get("price")
        out.append(f'<g class="claim" data-nodeclaim="{_t(c["nodeclaim"])}">')
        out.append(f'<text class="name" x="8" y="{y + 15}">{_t(c["nodeclaim"])}'
                   f'<tspan class="pool"> ({_t(c.get("nodepool") or "")})</tspan></text>')
        what = (what or "not launched") + (f" \u00b7 ${price:.4f}/h" if price is not None else "")
        out.append(f'<text class="what" x="8" y="{y + 30}">{_t(_short(what, 60))}</text>')
        names = list(phases)
        for j, p in enumerate(names):
            stage = SEGMENTS.get(p)
            if stage is None:
                continue
            start = phases[p]["offset"]
            stop = phases[names[j + 1]]["offset"] if j + 1 < len(names) else end
            x0, x1 = x(start), x(stop)
            cls = f"seg seg-{stage}" + (f" cap-{_t(c.get('capacityType'))}" if stage == "running" else "")
            tip = f"{stage}: {phases[p]['offsetText']} ({phases[p]['utc']})"
            if j + 1 < len(names):
                tip += f" to {phases[names[j + 1]]['offsetText']}"
            out.append(f'<rect class="{cls}" x="{x0:.1f}" y="{y + 6}" width="{max(x1 - x0, 2):.1f}" height="20" '
                       f'rx="3"><title>{_t(tip)}</title></rect>')
        for p in names:
            if p == "created":
                continue
            px = x(phases[p]["offset"])
            out.append(f'<line class="phase" x1="{px:.1f}" y1="{y + 3}" x2="{px:.1f}" y2="{y + 29}">'
                       f'<title>{_t(p)} {_t(phases[p]["offsetText"])} ({_t(phases[p]["utc"])})</title></line>')
        last = x(phases[names[-1]]["offset"]) if "deleted" in phases else x(end)
        went = _went(c)
        if went:
            out.append(f'<text class="went" x="{last + 8:.1f}" y="{y + 20}">{_t(_short(went, 40))}</text>')
        elif "deleted" not in phases and names:
            out.append(f'<text class="alive" x="{last + 8:.1f}" y="{y + 20}">running at the end</text>')
        out.append("</g>")
    # pods
    if shown_pods:
        out.append(f'<text class="lane" x="8" y="{pods_y - 8}">pods ({len(pods)}): pending, then bound</text>')
    for i, p in enumerate(shown_pods):
        y = pods_y + i * POD_ROW
        out.append(f'<g class="pod" data-pod="{_t(p["pod"])}">')
        out.append(f'<text class="pname" x="8" y="{y + 13}">{_t(_short(p["pod"], 46))}</text>')
        created = (p.get("created") or {}).get("offset")
        bound = (p.get("bound") or {}).get("offset")
        gone = (p.get("deleted") or {}).get("offset")
        if created is not None:
            stop = bound if bound is not None else (gone if gone is not None else end)
            out.append(f'<rect class="pending" x="{x(created):.1f}" y="{y + 4}" width="{max(x(stop) - x(created), 2):.1f}" '
                       f'height="11" rx="2"><title>pending from {_t(p["created"]["offsetText"])}</title></rect>')
        if bound is not None:
            stop = gone if gone is not None else end
            out.append(f'<rect class="bound" x="{x(bound):.1f}" y="{y + 4}" width="{max(x(stop) - x(bound), 2):.1f}" '
                       f'height="11" rx="2"><title>bound to {_t(p.get("node") or "?")} at '
                       f'{_t(p["bound"]["offsetText"])}</title></rect>')
        note = (f"on {p['node']}" if p.get("node") else p.get("state", ""))
        if gone is not None:
            note += f", {p['state']} {p['deleted']['offsetText']}"
        out.append(f'<text class="pnote" x="{x(gone if gone is not None else end) + 8:.1f}" y="{y + 13}">'
                   f'{_t(_short(note, 42))}</text></g>')
    if len(pods) > MAX_PODS:
        out.append(f'<text class="note" x="8" y="{pods_y + len(shown_pods) * POD_ROW + 14}">'
                   f'+{len(pods) - MAX_PODS} more pods (table below)</text>')
    out.append("</svg>")
    return "\n".join(out)


# events that say something did not go as asked (drawn in the warning colour)
WARNING_REASONS = frozenset({"FailedScheduling", "FailedDraining", "DisruptionBlocked", "Unconsolidatable",
                             "Evicted", "InsufficientCapacityError", "FailedCreate", "NodeClassNotReady"})


def _went(c: dict) -> str:
    """`drift: Drifted`, `consolidation: Underutilized -> default-x`, or why core deleted it."""
    if not c.get("reason") and not c.get("failure"):
        return ""
    text = f"{c['went']}: {c['reason']}" if c.get("went") else (c.get("reason") or c.get("failure") or "")
    if c.get("replacedBy"):
        text += " \u2192 " + ", ".join(c["replacedBy"])
    return text
