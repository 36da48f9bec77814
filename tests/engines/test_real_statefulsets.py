"""harness/runner/engines/real/statefulsets.py: a StatefulSet pod made without its claim (kube-controller-manager's
claim cache still held the previous scenario's claim of that name) is found, and its set synced again once."""
from types import SimpleNamespace

from harness.runner.engines.real.statefulsets import RESYNC, missing_claims, resync

SET = {"metadata": {"name": "db", "namespace": "default", "uid": "u-set"},
       "spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}}]}}


def pod(name: str, node: str | None = None, owner: str = "u-set") -> dict:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"u-{name}",
                         "ownerReferences": [{"kind": "StatefulSet", "uid": owner}]},
            "spec": {"nodeName": node, "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}},
                                                   {"name": "cache", "emptyDir": {}}]}}


def cluster(claims: set[str]):
    patches = []
    return SimpleNamespace(get=lambda kind, name, ns=None: {"kind": kind} if name in claims else None,
                           admin=SimpleNamespace(patch=lambda *a: patches.append(a)), patches=patches)


def test_a_pending_pod_without_its_claim_syncs_its_set_once():
    c = cluster({"data-db-0"})
    pods = [pod("db-0"), pod("db-1"), pod("db-2", node="n1"), pod("other-0", owner="u-other")]
    missing = missing_claims(c, [SET], pods)
    assert [(p["metadata"]["name"], claim) for _, p, claim in missing] == [("db-1", "data-db-1")]
    done: set[str] = set()
    resync(c, missing, done)
    resync(c, missing, done)                 # once per pod
    assert c.patches == [("StatefulSet", "db", {"metadata": {"annotations": {RESYNC: "u-db-1"}}}, "default")]
