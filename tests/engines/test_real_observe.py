"""The real engine's observer: which pods are the scenario's (harness/runner/engines/real/observe.py)."""
from harness.runner.engines.real.observe import Observer


def _pod(rs: str, uid: str) -> dict:
    return {"metadata": {"name": f"{rs}-abcde", "ownerReferences": [{"kind": "ReplicaSet", "name": rs, "uid": uid}]}}


def test_a_pod_of_a_replicaset_that_is_gone_is_not_the_scenarios():
    """kube-controller-manager can re-create a pod from its cached copy of the previous scenario's
    ReplicaSet after a reset (same name when the template is the same): found by the fuzzer, where a
    one-replica Deployment counted two pods."""
    rs_owner, live = {"w0-5d8f": "w0", "uid-new": "w0"}, {"uid-new", "uid-bare"}
    assert Observer._owner(None, _pod("w0-5d8f", "uid-new"), rs_owner, live) == ("Deployment", "w0")
    assert Observer._owner(None, _pod("w0-5d8f", "uid-old"), rs_owner, live) == ("", None)
    assert Observer._owner(None, {"metadata": {"name": "p"}}, rs_owner, live) == ("", "")


def test_a_pod_of_a_live_replicaset_without_a_deployment_is_kept():
    assert Observer._owner(None, _pod("bare", "uid-bare"), {}, {"uid-bare"})[1] is not None
