"""`harness run --why NAME` for any object (harness/why/objects.py): a pod, a NodeClaim or Node (by name or
as `node N`), a NodePool, each with the decisions about it and what kept it."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.cli import main as cli
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.scenario.load import load_scenarios
from harness.why.objects import resolve, why_lines

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
    assert resolve(result, "default") == [("NodePool", "default"), ("AKSNodeClass", "default")]
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
    assert why_lines(result, "ghost") == ["no pod, NodeClaim, Node, NodePool, AKSNodeClass, workload or Node label 'ghost' in this run"]


def test_a_label_names_its_writers(result):
    lines = why_lines(result, "karpenter.sh/do-not-sync-taints")
    assert lines[0] == "label karpenter.sh/do-not-sync-taints:"
    assert f"Node {result.nodes[0].name}: 'true', written by kubelet-node-labels" in lines[1]


def test_cli_why_a_label_on_a_machine(capsys):
    """On a node the AKS Machine API created, AKS writes the labels; one the provider did not send says why."""
    pair = ROOT / "scenarios" / "releases" / "provision-mode-labels.scenario.yaml"
    assert cli(["run", str(pair), "-k", "aksmachineapi", "--why", "kubernetes.azure.com/mode",
                "--why", "karpenter.sh/do-not-sync-taints", "--no-deciding"]) == 0
    out = capsys.readouterr().out
    assert "'user', written by aks (writes: aks='user')" in out
    assert "do-not-sync-taints:\n" in out.replace("\r", "") and ": absent" in out


def test_cli_why_a_nodepool(capsys):
    assert cli(["run", str(DRIFT), "--profile", "v1.6.8", "--why", "default", "--no-deciding"]) == 0
    assert "NodePool default: ready; 1 NodeClaim(s) made, 0 live Node(s)" in capsys.readouterr().out


# -- beside the record: seeded drift, budgets and their windows, host ports, an AKSNodeClass -----------------
SEEDED = ROOT / "scenarios" / "loop" / "why-seeded-drift-host-ports.scenario.yaml"


@pytest.fixture(scope="module")
def seeded():
    c = EmbeddedBackend().start()
    try:
        sc = load_scenarios(SEEDED)[0]
        o = execute(get_engine("simulated"), sc, "upstream", c)
        assert o.passed, o.mismatches
        yield o.final, sc.given["existingNodes"]
    finally:
        c.close()


def test_a_node_seeded_as_drifted_says_so(seeded):
    result, existing = seeded
    lines = why_lines(result, "default-r5t8w", existing)
    assert ("  seeded as drifted: given.existingNodes[0].drifted: NodePoolDrifted (launched from an older NodePool "
            "template: it carries an older karpenter.sh/nodepool-hash); the run found it Drifted=NodePoolDrifted "
            "at +10s") in lines
    # without the scenario's seed the view still has the record's drift line
    assert not any("seeded" in line for line in why_lines(result, "default-r5t8w"))


def test_a_seeded_drift_the_run_never_finds_is_said(seeded):
    result, existing = seeded
    other = [dict(existing[0], nodeClaim=result.nodeclaims[1].name)]
    (line,) = [x for x in why_lines(result, result.nodeclaims[1].name, other) if "seeded" in x]
    assert "this release never found it drifted" in line


def test_the_budget_and_its_window_are_named(seeded):
    result, existing = seeded
    node = why_lines(result, "default-r5t8w", existing)
    assert any("Drift: budget for Drifted on NodePool default: 0 allowed (nodes 0 for Drifted, window 09:00-11:00 "
               'UTC ("0 9 * * *" for 2h), active now), 0 in use' in line for line in node)
    pool = why_lines(result, "default")
    assert '  budget: nodes 0 for Drifted, window 09:00-11:00 UTC ("0 9 * * *" for 2h), active now' in pool
    assert ("  allowed at +10s (the last disruption pass) over 2 initialized Node(s): Empty any, Underutilized any, "
            "Drifted 0 (less the Nodes being disrupted then)") in pool


def test_host_ports_explain_the_second_node(seeded):
    result, _ = seeded
    second = next(c for c in result.nodeclaims if c.name != "default-r5t8w")
    (line,) = [x for x in why_lines(result, second.name) if "host ports" in x]
    assert line == (f"  host ports 8080/TCP (Pod {second.pods[0]}, launched for it): also asked for by "
                    "default/web-5d8f6c7b9d-k2x8s (on aks-default-r5t8w): pods asking for one port never share a "
                    "node, each takes its own")
    assert any("host ports 8080/TCP" in x for x in why_lines(result, "web"))


def test_an_aksnodeclass_is_explained(seeded):
    result, _ = seeded
    assert ("AKSNodeClass", "default") in resolve(result, "default")
    lines = why_lines(result, "default")
    at = lines.index("AKSNodeClass default: Ready")
    view = lines[at:]
    assert "  spec: imageFamily: Ubuntu2204, osDiskSizeGB: 128" in view
    assert any(x.startswith("  read for its instance types and VMs: imageFamily Ubuntu2204, osDiskSizeGB 128") for x in view)
    assert "  named by NodePool(s) default: 2 NodeClaim(s) made" in view
    assert any(x.startswith("  labels its Nodes carry from it: karpenter.azure.com/aksnodeclass=default") for x in view)
    assert any(x.startswith("  +0s hash for a NodeClaim launched now: karpenter.azure.com/aksnodeclass-hash=")
               and "aksnodeclass-hash-version=v3" in x for x in view)
    assert "  drift: no NodeClaim found NodeClassDrift" in view
