"""Which expectations the real engine can answer: the rest is reported "not applicable" with its
reason (harness/data/real-engine.yaml `not_applicable`), never passed silently."""
from __future__ import annotations

import copy

from harness.runner.engines.base import NotApplicable
from harness.runner.engines.real.controller.settings import engine_data


def _rules() -> list[tuple[list[str], str]]:
    return [(r["path"].split("."), r["reason"]) for r in engine_data()["not_applicable"]]


def split(expect: dict, root: str = "expect") -> tuple[dict, list[NotApplicable]]:
    """The part of `expect` the real engine checks, and the parts it cannot answer."""
    kept = copy.deepcopy(expect)
    out: list[NotApplicable] = []
    for parts, reason in _rules():
        _drop(kept, parts, [root], reason, out)
    timeline = (kept.get("disruption") or {}).get("timeline")
    if timeline:
        hidden = engine_data()["unobservable_timeline"]
        for i, item in enumerate(timeline):
            if item.get("action") in hidden:
                out.append(NotApplicable(f"{root}.disruption.timeline[{i}]", hidden[item["action"]]))
        kept["disruption"]["timeline"] = [t for t in timeline if t.get("action") not in hidden]
    return kept, out


def _drop(node, parts: list[str], where: list[str], reason: str, out: list[NotApplicable]) -> None:
    if not isinstance(node, dict) or not parts:
        return
    head, rest = parts[0], parts[1:]
    keys = list(node) if head == "*" else ([head] if head in node else [])
    for k in keys:
        if rest:
            _drop(node[k], rest, where + [k], reason, out)
            if node[k] == {}:
                del node[k]
        else:
            del node[k]
            out.append(NotApplicable(".".join(where + [k]), reason))


def ignored_given(given: dict) -> list[NotApplicable]:
    """given keys (dotted paths) the controller cannot take from the scenario."""
    def at(path: str):
        node = given
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        return node
    return [NotApplicable(f"given.{k}", why) for k, why in engine_data()["ignored_given"].items() if at(k)]
