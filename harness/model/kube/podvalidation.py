"""The Pod validation kube-apiserver applies that the embedded backend mirrors (k8s.io/kubernetes v1.36.3
pkg/apis/core/validation/validation.go): a container's request at most its limit (validateResourceRequirements:
a LimitRange's default limit below a stated request is refused so), and a lifecycle hook's `sleep` action
within the pod's grace period (validateSleepAction, reached from validateLifecycle for each container's
postStart and preStop). Zero is allowed from 1.33 (feature PodLifecycleSleepActionAllowZero, beta on by default
there, GA in 1.34); before, the text names the gate. The loop's kubelet reads the sleep
(harness/model/kube/podtermination.py), so a pod the real API server refuses must not run on the embedded backend."""
from __future__ import annotations

from harness.model.kube.apistatus import APIRejected, Cause
from harness.model.values.resources import QuantityError, canonical_quantity, parse_quantity

__all__ = ["pod_rejection"]

ALLOW_ZERO = "must be non-negative and less than terminationGracePeriodSeconds ({grace})"
NOT_ZERO = ("must be greater than 0 and less than terminationGracePeriodSeconds ({grace}). Enable "
            "AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.")


def _resource_errors(spec: dict) -> list[Cause]:
    """validateResourceRequirements: a container's request of a resource it also limits must be at most the
    limit (equal to it for a resource that may not be overcommitted: hugepages, extended resources). A
    LimitRange's default limit below a request the container states is refused so."""
    out = []
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            res = (c or {}).get("resources") or {}
            limits = res.get("limits") or {}
            for name in sorted(res.get("requests") or {}):
                if name not in limits:
                    continue
                req, lim = res["requests"][name], limits[name]
                try:
                    r, lm = parse_quantity(req), parse_quantity(lim)
                except QuantityError:
                    continue
                fixed = "/" in name and not name.startswith("kubernetes.io/") or name.startswith("hugepages-")
                if fixed and r != lm:
                    why = f"must be equal to {name} limit of {canonical_quantity(lim)}"
                elif r > lm:
                    why = f"must be less than or equal to {name} limit of {canonical_quantity(lim)}"
                else:
                    continue
                out.append(Cause(f"spec.{key}[{i}].resources.requests",
                                 f'Invalid value: "{canonical_quantity(req)}": {why}'))
    return out


def _errors(pod: dict, minor: tuple[int, int]) -> list[Cause]:
    spec = pod.get("spec") or {}
    out = _resource_errors(spec)
    grace = spec.get("terminationGracePeriodSeconds")
    if grace is None:
        return out
    allow_zero = minor >= (1, 33)
    for key in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(key) or []):
            for hook in ("postStart", "preStop"):
                sleep = (((c.get("lifecycle") or {}).get(hook) or {}).get("sleep"))
                if sleep is None:
                    continue
                seconds = int(sleep.get("seconds") or 0)
                bad = seconds < 0 if allow_zero else seconds <= 0
                if bad or seconds > int(grace):
                    text = (ALLOW_ZERO if allow_zero else NOT_ZERO).format(grace=grace)
                    out.append(Cause(f"spec.{key}[{i}].lifecycle.{hook}.sleep", f"Invalid value: {seconds}: {text}"))
    return out


def pod_rejection(pod: dict, minor: tuple[int, int]) -> APIRejected | None:
    """The API server's 422 for `pod` (defaulted) at server version `minor`, or None when it is valid."""
    errs = _errors(pod, minor)
    if not errs:
        return None
    texts = [f"{e.field}: {e.message}" for e in errs]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    name = (pod.get("metadata") or {}).get("name", "")
    return APIRejected(422, "Invalid", f'Pod "{name}" is invalid: {body}', errs)
