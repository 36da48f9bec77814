"""harness/model/kube/podtermination.py: when the kubelet has stopped a gracefully deleted pod's containers."""
from __future__ import annotations

from harness.model.kube.kubetime import rfc3339 as timestamp
from harness.model.kube.podtermination import STOPS_AT, grace_seconds, graceful_delete, prestop_sleep, stops_at

T = 1_800_000_000.0


def _pod(deleted_at=None, grace=None, *sleeps, tgps=None) -> dict:
    meta = {"name": "p"}
    if deleted_at is not None:
        meta["deletionTimestamp"] = timestamp(deleted_at + grace)
        meta["deletionGracePeriodSeconds"] = grace
    containers = [{"name": f"c{i}", **({"lifecycle": {"preStop": {"sleep": {"seconds": s}}}} if s is not None else {})}
                  for i, s in enumerate(sleeps or (None,))]
    spec = {"containers": containers, **({"terminationGracePeriodSeconds": tgps} if tgps is not None else {})}
    return {"metadata": meta, "spec": spec}


def test_a_pod_that_is_not_terminating_has_no_stop():
    assert stops_at(_pod()) is None


def test_without_a_prestop_sleep_the_pod_stops_at_its_delete():
    assert stops_at(_pod(T, 120)) == T


def test_a_prestop_sleep_holds_the_pod_until_it_ends_or_the_grace_period_does():
    assert stops_at(_pod(T, 120, 60)) == T + 60
    assert stops_at(_pod(T, 120, 3600)) == T + 120


def test_a_stop_the_dump_showed_later_is_taken_from_its_annotation_never_past_the_deadline():
    pod = _pod(T, 604800)
    pod["metadata"]["annotations"] = {STOPS_AT: timestamp(T + 7200)}
    assert stops_at(pod) == T + 7200
    pod["metadata"]["annotations"] = {STOPS_AT: timestamp(T + 9 * 86400)}
    assert stops_at(pod) == T + 604800


def test_the_longest_sleep_of_the_containers_counts():
    assert prestop_sleep(_pod(T, 120, 10, None, 45)["spec"]) == 45
    assert stops_at(_pod(T, 120, 10, None, 45)) == T + 45


def test_a_shorter_second_delete_moves_the_deadline_and_the_kubelet_takes_it():
    pod = _pod(T, 600, 3600)
    pod["metadata"].update(graceful_delete(pod["metadata"], pod["spec"], T + 40, 59))
    assert stops_at(pod) == T + 59
    short = _pod(T, 600, 30)
    short["metadata"].update(graceful_delete(short["metadata"], short["spec"], T + 10, 59))
    assert stops_at(short) == T + 30


def test_the_api_servers_graceful_delete():
    """CheckGracefulDelete on a first delete; BeforeDelete on a pod already terminating: only a shorter period,
    counted from the first delete, never before now (then 1 s); grace 0 deletes at once."""
    spec = {"terminationGracePeriodSeconds": 200}
    assert graceful_delete({}, spec, T) == {"deletionTimestamp": timestamp(T + 200), "deletionGracePeriodSeconds": 200}
    assert graceful_delete({}, {}, T)["deletionGracePeriodSeconds"] == 30
    assert graceful_delete({}, spec, T, 0) is None
    first = graceful_delete({}, spec, T)
    assert graceful_delete(first, spec, T + 50) == {} and graceful_delete(first, spec, T + 50, 300) == {}
    assert graceful_delete(first, spec, T + 50, 89) == {"deletionTimestamp": timestamp(T + 89),
                                                        "deletionGracePeriodSeconds": 89}
    assert graceful_delete(first, spec, T + 120, 10) == {"deletionTimestamp": timestamp(T + 120),
                                                         "deletionGracePeriodSeconds": 1}
    assert graceful_delete(first, spec, T + 120, 0) is None


def test_a_dumps_terminating_pod_without_a_grace_period_stops_at_its_deadline():
    assert stops_at({"metadata": {"deletionTimestamp": timestamp(T)}, "spec": {}}) == T


def test_the_grace_period_defaults_to_30():
    assert grace_seconds({}) == 30 and grace_seconds({"terminationGracePeriodSeconds": 0}) == 0
