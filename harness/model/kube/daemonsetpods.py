"""The DaemonSet controller's additions to the pods it makes: tolerations of the node conditions'
taints, so a node problem never evicts or blocks a daemon (harness/data/daemonset-pods.yaml, read from
k8s.io/kubernetes v1.36.3 pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations).
The simulated loop's DaemonSet controller applies them to each pod it creates and to the pod it checks a
node with; the real engine's kube-controller-manager does both itself."""
from __future__ import annotations

import copy
from functools import lru_cache

from harness.model.data import DATA_DIR, load_yaml

__all__ = ["with_daemon_tolerations"]


@lru_cache(maxsize=1)
def _table() -> dict:
    return load_yaml((DATA_DIR / "daemonset-pods.yaml").read_text())


def _same(a: dict, b: dict) -> bool:
    """Toleration.MatchToleration: the same key, operator, value and effect (an absent operator is Equal)."""
    return (a.get("key") or "", a.get("operator") or "Equal", a.get("value") or "", a.get("effect") or "") == \
        (b.get("key") or "", b.get("operator") or "Equal", b.get("value") or "", b.get("effect") or "")


def with_daemon_tolerations(spec: dict) -> dict:
    """A copy of a DaemonSet pod spec with the controller's tolerations: each replaces the template's
    matching one in place (AddOrUpdateTolerationInPodSpec) or is appended."""
    out = copy.deepcopy(spec)
    have = list(out.get("tolerations") or [])
    table = _table()
    for add in table["tolerations"] + (table["hostNetwork"] if out.get("hostNetwork") else []):
        for i, t in enumerate(have):
            if _same(t, add):
                have[i] = dict(add)
                break
        else:
            have.append(dict(add))
    out["tolerations"] = have
    return out
