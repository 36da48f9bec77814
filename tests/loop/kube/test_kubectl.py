"""harness/loop/kube/kubectl.py: a step's kubectl verbs on the loop (the end-to-end pins are
scenarios/loop/kubectl-verbs.scenario.yaml and tickets/t14)."""
from __future__ import annotations

import pytest

from harness.loop.kube.kubectl import RESTARTED_AT, UNSCHEDULABLE_TAINT, KubectlError
from harness.loop.kube.pdb import VIOLATES_PDB_ERROR
from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation


def _pdb(name: str, app: str, **spec) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": app}}, **spec}}


def _node_of(sim, key: str) -> str:
    return sim.result.pods[key].node


def _live(sim, owner: str) -> list[str]:
    return sorted(k for k, pr in sim.result.pods.items() if pr.owner_name == owner and pr.state != "deleted")


def _decisions(sim, action: str) -> list:
    return [d for d in sim.result.decisions if d.controller == "kubectl" and d.action == action]


def test_cordon_sets_unschedulable_and_the_taint_uncordon_clears_both(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("a")]) as sim:
        sim.converge()
        node = _node_of(sim, "default/a")
        sim.kubectl.cordon(node)
        obj = sim.cluster.get("Node", node)
        assert obj["spec"]["unschedulable"] is True and UNSCHEDULABLE_TAINT in obj["spec"]["taints"]
        sim.kubectl.cordon(node, "uncordon", False)
        obj = sim.cluster.get("Node", node)
        assert "unschedulable" not in obj["spec"]
        assert all(t["key"] != UNSCHEDULABLE_TAINT["key"] for t in obj["spec"]["taints"])
        assert [d.action for d in sim.result.decisions if d.controller == "kubectl"] == ["node-cordoned", "node-uncordoned"]


def test_a_verb_on_a_node_the_run_does_not_have_is_kubectls_not_found(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("a")]) as sim:
        sim.converge()
        with pytest.raises(KubectlError) as e:
            sim.kubectl.cordon("aks-nope", "drain")
        assert e.value.key == "drain"
        assert e.value.reason.startswith('Error from server (NotFound): nodes "aks-nope" not found; Nodes there: aks-')
        with pytest.raises(KubectlError, match=r'nodeclaims.karpenter.sh "nope" not found; NodeClaims there: default-'):
            sim.kubectl.delete("NodeClaim", "nope")
        with pytest.raises(KubectlError, match='deployments.apps "web" not found'):
            sim.kubectl.scale("web", 2)


def test_drain_evicts_what_the_pdb_allows_and_retries_the_rest(embedded):
    """minAvailable 1 of two replicas: one eviction now; its replacement binds on another node, the PDB allows
    the second, and the drain's retry evicts it. Both end off the drained node; Karpenter's emptiness then deletes
    it, as any empty node (core's disruption reads no spec.unschedulable)."""
    with simulation(embedded, [nodeclass(), nodepool(), deployment("api", replicas=2), _pdb("api", "api", minAvailable=1)]) as sim:
        sim.converge()
        (node,) = {_node_of(sim, k) for k in _live(sim, "api")}
        sim.kubectl.drain(node)
        refused = _decisions(sim, "eviction-refused")
        assert len(refused) == 1 and VIOLATES_PDB_ERROR in refused[0].reason
        assert "retries it every 5 s" in refused[0].reason and "PodDisruptionBudget default/api" in refused[0].reason
        assert f'`error when evicting pods/"{refused[0].subject.split("/")[-1]}" -n "default" (will retry after 5s): ' \
            f'{VIOLATES_PDB_ERROR}`' in refused[0].reason
        sim.converge()
        assert len(_decisions(sim, "pod-evicted")) == 2
        assert all(_node_of(sim, k) not in (None, node) for k in _live(sim, "api"))
        assert len(_live(sim, "api")) == 2
        (c,) = [c for c in sim.state.claims if c.node_name == node]
        assert c.done and c.dis.deleted_by == "Empty"


def test_drain_behind_a_pdb_allowing_nothing_leaves_the_pods(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("api", replicas=2), _pdb("api", "api", maxUnavailable=0)]) as sim:
        sim.converge()
        keys = _live(sim, "api")
        (node,) = {_node_of(sim, k) for k in keys}
        sim.kubectl.drain(node)
        sim.converge()
        assert _live(sim, "api") == keys and {_node_of(sim, k) for k in keys} == {node}
        assert len(_decisions(sim, "eviction-refused")) == 2       # said once per pod, though retried each pass
        assert sorted(sim.kubectl.draining[node]) == keys


def test_drain_leaves_daemonset_pods(embedded):
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
          "spec": {"template": {"metadata": {"labels": {"app": "agent"}}, "spec": pod("x")["spec"]}}}
    with simulation(embedded, [nodeclass(), nodepool(), ds, pod("a")]) as sim:
        sim.converge()
        node = _node_of(sim, "default/a")
        sim.kubectl.drain(node)
        (started,) = _decisions(sim, "drain-started")
        assert "1 pod(s) to evict" in started.reason and "1 DaemonSet or mirror pod(s) left" in started.reason
        assert [pr.state for k, pr in sim.result.pods.items() if pr.owner_kind == "DaemonSet"] != ["deleted"]


def test_delete_nodeclaim_runs_karpenters_termination_with_the_users_reason(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        sim.converge()
        c = sim.state.claims[0]
        sim.kubectl.delete("NodeClaim", c.result.name)
        (d,) = [d for d in sim.result.decisions if d.action == "nodeclaim-deleting"]
        assert d.controller == "termination"
        assert d.reason.startswith(f"deleted by the user's `kubectl delete nodeclaim {c.result.name}`: termination drains")
        sim.converge()
        assert c.done and sim.nodes[c.node_name].deleted
        assert len(_live(sim, "web")) == 1 and _node_of(sim, _live(sim, "web")[0]) != c.node_name


def test_delete_node_deletes_its_nodeclaim(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("a")]) as sim:
        sim.converge()
        c = sim.state.claims[0]
        sim.kubectl.delete("Node", c.node_name)
        (d,) = [d for d in sim.result.decisions if d.action == "nodeclaim-deleting"]
        assert f"`kubectl delete node {c.node_name}`, which deletes its NodeClaim" in d.reason
        sim.converge()
        assert c.done and sim.cluster.get("Node", c.node_name) is None


def test_scale_and_rollout_restart(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1)]) as sim:
        sim.converge()
        first = _live(sim, "web")
        sim.kubectl.scale("web", 3)
        assert len(_live(sim, "web")) == 3
        sim.kubectl.restart("web")
        assert RESTARTED_AT in sim.state.deployments[("default", "web")]["spec"]["template"]["metadata"]["annotations"]
        assert _live(sim, "web") == _live(sim, "web") and set(first) <= set(_live(sim, "web"))   # rolls as the loop runs
        sim.converge()
        rolled = _live(sim, "web")
        assert len(rolled) == 3 and not set(first) & set(rolled)


def test_annotate_a_pod_do_not_disrupt_and_label_a_node(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), pod("a")]) as sim:
        sim.converge()
        node = _node_of(sim, "default/a")
        sim.kubectl.metadata("annotate", "Pod", "a", None, {"karpenter.sh/do-not-disrupt": True})
        assert sim.pod_views["default/a"].obj["metadata"]["annotations"] == {"karpenter.sh/do-not-disrupt": "true"}
        sim.kubectl.metadata("label", "Node", node, None, {"team": "batch"})
        assert sim.cluster.get("Node", node)["metadata"]["labels"]["team"] == "batch"
        sim.kubectl.metadata("label", "Node", node, None, {"team": None})
        assert "team" not in sim.cluster.get("Node", node)["metadata"]["labels"]
        assert [d.action for d in sim.result.decisions if d.controller == "kubectl"] == \
            ["annotations-changed", "labels-changed", "labels-changed"]
