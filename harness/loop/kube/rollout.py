"""A Deployment's rollout to a new pod template, step by step as the loop runs (kubernetes v1.36.3
pkg/controller/deployment rolling.go rolloutRolling, recreate.go rolloutRecreate).

When a Deployment's template changes (workloads.py `_update_deployment`, or a dump's old-revision pods:
`_seeded_of`), its running pods become the old ReplicaSet's. With strategy RollingUpdate (the default) each
loop iteration does what one sync of the Deployment controller does: scale the new ReplicaSet up while
all pods stay within replicas + maxSurge (NewRSNewReplicas), or delete old pods while the available ones
stay at replicas - maxUnavailable (reconcileOldReplicaSets: the unavailable old pods first,
cleanupUnhealthyReplicas). A pod is available once bound (the simulation's pods run when bound) and
minReadySeconds have passed. With Recreate every old pod goes first, then the new ones are made.

The race (`given.loop.rolloutPods`): the Deployment controller's next sync makes the replacement of an old
pod it deleted milliseconds later, while the old pod's kubelet takes its time to stop it. 'after' (calm):
the old pod is gone first, so kube-scheduler puts the replacement in its room; 'raced': in a seeded choice per
step the replacement is pending while the old pod still holds its node, so Karpenter's provisioning round
may launch a node for it (harness/loop/races.py).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

from harness.loop.state import LoopState

DEFAULT_FENCEPOST = "25%"      # apps/v1 SetDefaults_Deployment: maxSurge and maxUnavailable


def scaled(value: int | str | None, total: int, round_up: bool) -> int:
    """k8s.io/apimachinery pkg/util/intstr GetScaledValueFromIntOrPercent: an int as is, a percent of
    `total` rounded up or down."""
    if value is None:
        value = DEFAULT_FENCEPOST
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"(\d+)%", str(value).strip())
    if not m:
        return int(str(value))
    exact = int(m.group(1)) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def fenceposts(dep: dict) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) of a RollingUpdate Deployment (pkg/controller/deployment/util
    ResolveFenceposts): surge rounded up, unavailable down; both 0 make unavailable 1."""
    spec = dep.get("spec") or {}
    replicas = int(spec.get("replicas", 1))
    ru = ((spec.get("strategy") or {}).get("rollingUpdate") or {})
    surge = scaled(ru.get("maxSurge"), replicas, True)
    unavailable = scaled(ru.get("maxUnavailable"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def strategy(dep: dict) -> str:
    return str((((dep.get("spec") or {}).get("strategy")) or {}).get("type") or "RollingUpdate")


@dataclass
class Rollout:
    """One Deployment's rollout in progress: the pod keys of its old ReplicaSets."""
    namespace: str
    name: str
    old: list[str] = field(default_factory=list)


class Rollouts:
    """The Deployment controller's rollouts. `create(dep, n)` makes n pods of the current template;
    `scale_down_order(keys)` is the ReplicaSet's deletion order (workloads.py)."""

    def __init__(self, state: LoopState, create: Callable[[dict, int], None],
                 scale_down_order: Callable[[list[str]], list[str]]):
        self.state = state
        self.create = create
        self.scale_down_order = scale_down_order
        self.active: dict[tuple[str, str], Rollout] = {}
        # rolloutPods raced: old pods deleted in this iteration whose kubelet confirms in the next one
        self.stopping: dict[str, str] = {}

    def start(self, namespace: str, name: str, old: list[str]) -> None:
        """The Deployment's template changed: `old` (its live pods) are the old revision's."""
        ro = self.active.setdefault((namespace, name), Rollout(namespace, name))
        ro.old = list(dict.fromkeys(ro.old + old))
        self.state.trace(f"rollout of Deployment {name}: {len(ro.old)} old pod(s), strategy "
                         f"{strategy(self.state.deployments[(namespace, name)])}")

    def rolling(self, namespace: str, name: str) -> bool:
        return (namespace, name) in self.active

    def reconcile(self) -> bool:
        progress = bool(self.stopping)
        for key, why in list(self.stopping.items()):
            self.state.delete_pod(key, why)
        self.stopping.clear()
        for key in list(self.active):
            progress |= self._sync(self.active[key])
        return progress

    def next_deadline(self) -> float | None:
        """When a new pod bound already becomes available (minReadySeconds past its start)."""
        times = []
        now = self.state.clock.now()
        for ro in self.active.values():
            dep = self.state.deployments.get((ro.namespace, ro.name))
            if dep is None:
                continue
            for k in self._new(ro):
                at = self._available_at(dep, k)
                if at is not None and at > now:
                    times.append(at)
        return min(times, default=None)

    # -- one sync -------------------------------------------------------------------------------------
    def _live(self, ro: Rollout) -> list[str]:
        s = self.state
        return [k for k in s.pods_of_owner("Deployment", ro.namespace, ro.name)
                if s.result.pods[k].state != "deleted" and k not in s.terminating and k not in self.stopping]

    def _new(self, ro: Rollout) -> list[str]:
        old = set(ro.old)
        return [k for k in self._live(ro) if k not in old]

    def _available_at(self, dep: dict, key: str) -> float | None:
        s = self.state
        pr = s.result.pods.get(key)
        if pr is None or not pr.node or pr.state != "scheduled":
            return None
        started = s.disruption.pod_started.get(key, pr.at.get("bound", s.clock.now()))
        return started + int((dep.get("spec") or {}).get("minReadySeconds", 0) or 0)

    def _available(self, dep: dict, key: str) -> bool:
        at = self._available_at(dep, key)
        return at is not None and at <= self.state.clock.now()

    def _sync(self, ro: Rollout) -> bool:
        s = self.state
        dep = s.deployments.get((ro.namespace, ro.name))
        if dep is None:
            del self.active[(ro.namespace, ro.name)]
            return False
        live = set(self._live(ro))
        ro.old = [k for k in ro.old if k in live]
        new = [k for k in live if k not in set(ro.old)]
        replicas = int((dep.get("spec") or {}).get("replicas", 1))
        why = f"Deployment {ro.name} rolled to a new pod template"
        if strategy(dep) == "Recreate" and ro.old:      # every old pod goes; the new ones at the next sync
            for k in ro.old:
                s.delete_pod(k, why)
            ro.old = []
            return True
        if not ro.old:
            del self.active[(ro.namespace, ro.name)]
            if len(new) < replicas:
                self.create(dep, replicas - len(new))
                return True
            return False
        surge, unavailable = fenceposts(dep)
        # NewRSNewReplicas: the new ReplicaSet grows while all pods stay within replicas + maxSurge
        up = min(replicas + surge - len(live), replicas - len(new))
        if up > 0:
            s.trace(f"rollout of Deployment {ro.name}: {up} new pod(s) (maxSurge {surge})")
            self.create(dep, up)
            return True
        # reconcileOldReplicaSets: the old go while available pods stay at replicas - maxUnavailable
        min_available = replicas - unavailable
        new_unavailable = sum(1 for k in new if not self._available(dep, k))
        budget = len(live) - min_available - new_unavailable
        if budget <= 0:
            return False
        unhealthy = [k for k in self.scale_down_order(ro.old) if not self._available(dep, k)]
        gone = unhealthy[:budget]          # cleanupUnhealthyReplicas
        available = sum(1 for k in live if k not in gone and self._available(dep, k))
        healthy_old = [k for k in self.scale_down_order(ro.old) if k not in gone]
        gone += healthy_old[:max(available - min_available, 0)]
        if not gone:
            return False
        s.trace(f"rollout of Deployment {ro.name}: {len(gone)} old pod(s) deleted (maxUnavailable {unavailable})")
        if s.cfg.rollout_pods == "raced" and s.rollout_rng.random() < 0.5:
            # the replacements come before the old pods' kubelet confirms: they meet this iteration's rounds
            for k in gone:
                self.stopping[k] = why
            ro.old = [k for k in ro.old if k not in self.stopping]
            new_live = len(live) - len(gone)
            up = min(replicas + surge - new_live, replicas - len(new))
            if up > 0:
                s.trace(f"rollout of Deployment {ro.name}: {up} new pod(s) while the old stop (rolloutPods raced)")
                self.create(dep, up)
            return True
        for k in gone:
            s.delete_pod(k, why)
        return True
