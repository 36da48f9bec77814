"""PriorityClasses as kube-apiserver keeps them: the two system classes it creates at start, a scenario's
own (scheduling.k8s.io/v1) defaulted and validated, and the one a pod without priorityClassName gets
(the globalDefault class). The Priority admission plugin that reads them for pods is
harness.model.kube.poddefaults; kube-scheduler's preemption reads the pods' priorities (harness/loop/kube/preemption.py).

Upstream: k8s.io/kubernetes v1.36.3 pkg/apis/scheduling/v1/helpers.go systemPriorityClasses,
IsKnownSystemPriorityClass; pkg/apis/scheduling/v1/defaults.go SetDefaults_PriorityClass;
pkg/apis/scheduling/validation/validation.go ValidatePriorityClass, ValidatePriorityClassUpdate;
plugin/pkg/admission/priority/admission.go validatePriorityClass, getDefaultPriorityClass.
"""
from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from harness.model.kube.apistatus import Cause, forbidden, invalid
from harness.model.data import DATA_DIR, load_yaml

__all__ = ["PriorityClass", "admit", "classes_of", "default_class", "system_classes"]

QUALIFIED = "PriorityClass.scheduling.k8s.io"
RESOURCE = "priorityclasses.scheduling.k8s.io"
SYSTEM_PREFIX = "system-"
# pkg/apis/scheduling/types.go HighestUserDefinablePriority
HIGHEST_USER_DEFINABLE = 1_000_000_000
PREEMPT_LOWER = "PreemptLowerPriority"
NEVER = "Never"


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = PREEMPT_LOWER

    @staticmethod
    def of(obj: dict) -> "PriorityClass":
        """A stored (defaulted) PriorityClass object."""
        return PriorityClass(obj["metadata"]["name"], int(obj.get("value") or 0), bool(obj.get("globalDefault")),
                             str(obj.get("preemptionPolicy") or PREEMPT_LOWER))


@functools.lru_cache(maxsize=1)
def system_classes() -> dict[str, PriorityClass]:
    """The classes the API server creates at start (systemPriorityClasses), from harness/data/pod-defaults.yaml."""
    table = load_yaml((DATA_DIR / "pod-defaults.yaml").read_text())["priority"]["classes"]
    return {str(name): PriorityClass(str(name), int(value)) for name, value in table.items()}


def classes_of(objs: Iterable[dict]) -> dict[str, PriorityClass]:
    """Every class a cluster holds: the system ones, then the stored objects."""
    out = dict(system_classes())
    out.update({pc.name: pc for pc in map(PriorityClass.of, objs)})
    return out


def default_class(classes: dict[str, PriorityClass]) -> PriorityClass | None:
    """The globalDefault class a pod without priorityClassName gets; two (a race upstream): the lowest value."""
    marked = [pc for pc in classes.values() if pc.global_default]
    return min(marked, key=lambda pc: pc.value) if marked else None


def _errors(obj: dict, old: dict | None) -> list[Cause]:
    name = str((obj.get("metadata") or {}).get("name") or "")
    value = obj.get("value")
    errs: list[Cause] = []
    if not isinstance(value, int) or isinstance(value, bool):
        return [Cause("value", f"Invalid value: {value!r}: must be an integer")]
    if name.startswith(SYSTEM_PREFIX):
        known = system_classes().get(name)
        if known is None:
            why = f"{name} is not a known system priority class"
        elif known.value != value:
            why = f"value of {name} PriorityClass must be {known.value}"
        elif bool(obj.get("globalDefault")):
            why = f"globalDefault of {name} PriorityClass must be false"
        else:
            why = None
        if why:
            errs.append(Cause("metadata.name", "Forbidden: priority class names with 'system-' prefix are reserved "
                                               f"for system use only. error: {why}"))
    elif value > HIGHEST_USER_DEFINABLE:
        errs.append(Cause("value", f"Forbidden: maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"))
    policy = obj.get("preemptionPolicy")
    if policy not in (PREEMPT_LOWER, NEVER):
        errs.append(Cause("preemptionPolicy", f'Unsupported value: "{policy}": supported values: '
                                              f'"{PREEMPT_LOWER}", "{NEVER}"'))
    if old is not None:
        if old.get("value") != value:
            errs.append(Cause("value", "Forbidden: may not be changed in an update."))
        if old.get("preemptionPolicy") != policy:
            errs.append(Cause("preemptionPolicy", f'Invalid value: "{policy}": field is immutable'))
    return errs


def admit(obj: dict, stored: Iterable[dict], old: dict | None = None) -> dict:
    """`obj` as the API server stores it (preemptionPolicy defaulted), or APIRejected: its validation, then the
    Priority plugin's one-default rule against the `stored` classes (on update: another class's)."""
    out = dict(obj)
    if out.get("preemptionPolicy") in (None, ""):
        out["preemptionPolicy"] = PREEMPT_LOWER
    errs = _errors(out, old)
    name = str((out.get("metadata") or {}).get("name") or "")
    if errs:
        raise invalid(QUALIFIED, name, errs)
    if out.get("globalDefault"):
        other = default_class({pc.name: pc for pc in map(PriorityClass.of, stored)})
        if other is not None and (old is None or other.name != name):
            raise forbidden(RESOURCE, out, f"PriorityClass {other.name} is already marked as default. "
                                           "Only one default can exist")
    return out
