"""Steps: each engine plays a step's actions in the one order (harness/scenario/steps.py ACTIONS) that the
schema and docs state; steps that cannot apply in the run's state fail the run at the step, naming its
file:line (issue 29); those the file alone decides are refused at load (tests/broken/step-*.yaml)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.runner.engines.real.engine import RealRun
from harness.runner.engines.simulated import SimulatedRun
from harness.report.console import failure_text
from harness.scenario.load import load_scenarios_text
from harness.scenario.steps import ACTIONS

ROOT = Path(__file__).resolve().parents[2]

BASE = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: steps}}
given: {{skus: [Standard_D2s_v3]}}
manifests:
  - file: manifests/default-nodepool.yaml
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: spot}}
    spec:
      weight: 10
      template:
        spec:
          nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
          requirements: [{{key: karpenter.sh/capacity-type, operator: In, values: [spot]}}]
  - apiVersion: v1
    kind: Pod
    metadata: {{name: web}}
    spec:
      nodeSelector: {{karpenter.sh/capacity-type: {capacity}}}
      containers: [{{name: c, image: x, resources: {{requests: {{cpu: 100m}}}}}}]
steps:
{steps}"""
STEP_LINE = 23            # the first step's line in BASE


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _run(cluster, steps: str, capacity: str = "on-demand"):
    sc = load_scenarios_text(BASE.format(steps=steps, capacity=capacity), "steps.scenario.yaml", ROOT / "scenarios")[0]
    return run(sc, "upstream", cluster)


def test_evicting_an_on_demand_vm_fails_the_step_with_azures_refusal(cluster):
    o = _run(cluster, "  - evict: {node: 0}\n    expect: {nodeCount: 5}\n")
    assert [(m.path, m.line) for m in o.mismatches] == [("steps[0].evict", STEP_LINE)]
    assert "simulateEviction refused: (OperationNotAllowed)" in o.mismatches[0].render()
    assert o.step_results == []                       # the step's expectations are not checked
    text = failure_text(o)
    assert f"steps.scenario.yaml:{STEP_LINE}: steps[0].evict: expected" in text


def test_evicting_a_node_the_run_does_not_have_fails_the_step(cluster):
    o = _run(cluster, "  - advance: 1m\n  - evict: {node: 3}\n")
    assert [(m.path, m.line) for m in o.mismatches] == [("steps[1].evict.node", STEP_LINE + 1)]
    assert "the run has 1 node(s): [0]" in o.mismatches[0].render()


def test_evict_by_pod_evicts_the_node_it_is_bound_to(cluster):
    o = _run(cluster, "  - advance: 1h\n    evict: {pod: web}\n    expect:\n      azure: {vmCount: 0}\n",
             capacity="spot")
    assert o.passed, [m.render() for m in o.mismatches]
    assert o.result.pods["default/web"].reason.startswith("node aks-spot-")   # its node went away


def test_evicting_the_same_vm_twice_fails_the_second_step(cluster):
    o = _run(cluster, "  - evict: {node: 0}\n  - evict: {node: 0}\n", capacity="spot")
    assert [m.path for m in o.mismatches] == ["steps[1].evict"]
    assert "(ResourceNotFound)" in o.mismatches[0].render()


def test_evict_after_the_resource_group_changed_finds_the_vm(cluster):
    o = _run(cluster, "  - cluster: {nodeResourceGroup: MC_other}\n  - evict: {node: 0}\n"
                      "    expect: {azure: {vmCount: 0}}\n", capacity="spot")
    assert o.passed, [m.render() for m in o.mismatches]


def test_evicting_an_unbound_pods_node_fails_the_step(cluster):
    o = _run(cluster, "  - evict: {pod: web}\n", capacity="nope")
    assert [m.path for m in o.mismatches] == ["steps[0].evict.pod"]
    assert "not bound to a node: web ignored (" in o.mismatches[0].render()


def test_a_during_launch_step_fails_when_the_phase_before_left_no_launch_in_flight(cluster):
    """`during: launch` after a phase whose launch registered at once (no given.loop.nodeBoot, and a step
    before settled it) or made none: the step cannot be played while a launch is in flight."""
    o = _run(cluster, "  - advance: 1m\n  - during: launch\n    expect: {nodeCount: 5}\n")
    assert [(m.path, m.line) for m in o.mismatches] == [("steps[1].during", STEP_LINE + 1)]
    assert o.mismatches[0].detail == "the step cannot apply; later steps were not played"
    assert "none was: the phase before settled" in o.mismatches[0].render()


def test_a_during_launch_step_is_played_while_the_launch_boots(cluster):
    """The settle before a `during: launch` step stops once a NodeClaim is launched and its Node has not
    registered (Simulation.converge until="launch"); given.loop.nodeBoot keeps it so on the loop's clock."""
    text = BASE.format(steps="  - during: launch\n    expect: {nodeCount: 1}\n", capacity="on-demand")
    text = text.replace("given: {skus: [Standard_D2s_v3]}", "given: {skus: [Standard_D2s_v3], loop: {nodeBoot: 30s}}")
    sc = load_scenarios_text(text, "steps.scenario.yaml", ROOT / "scenarios")[0]
    o = run(sc, "upstream", cluster)
    assert o.passed, [m.render() for m in o.mismatches]
    trace = o.step_results[0].trace            # the run's one trace: the pause, then the step's settle
    at = lambda text: next(i for i, line in enumerate(trace) if text in line)  # noqa: E731
    assert at("launched default-") < at("in flight for the next step") < at("kubelet registered")
    t = lambda i: float(trace[i].split("]")[0].removeprefix("[t=").removesuffix("s"))  # noqa: E731
    assert t(at("kubelet registered")) - t(at("launched default-")) >= 30


def test_a_given_restriction_of_a_size_the_catalog_lacks_fails_the_run_at_its_line(cluster):
    """given.restrict (played before the first pass, after the existing nodes launched) names a size of the
    run's catalog; without given.skus that is checked when it is played, and nothing is judged."""
    text = BASE.format(capacity="on-demand", steps="  - advance: 1m\n    expect: {nodeCount: 5}\n")
    text = text.replace("given: {skus: [Standard_D2s_v3]}", "given:\n  restrict: [{size: Standard_Nope_v9}]")
    (sc,) = load_scenarios_text(text, "steps.scenario.yaml", ROOT / "scenarios")
    o = run(sc, "upstream", cluster)
    (m,) = o.mismatches
    assert (m.path, m.line) == ("given.restrict", 5)
    assert m.actual == "Standard_Nope_v9 is not a SKU of this run's catalog"


# the one order of a step's actions (steps.py ACTIONS) -------------------------------------------------------

ORDER = ", ".join(ACTIONS)
# every action once, written in the reverse of the order they play in
EVERY_ACTION = {"apply": [{"kind": "Pod"}], "delete": [{"kind": "Pod", "name": "a"}],
                "restart": [{"deployment": "web"}], "scale": [{"deployment": "web", "replicas": 2}],
                "drain": ["aks-a"], "uncordon": ["aks-b"], "cordon": ["aks-a"],
                "annotate": [{"kind": "Pod", "name": "a", "annotations": {"k": "v"}}],
                "label": [{"kind": "Node", "name": "aks-a", "labels": {"k": "v"}}], "evict": {"node": 0},
                "restrict": [{"size": "Standard_D2s_v3"}], "faults": [{"code": "TooManyRequests"}],
                "cluster": {"storageProvisioners": []}, "crash": "controller", "advance": "1s"}


def _recording(run_class):
    """A run of `run_class` built without a cluster whose action handlers record their action."""
    class Recording(run_class):
        def __init__(self):
            self.played = []
            self.clocked = False          # the real engine's: no controller clock to move
    for action in ACTIONS:
        setattr(Recording, f"step_{action}", lambda self, value, a=action: self.played.append(a))
    return Recording()


@pytest.mark.parametrize("run_class", [SimulatedRun, RealRun], ids=["simulated", "real"])
def test_each_engine_plays_a_steps_actions_in_the_one_order(run_class):
    run = _recording(run_class)
    assert list(EVERY_ACTION) == list(reversed(ACTIONS))
    assert run.play(EVERY_ACTION, [{"kind": "Pod"}]) is None
    assert run.played == list(ACTIONS)


def test_the_real_engine_refuses_a_step_before_playing_any_of_its_actions():
    run = _recording(RealRun)
    why = run.play({**EVERY_ACTION, "cluster": {"useSIG": True}}, [{"kind": "Pod"}])
    assert why.startswith("cluster: useSIG: the SIG image path needs a SIG access-token server")
    assert run.played == []


def test_the_schema_and_the_docs_state_the_one_order():
    schema = json.loads((ROOT / "harness/data/scenario.schema.json").read_text())["properties"]["steps"]
    assert f"played in the order {ORDER} on every engine" in schema["description"]
    assert f"played in the order {ORDER}, then" in schema["items"]["description"]
    assert [k for k in schema["items"]["properties"] if k in ACTIONS] == list(ACTIONS)     # the reference's rows
    assert f"played in the order {ORDER}, on every engine" in " ".join((ROOT / "docs/scenario-format.md").read_text().split())


def test_a_step_evicts_the_node_of_a_pod_it_deletes(cluster):
    """evict before delete (whatever order the file writes them in): the pod names the node it is bound to
    as the phase before settled, then goes."""
    o = _run(cluster, "  - delete: [{kind: Pod, name: web}]\n    evict: {pod: web}\n"
                      "    expect: {azure: {vmCount: 0}, nodeClaims: {launched: 1}}\n", capacity="spot")
    assert o.passed, [m.render() for m in o.mismatches]
    assert o.step_results[0].pods["default/web"].state == "deleted"


def test_a_failed_action_says_which_of_its_steps_actions_were_not_played(cluster):
    o = _run(cluster, "  - advance: 1m\n    evict: {node: 0}\n    delete: [{kind: Pod, name: web}]\n")
    assert [m.path for m in o.mismatches] == ["steps[0].evict"]
    assert o.mismatches[0].detail == "the step cannot apply; this step's delete and later steps were not played"


# kubectl's verbs (harness/loop/kube/kubectl.py) ---------------------------------------------------------

def test_deleting_a_nodeclaim_the_run_does_not_have_fails_the_step_with_kubectls_not_found(cluster):
    o = _run(cluster, "  - delete: [{kind: NodeClaim, name: nope}]\n    apply: []\n")
    assert [(m.path, m.line) for m in o.mismatches] == [("steps[0].delete", STEP_LINE)]
    text = o.mismatches[0].render()
    assert 'Error from server (NotFound): nodeclaims.karpenter.sh "nope" not found; NodeClaims there: default-' in text


def test_cordoning_a_node_the_run_does_not_have_leaves_the_steps_later_verbs_unplayed(cluster):
    o = _run(cluster, "  - cordon: [aks-nope]\n    delete: [{kind: Pod, name: web}]\n")
    assert [m.path for m in o.mismatches] == ["steps[0].cordon"]
    assert 'nodes "aks-nope" not found; Nodes there: aks-default-' in o.mismatches[0].render()
    assert o.mismatches[0].detail == "the step cannot apply; this step's delete and later steps were not played"


def test_deleting_the_runs_own_nodeclaim_by_its_node_name(cluster):
    first = _run(cluster, "  - advance: 1s\n")
    node = first.result.nodes[0].name
    o = _run(cluster, f"  - delete: [{{kind: Node, name: {node}}}]\n    expect:\n      nodes: [{{index: 0, deleted: true}}]\n")
    assert o.passed, [m.render() for m in o.mismatches]
    # a bare pod's eviction by the drain is its end: nothing replaces it
    assert o.result.pods["default/web"].reason == f"evicted from node {node}"
