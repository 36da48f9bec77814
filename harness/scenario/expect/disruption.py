"""`expect.disruption`: what Karpenter's disruption did by now, partially matched.

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import re


def _node_name(result, index: int) -> str | None:
    return result.nodes[index].name if 0 <= index < len(result.nodes) else None


def _claim_of(result, index: int) -> str | None:
    return result.nodes[index].nodeclaim if 0 <= index < len(result.nodes) else None


def _index_of(result, node: str | None) -> int | None:
    return next((n.index for n in result.nodes if n.name == node), None)


def _timeline_index(result, t: dict) -> int | None:
    idx = _index_of(result, t.get("node"))
    if idx is None:
        idx = next((n.index for n in result.nodes if n.nodeclaim == t.get("nodeClaim")), None)
    return idx


def _text_ok(spec: dict, text: str | None, prefix: str = "message") -> bool:
    text = text or ""
    if prefix in spec and spec[prefix] != text:
        return False
    if f"{prefix}Contains" in spec and spec[f"{prefix}Contains"] not in text:
        return False
    if f"{prefix}Regex" in spec and not re.search(spec[f"{prefix}Regex"], text):
        return False
    return True


def _record_matches(result, rec: dict, want: dict) -> bool:
    if "node" in want and rec.get("index") != want["node"]:
        return False
    if "command" in want and rec.get("commandIndex") != want["command"]:
        return False
    for key in ("nodePool", "instanceType", "capacityType", "reason", "driftReason", "method", "decision",
                "candidates"):
        if key in want and want[key] != rec.get(key):
            return False
    reps = rec.get("replacements") or []
    if "replacementCount" in want and want["replacementCount"] != len(reps):
        return False
    if "replacements" in want:
        have = sorted(str(r.get("instanceType")) for r in reps)
        wanted = want["replacements"]
        if len(wanted) != len(have):
            return False
        pool = list(have)
        for w in wanted:
            it = w.get("instanceType") if isinstance(w, dict) else w
            if it is None:
                pool.pop(0) if pool else None
            elif it in pool:
                pool.remove(it)
            else:
                return False
    return True


def _describe(rec: dict) -> str:
    reps = ", ".join(str(r.get("instanceType")) for r in rec.get("replacements") or [])
    return (f"node {rec.get('index')} ({rec.get('instanceType')}) {rec.get('reason')}"
            + (f"/{rec.get('driftReason')}" if rec.get("driftReason") else "")
            + f" by {rec.get('method')}: {rec.get('decision')}" + (f" -> [{reps}]" if reps else ""))


def _unmatched(items: list[int], hits: list[list[int]]) -> int | None:
    """The first item left without a record of its own when each item takes a distinct record it matches
    (a maximum bipartite matching by augmenting paths), else None."""
    owner: dict[int, int] = {}

    def take(i: int, seen: set[int]) -> bool:
        for j in hits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or take(owner[j], seen):
                    owner[j] = i
                    return True
        return False
    return next((i for i in items if not take(i, set())), None)


def check_disruption(checker, spec: dict) -> None:
    """Adds a Mismatch to `checker` (harness.scenario.expect.match.Checker) for each unmet expectation."""
    r = checker.r
    root = f"{checker.root}.disruption"
    records = r.disruptions
    summary = "; ".join(_describe(d) for d in records) or "nothing was disrupted"
    wanted = spec.get("disrupted") or []
    if spec.get("disrupted") == [] and records:       # an empty list says: nothing was disrupted
        checker.fail(f"{root}.disrupted", "nothing disrupted", summary)
    hits = [[j for j, d in enumerate(records) if _record_matches(r, d, want)] for want in wanted]
    for i, want in enumerate(wanted):
        n = want.get("count")
        if (n is None and not hits[i]) or (n is not None and len(hits[i]) != n):
            checker.fail(f"{root}.disrupted[{i}]", want, f"{len(hits[i])} matching", summary)
    # items without a count name one disruption each: two items are two disrupted NodeClaims
    single = [i for i, want in enumerate(wanted) if want.get("count") is None and hits[i]]
    unmatched = _unmatched(single, hits)
    if unmatched is not None:
        checker.fail(f"{root}.disrupted[{unmatched}]", wanted[unmatched],
                     "no disruption of its own (the others' match it)", summary)
    if "disruptedCount" in spec and spec["disruptedCount"] != len(records):
        checker.fail(f"{root}.disruptedCount", spec["disruptedCount"], len(records), summary)
    if "maxInFlight" in spec:
        most = _max_in_flight(r.timeline)
        if most != spec["maxInFlight"]:
            checker.fail(f"{root}.maxInFlight", spec["maxInFlight"], most, summary)
    for idx in spec.get("notDisrupted") or []:
        hit = [d for d in records if d.get("index") == idx]
        if not any(n.index == idx for n in r.nodes):      # a node that never was cannot be left alone
            checker.fail(f"{root}.notDisrupted", f"node {idx} not disrupted",
                         f"no node {idx} (nodes: {', '.join(str(n.index) for n in r.nodes) or 'none'})")
        elif hit:
            checker.fail(f"{root}.notDisrupted", f"node {idx} not disrupted", _describe(hit[0]))
    if "liveNodes" in spec:
        live = [n for n in r.nodes if n.deleted is None and n.registered]
        if spec["liveNodes"] != len(live):
            checker.fail(f"{root}.liveNodes", spec["liveNodes"], len(live),
                         ", ".join(f"{n.index}:{n.name} ({n.instance_type}{', gone: ' + n.deleted if n.deleted else ''})"
                                   for n in r.nodes))
    for i, want in enumerate(spec.get("protected") or []):
        node = _node_name(r, want["node"]) if "node" in want else None
        hits = [p for p in r.protected
                if ("node" not in want or (node is not None and p.get("node") == node)) and
                all(want[k] == p.get(k) for k in ("by", "method") if k in want) and _text_ok(want, p.get("message"))]
        if not hits:
            checker.fail(f"{root}.protected[{i}]", want,
                         [f"{_index_of(r, p['node'])}: {p['by']} ({p['method']}): {p['message']}" for p in r.protected]
                         or "no candidate was protected")
    for i, want in enumerate(spec.get("events") or []):
        names = None
        if "node" in want:
            names = {_node_name(r, want["node"]), _claim_of(r, want["node"])} - {None}
        hits = [e for e in r.events
                if (names is None or e.get("name") in names) and
                all(want[k] == e.get(k) for k in ("kind", "name", "reason") if k in want) and _text_ok(want, e.get("message"))]
        if want.get("absent"):
            if hits:
                checker.fail(f"{root}.events[{i}]", f"no {want}", [f"{e['kind']}/{e['name']} {e['reason']}: {e['message']}"
                                                                  for e in hits])
        elif not hits:
            checker.fail(f"{root}.events[{i}]", want, [f"{e['kind']}/{e['name']} {e['reason']}: {e['message']}"
                                                       for e in r.events if e["kind"] != "Log"])
    _check_timeline(checker, root, spec.get("timeline") or [])


def _max_in_flight(timeline: list[dict]) -> int:
    live: set[str] = set()
    most = 0
    for t in timeline:
        key = t.get("nodeClaim") or t.get("node")
        if t["action"] == "tainted":
            live.add(key)
            most = max(most, len(live))
        elif t["action"] in ("instance terminating", "terminated", "untainted"):
            live.discard(key)
    return most


def _check_timeline(checker, root: str, steps: list[dict]) -> None:
    """Positive items must appear in order (others may come between); an `absent` item must not
    appear between the positive items around it (after the last one: anywhere after it)."""
    r = checker.r

    def matches(want: dict, t: dict) -> bool:
        node = _node_name(r, want["node"]) if "node" in want else None
        claim = _claim_of(r, want["node"]) if "node" in want else None
        if "node" in want and node is None and claim is None:
            return False                  # no such node: an index past the run's nodes matches nothing
        return ("node" not in want or t.get("node") == node or t.get("nodeClaim") == claim) and \
            want.get("action", t["action"]) == t["action"] and _text_ok(want, t.get("detail"), "detail")

    pos = 0
    found_at: list[int | None] = []
    for i, want in enumerate(steps):
        if want.get("absent"):
            found_at.append(None)
            continue
        found = next((j for j in range(pos, len(r.timeline)) if matches(want, r.timeline[j])), None)
        if found is None:
            checker.fail(f"{root}.timeline[{i}]", want,
                         [f"{_timeline_index(r, t)}: {t['action']}{' ' + t['detail'] if t.get('detail') else ''}"
                          for t in r.timeline[pos:]] or "nothing (more) happened")
            return
        found_at.append(found)
        pos = found + 1
    for i, want in enumerate(steps):
        if not want.get("absent"):
            continue
        start = max((f for f in found_at[:i] if f is not None), default=-1) + 1
        end = min((f for f in found_at[i + 1:] if f is not None), default=len(r.timeline))
        for t in r.timeline[start:end]:
            if matches(want, t):
                checker.fail(f"{root}.timeline[{i}]", f"no {want}", f"{_timeline_index(r, t)}: {t['action']} at t={t['t']}")
                break
