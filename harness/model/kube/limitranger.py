"""LimitRanges as kube-apiserver applies them to pods: the LimitRange object defaulted and validated, and
the LimitRanger admission plugin on a pod's create - each container without a request or limit gets the
Container item's defaultRequest / default (so the requests Karpenter and kube-scheduler read are the
defaulted ones), then the Container and Pod items' min, max and maxLimitRequestRatio refuse a pod outside
them with the plugin's words.

Upstream (k8s.io/kubernetes v1.36.3): plugin/pkg/admission/limitranger/admission.go
(defaultContainerResourceRequirements, mergePodResourceRequirements, PodValidateLimitFunc, minConstraint,
maxConstraint, limitRequestRatioConstraint, podRequests, podLimits); pkg/apis/core/v1/defaults.go
SetDefaults_LimitRangeItem; pkg/apis/core/validation/validation.go ValidateLimitRange. PersistentVolumeClaim
items are stored and not applied (the loop's volumes carry no size it reads).
"""
from __future__ import annotations

import copy
import math
from fractions import Fraction

from harness.model.kube.apistatus import APIRejected, Cause, forbidden, invalid
from harness.model.values.resources import canonical_quantity, format_quantity, parse_quantity, quantity_format

__all__ = ["admit_limitrange", "default_pod", "pod_refusal"]

CONTAINER, POD, PVC = "Container", "Pod", "PersistentVolumeClaim"
ANNOTATION = "kubernetes.io/limit-ranger"
# resource.MaxMilliValue: below it the plugin compares milli-values, above whole values
MAX_MILLI = (2**63 - 1) // 1000
def _overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native resources but hugepages (an extended resource's default and
    defaultRequest must agree)."""
    native = "/" not in name or name.startswith("kubernetes.io/")
    return native and not name.startswith("hugepages-")


def _default_item(item: dict) -> dict:
    """SetDefaults_LimitRangeItem: a Container item's default limit is its max where unset, its default
    request the default limit, else the min."""
    item = dict(item)
    if item.get("type") != CONTAINER:
        return item
    default = dict(item.get("default") or {})
    request = dict(item.get("defaultRequest") or {})
    for k, v in (item.get("max") or {}).items():
        default.setdefault(k, v)
    for k, v in default.items():
        request.setdefault(k, v)
    for k, v in (item.get("min") or {}).items():
        request.setdefault(k, v)
    item["default"], item["defaultRequest"] = default, request
    return item


def _q(v) -> Fraction:
    return v if isinstance(v, Fraction) else parse_quantity(v)


def _s(v) -> str:
    return canonical_quantity(v)


def _validate(obj: dict) -> list[Cause]:
    """ValidateLimitRange: the type names, one item per type, a Pod item's defaults, and the order of min,
    defaultRequest, default and max per resource (the resource-name checks are left out)."""
    errs: list[Cause] = []
    seen: set = set()
    for i, item in enumerate((obj.get("spec") or {}).get("limits") or []):
        at = f"spec.limits[{i}]"
        kind = item.get("type")
        if kind not in (CONTAINER, POD, PVC) and "/" not in str(kind or ""):
            errs.append(Cause(f"{at}.type", f'Invalid value: "{kind}": must be a standard limit type or fully qualified'))
        if kind in seen:
            errs.append(Cause(f"{at}.type", f'Duplicate value: "{kind}"'))
        seen.add(kind)
        low, high = item.get("min") or {}, item.get("max") or {}
        default, request = item.get("default") or {}, item.get("defaultRequest") or {}
        ratio = item.get("maxLimitRequestRatio") or {}
        if kind == POD:
            if default:
                errs.append(Cause(f"{at}.default", "Forbidden: may not be specified when `type` is 'Pod'"))
            if request:
                errs.append(Cause(f"{at}.defaultRequest", "Forbidden: may not be specified when `type` is 'Pod'"))
            default, request = {}, {}
        if kind == PVC and "storage" not in low and "storage" not in high:
            errs.append(Cause(f"{at}.limits", "Required value: either minimum or maximum storage value is required, "
                                              "but neither was provided"))
        for k in sorted(set(low) | set(high) | set(default) | set(request) | set(ratio)):
            mn, mx, df, rq, rt = low.get(k), high.get(k), default.get(k), request.get(k), ratio.get(k)
            if mn is not None and mx is not None and _q(mn) > _q(mx):
                errs.append(Cause(f"{at}.min[{k}]", f'Invalid value: "{_s(mn)}": min value {_s(mn)} is greater than '
                                                    f"max value {_s(mx)}"))
            if rq is not None and mn is not None and _q(mn) > _q(rq):
                errs.append(Cause(f"{at}.defaultRequest[{k}]", f'Invalid value: "{_s(rq)}": min value {_s(mn)} is '
                                                              f"greater than default request value {_s(rq)}"))
            if rq is not None and mx is not None and _q(rq) > _q(mx):
                errs.append(Cause(f"{at}.defaultRequest[{k}]", f'Invalid value: "{_s(rq)}": default request value '
                                                              f"{_s(rq)} is greater than max value {_s(mx)}"))
            if rq is not None and df is not None and _q(rq) > _q(df):
                errs.append(Cause(f"{at}.defaultRequest[{k}]", f'Invalid value: "{_s(rq)}": default request value '
                                                              f"{_s(rq)} is greater than default limit value {_s(df)}"))
            if df is not None and mn is not None and _q(mn) > _q(df):
                errs.append(Cause(f"{at}.default[{k}]", f'Invalid value: "{_s(mn)}": min value {_s(mn)} is greater '
                                                       f"than default value {_s(df)}"))
            if df is not None and mx is not None and _q(df) > _q(mx):
                errs.append(Cause(f"{at}.default[{k}]", f'Invalid value: "{_s(mx)}": default value {_s(df)} is '
                                                       f"greater than max value {_s(mx)}"))
            if rt is not None and _q(rt) < 1:
                errs.append(Cause(f"{at}.maxLimitRequestRatio[{k}]", f'Invalid value: "{_s(rt)}": ratio {_s(rt)} '
                                                                    "is less than 1"))
            if not _overcommit_allowed(k) and df is not None and rq is not None and _q(df) != _q(rq):
                errs.append(Cause(f"{at}.defaultRequest[{k}]", f'Invalid value: "{_s(rq)}": default value {_s(df)} '
                                                              f"must equal to defaultRequest value {_s(rq)} in {k}"))
    return errs


def admit_limitrange(obj: dict) -> dict:
    """The LimitRange as the API server stores it (its Container items defaulted, then validated), or
    APIRejected."""
    out = copy.deepcopy(obj)
    spec = out.setdefault("spec", {})
    spec["limits"] = [_default_item(i) for i in spec.get("limits") or []]
    errs = _validate(out)
    if errs:
        raise invalid("LimitRange", str((out.get("metadata") or {}).get("name") or ""), errs)
    return out


def _merge(container: dict, limits: dict, requests: dict, prefix: str, notes: list[str]) -> None:
    """mergeContainerResources: each default the container leaves out, with the annotation's note."""
    res = container.setdefault("resources", {})
    have_limits, have_requests = dict(res.get("limits") or {}), dict(res.get("requests") or {})
    set_limits = sorted(k for k in limits if k not in have_limits)
    set_requests = sorted(k for k in requests if k not in have_requests)
    for k in set_limits:
        have_limits[k] = limits[k]
    for k in set_requests:
        have_requests[k] = requests[k]
    res["limits"], res["requests"] = have_limits, have_requests
    name = container.get("name") or ""
    if set_requests:
        notes.append(f"{', '.join(set_requests)} request for {prefix} {name}")
    if set_limits:
        notes.append(f"{', '.join(set_limits)} limit for {prefix} {name}")


def default_pod(pod: dict, limit_ranges: list[dict]) -> dict:
    """LimitRanger.Admit on a pod's create (PodMutateLimitFunc for each LimitRange of its namespace, in list
    order): the Container items' defaults merged into every container and init container that lacks them,
    and the `kubernetes.io/limit-ranger` annotation naming what was set. Modified in place."""
    for lr in limit_ranges:
        limits: dict = {}
        requests: dict = {}
        for item in (lr.get("spec") or {}).get("limits") or []:
            if item.get("type") == CONTAINER:
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
        notes: list[str] = []
        spec = pod.setdefault("spec", {})
        for c in spec.get("containers") or []:
            _merge(c, limits, requests, "container", notes)
        for c in spec.get("initContainers") or []:
            _merge(c, limits, requests, "init container", notes)
        if notes:
            meta = pod.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}),
                                   ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}
    return pod


def _values(req, lim, enforced) -> tuple[Fraction, Fraction, Fraction]:
    """requestLimitEnforcedValues: milli-values below MaxMilliValue (Quantity.MilliValue rounds up), else
    whole values."""
    r, lm, e = (_q(x) if x is not None else Fraction(0) for x in (req, lim, enforced))
    whole = [Fraction(math.ceil(x)) for x in (r, lm, e)]
    if all(w <= MAX_MILLI for w in whole):
        return tuple(Fraction(math.ceil(x * 1000)) for x in (r, lm, e))      # type: ignore[return-value]
    return tuple(whole)                                                        # type: ignore[return-value]


def _min(kind: str, name: str, enforced, requests: dict, limits: dict) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lm, e = _values(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {_s(enforced)}.  No request is specified"
    if r < e:
        return f"minimum {name} usage per {kind} is {_s(enforced)}, but request is {_s(req)}"
    if lim is not None and lm < e:
        return f"minimum {name} usage per {kind} is {_s(enforced)}, but limit is {_s(lim)}"
    return None


def _max(kind: str, name: str, enforced, requests: dict, limits: dict) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lm, e = _values(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {_s(enforced)}.  No limit is specified"
    if lm > e:
        return f"maximum {name} usage per {kind} is {_s(enforced)}, but limit is {_s(lim)}"
    if req is not None and r > e:
        return f"maximum {name} usage per {kind} is {_s(enforced)}, but request is {_s(req)}"
    return None


def _ratio(kind: str, name: str, enforced, requests: dict, limits: dict) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    r, lm, _ = _values(req, lim, enforced)
    if req is None or r == 0:
        return (f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but no request is specified or "
                "request is 0")
    if lim is None or lm == 0:
        return (f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but no limit is specified or "
                "limit is 0")
    observed = lm / r
    whole = _q(enforced)
    most = whole * 1000 if whole <= MAX_MILLI else whole
    if (observed * 1000 if whole <= MAX_MILLI else observed) > most:
        return (f"{name} max limit to request ratio per {kind} is {_s(enforced)}, but provided ratio is "
                f"{float(observed):f}")
    return None


class _Totals:
    """A ResourceList being summed as apimachinery sums Quantities: each name keeps the format of its first
    quantity (Quantity.Add), so `String()` of the total reads as upstream prints it."""

    def __init__(self):
        self.amount: dict[str, Fraction] = {}
        self.fmt: dict[str, str] = {}

    def add(self, res: dict | None) -> None:
        for k, v in (res or {}).items():
            self.amount[k] = self.amount.get(k, Fraction(0)) + _q(v)
            self.fmt.setdefault(k, quantity_format(v))

    def merge(self, other: "_Totals") -> None:
        for k, v in other.amount.items():
            self.amount[k] = self.amount.get(k, Fraction(0)) + v
            self.fmt.setdefault(k, other.fmt[k])

    def most(self, other: "_Totals") -> None:
        """maxResourceList: the larger of each name."""
        for k, v in other.amount.items():
            if k not in self.amount or v > self.amount[k]:
                self.amount[k], self.fmt[k] = v, other.fmt[k]

    def texts(self) -> dict[str, str]:
        return {k: format_quantity(v, "BinarySI" if self.fmt[k] == "BinarySI" else "DecimalSI")
                for k, v in self.amount.items()}


def _pod_totals(spec: dict, section: str) -> dict[str, str]:
    """podRequests / podLimits: the containers' sum, sidecars added, the largest init container need; pod-level
    resources (PodLevelResources, beta on in 1.36) replace cpu and memory."""
    total, sidecars, init_max = _Totals(), _Totals(), _Totals()
    for c in spec.get("containers") or []:
        total.add((c.get("resources") or {}).get(section))
    for c in spec.get("initContainers") or []:
        own = (c.get("resources") or {}).get(section) or {}
        need = _Totals()
        if c.get("restartPolicy") == "Always":
            total.add(own)
            sidecars.add(own)
            need.merge(sidecars)
        else:
            need.add(own)
            need.merge(sidecars)
        init_max.most(need)
    total.most(init_max)
    level = ((spec.get("resources") or {}).get(section)) or {}
    for k, v in level.items():
        if k in ("cpu", "memory"):
            total.amount[k], total.fmt[k] = _q(v), quantity_format(v)
    return total.texts()


def _pod_errors(lr: dict, pod: dict) -> list[str]:
    errs: list[str] = []
    spec = pod.get("spec") or {}
    for item in (lr.get("spec") or {}).get("limits") or []:
        kind = item.get("type")
        checks = ((item.get("min") or {}, _min), (item.get("max") or {}, _max),
                  (item.get("maxLimitRequestRatio") or {}, _ratio))
        if kind == CONTAINER:
            for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
                res = c.get("resources") or {}
                for bounds, check in checks:
                    for k in sorted(bounds):      # Go ranges over a map: the harness takes the names in order
                        why = check(kind, k, bounds[k], res.get("requests") or {}, res.get("limits") or {})
                        if why:
                            errs.append(why)
        elif kind == POD:
            requests, limits = _pod_totals(spec, "requests"), _pod_totals(spec, "limits")
            for bounds, check in checks:
                for k in sorted(bounds):
                    why = check(kind, k, bounds[k], requests, limits)
                    if why:
                        errs.append(why)
    return errs


def pod_refusal(pod: dict, limit_ranges: list[dict]) -> APIRejected | None:
    """LimitRanger.Validate on a pod's create: the first LimitRange of its namespace whose bounds the pod (as
    admitted: defaults merged) breaks, as the plugin's Forbidden (several breaches of one LimitRange in
    brackets, utilerrors.NewAggregate), or None."""
    for lr in limit_ranges:
        errs = _pod_errors(lr, pod)
        if errs:
            return forbidden("pods", pod, errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]", validating=True)
    return None
