"""`kubectl drain NODE --ignore-daemonsets --delete-emptydir-data --force` on the real engine's cluster, as kubectl
runs it (k8s.io/kubectl pkg/drain/drain.go): cordon, then one eviction (policy/v1 Eviction, the pod's `eviction`
subresource) per pod that no DaemonSet owns and that is no mirror pod; a 429 (a PodDisruptionBudget allows no
disruption now) is retried every 5 s for as long as kubectl runs (no --timeout), a 500 (the pod has more than one
PDB) is printed and not retried. The simulated engine plays the same verb in harness/loop/kube/kubectl.py.

The retries run beside the controller; a settle asks `due()` what it must wait for: a refused pod whose PDBs now
all allow a disruption (the API server's eviction check reads the PDB's status.disruptionsAllowed:
k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/storage/eviction.go checkAndDecrement), which kubectl's next
retry evicts. A refused pod whose PDB still allows none holds nothing: its retry changes nothing until the
cluster does, and then the settle sees the change."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from harness.backends.base import APIRejected
from harness.loop.kube.kubectl import EVICTION_RETRY_SECONDS
from harness.loop.scheduling.topology import selector_matches
from harness.runner.engines.real.cluster import verbs

MIRROR = "kubernetes.io/config.mirror"


@dataclass
class Drain:
    """The pods each drained Node still has to evict (namespace, name), and when each was last refused."""
    pods: dict[tuple[str, str], str] = field(default_factory=dict)       # pod -> its Node
    refused: dict[tuple[str, str], float] = field(default_factory=dict)  # pod -> monotonic time of the refusal

    def start(self, cluster, node: str, pods: list[dict]) -> None:
        """Cordon `node` and evict its pods (`pods`: the cluster's), as `kubectl drain` does."""
        verbs.cordon(cluster, node, True)
        for p in pods:
            meta = p["metadata"]
            if (p.get("spec") or {}).get("nodeName") != node or meta.get("deletionTimestamp"):
                continue
            if _left_alone(p) or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            self.pods[(meta.get("namespace") or "default", meta["name"])] = node
        for key in sorted(k for k, n in self.pods.items() if n == node):
            self._evict(cluster, key)

    def retry(self, cluster, pods: list[dict]) -> None:
        """kubectl's retries: each refused pod still on its Node, EVICTION_RETRY_SECONDS after its refusal."""
        here = {(p["metadata"].get("namespace") or "default", p["metadata"]["name"]): p for p in pods}
        for key in sorted(self.pods):
            p = here.get(key)
            if p is None or p["metadata"].get("deletionTimestamp") or p["spec"].get("nodeName") != self.pods[key]:
                del self.pods[key]          # evicted (or gone): kubectl waits for its deletion, nothing to retry
                self.refused.pop(key, None)
            elif time.monotonic() - self.refused.get(key, float("-inf")) >= EVICTION_RETRY_SECONDS:
                self._evict(cluster, key)

    def due(self, pods: list[dict], pdbs: list[dict]) -> list[str]:
        """The refused pods the next retry evicts: every PDB over each now allows a disruption."""
        out = []
        by_key = {(p["metadata"].get("namespace") or "default", p["metadata"]["name"]): p for p in pods}
        for key in sorted(self.refused):
            p = by_key.get(key)
            if p is None or key not in self.pods:
                continue
            over = [b for b in pdbs if (b["metadata"].get("namespace") or "default") == key[0]
                    and selector_matches((b.get("spec") or {}).get("selector") or {}, p["metadata"].get("labels") or {})]
            if over and all(((b.get("status") or {}).get("disruptionsAllowed") or 0) > 0 for b in over):
                out.append(f"pod {key[0]}/{key[1]}: `kubectl drain {self.pods[key]}` retries its eviction every "
                           f"{EVICTION_RETRY_SECONDS} s, and its PodDisruptionBudget now allows it")
        return out

    def _evict(self, cluster, key: tuple[str, str]) -> None:
        try:
            cluster.admin.evict(key[1], key[0])
            self.refused.pop(key, None)
        except APIRejected as e:
            if e.status == 429:
                self.refused[key] = time.monotonic()
            elif e.status == 404:
                self.pods.pop(key, None)
                self.refused.pop(key, None)
            else:           # 500: more than one PDB; kubectl prints it and gives up on the pod
                self.pods.pop(key, None)
                self.refused.pop(key, None)


def _left_alone(pod: dict) -> bool:
    """A DaemonSet's pod (--ignore-daemonsets) or a mirror pod (a static pod's: the kubelet's annotation, its
    Node as owner), which kubectl drain does not evict (k8s.io/kubectl pkg/drain/filters.go)."""
    meta = pod["metadata"]
    return (MIRROR in (meta.get("annotations") or {})
            or any(o.get("kind") in ("DaemonSet", "Node") for o in meta.get("ownerReferences") or ()))

