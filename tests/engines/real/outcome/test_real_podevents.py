"""What core's pod-event bookkeeping has yet to do (harness/runner/engines/real/outcome/podevents.py): the real
engine's settle holds on it before its clock jumps on, so core's 15 s emptiness validation is not skipped."""
from __future__ import annotations

import datetime as dt

from harness.runner.engines.real.outcome import podevents

T0 = dt.datetime(2026, 11, 20, 10, 0, 0, tzinfo=dt.timezone.utc).timestamp()


def _ts(seconds: float) -> str:
    return dt.datetime.fromtimestamp(T0 + seconds, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _claim(pod_event=None, consolidatable=False, api="karpenter.sh/v1", deleting=False):
    conds = [{"type": "Initialized", "status": "True", "lastTransitionTime": _ts(-3600)}]
    if consolidatable:
        conds.append({"type": "Consolidatable", "status": "True", "lastTransitionTime": _ts(0)})
    meta = {"name": "default-b7k2q", "labels": {"karpenter.sh/nodepool": "default"},
            **({"deletionTimestamp": _ts(0)} if deleting else {})}
    status = {"nodeName": "aks-default-b7k2q", "conditions": conds,
              **({"lastPodEventTime": _ts(pod_event)} if pod_event is not None else {})}
    return {"apiVersion": api, "metadata": meta, "status": status}


def _behind(claims, pods, now, since=0, pools=None):
    """podevents.behind with the clock and the run's start in seconds after 10:00."""
    return podevents.behind(claims, POOLS if pools is None else pools, pods, T0 + now, T0 + since)


POOLS = [{"metadata": {"name": "default"}, "spec": {"disruption": {"consolidateAfter": "5m"}}}]


def _terminating(at: float, owner: str = "Job", grace: int = 30) -> dict:
    # the API server writes deletionTimestamp as the delete's time plus the grace period
    return {"metadata": {"name": "export-m2p9q", "deletionTimestamp": _ts(at + grace),
                         "deletionGracePeriodSeconds": grace,
                         "ownerReferences": [{"kind": owner, "name": "export"}]},
            "spec": {"nodeName": "aks-default-b7k2q"}, "status": {"phase": "Running"}}


def _succeeded(at: float) -> dict:
    return {"metadata": {"name": "reindex-x7k2p"}, "spec": {"nodeName": "aks-default-b7k2q"},
            "status": {"phase": "Succeeded", "containerStatuses": [
                {"name": "work", "state": {"terminated": {"finishedAt": _ts(at)}}}]}}


def test_a_pod_event_not_stamped_yet_holds():
    # export's pod went terminating at 10:20; lastPodEventTime still says 10:10 (reindex's completion)
    out = _behind([_claim(pod_event=600, consolidatable=True)], [_terminating(1200)], 1201)
    assert len(out) == 1 and "not stamped as lastPodEventTime yet" in out[0]


def test_a_stamped_event_with_consolidatable_still_set_holds_until_cleared():
    out = _behind([_claim(pod_event=1200, consolidatable=True)], [_terminating(1200)], 1201)
    assert len(out) == 1 and "Consolidatable inside its consolidateAfter window" in out[0]
    assert _behind([_claim(pod_event=1200)], [_terminating(1200)], 1201) == []


def test_within_the_dedupe_window_no_stamp_is_due():
    # stamped 10:19:55, the event at 10:20: podevents skips a stamp within 10 s of the last
    assert _behind([_claim(pod_event=1195)], [_terminating(1200)], 1201) == []


def test_a_terminal_pod_counts_from_its_containers_finish():
    assert _behind([_claim(pod_event=0)], [_succeeded(600)], 601)
    assert _behind([_claim(pod_event=600)], [_succeeded(600)], 601) == []


def test_what_is_not_podevents_business_does_not_hold():
    pod = _terminating(1200)
    # a DaemonSet's pod, an event before the run's start (a dump's history), an event still ahead of the clock
    assert _behind([_claim(pod_event=0)], [_terminating(1200, owner="DaemonSet")], 1201) == []
    assert _behind([_claim(pod_event=0)], [pod], 1201, since=1300) == []
    assert _behind([_claim(pod_event=0)], [pod], 1100) == []
    # a NodeClaim being deleted, and a v1beta1 one (no podevents before core v1.0)
    assert _behind([_claim(pod_event=0, deleting=True)], [pod], 1201) == []
    assert _behind([_claim(pod_event=0, api="karpenter.sh/v1beta1")], [pod], 1201) == []
    # consolidateAfter Never: no window to be inside of
    never = [{"metadata": {"name": "default"}, "spec": {"disruption": {"consolidateAfter": "Never"}}}]
    assert _behind([_claim(pod_event=1200, consolidatable=True)], [], 1201, pools=never) == []


def test_the_kubelet_stand_in_keeps_an_unstamped_delete_terminating():
    claim, pod = _claim(pod_event=600, consolidatable=True), _terminating(1200)
    assert podevents.unstamped([claim], [pod], T0) == [("default", "export-m2p9q")]
    assert podevents.unstamped([_claim(pod_event=1200)], [pod], T0) == []
    assert podevents.unstamped([claim], [pod], T0 + 1300) == []           # deleted before the run: a dump's
    assert podevents.unstamped([claim], [_succeeded(1200)], T0) == []     # not deleted: nothing to hold
