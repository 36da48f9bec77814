"""harness/loop/kube/rollout.py: a Deployment's rollout to a new template, step by step."""
from __future__ import annotations

import copy

import pytest

from harness.loop.kube.rollout import fenceposts
from tests.loop.loopkit import deployment, nodeclass, nodepool, simulation


@pytest.mark.parametrize("replicas, strategy, want", [
    (3, None, (1, 0)),                                  # 25% of 3: surge rounds up, unavailable down
    (10, None, (3, 2)),
    (4, {"maxSurge": 0, "maxUnavailable": "50%"}, (0, 2)),
    (4, {"maxSurge": 2, "maxUnavailable": 1}, (2, 1)),
    (3, {"maxSurge": 0, "maxUnavailable": 0}, (0, 1)),  # both 0: ResolveFenceposts makes unavailable 1
])
def test_fenceposts_resolve_ints_and_percents_as_kube_controller_manager(replicas, strategy, want):
    dep = deployment("web", replicas=replicas)
    if strategy is not None:
        dep["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": strategy}
    assert fenceposts(dep) == want


def _rolled(embedded, seed=1, strategy=None, min_ready=0, rollout_pods="after"):
    """web (3 replicas) rolled to a new image; its pods' results by name, the old ones' names and the
    simulation's decisions."""
    dep = deployment("web", replicas=3)
    with simulation(embedded, [nodeclass(), nodepool(), dep], seed=seed) as sim:
        sim.cfg.rollout_pods = rollout_pods
        sim.converge()
        old = {pr.name for pr in sim.result.pods.values()}
        new = copy.deepcopy(dep)
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "y"
        if strategy:
            new["spec"]["strategy"] = strategy
        if min_ready:
            new["spec"]["minReadySeconds"] = min_ready
        sim.workloads.update(new)
        assert all(pr.state != "deleted" for pr in sim.result.pods.values())   # nothing goes at the update
        sim.converge()
        return {pr.name: pr for pr in sim.result.pods.values()}, old


def _alive_at(pods, t):
    return [pr for pr in pods.values() if pr.at["created"] <= t < pr.at.get("deleted", float("inf"))]


def test_rolling_update_surges_one_and_removes_old_only_once_new_ones_run(embedded):
    """3 replicas, default 25%: at most 4 pods at once and never fewer than 3 running; every old pod ends
    deleted with the Deployment's reason, three new ones run."""
    pods, old = _rolled(embedded)
    new = [pr for n, pr in pods.items() if n not in old]
    assert len(new) == 3 and all(pr.state == "scheduled" for pr in new)
    assert all(pods[n].state == "deleted" and pods[n].reason == "Deployment web rolled to a new pod template"
               for n in old)
    times = sorted({t for pr in pods.values() for t in pr.at.values()})
    assert max(len(_alive_at(pods, t)) for t in times) == 4
    for n in old:       # an old pod goes only once a new one runs in its place
        gone = pods[n].at["deleted"]
        assert sum(1 for pr in new if pr.at.get("bound", float("inf")) <= gone) >= \
            sum(1 for o in old if pods[o].at["deleted"] <= gone)


def test_min_ready_seconds_hold_the_old_pods_until_the_new_are_available(embedded):
    pods, old = _rolled(embedded, min_ready=30)
    first_bound = min(pr.at["bound"] for n, pr in pods.items() if n not in old)
    assert min(pods[n].at["deleted"] for n in old) >= first_bound + 30


def test_recreate_deletes_every_old_pod_before_any_new_one(embedded):
    pods, old = _rolled(embedded, strategy={"type": "Recreate"})
    new = [pr for n, pr in pods.items() if n not in old]
    assert len(new) == 3
    assert max(pods[n].at["deleted"] for n in old) < min(pr.at["created"] for pr in new)


def _replacement_before_old_gone(pods, old) -> bool:
    """A new pod past the first (the surge one) made before the old pod it replaces was gone."""
    new = sorted((pr for n, pr in pods.items() if n not in old), key=lambda pr: pr.at["created"])
    return any(sum(1 for o in old if pods[o].at["deleted"] <= pr.at["created"]) < i for i, pr in enumerate(new))


def test_rollout_pods_after_by_default_raced_in_a_seeded_choice(embedded):
    """rolloutPods: after (default) - each replacement comes once the old pod is gone; raced - in some seeds
    the replacement is pending while the old pod still holds its node. A seed replays its choice."""
    assert not any(_replacement_before_old_gone(*_rolled(embedded, seed=s)) for s in (1, 2))
    raced = [_replacement_before_old_gone(*_rolled(embedded, seed=s, rollout_pods="raced")) for s in range(1, 7)]
    assert any(raced)
    assert _replacement_before_old_gone(*_rolled(embedded, seed=raced.index(True) + 1, rollout_pods="raced"))
