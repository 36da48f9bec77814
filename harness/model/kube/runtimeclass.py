"""kube-apiserver's RuntimeClass admission plugin, for the embedded backend.

k8s.io/kubernetes v1.36.3 plugin/pkg/admission/runtimeclass/admission.go (on by default; it acts on
pod CREATE only, NewRuntimeClass's admission.NewHandler(admission.Create)). The mutating half
(RuntimeClass.Admit) looks the pod's runtimeClassName up (prepareObjects), writes the RuntimeClass's
overhead.podFixed into spec.overhead (setOverhead) and merges scheduling.nodeSelector and
scheduling.tolerations into the pod (setScheduling); the validating half (RuntimeClass.Validate,
validateOverhead) then refuses a pod whose spec.overhead no RuntimeClass overhead accounts for.
The real backends' API server runs the plugin itself.
"""
from __future__ import annotations

from typing import Callable

from harness.model.kube.apistatus import forbidden
from harness.model.values.resources import QuantityError, parse_quantity

__all__ = ["admit_pod", "merge_tolerations"]

NOT_FOUND = 'pod rejected: RuntimeClass "{name}" not found'
MISMATCH = "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
UNACCOUNTED = "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
CONFLICT = "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {rc}; pod.spec.nodeSelector[{k}] = {pod}"


def _same_resources(a: dict | None, b: dict | None) -> bool:
    """apiequality.Semantic.DeepEqual of two ResourceLists: nil and empty are equal, quantities
    compare by value (resource.Quantity's registered equality, Cmp == 0)."""
    a, b = a or {}, b or {}
    if set(a) != set(b):
        return False
    try:
        return all(parse_quantity(a[k]) == parse_quantity(b[k]) for k in a)
    except QuantityError:
        return all(str(a[k]) == str(b[k]) for k in a)


def _toleration(t: dict) -> tuple:
    t = t or {}
    return (t.get("key") or "", t.get("operator") or "", t.get("value") or "", t.get("effect") or "",
            t.get("tolerationSeconds"))


def _is_superset(ss: dict, t: dict) -> bool:
    """k8s.io/kubernetes v1.36.3 pkg/util/tolerations/tolerations.go isSuperset: `ss` tolerates
    everything `t` does."""
    sk, sop, sv, se, ssec = _toleration(ss)
    tk, top, tv, te, tsec = _toleration(t)
    if (sk, sop, sv, se, ssec) == (tk, top, tv, te, tsec):
        return True
    if tk != sk and (sk != "" or sop != "Exists"):       # an empty key with Exists matches every key
        return False
    if te != se and se != "":                            # an empty effect matches every effect
        return False
    if se == "NoExecute" and ssec is not None and (tsec is None or tsec > ssec):
        return False
    if sop in ("Equal", ""):                             # an empty operator means Equal
        return top == "Equal" and tv == sv
    return sop == "Exists"


def merge_tolerations(first: list[dict], second: list[dict]) -> list[dict]:
    """k8s.io/kubernetes v1.36.3 pkg/util/tolerations/tolerations.go MergeTolerations: both lists,
    dropping a toleration that one kept earlier or a later different one already covers."""
    everything = list(first or []) + list(second or [])
    merged: list[dict] = []
    for i, t in enumerate(everything):
        if any(_is_superset(m, t) for m in merged):
            continue
        if any(_toleration(t) != _toleration(t2) and _is_superset(t2, t) for t2 in everything[i + 1:]):
            continue
        merged.append(t)
    return merged


def admit_pod(pod: dict, lookup: Callable[[str], dict | None]) -> dict:
    """The pod as RuntimeClass admission leaves it on CREATE (modified in place and returned), or
    APIRejected with the plugin's text. `lookup(name)` is the stored RuntimeClass or None."""
    spec = pod.setdefault("spec", {})
    rc_name = spec.get("runtimeClassName")
    rc = None
    if rc_name is not None:
        # prepareObjects: the lister, then a live GET; not found either way is Forbidden
        rc = lookup(rc_name)
        if rc is None:
            raise forbidden("pods", pod, NOT_FOUND.format(name=rc_name))
    overhead = (rc or {}).get("overhead")
    # Admit / setOverhead: a RuntimeClass with an overhead writes podFixed into the pod
    if rc is not None and overhead is not None:
        fixed = overhead.get("podFixed")
        if spec.get("overhead") and not _same_resources(fixed, spec.get("overhead")):
            raise forbidden("pods", pod, MISMATCH)
        if fixed is None:
            spec.pop("overhead", None)
        else:
            spec["overhead"] = dict(fixed)
    # Admit / setScheduling: nodeSelector merged (a different value for a key is a conflict),
    # tolerations merged
    scheduling = (rc or {}).get("scheduling")
    if rc is not None and scheduling is not None:
        rc_selector = scheduling.get("nodeSelector") or {}
        if spec.get("nodeSelector") is None:
            if scheduling.get("nodeSelector") is not None:
                spec["nodeSelector"] = dict(rc_selector)
        else:
            selector = spec["nodeSelector"]
            # Go ranges over the map in random order, so with several conflicts the reported key
            # varies; the harness reports the first in sorted order
            for k in sorted(rc_selector):
                if k in selector and selector[k] != rc_selector[k]:
                    raise forbidden("pods", pod, CONFLICT.format(k=k, rc=rc_selector[k], pod=selector[k]))
                selector[k] = rc_selector[k]
        merged = merge_tolerations(spec.get("tolerations") or [], scheduling.get("tolerations") or [])
        if merged:
            spec["tolerations"] = merged
        else:
            spec.pop("tolerations", None)
    # Validate / validateOverhead
    if rc is not None and overhead is not None:
        if not _same_resources(overhead.get("podFixed"), spec.get("overhead")):
            raise forbidden("pods", pod, MISMATCH)
    elif spec.get("overhead") is not None:
        raise forbidden("pods", pod, UNACCOUNTED, validating=True)
    return pod
