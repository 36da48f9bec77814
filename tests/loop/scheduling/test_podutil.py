"""harness/loop/scheduling/podutil.py: Karpenter's pod predicates for disruption (sigs.k8s.io/karpenter v1.14.0
pkg/utils/pod/scheduling.go, pkg/utils/disruption/disruption.go EvictionCost)."""
from __future__ import annotations

import pytest

from harness.loop.scheduling import podutil
from harness.loop.scheduling.pods import PodView
from harness.model.values.durations import go_duration


def view(annotations=None, spec=None, owner_kind="", owner_refs=None) -> PodView:
    meta = {"name": "p", "namespace": "default", "annotations": annotations or {}}
    if owner_refs:
        meta["ownerReferences"] = owner_refs
    return PodView({"metadata": meta, "spec": {"containers": [], **(spec or {})}}, 0, owner_kind, "x" if owner_kind else "")


@pytest.mark.parametrize("text,message", [
    ("forever", 'time: invalid duration "forever"'),
    ("5", 'time: missing unit in duration "5"'),
    ("1d", 'time: unknown unit "d" in duration "1d"'),
])
def test_go_parse_duration_errors(text, message):
    with pytest.raises(ValueError) as e:
        go_duration(text)
    assert str(e.value) == message


def test_go_parse_duration():
    assert go_duration("1h30m") == 5400
    assert go_duration("1.5s") == 1.5
    assert go_duration("0") == 0


def test_do_not_disrupt_true_and_durations():
    assert podutil.do_not_disrupt(view({"karpenter.sh/do-not-disrupt": "true"}), 0, 10 ** 9)
    assert not podutil.do_not_disrupt(view(), 0, 10)
    d = view({"karpenter.sh/do-not-disrupt": "10m"})
    assert podutil.do_not_disrupt(d, 0, 599) and not podutil.do_not_disrupt(d, 0, 600)
    assert podutil.do_not_disrupt(d, None, 10 ** 9)            # no start time: fail safe


def test_do_not_disrupt_until_is_where_a_duration_stops_protecting():
    d = view({"karpenter.sh/do-not-disrupt": "10m"})
    end = podutil.do_not_disrupt_until(d, 100, True)
    assert end == 700 and podutil.do_not_disrupt(d, 100, end - 0.5) and not podutil.do_not_disrupt(d, 100, end)
    assert podutil.do_not_disrupt_until(d, None, True) is None           # not started: no end yet
    assert podutil.do_not_disrupt_until(d, 100, False) is None           # a core that reads only "true"
    for value in ("true", "forever", "-1m", "0s"):
        assert podutil.do_not_disrupt_until(view({"karpenter.sh/do-not-disrupt": value}), 100, True) is None
    assert podutil.do_not_disrupt_until(view(), 100, True) is None


def test_invalid_do_not_disrupt_is_ignored_with_an_event():
    got = []
    assert not podutil.do_not_disrupt(view({"karpenter.sh/do-not-disrupt": "-5m"}), 0, 0,
                                      lambda *a, **k: got.append(a[3]))
    assert got == ['Invalid karpenter.sh/do-not-disrupt annotation: duration "-5m" must be positive, ignoring annotation']


def test_eviction_cost():
    assert podutil.eviction_cost(view()) == 1.0
    assert podutil.eviction_cost(view({"controller.kubernetes.io/pod-deletion-cost": str(2 ** 27)})) == 2.0
    assert podutil.eviction_cost(view(spec={"priority": 2 ** 25})) == 2.0
    assert podutil.eviction_cost(view(spec={"priority": -(2 ** 31)})) == -10.0      # clamped


def test_owners():
    assert not podutil.is_reschedulable(view(owner_kind="DaemonSet"))
    assert not podutil.is_reschedulable(view(owner_refs=[{"apiVersion": "v1", "kind": "Node", "name": "n"}]))
    assert podutil.is_reschedulable(view(owner_kind="Deployment"))
    assert podutil.controller_of(view(owner_kind="Deployment")) == "Deployment/x"
    assert podutil.controller_of(view()) is None


def test_tolerating_the_disrupted_taint():
    assert podutil.tolerates_disrupted_taint(view(spec={"tolerations": [{"operator": "Exists"}]}))
    assert not podutil.tolerates_disrupted_taint(view())


def test_a_terminating_pod_is_rescheduled_only_when_a_statefulset_owns_it():
    """IsReschedulable: (IsActive || (IsOwnedByStatefulSet && IsTerminating)) && !DaemonSet && !Node."""
    sts = [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "ss", "uid": "u", "controller": True}]
    rs = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
    running, sts_running = view(), view(owner_refs=sts)
    gone, sts_gone, rs_gone = view(), view(owner_refs=sts), view(owner_refs=rs)
    for pv in (gone, sts_gone, rs_gone):
        pv.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert podutil.is_reschedulable(running) and podutil.is_reschedulable(sts_running)
    assert podutil.is_reschedulable(sts_gone)
    assert not podutil.is_reschedulable(gone) and not podutil.is_reschedulable(rs_gone)
    assert not podutil.is_reschedulable(view(owner_kind="DaemonSet"))


def test_stuck_terminating_a_minute_after_the_deletion_timestamp():
    pv = view()
    assert not podutil.stuck_terminating(pv, 10 ** 10)
    pv.obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    at = 1767225600.0                      # 2026-01-01T00:00:00Z
    assert not podutil.stuck_terminating(pv, at + 60)
    assert podutil.stuck_terminating(pv, at + 61)


def test_ignored_preferences_count_as_relaxed_from_the_start():
    """PREFERENCE_POLICY=Ignore (core scheduler.go IgnorePreferences): no preferred term or ScheduleAnyway spread
    takes part; required ones and the PreferNoSchedule toleration step are left to relaxation."""
    pv = view(spec={"affinity": {
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "a", "operator": "Exists"}]}}]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"}}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway"},
                                      {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"}]})
    pv.reset_relaxation(ignore_preferences=True)
    assert (pv.dropped_preferred, pv.dropped_pod_anti_affinity, pv.dropped_schedule_anyway) == (1, 1, 1)
    assert pv.relax(prefer_no_schedule_taints_exist=True) and pv.tolerate_prefer_no_schedule
    pv.reset_relaxation()
    assert (pv.dropped_preferred, pv.dropped_pod_anti_affinity, pv.dropped_schedule_anyway) == (0, 0, 0)


def test_do_not_disrupt_durations_only_from_core_v1_12():
    """Before core v1.12.0 (#2874) only "true" protects: a duration is no annotation at all, and an invalid
    value gets no event (core-behaviour.yaml doNotDisruptDurations)."""
    events = []
    d = view({"karpenter.sh/do-not-disrupt": "3h"})
    assert podutil.do_not_disrupt(d, 0, 60) and not podutil.do_not_disrupt(d, 0, 60, durations=False)
    bad = view({"karpenter.sh/do-not-disrupt": "forever"})
    assert not podutil.do_not_disrupt(bad, 0, 60, lambda *a, **k: events.append(a), durations=False)
    assert events == []
    assert podutil.do_not_disrupt(view({"karpenter.sh/do-not-disrupt": "true"}), 0, 60, durations=False)
