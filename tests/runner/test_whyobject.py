"""`harness run --why NAME` for any object (harness/runner/whyobject.py): a pod, a NodeClaim or Node (by name or
as `node N`), a NodePool, each with the decisions about it and what kept it."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.cli import main as cli
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.runner.scenario import load_scenarios
from harness.runner.whyobject import resolve, why_lines

ROOT = Path(__file__).resolve().parents[2]
DRIFT = ROOT / "scenarios" / "releases" / "core" / "drift-empty-node.scenario.yaml"


@pytest.fixture(scope="module")
def result():
    c = EmbeddedBackend().start()
    try:
        yield execute(get_engine("simulated"), load_scenarios(DRIFT)[0], "v1.6.8", c).final
    finally:
        c.close()


def test_resolve_every_kind(result):
    claim = result.nodeclaims[0].name
    node = result.nodes[0].name
    assert resolve(result, claim) == [("NodeClaim", claim)]
    assert resolve(result, node) == [("Node", node)]
    assert resolve(result, "node 0") == [("Node", node)]
    assert resolve(result, "default") == [("NodePool", "default")]
    assert [k for k, _ in resolve(result, "web")] == ["Pod"]


def test_a_node_says_how_it_went(result):
    lines = why_lines(result, "node 0")
    assert lines[0].startswith(f"NodeClaim {result.nodeclaims[0].name} / Node {result.nodes[0].name}: deleted")
    assert any("disrupted +" in line and "Drifted by drift (delete)" in line for line in lines)
    # the node and its NodeClaim are one object: asked by either name, one view
    assert why_lines(result, result.nodeclaims[0].name)[0] == lines[0]


def test_a_nodepool_counts_its_nodeclaims(result):
    assert why_lines(result, "default")[0] == "NodePool default: ready; 1 NodeClaim(s) made, 0 live Node(s)"


def test_unknown_name(result):
    assert why_lines(result, "ghost") == ["no pod, NodeClaim, Node, NodePool or workload 'ghost' in this run"]


def test_cli_why_a_nodepool(capsys):
    assert cli(["run", str(DRIFT), "--profile", "v1.6.8", "--why", "default", "--no-deciding"]) == 0
    assert "NodePool default: ready; 1 NodeClaim(s) made, 0 live Node(s)" in capsys.readouterr().out
