"""When a gracefully deleted pod's containers have stopped: the kubelet's part of a pod deletion, as one rule
both engines' kubelets read (the simulated loop's, harness/loop/controllers/kubelet.py, and the real engine's
stand-in, harness/runner/engines/real/existing.py finish_terminating_pods).

A graceful delete of a bound pod sets deletionTimestamp (the delete's instant plus the grace period) and
deletionGracePeriodSeconds; the kubelet runs each container's preStop hook, then stops the container, and
confirms the pod's end to the API server. The only thing that takes time here is a preStop `sleep` hook
(PodLifecycleSleepAction, GA in Kubernetes 1.34): no container runs, so SIGTERM ends each one at once.
"""
from __future__ import annotations

from datetime import datetime, timezone

DEFAULT_GRACE = 30          # the API server's default terminationGracePeriodSeconds (k8s.io/api core/v1)


def timestamp(t: float) -> str:
    """A metav1.Time as the API server writes it: RFC 3339 in UTC, whole seconds."""
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(text: str) -> float:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


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


def stops_at(pod: dict) -> float | None:
    """When the kubelet has stopped a terminating pod's containers and confirms its deletion; None when the
    pod is not terminating.

    The kill starts at the last delete that set the grace period (deletionTimestamp less
    deletionGracePeriodSeconds) and ends at the earlier of that instant plus the longest preStop sleep and
    deletionTimestamp: killContainer runs the hook for at most the grace period, then stops the container
    (kuberuntime_container.go killContainer, executePreStopHook). A second delete with a shorter grace period
    moves deletionTimestamp earlier; the kubelet takes it (pkg/kubelet/pod_workers.go
    calculateEffectiveGracePeriod: "a grace period can only decrease"), cancels the kill in flight and kills
    again with the shorter period (UpdatePod: wasGracePeriodShortened -> cancelFn), hook included, so the
    kill's start is that delete's instant. A pod without a preStop sleep stops at its delete's instant."""
    meta = pod.get("metadata") or {}
    stamp = meta.get("deletionTimestamp")
    if not stamp:
        return None
    deadline = parse_timestamp(stamp)
    grace = meta.get("deletionGracePeriodSeconds")
    if grace is None:              # a dump's terminating pod without the field: its deadline is all we know
        return deadline
    start = deadline - int(grace)
    return min(start + prestop_sleep(pod.get("spec") or {}), deadline)
