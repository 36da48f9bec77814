"""The design-0006 scenario library covers every label named in design 0006 under every profile,
and every scenario says where its facts come from."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.scenario.load import find_scenario_files, load_scenarios

LIBRARY = Path(__file__).resolve().parents[2] / "scenarios" / "design-0006"
PROFILES = ("before-0006", "design-0006", "upstream")
# what counts as citing a source: the design's own parts, an upstream file (.go, .yaml, .md of a module), an
# upstream issue or PR, a URL, or a section of our docs/ pages
CITATION = re.compile(r"Decision|FAQ|designs/0006|\.go\b|[\w-]+/[\w.-]+#\d+|https?://|docs/\S+ sections? \d"
                      r"|\bv\d+\.\d+\.\d+ \S+\.(?:ya?ml|md)\b")


@pytest.fixture(scope="module")
def scenarios():
    return [sc for f in find_scenario_files([LIBRARY]) for sc in load_scenarios(f)]


def _mentions(sc) -> str:
    return json.dumps([m.obj for m in sc.manifests]) + json.dumps(sc.expect) + json.dumps(sc.expect_by_profile)


def test_every_design_label_in_a_scenario_per_profile(labels, scenarios):
    seen: dict[str, set[str]] = {p: set() for p in PROFILES}
    for sc in scenarios:
        text = _mentions(sc)
        for p in sc.profiles:
            if p in seen:
                seen[p] |= {e.key for e in labels if f'"{e.key}"' in text}
    named = {e.key for e in labels if e.table in ("main", "karpenter", "text")}
    for p in PROFILES:
        missing = sorted(named - seen[p])
        assert not missing, f"labels named in design 0006 with no scenario under {p}: {missing}"


def test_every_label_has_all_three_aspects(labels, scenarios):
    """(a) a pod selects it, (b) a NodePool sets it, (c) a Node's labels are asserted, somewhere."""
    selected, set_by_nodepool, asserted = set(), set(), set()
    for sc in scenarios:
        for m in sc.manifests:
            obj = m.obj
            if obj.get("kind") == "Pod":
                selected |= set((obj.get("spec") or {}).get("nodeSelector") or {})
            if obj.get("kind") == "NodePool":
                set_by_nodepool |= set((((obj.get("spec") or {}).get("template") or {}).get("metadata") or {})
                                       .get("labels") or {})
        for exp in [sc.expect, *sc.expect_by_profile.values()]:
            for n in exp.get("nodes") or []:
                asserted |= set(n.get("labels") or {}) | set(n.get("labelsAbsent") or [])
    for e in labels:
        if e.table not in ("main", "karpenter"):
            continue
        assert e.key in selected, f"{e.key}: no pod selects it"
        assert e.key in set_by_nodepool, f"{e.key}: no NodePool sets it"
        assert e.key in asserted, f"{e.key}: no Node label expectation"


def test_descriptions_cite_their_source(scenarios):
    for sc in scenarios:
        assert CITATION.search(sc.description), f"{sc.file}: {sc.name} cites no source"


def test_xfails_name_the_model_defect(scenarios):
    """A known disagreement names the side that is wrong and cites where: a gap of the simulation
    (`model:`, the upstream source or our docs) or of the real controller run (`engine: real:`, the upstream file)."""
    for sc in scenarios:
        for profile, reason in sc.xfail.items():
            cited = CITATION.search(reason)
            assert reason.startswith(("model: ", "engine: real: ")) and cited, f"{sc.name}[{profile}]: {reason}"
