"""Manifest shapes: the JSON type of every field the harness reads, checked per kind before any
code reads it, so a wrong shape is a `file:line: reason` rather than an AttributeError deep in the
loop. The schemas are data (harness/data/manifest-shapes.yaml); this module builds one validator
per kind and words the errors.
"""
from __future__ import annotations

import copy
import functools
import re
from collections.abc import Collection
from importlib import resources

from harness.backends.kinds import API_VERSIONS
from harness.model.kube.apistatus import APIRejected
from harness.model.data import load_yaml
from harness.model.kube.poddefaults import admit_pod
from harness.scenario.statefulsetspec import UPDATE_FORBIDDEN, update_forbidden
from harness.scenario.steps import ACTIONS, DEPLOYMENT_VERBS, METADATA_VERBS, workload_of
from harness.scenario.verdictkey import Judge

_TYPE_WORDS = {"object": "a mapping", "array": "a list", "string": "a string", "integer": "an integer",
               "number": "a number", "boolean": "true or false", "null": "null"}


@functools.lru_cache(maxsize=1)
def _shapes() -> dict:
    return load_yaml((resources.files("harness") / "data" / "manifest-shapes.yaml").read_text())


def shape_kinds() -> frozenset[str]:
    """The kinds with a shape schema."""
    return frozenset(_shapes()["kinds"])


def _describe(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _wanted(types) -> str:
    types = [types] if isinstance(types, str) else list(types)
    words = [_TYPE_WORDS.get(t, t) for t in types if t != "null"]
    return " or ".join(words) or "null"


def shape_errors(obj: dict) -> list[tuple[tuple, str]]:
    """(path within the manifest, reason) for each field of `obj` whose type is not what its
    kind's schema says; empty for kinds without a schema. Judged once per verdict key of the manifest under its
    kind's schema (harness/scenario/verdictkey.py Judge): a customer's dump holds thousands of pods that differ
    only in what the shapes do not read (names, images), and the library repeats its manifests; jsonschema's
    walk was a third of loading the library. A manifest with errors is judged itself for their wording."""
    kind = obj.get("kind")
    judge = _judge(kind) if isinstance(kind, str) else None
    if judge is None or judge.valid(obj):
        return []
    return _shape_errors(obj)


@functools.lru_cache(maxsize=None)
def _judge(kind: str) -> Judge | None:
    data = _shapes()
    body = data["kinds"].get(kind)
    return None if body is None else Judge({"type": "object", **body}, data["$defs"])


def _shape_errors(obj: dict) -> list[tuple[tuple, str]]:
    kind = obj.get("kind")
    judge = _judge(kind) if isinstance(kind, str) else None
    if judge is None:
        return []
    out = []
    for err in sorted(judge.validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]):
        path = tuple(err.absolute_path)
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path).replace(".[", "[")
        if err.validator == "type":
            reason = f"{kind} {where} must be {_wanted(err.validator_value)}, got {_describe(err.instance)}"
        else:
            reason = f"{kind} {where}: {err.message}"
        out.append((path, reason))
    return out


# -- values the JSON Schema cannot judge, checked at load so `validate` accepting a scenario means
# `run` can use it --------------------------------------------------------------------------------
REGEX_KEYS = ("Regex",)           # any expectation key ending in Regex is a Python regular expression
MAX_ADVANCE_SECONDS = 10 * 365 * 24 * 3600.0


def _kind_of(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return "null"


def _walk(value, path: tuple):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))


def _regex_errors(data: dict) -> list[tuple[tuple, str]]:
    """Each string under a key ending in Regex that does not compile, in walking order."""
    out: list[tuple[tuple, str]] = []
    _regex_walk(data, (), out)
    return out


def _regex_walk(node: dict | list, path: tuple, out: list[tuple[tuple, str]]) -> None:
    """_regex_errors' walk: a path built per mapping and list, not per value (_walk's generators passed each of
    the 2.1 million values of a 5,000-node scenario up through every level above it: 20 million resumptions)."""
    for k, v in node.items() if isinstance(node, dict) else enumerate(node):
        t = type(v)
        if t is dict or t is list or (t is not str and isinstance(v, (dict, list))):
            _regex_walk(v, path + (k,), out)
        elif isinstance(v, str) and isinstance(k, str) and k.endswith(REGEX_KEYS):
            try:
                re.compile(v)
            except re.error as e:
                out.append((path + (k,), f"{k}: invalid regular expression {v!r}: {e}"))


def _fault_errors(data: dict) -> list[tuple[tuple, str]]:
    """Each fault rule is built by fakeazure's own constructor now, not first when a run adds it."""
    from fakeazure.faults import make_fault
    out = []
    lists = [(("given", "faults"), (data.get("given") or {}).get("faults"))]
    lists += [(("steps", i, "faults"), s.get("faults")) for i, s in enumerate(data.get("steps") or [])
              if isinstance(s, dict)]
    for base, faults in lists:
        for i, f in enumerate(faults or []):
            try:
                make_fault(f)
            except (ValueError, TypeError) as e:
                out.append((base + (i,), f"invalid fault: {e}"))
    return out


def _duration_errors(data: dict) -> list[tuple[tuple, str]]:
    """Each step's `advance`, given.loop.horizon and the given.loop timings: durations, within bounds."""
    from harness.model.values.durations import scenario_duration
    out = []
    for i, s in enumerate(data.get("steps") or []):
        if isinstance(s, dict) and "advance" in s:
            try:
                seconds = scenario_duration(s["advance"])
            except ValueError as e:
                out.append((("steps", i, "advance"), str(e)))
                continue
            if not 0 <= seconds <= MAX_ADVANCE_SECONDS:
                out.append((("steps", i, "advance"), f"advance {s['advance']!r} is beyond the 10-year bound"))
    loop = (data.get("given") or {}).get("loop") or {}
    horizon = loop.get("horizon")
    if horizon is not None:
        try:
            if scenario_duration(horizon) <= 0:
                out.append((("given", "loop", "horizon"), f"horizon {horizon!r} is not a positive duration"))
        except ValueError as e:
            out.append((("given", "loop", "horizon"), str(e)))
    for key in ("nodeBoot", "vmDelete"):        # timings (harness/loop/assumed.py): zero or more
        if loop.get(key) is None:
            continue
        try:
            if scenario_duration(loop[key]) < 0:
                out.append((("given", "loop", key), f"{key} {loop[key]!r} is a negative duration"))
        except ValueError as e:
            out.append((("given", "loop", key), str(e)))
    return out


def _knob_errors(data: dict) -> list[tuple[tuple, str]]:
    """A knob may change a profile's values but not their shape: merged over each profile the
    scenario runs under, every value keeps its type (a mapping stays a mapping, a list a list)."""
    from harness.model.upstream.profile import DEFAULT_PROFILE, ProfileError, merge, raw_profile
    from harness.model.upstream.releases import expand, policy_profiles
    given = data.get("given") or {}
    knobs = given.get("knobs")
    if not knobs:
        return []
    out = []
    for name in expand(list(given.get("profiles") or [DEFAULT_PROFILE])):
        try:
            base = raw_profile(name)
        except ProfileError:
            continue                      # reported as an unknown profile
        try:
            merged = merge(base, knobs)
        except (TypeError, AttributeError, ValueError) as e:
            return [(("given", "knobs"), f"knobs cannot be merged over profile {name!r}: {e}")]
        others = [raw_profile(n) for n in policy_profiles()]     # release profiles share upstream's shapes
        for path, v in _walk(merged, ()):
            have = _lookup_shape(base, path)
            for other in others:
                if have is not None:
                    break
                have = _lookup_shape(other, path)          # a switch only another profile sets
            if have is None and isinstance(v, list) and not all(isinstance(x, str) for x in v):
                # (harness assumption) a list switch no profile spells out holds names (regions,
                # SKUs, keys), as every such switch the model reads does
                return [(("given", "knobs") + tuple(p for p in path[:1]),
                         f"knob {'.'.join(map(str, path))} must be a list of strings")]
            if have is not None and _kind_of(have) != _kind_of(v) and not (path and path[-1] == "name"):
                where = ".".join(map(str, path))
                return [(("given", "knobs") + tuple(p for p in path[:1]),
                         f"knob {where} must be {_TYPE_WORDS[_kind_of(have)]} as in profile {name!r}, "
                         f"got {_describe(v)}")]
    return out


def _lookup_shape(have, path: tuple):
    """The value at `path` in a profile, a list's first item standing for all of them."""
    for p in path:
        if isinstance(have, dict):
            have = have.get(p)
        elif isinstance(have, list) and isinstance(p, int) and have:
            have = have[p] if p < len(have) else have[0]     # a list's items share one shape
        else:
            have = None
        if have is None:
            break
    return have


def _expectation_blocks(data: dict):
    """(path, block) of every expectation block: expect, expectByProfile.<p>, and per step, each with
    the blocks nested in it."""
    if isinstance(data.get("expect"), dict):
        yield from _with_nested(("expect",), data["expect"])
    for p, e in (data.get("expectByProfile") or {}).items():
        if isinstance(e, dict):
            yield from _with_nested(("expectByProfile", p), e)
    for i, step in enumerate(data.get("steps") or []):
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("expect"), dict):
            yield from _with_nested(("steps", i, "expect"), step["expect"])
        for p, e in (step.get("expectByProfile") or {}).items():
            if isinstance(e, dict):
                yield from _with_nested(("steps", i, "expectByProfile", p), e)


def _with_nested(base: tuple, block: dict):
    """The block, and the blocks it holds: each `oneOf` alternative and each `outcomes` entry."""
    yield base, block
    for k, alt in enumerate(block.get("oneOf") or [] if isinstance(block.get("oneOf"), list) else []):
        if isinstance(alt, dict):
            yield from _with_nested(base + ("oneOf", k), alt)
    outcomes = block.get("outcomes")
    for kind in ("possible", "always", "never") if isinstance(outcomes, dict) else ():
        for k, b in enumerate(outcomes.get(kind) or [] if isinstance(outcomes.get(kind), list) else []):
            if isinstance(b, dict):
                yield from _with_nested(base + ("outcomes", kind, k), b)


def _node_lists(nodes) -> list[tuple[tuple, list]]:
    """`nodes` as (path, node list): the list itself, or each list of `nodes: {oneOf: [...]}`."""
    if isinstance(nodes, list):
        return [((), nodes)]
    if isinstance(nodes, dict) and isinstance(nodes.get("oneOf"), list):
        return [(("oneOf", k), alt) for k, alt in enumerate(nodes["oneOf"]) if isinstance(alt, list)]
    return []


def _expect_value_errors(data: dict) -> list[tuple[tuple, str]]:
    """Quantities (instanceTypes.<sku>.capacity/allocatable, nodes[].nodeClaimRequests[Exactly]) and durations (unavailable offerings'
    `ttl`) that the checker would have to parse."""
    from harness.model.values.durations import scenario_duration
    from harness.model.values.resources import QuantityError, parse_resource
    out = []
    for base, block in _expectation_blocks(data):
        for sku, want in (block.get("instanceTypes") or {}).items():
            for kind in ("capacity", "allocatable"):
                for res, q in ((want.get(kind) if isinstance(want, dict) else None) or {}).items():
                    try:
                        parse_resource(res, q)
                    except (QuantityError, ValueError, TypeError, ArithmeticError):
                        out.append((base + ("instanceTypes", sku, kind, res), f"invalid quantity {q!r} for {res}"))
        for at, nodes in _node_lists(block.get("nodes")):
            for i, node in enumerate(nodes):
                for key in ("nodeClaimRequests", "nodeClaimRequestsExactly"):
                    for res, q in ((node.get(key) if isinstance(node, dict) else None) or {}).items():
                        try:
                            parse_resource(res, q)
                        except (QuantityError, ValueError, TypeError, ArithmeticError):
                            out.append((base + ("nodes", *at, i, key, res), f"invalid quantity {q!r} for {res}"))
        for i, u in enumerate(((block.get("azure") or {}).get("unavailableOfferings")) or []):
            if isinstance(u, dict) and "ttl" in u:
                try:
                    scenario_duration(u["ttl"])
                except ValueError as e:
                    out.append((base + ("azure", "unavailableOfferings", i, "ttl"), str(e)))
    return out


def scenario_value_errors(data: dict, keys: Collection | None = None) -> list[tuple[tuple, str]]:
    """(path, reason) for values a run could not use: invalid regexes, fault rules fakeazure would
    refuse, advances beyond the clock's range, knobs that change a profile's shape, expected
    quantities and durations that do not parse. `keys`, when given, holds every mapping key of `data` (the
    writer knows them: dumpwriter.WrittenLines.mapping_keys): without one ending in Regex there is no regex to
    look for, and the walk over every value (0.5 CPU-s for a 5,000-node dump's scenario) is skipped."""
    if not isinstance(data, dict):
        return []
    regexes = _regex_errors(data) if keys is None or any(isinstance(k, str) and k.endswith(REGEX_KEYS) for k in keys) \
        else []
    return (regexes + _fault_errors(data) + _duration_errors(data) + _knob_errors(data)
            + _expect_value_errors(data) + _restrict_errors(data))


def _restrict_errors(data: dict) -> list[tuple[tuple, str]]:
    """given.restrict and a `restrict` step name a size of the run's catalog: one of given.skus when the
    scenario lists them (a size of the whole catalog is checked when it is played: harness/scenario/steps.py
    restrict)."""
    given = data.get("given") if isinstance(data.get("given"), dict) else {}
    names = [s if isinstance(s, str) else (s or {}).get("name") for s in given.get("skus") or []]
    if not names:
        return []
    lists = [(("given", "restrict"), given.get("restrict"))]
    lists += [(("steps", i, "restrict"), step.get("restrict"))
              for i, step in enumerate(data.get("steps") or []) if isinstance(step, dict)]
    out = []
    for path, entries in lists:
        for j, r in enumerate(entries if isinstance(entries, list) else []):
            size = (r or {}).get("size") if isinstance(r, dict) else None
            if isinstance(size, str) and size not in names:
                out.append((path + (j, "size"),
                            f"restrict: {size!r} is not a SKU of this run (given.skus: {', '.join(map(str, names))})"))
    return out


# the loop expands these into pods itself and keeps no object a step could delete; volumes are
# the loop's own model for the whole run (harness/loop/scheduling/volumes.py: a StorageClass is not even in
# the backends), so deleting one would change nothing the run sees
UNDELETABLE_KINDS = frozenset({"Deployment", "DaemonSet", "StorageClass", "PersistentVolume",
                               "PersistentVolumeClaim"})

# kubernetes v1.36.3 pkg/apis/core/validation/validation.go ValidatePodUpdate (updatablePodSpecFields)
POD_UPDATE_FORBIDDEN = ("spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                        "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
                        "was previously negative)")


def _pod_spec_changed(old: dict, new: dict) -> bool:
    """The update would change a Pod spec field the API server refuses to change (images and added
    tolerations may change). Both are compared as stored: defaulted and admitted (a dump's full Pod applied
    again in short form is the same Pod: kubectl's patch drops the fields, the API server puts them back)."""
    try:
        stored = admit_pod(copy.deepcopy(old))
        old, new = stored, admit_pod(copy.deepcopy(new), stored)
    except APIRejected:
        pass                      # refused at create: the engines report it; compared as written

    def frozen(spec: dict) -> dict:
        spec = dict(spec or {})
        for k in ("containers", "initContainers"):
            spec[k] = [{f: v for f, v in (c or {}).items() if f != "image"} for c in spec.get(k) or []]
        spec.pop("tolerations", None)
        spec.pop("activeDeadlineSeconds", None)
        return spec
    old_tol, new_tol = (old.get("spec") or {}).get("tolerations") or [], (new.get("spec") or {}).get("tolerations") or []
    return frozen(old.get("spec")) != frozen(new.get("spec")) or any(t not in new_tol for t in old_tol)


def lifecycle_errors(doc, manifests: list, step_manifests: list[list], steps: list[dict]) -> list:
    """SourceErrors for steps a run could not play: a Pod applied again with another spec (applying
    an existing object is an update, and a Pod's spec is immutable), and a delete of an object the
    scenario never applied (or already deleted) or of an unsupported kind."""
    from harness.scenario.yamlsource import SourceError

    def key(obj: dict) -> tuple:
        meta = obj.get("metadata") or {}
        return obj.get("kind"), meta.get("namespace") or "default", meta.get("name")

    errors = []
    live: dict[tuple, object] = {}

    def apply(ms: list) -> None:
        for m in ms:
            k = key(m.obj)
            prev = live.get(k)
            # applying an object that exists is an update (kubectl apply); a Pod's spec is immutable
            if prev is not None and k[0] == "Pod" and _pod_spec_changed(prev.obj, m.obj):
                errors.append(SourceError(m.file, m.line, f"Pod {k[2]!r} is already applied ({prev.file}:{prev.line}) "
                                                          f"and its spec cannot change: {POD_UPDATE_FORBIDDEN}"))
                continue
            if prev is not None and k[0] == "StatefulSet" and update_forbidden(prev.obj, m.obj):
                errors.append(SourceError(m.file, m.line, f"StatefulSet {k[2]!r} is already applied ({prev.file}:"
                                                          f"{prev.line}) and the API server refuses the update: "
                                                          f"{UPDATE_FORBIDDEN}"))
                continue
            live[k] = m

    def delete(i: int, step: dict, later: list[dict]) -> None:
        for j, d in enumerate(step.get("delete") or []):
            kind = d.get("kind")
            k = (kind, d.get("namespace") or "default", d.get("name"))
            deletable = sorted(set(API_VERSIONS) - UNDELETABLE_KINDS | RUN_DECIDES_KINDS)
            if kind not in deletable:
                why = {"Deployment": " (the loop expands it into pods and keeps no object to delete)",
                       "DaemonSet": " (the loop expands it into pods and keeps no object to delete)"}.get(
                    kind, " (volumes are the loop's own model for the whole run)" if kind in UNDELETABLE_KINDS else "")
                errors.append(doc.error(("steps", i, "delete", j, "kind"),
                                        f"cannot delete kind {kind!r}{why}; supported: {', '.join(deletable)}"))
            elif k not in live and kind in RUN_DECIDES_KINDS:
                pass            # a given.existingNodes entry's, or one Karpenter launches: the run decides
            elif k not in live and kind == "Pod" and any(_ordinal_of(o, k[1], k[2]) for o in live):
                pass            # a StatefulSet's pod `<set>-<ordinal>`: whether it exists then, the run decides
            elif k not in live:
                errors.append(doc.error(("steps", i, "delete", j), f"no {kind} {d.get('name')!r} is applied at this "
                                        f"step, so none can be deleted{_applied_later(later, 'delete', (kind,), k[2])}"))
            else:
                del live[k]

    apply(manifests)
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        ms = step_manifests[i] if i < len(step_manifests) else []
        later = [m.obj for m in ms]              # this step's own apply: what it has not applied yet
        for action in ACTIONS:                   # in the order the engines play them
            if action == "apply":
                apply(ms)
                later = []
            elif action == "delete":
                delete(i, step, later)
            elif action == "evict":
                errors += _evict_errors(doc, i, step.get("evict"), live, later)
            elif action in DEPLOYMENT_VERBS + METADATA_VERBS:
                errors += _verb_errors(doc, i, action, step.get(action), live, later)
        errors += _cordon_errors(doc, i, step)
    return errors


# Nodes and NodeClaims a step may name without the file applying them: a given.existingNodes entry's (its
# NodeClaim, its Node `aks-<nodeClaim>`) or one Karpenter launches during the run, whose name the run decides
RUN_DECIDES_KINDS = frozenset({"Node", "NodeClaim"})


def _verb_errors(doc, i: int, action: str, entries, live: dict, later: list[dict]) -> list:
    """`scale` and `restart` name a Deployment or StatefulSet applied by then; `label` and `annotate` of a Deployment,
    NodePool or AKSNodeClass too (a Pod, Node or NodeClaim may be one the run makes: the run decides)."""
    out = []
    for j, e in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(e, dict):
            continue
        kind, name = workload_of(e) if action in DEPLOYMENT_VERBS else (e.get("kind"), e.get("name"))
        if kind in ("Pod",) or kind in RUN_DECIDES_KINDS:
            continue
        if (kind, e.get("namespace") or "default", name) not in live:
            out.append(doc.error(("steps", i, action, j), f"{action}: no {kind} {name!r} is applied at this step"
                                                          f"{_applied_later(later, action, (kind,), name)}"))
    return out


def _cordon_errors(doc, i: int, step: dict) -> list:
    """A step that cordons and uncordons one Node undoes itself (it plays cordon, then uncordon)."""
    cordoned = step.get("cordon") if isinstance(step.get("cordon"), list) else []
    uncordoned = step.get("uncordon") if isinstance(step.get("uncordon"), list) else []
    return [doc.error(("steps", i, "uncordon", j), f"uncordon {n!r}: this step also cordons it, and a step plays "
                                                   f"{', '.join(ACTIONS)}: the uncordon would undo the cordon before "
                                                   "anything sees it") for j, n in enumerate(uncordoned) if n in cordoned][:1]


def _applied_later(later: list[dict], action: str, kinds: tuple[str, ...], name: str) -> str:
    """A note when the step applies the object `action` names only after it (harness/scenario/steps.py ACTIONS)."""
    if any(m.get("kind") in kinds and (m.get("metadata") or {}).get("name") == name for m in later):
        return f" (this step applies it after its {action}: a step plays {', '.join(ACTIONS)})"
    return ""


def _ordinal_of(owner: tuple, namespace: str, pod: str) -> bool:
    """Whether `pod` of `namespace` is named as a pod of the live object `owner` (kind, namespace, name) would be,
    when that is a StatefulSet: `<set>-<ordinal>`."""
    return owner[0] == "StatefulSet" and owner[1] == namespace and \
        re.fullmatch(rf"{re.escape(str(owner[2]))}-[0-9]+", str(pod)) is not None


def _evict_errors(doc, i: int, ev, live: dict, later: list[dict]) -> list:
    """An `evict` step names its node by `node` (launch-order index) or `pod` (the node the pod is
    bound to), one of them; a pod must be applied (a Pod, or a Deployment's, StatefulSet's or DaemonSet's) by then."""
    if not isinstance(ev, dict):
        return []
    if len([k for k in ("node", "pod") if k in ev]) != 1:
        return [doc.error(("steps", i, "evict"), "evict names one node: by `node` (its index in launch order) "
                                                 "or by `pod` (the node the pod is bound to)")]
    owners = ("Pod", "Deployment", "StatefulSet", "DaemonSet")
    if "pod" in ev and not any(k[0] in owners and (k[2] == ev["pod"] or _ordinal_of(k, k[1], ev["pod"])) for k in live):
        return [doc.error(("steps", i, "evict", "pod"), f"no Pod, Deployment, StatefulSet or DaemonSet {ev['pod']!r} is "
                                                        f"applied at this step"
                                                        f"{_applied_later(later, 'evict', owners, ev['pod'])}")]
    return []
