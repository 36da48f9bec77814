"""When a gracefully deleted pod's containers have stopped: the kubelet's part of a pod deletion, as one rule
both engines' kubelets read (the simulated loop's, harness/loop/kube/kubelet.py, and the real engine's
stand-in, harness/runner/engines/real/cluster/existing.py finish_terminating_pods).

A graceful delete of a bound pod sets deletionTimestamp (the delete's instant plus the grace period) and
deletionGracePeriodSeconds; the kubelet runs each container's preStop hook, then stops the container, and
confirms the pod's end to the API server. The only thing that takes time here is a preStop `sleep` hook
(PodLifecycleSleepAction, GA in Kubernetes 1.34): no container runs, so SIGTERM ends each one at once; a dump's
pod seen stopping longer carries the time it stops in its STOPS_AT annotation.
"""
from __future__ import annotations

from harness.model.kube.kubetime import parse_rfc3339, rfc3339

DEFAULT_GRACE = 30          # the API server's default terminationGracePeriodSeconds (k8s.io/api core/v1)
# a pod a dump shows still terminating longer than its preStop sleep explains (a preStop exec or httpGet hook,
# a slow SIGTERM handler: nothing the harness can time): when its containers stop, as `harness new` assumed it
# (harness/dump/new.py) or the user knows it; stops_at takes it, never past the deletionTimestamp
STOPS_AT = "harness.karpenter.azure.com/stops-at"


def grace_seconds(spec: dict) -> int:
    """The pod's terminationGracePeriodSeconds (defaulted)."""
    value = (spec or {}).get("terminationGracePeriodSeconds")
    return DEFAULT_GRACE if value is None else int(value)


def prestop_sleep(spec: dict) -> int:
    """The longest `lifecycle.preStop.sleep.seconds` of the pod's containers (0: none). The kubelet kills the
    containers in parallel, each after its own hook (k8s.io/kubernetes v1.36.3 pkg/kubelet/kuberuntime/
    kuberuntime_container.go killContainersWithSyncResult, killContainer), so the pod ends with the longest.
    (harness assumption: restartable init containers, which stop after the main ones, are not modeled.)"""
    out = 0
    for c in (spec or {}).get("containers") or ():
        sleep = (((c.get("lifecycle") or {}).get("preStop") or {}).get("sleep") or {})
        if sleep.get("seconds") is not None:
            out = max(out, int(sleep["seconds"]))
    return out


def graceful_delete(meta: dict, spec: dict, now: float, grace: int | None = None) -> dict | None:
    """The deletion fields the API server writes on a delete of a bound pod (`grace`: the DeleteOptions'
    gracePeriodSeconds, None when the delete gives none); None: it deletes the pod at once.

    A first delete: deletionTimestamp = now + the grace period (the pod's own by default), grace 0 at once
    (k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/strategy.go CheckGracefulDelete). On a pod already
    terminating only a shorter grace period changes anything, and it counts from the first delete: the
    timestamp moves back by the old period and forward by the new, and never before now (then the period is 1)
    (k8s.io/apiserver v0.36.3 pkg/registry/rest/delete.go BeforeDelete)."""
    old, old_grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if old is None:
        period = grace_seconds(spec) if grace is None else int(grace)
        period = 1 if period < 0 else period
        return None if period == 0 else {"deletionTimestamp": rfc3339(now + period),
                                         "deletionGracePeriodSeconds": period}
    if not old_grace:
        return None
    if grace is None or int(grace) >= int(old_grace):
        return {}
    period = max(int(grace), 0)
    at = parse_rfc3339(old) - int(old_grace) + period
    if at < now:
        at, period = now, (1 if period else 0)
    return None if period == 0 else {"deletionTimestamp": rfc3339(at), "deletionGracePeriodSeconds": period}


def stops_at(pod: dict) -> float | None:
    """When the kubelet has stopped a terminating pod's containers and confirms its deletion; None when the
    pod is not terminating.

    The kill starts at the delete (deletionTimestamp less deletionGracePeriodSeconds: the first delete's
    instant, which a shorter second delete keeps, graceful_delete) and ends at the earlier of that instant plus
    the longest preStop sleep and deletionTimestamp: killContainer runs the hook for at most the grace period,
    then stops the container (kuberuntime_container.go killContainer, executePreStopHook). A shorter second
    delete moves deletionTimestamp earlier and the kubelet takes the shorter period (pkg/kubelet/pod_workers.go
    calculateEffectiveGracePeriod: "a grace period can only decrease"). (harness assumption: a real kubelet
    cancels the kill in flight and kills again, hook included, for the new period counted from that moment
    (UpdatePod: wasGracePeriodShortened -> cancelFn), so its pod may outlive the new deletionTimestamp by up
    to the second delete's delay; the model ends it at the deletionTimestamp.) A pod without a preStop sleep
    stops at its delete's instant, one annotated STOPS_AT at that time."""
    meta = pod.get("metadata") or {}
    stamp = meta.get("deletionTimestamp")
    if not stamp:
        return None
    deadline = parse_rfc3339(stamp)
    grace = meta.get("deletionGracePeriodSeconds")
    if grace is None:              # a dump's terminating pod without the field: its deadline is all we know
        return deadline
    given = (meta.get("annotations") or {}).get(STOPS_AT)
    if given:
        try:
            return min(parse_rfc3339(given), deadline)
        except ValueError:
            pass
    start = deadline - int(grace)
    return min(start + prestop_sleep(pod.get("spec") or {}), deadline)
