"""`kubectl drain` on the real engine (drain.py): what it leaves alone, and which refused evictions a settle waits
for. The live run: scenarios/loop/kubectl-verbs.scenario.yaml kubectl-drain-behind-pdb-retries."""
from harness.runner.engines.real.cluster.drain import Drain, _left_alone


def _pod(name, labels=None, owner=None, annotations=None):
    meta = {"name": name, "namespace": "default", "labels": labels or {}, "annotations": annotations or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "x", "controller": True}]
    return {"metadata": meta, "spec": {"nodeName": "aks-a"}, "status": {"phase": "Running"}}


def _pdb(allowed):
    return {"metadata": {"name": "web", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}, "status": {"disruptionsAllowed": allowed}}


def test_daemonset_and_mirror_pods_are_left_on_the_node():
    assert _left_alone(_pod("ds", owner="DaemonSet"))
    assert _left_alone(_pod("static", annotations={"kubernetes.io/config.mirror": "abc"}))
    assert not _left_alone(_pod("web", owner="ReplicaSet"))


def test_a_refused_pod_holds_the_settle_only_once_its_pdb_allows_the_retry():
    drain = Drain(pods={("default", "web-1"): "aks-a"}, refused={("default", "web-1"): 0.0})
    pods = [_pod("web-1", {"app": "web"}, "ReplicaSet")]
    assert drain.due(pods, [_pdb(0)]) == []           # the retry would be refused again: nothing to wait for
    assert drain.due(pods, [_pdb(1)]) == [
        "pod default/web-1: `kubectl drain aks-a` retries its eviction every 5 s, and its PodDisruptionBudget "
        "now allows it"]
    assert drain.due(pods, [_pdb(1), _pdb(0)]) == []  # every PDB over it must allow it
