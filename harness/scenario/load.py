"""Scenario files: load, validate against the JSON Schema and the harness's own checks, resolve
manifests (inline or by relative path), and report every problem as `file:line: reason`.
"""
from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import jsonschema

from harness.backends.kinds import API_VERSIONS
from harness.backends.registry import BACKEND_NAMES
from harness.model.labels.policy import label_value_errors, qualified_name_errors
from harness.model.upstream.profile import DEFAULT_PROFILE, ProfileError
from harness.model.values.resources import QuantityError, parse_quantity
from harness.scenario import loadcache
from harness.heap import no_collections
from harness.scenario.references import resolve_reference
from harness.scenario.selection import SUFFIX  # noqa: F401 (re-exported: what names a scenario file)
from harness.scenario.shapes import lifecycle_errors, scenario_value_errors, shape_errors
from harness.scenario.verdictkey import DEFS, Keyer, keyable
from harness.scenario.yamlsource import Document, SourceError, load_documents

API_VERSION = "harness.karpenter.azure.com/v1alpha1"
DEFAULT_SEED = 1
SCHEMA_URL_HINT = "# yaml-language-server: $schema="

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")


@functools.lru_cache(maxsize=1)
def schema() -> dict:
    return json.loads((resources.files("harness") / "data" / "scenario.schema.json").read_text())


def schema_path() -> Path:
    return Path(str(resources.files("harness") / "data" / "scenario.schema.json"))


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


@dataclass
class Manifest:
    obj: dict
    file: str
    line: int


@dataclass
class Scenario:
    file: Path
    doc: Document
    name: str
    tags: list[str]
    description: str
    given: dict
    manifests: list[Manifest]
    expect: dict
    expect_by_profile: dict
    steps: list[dict]
    xfail: dict[str, str]
    line: int = 1
    step_manifests: list[list[Manifest]] = field(default_factory=list)
    warnings: list = field(default_factory=list)      # harness.scenario.notices.Notice: runs, but say so

    @property
    def profiles(self) -> list[str]:
        """given.profiles (default [upstream]); `all-releases` stands for every release profile
        (harness.model.upstream.releases.expand)."""
        from harness.model.upstream.releases import expand
        return expand(list(self.given.get("profiles") or [DEFAULT_PROFILE]))

    def xfail_reason(self, profile: str, real: bool = False) -> str | None:
        """The declared xfail of `profile` that applies to the engine: a reason containing
        `engine: real` is the real controller's disagreement (real engine only); one starting with
        `model:` is a gap of the simulation (simulated engine only); any other holds on both."""
        reason = self.xfail.get(profile)
        if reason is None:
            return None
        if "engine: real" in reason:
            return reason if real else None
        if reason.lstrip().startswith("model:"):
            return None if real else reason
        return reason

    @property
    def backends(self) -> list[str]:
        return list(self.given.get("backends") or BACKEND_NAMES)

    @property
    def seed(self) -> int:
        return int(self.given.get("seed", DEFAULT_SEED))

    @property
    def region(self) -> str:
        return str(self.given.get("region") or "southcentralus")

    @property
    def api_versions(self) -> tuple[tuple[str, str], ...]:
        """The (kind, apiVersion) pairs the manifests and the steps' manifests write."""
        return tuple(sorted({(m.obj.get("kind", ""), m.obj.get("apiVersion", ""))
                             for ms in [self.manifests, *self.step_manifests] for m in ms}))

    def expect_for(self, profile: str, base: dict | None = None, by_profile: dict | None = None) -> dict:
        """`expect` with `expectByProfile[profile]` deep-merged over it (maps merge, lists replace)."""
        return deep_merge(self.expect if base is None else base,
                          (self.expect_by_profile if by_profile is None else by_profile).get(profile) or {})

    def where(self, path: tuple) -> str:
        return f"{self.file}:{self.doc.line(path)}"


def deep_merge(base, over):
    if isinstance(base, dict) and isinstance(over, dict):
        out = copy.deepcopy(base)
        for k, v in over.items():
            out[k] = deep_merge(out.get(k), v) if k in out else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


# -- validation -------------------------------------------------------------------------------------
def schema_errors(doc: Document) -> list[SourceError]:
    if _validator().is_valid(_judged_alike(doc.data)):
        return []
    errors = []
    for err in sorted(_validator().iter_errors(doc.data), key=lambda e: (list(map(str, e.absolute_path)), e.message)):
        best = jsonschema.exceptions.best_match([err])
        path = tuple(best.absolute_path)
        reason = best.message
        if best.validator == "additionalProperties" and isinstance(best.instance, dict):
            allowed = set((best.schema.get("properties") or {}).keys())
            extra = sorted(k for k in best.instance if k not in allowed)
            if extra:
                path = path + (extra[0],)
                where = ".".join(str(p) for p in path[:-1]) or "the scenario"
                reason = f"unknown field {extra[0]!r} in {where}" + (
                    f" (allowed: {', '.join(sorted(allowed))})" if len(allowed) <= 14 else "")
        elif best.validator == "enum" and not isinstance(best.instance, str) and \
                all(isinstance(v, str) for v in best.validator_value):
            # YAML reads an unquoted True (a condition's status) as a boolean: say so, not "True is not one of ['True']"
            reason = (f"{best.instance!r} is a {type(best.instance).__name__}, not a string: one of "
                      f"{', '.join(map(repr, best.validator_value))} belongs here (quoted in YAML)")
        elif best.validator == "oneOf" and best.context:
            inner = jsonschema.exceptions.best_match(best.context)
            reason = inner.message
            path = path + tuple(inner.relative_path)
        errors.append(doc.error(path, f"{'.'.join(map(str, path)) + ': ' if path else ''}{reason}"))
    return errors


# The lists of a dump's scenario that hold thousands of items (tens of thousands of seeded pods within the
# existing nodes, an expectation per node and per Deployment): jsonschema judges only the first item with each
# verdict key (harness/scenario/verdictkey.py), which finds the scenario valid exactly when it is; an invalid one
# is judged whole, for the errors' wording. At 5,000 nodes the check took 3.7 CPU-s item by item, 0.6 with the
# manifests and existing nodes cut, 0.3 with the expectations cut too.
_BIG_LISTS = (("manifests",), ("given", "existingNodes"), ("expect", "nodes"), ("expect", "pods"))
# keywords on the way to such a list that read nothing of it but the branch they descend
_PATH_KEYWORDS = frozenset({"$schema", "$id", "title", "description", "type", "properties", "additionalProperties",
                            "required", "$defs"})
_NOTES = frozenset({"title", "description"})
# keywords of the list's own schema that judge each item alone (a list's items, a mapping's values)
_LIST_KEYWORDS = frozenset({"title", "description", "type", "items"})
_MAP_KEYWORDS = frozenset({"title", "description", "type", "additionalProperties"})


def _followed(node, defs: dict):
    """`node`, a reference that says nothing else followed into `defs`; None for any other reference."""
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if set(node) - _NOTES - {"$ref"} or not isinstance(ref, str) or not ref.startswith(DEFS):
            return None
        node = defs.get(ref[len(DEFS):])
    return node


def _judged_by_items(node, defs: dict) -> tuple[str, dict] | None:
    """("list", its items' schema) when the schema `node` judges a list by its items alone, ("mapping", its
    values' schema) when it judges a mapping by its values alone; a `oneOf` whose other branches refuse every
    list (expect.nodes: a list, or a mapping of lists) judges a list as its list branch does."""
    node = _followed(node, defs)
    if not isinstance(node, dict):
        return None
    if "oneOf" in node and not set(node) - _NOTES - {"oneOf"} and isinstance(node["oneOf"], list):
        branches = [_followed(b, defs) for b in node["oneOf"]]
        lists = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "object")]
        if len(lists) != 1 or not isinstance(lists[0], dict) or "items" not in lists[0] \
                or set(lists[0]) - _LIST_KEYWORDS:
            return None
        return "list", lists[0]["items"]
    if "items" in node and not set(node) - _LIST_KEYWORDS:
        return "list", node["items"]
    if isinstance(node.get("additionalProperties"), dict) and node.get("type") == "object" \
            and not set(node) - _MAP_KEYWORDS:
        return "mapping", node["additionalProperties"]
    return None


@functools.lru_cache(maxsize=1)
def _item_schemas() -> dict[tuple, tuple[str, dict]]:
    """For each of _BIG_LISTS whose verdict is its items' verdicts, one by one (nothing on the way reads the
    list but that branch, the list's schema judges each item alone, and the items' is keyable): whether it is
    a list or a mapping, and the items' schema."""
    root = schema()
    defs = root.get("$defs") or {}
    out: dict[tuple, tuple[str, dict]] = {}
    for path in _BIG_LISTS:
        node = root
        for step in path:
            node = _followed(node, defs)
            node = (node.get("properties") or {}).get(step) \
                if isinstance(node, dict) and not set(node) - _PATH_KEYWORDS else None
        judged = _judged_by_items(node, defs)
        if judged and keyable(judged[1], defs):
            out[path] = judged
    return out


@functools.lru_cache(maxsize=1)
def _keyer() -> Keyer:
    return Keyer(schema().get("$defs") or {})


def _judged_alike(data):
    """`data` with each of _BIG_LISTS cut to the first item of each verdict key: valid exactly when `data` is."""
    for path, judged in _item_schemas().items():
        data = _cut(data, path, judged)
    return data


def _cut(data, path: tuple, judged: tuple[str, dict]):
    """`data` with the list (or mapping) at `path` cut to the first item of each key under the items' schema,
    the mappings on the way copied (shallow); `data` itself when there is no list (or mapping) there."""
    if not path:
        kind, items = judged
        return _keyer().representatives(data, items) if isinstance(data, list if kind == "list" else dict) else data
    if not isinstance(data, dict) or path[0] not in data:
        return data
    return {**data, path[0]: _cut(data[path[0]], path[1:], judged)}


def _check_manifest(obj, doc: Document, path: tuple = ()) -> list[SourceError]:
    """The problems of the manifest `obj` at `path` in `doc`, each at its field's line."""
    def err(sub: tuple, reason: str) -> SourceError:
        return doc.error(path + sub, reason)

    if not isinstance(obj, dict):
        return [err((), "a manifest must be a mapping with apiVersion, kind and metadata")]
    kind = obj.get("kind")
    errors: list[SourceError] = []
    # a referenced file's objects meet no JSON Schema: a mapping or list where a string belongs is
    # refused here rather than looked up (an unhashable key)
    if not isinstance(kind, str) or kind not in API_VERSIONS:
        return [err(("kind",), f"unsupported kind {kind!r}; supported: {', '.join(sorted(API_VERSIONS))}")]
    api_version = obj.get("apiVersion")
    if not isinstance(api_version, str) or api_version not in API_VERSIONS[kind]:
        errors.append(err(("apiVersion",), f"{kind} needs apiVersion {' or '.join(sorted(API_VERSIONS[kind]))}, "
                                            f"got {api_version!r}"))
    shapes = [err(sub, reason) for sub, reason in shape_errors(obj)]
    if shapes:
        return errors + shapes
    metadata = obj.get("metadata") or {}
    if not isinstance(metadata, dict):
        return errors + [err(("metadata",), f"{kind} metadata must be a mapping")]
    name = metadata.get("name")
    if not isinstance(name, str) or not _DNS1123.match(name):
        errors.append(err(("metadata", "name"), f"{kind} metadata.name must be a lowercase DNS-1123 name, got {name!r}"))
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        return errors + [err(("spec",), f"{kind} spec must be a mapping")]
    if kind == "NodePool":
        tspec = ((spec.get("template") or {}).get("spec")) or {}
        if not (tspec.get("nodeClassRef") or {}).get("name"):
            errors.append(err(("spec", "template", "spec"), "NodePool spec.template.spec.nodeClassRef.name is required"))
        for i, r in enumerate(tspec.get("requirements") or []):
            if not isinstance(r, dict) or "key" not in r or "operator" not in r:
                errors.append(err(("spec", "template", "spec", "requirements", i),
                                  "a requirement needs `key` and `operator`"))
    if kind in ("Job", "CronJob"):
        from harness.loop.kube.jobs import RUN_DURATION
        from harness.model.values.durations import scenario_duration
        where = ("metadata",) if kind == "Job" else ("spec", "jobTemplate", "metadata")
        meta = obj
        for part in where:
            meta = meta.get(part) if isinstance(meta, dict) else None
        value = ((meta or {}).get("annotations") or {}).get(RUN_DURATION) if isinstance(meta, dict) else None
        if value is not None:
            try:
                scenario_duration(str(value))
            except ValueError:
                errors.append(err(where + ("annotations", RUN_DURATION), f"{kind} {RUN_DURATION} {value!r} is not a "
                                                                       "duration (e.g. 10m, 1h30m)"))
    if kind == "CronJob":
        from harness.model.values.cron import CronError, parse_schedule
        try:
            parse_schedule(str(spec.get("schedule") or ""))
        except CronError as e:
            errors.append(err(("spec", "schedule"), f"CronJob spec.schedule {spec.get('schedule')!r}: {e}"))
    if kind == "StatefulSet":
        from harness.scenario.statefulsetspec import spec_errors
        errors += [err(sub, f"StatefulSet {name}: {reason} (the API server refuses it)") for sub, reason in spec_errors(spec)]
    for sub, quantities in _admission_quantities(kind, spec):      # a LimitRange's, a ResourceQuota's
        for rname, q in quantities.items():
            if not _is_quantity(q):
                errors.append(err(("spec",) + sub + (rname,), f"invalid quantity {q!r} for {rname}"))
    if kind in ("Pod", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicaSet"):
        base = {"Pod": ("spec",), "CronJob": ("spec", "jobTemplate", "spec", "template", "spec")}.get(
            kind, ("spec", "template", "spec"))
        pspec = obj
        for part in base:
            pspec = pspec.get(part) if isinstance(pspec, dict) else None
        if not isinstance(pspec, dict) or not isinstance(pspec.get("containers"), list) or not pspec["containers"]:
            errors.append(err(base, f"{kind} needs at least one container in {'.'.join(base)}.containers"))
        else:
            for ci, c in enumerate(pspec["containers"]):
                res = (c or {}).get("resources") or {}
                for section in ("requests", "limits"):
                    for rname, q in (res.get(section) or {}).items():
                        if not _is_quantity(q):
                            errors.append(err(base + ("containers", ci, "resources", section, rname),
                                              f"invalid quantity {q!r} for {rname}"))
            for k, v in (pspec.get("nodeSelector") or {}).items():
                problems = qualified_name_errors(str(k)) + label_value_errors(str(v))
                if problems:
                    errors.append(err(base + ("nodeSelector", k), f"invalid nodeSelector {k}={v}: {problems[0]}"))
    return errors


def _admission_quantities(kind, spec: dict):
    """(path under spec, the quantities there) of a LimitRange's items and a ResourceQuota's hard."""
    if kind == "ResourceQuota":
        yield ("hard",), spec.get("hard") or {}
    elif kind == "LimitRange":
        for i, item in enumerate(spec.get("limits") or []):
            for k in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio"):
                yield ("limits", i, k), (item or {}).get(k) or {}


def _is_quantity(q) -> bool:
    """Whether a container's request or limit parses (harness.model.values.resources.parse_quantity); a dump's tens of
    thousands of pods repeat a few hundred quantities."""
    try:
        return _parses(q)
    except TypeError:                     # a mapping or list: no quantity, and no dict key
        return False


@functools.lru_cache(maxsize=4096, typed=True)       # typed: True is no quantity, 1 is
def _parses(q) -> bool:
    try:
        parse_quantity(q)
    except (QuantityError, ValueError, TypeError):
        return False
    return True


def _resolve_manifests(doc: Document, items: list, path: tuple, reads: set[str],
                       inert: list) -> tuple[list[Manifest], list[SourceError]]:
    """The manifests `items` stand for (inline, or every object of a referenced file, whose path is
    added to `reads`), with the problems found in them. An object of a kind that cannot change a scheduling
    outcome (harness/data/envelope.yaml inertKinds: a Service, a ConfigMap) is left out, and a ReplicationController
    taken as the ReplicaSet it runs as; each is added to `inert` as (kind, name, file, line) for its notice."""
    from harness.model.kube import replicationcontroller as rc
    from harness.scenario.envelope import inert_kind
    out: list[Manifest] = []
    errors: list[SourceError] = []

    def left_out(obj, d: Document, sub: tuple) -> bool:
        if not isinstance(obj, dict) or inert_kind(obj.get("kind")) is None:
            return False
        inert.append((obj["kind"], (obj.get("metadata") or {}).get("name"), d.file, d.line(sub)))
        return True

    def run_as(obj, d: Document, sub: tuple):
        """A v1 ReplicationController as the ReplicaSet it runs as (harness/model/kube/replicationcontroller.py),
        said once at its line; anything else as it is."""
        if not isinstance(obj, dict) or obj.get("kind") != rc.KIND or obj.get("apiVersion") != "v1":
            return obj
        inert.append((rc.KIND, (obj.get("metadata") or {}).get("name"), d.file, d.line(sub)))
        return rc.as_replicaset(obj)
    for i, item in enumerate(items or []):
        p = path + (i,)
        if isinstance(item, dict) and set(item) == {"file"}:
            try:
                target = resolve_reference(doc, p + ("file",), item["file"], "manifest")
                reads.add(str(target))
                docs = load_documents(target)
            except SourceError as e:
                errors.append(e)
                continue
            for d in docs:
                objs = d.data.get("items") if isinstance(d.data, dict) and d.data.get("kind") == "List" else [d.data]
                for j, obj in enumerate(objs or []):
                    sub = ("items", j) if objs is not d.data and isinstance(d.data, dict) and "items" in d.data else ()
                    drop_nulls(obj)
                    if left_out(obj, d, sub):
                        continue
                    obj = run_as(obj, d, sub)
                    problems = _check_manifest(obj, d, sub)
                    errors += problems
                    if not problems:
                        out.append(Manifest(obj, str(target), d.line(sub)))
        elif not left_out(item, doc, p):
            item = run_as(item, doc, p)
            problems = _check_manifest(item, doc, p)
            errors += problems
            if not problems:
                out.append(Manifest(item, doc.file, doc.line(p)))
    return out, errors


def check_semantics(doc: Document, data: dict) -> list[SourceError]:
    errors: list[SourceError] = []
    given = data.get("given") or {}
    from harness.model.upstream.releases import ALL_RELEASES, resolve, unknown_text
    for i, p in enumerate(given.get("profiles") or []):
        if p == ALL_RELEASES:
            continue
        try:
            resolve(str(p))
        except ProfileError:
            errors.append(doc.error(("given", "profiles", i), unknown_text(str(p))))
    for section in ("expectByProfile", "xfail"):
        for p in (data.get(section) or {}):
            try:
                resolve(str(p))
            except ProfileError:
                errors.append(doc.error((section, p), f"{unknown_text(str(p))} (in {section})"))
    errors += _pricing_errors(doc, given)
    from harness.model.upstream.releases import expand
    for p in expand([str(x) for x in given.get("profiles") or []]):
        if (err := provision_mode_error(doc, data, p)) is not None:
            errors.append(err)
            break
    return errors


def provision_mode_error(doc: Document, data: dict, profile: str) -> SourceError | None:
    """given.cluster.provisionMode under a release that lacks the mode (harness/model/upstream/provisionmodes.py lacks):
    refused at its line, as the controller of that release refuses the value."""
    from harness.model.upstream.provisionmodes import lacks
    mode = ((data.get("given") or {}).get("cluster") or {}).get("provisionMode")
    if mode is None:
        return None
    try:
        why = lacks(str(mode), profile)
    except ProfileError:
        return None                     # reported as an unknown profile
    return None if why is None else doc.error(("given", "cluster", "provisionMode"), why)


def _pricing_errors(doc: Document, given: dict) -> list[SourceError]:
    """`pricing: compiled-in` is a cloud where the controller never polls the Retail Prices API
    (karpenter-provider-azure v1.14.0 pkg/providers/pricing/pricing.go NewProvider: only when
    auth.IsPublic): nothing can give it prices, so retail prices in the scenario contradict it."""
    if given.get("pricing") != "compiled-in":
        return []
    why = ("given.pricing: compiled-in keeps the release's compiled-in table (a non-public cloud never polls "
           "the Retail Prices API); drop {what} or use pricing: retail")
    errors = []
    if given.get("prices"):
        errors.append(doc.error(("given", "prices"), why.format(what="given.prices")))
    catalog = given.get("catalog")
    if isinstance(catalog, dict) and catalog.get("prices"):
        errors.append(doc.error(("given", "catalog", "prices"), why.format(what="given.catalog.prices")))
    return errors


def _shadowed_expectations(doc: Document, data: dict) -> list[SourceError]:
    """An expectation that every profile's override replaces is never checked (`expectByProfile`
    merges maps and replaces lists and values): refused, naming the overrides that replace it."""
    profiles = list((data.get("given") or {}).get("profiles") or [DEFAULT_PROFILE])
    pairs = [(("expect",), data.get("expect"), data.get("expectByProfile"))]
    pairs += [(("steps", i, "expect"), s.get("expect"), s.get("expectByProfile"))
              for i, s in enumerate(data.get("steps") or []) if isinstance(s, dict)]
    errors: list[SourceError] = []
    for root, base, overrides in pairs:
        if isinstance(base, dict) and isinstance(overrides, dict) and overrides:
            _never_checked(doc, profiles, root, base, overrides, base, (), errors)
    return errors


def _never_checked(doc: Document, profiles: list, root: tuple, base: dict, overrides: dict, node: dict, rel: tuple,
                   errors: list[SourceError]) -> None:
    """_shadowed_expectations' walk over `node`, at `rel` in the block `base` at `root`. (A function of its own:
    a nested one calling itself is a reference cycle, which kept the scenario's data for the cycle collector.)"""
    for key, value in node.items():
        sub = rel + (key,)
        hits = [_replaced_by(base, overrides.get(p), sub) for p in profiles]
        if all(h is not None for h in hits):
            where = ", ".join(f"expectByProfile.{p}." + ".".join(map(str, h)) for p, h in zip(profiles, hits))
            errors.append(doc.error(root + sub, f"{'.'.join(map(str, root + sub))} is never checked: every "
                                                f"profile the scenario runs under replaces it ({where}; "
                                                f"maps merge, lists and values replace)"))
        elif isinstance(value, dict):
            _never_checked(doc, profiles, root, base, overrides, value, sub, errors)


def _replaced_by(base: dict, over, rel: tuple) -> tuple | None:
    """The prefix of `rel` at which `over` replaces `base`'s value, or None if it merges."""
    for n in range(1, len(rel) + 1):
        if not isinstance(over, dict) or rel[n - 1] not in over:
            return None
        over, base = over[rel[n - 1]], base.get(rel[n - 1]) if isinstance(base, dict) else None
        if not (isinstance(over, dict) and isinstance(base, dict)):
            return rel[:n]
    return None


def release_notices(doc: Document, data: dict) -> list:
    """A `given.profiles` version the harness has no profile for: which release answers and what may
    differ (harness.model.upstream.releases.resolve), as a warning at that line."""
    from harness.model.upstream.releases import ALL_RELEASES, resolve
    from harness.scenario.notices import Notice
    out = []
    for i, p in enumerate((data.get("given") or {}).get("profiles") or []):
        if p == ALL_RELEASES:
            continue
        try:
            r = resolve(str(p))
        except ProfileError:
            continue
        if r.notice:
            e = doc.error(("given", "profiles", i), "")
            out.append(Notice(e.file, e.line, f"given.profiles {p}: {r.notice}", kind="version"))
    return out


def knob_notices(doc: Document, data: dict, api_versions=()) -> list:
    """given.knobs: which provider release replays them under each profile, or that none does
    (harness.model.upstream.knobrelease), as a warning at that line: the real engine runs that release's controller."""
    from harness.model.upstream.knobrelease import knob_release
    from harness.model.upstream.releases import expand
    from harness.scenario.notices import Notice
    given = data.get("given") or {}
    if not given.get("knobs"):
        return []
    e = doc.error(("given", "knobs"), "")
    out = []
    for p in expand([str(x) for x in given.get("profiles") or [DEFAULT_PROFILE]]):
        try:
            replay = knob_release(p, given["knobs"], api_versions)
        except ProfileError:
            continue                      # reported as an unknown profile
        out.append(Notice(e.file, e.line, f"[{p}] {replay.notice}", kind="version"))
    return out


def _after(stamp: str, start: float) -> bool:
    from harness.model.kube.kubetime import parse_rfc3339
    try:
        return parse_rfc3339(stamp) > start
    except ValueError:
        return False                  # the schema's pattern names a malformed time


def core_release_notices(doc: Document, data: dict) -> list:
    """An input the core of a `given.profiles` release does not read: `given.loop.minValuesPolicy` other than
    Strict where core predates MIN_VALUES_POLICY (probe core.minValuesPolicy, core v1.6.0+), as a warning at
    that line (the engine then runs Strict, as that core does)."""
    from harness.model.upstream.profile import load_profile
    from harness.model.upstream.releases import expand, resolve
    from harness.scenario.notices import Notice
    policy = ((data.get("given") or {}).get("loop") or {}).get("minValuesPolicy")
    if policy in (None, "Strict"):
        return []
    out = []
    for p in expand([str(x) for x in (data.get("given") or {}).get("profiles") or []]):
        try:
            prof = load_profile(resolve(p).profile)
        except ProfileError:
            continue
        if not prof.min_values_policy:
            e = doc.error(("given", "loop", "minValuesPolicy"), "")
            out.append(Notice(e.file, e.line, f"given.loop.minValuesPolicy {policy}: profile {p} (core "
                              f"{prof.core.get('version', '?')}) has no MIN_VALUES_POLICY (core v1.6.0+): minValues "
                              "is enforced strictly there", kind="version"))
    return out


def drift_release_notices(doc: Document, data: dict) -> list:
    """A seeded `existingNodes[].drifted: NodeClassDrifted` under a release with no AKSNodeClass hash (probe
    provider.nodeClassHash.version: provider v0.5-v0.6 stamp none and have no NodeClassDrift), as a warning at the
    first such entry: the node is not drifted there."""
    from harness.model.upstream.profile import load_profile
    from harness.model.upstream.releases import expand, fact_spans, resolve
    from harness.scenario.notices import Notice
    given = data.get("given") or {}
    hits = [i for i, e in enumerate(given.get("existingNodes") or []) if e.get("drifted") == "NodeClassDrifted"]
    if not hits:
        return []
    since = next((a for value, a, _ in fact_spans("provider.nodeClassHash.version") if value), "")
    out = []
    for p in expand([str(x) for x in given.get("profiles") or []]):
        try:
            prof = load_profile(resolve(p).profile)
        except ProfileError:
            continue
        if prof.nodeclass_hash_version is None:
            e = doc.error(("given", "existingNodes", hits[0], "drifted"), "")
            out.append(Notice(e.file, e.line, f"given.existingNodes drifted NodeClassDrifted ({len(hits)} entr"
                              f"{'y' if len(hits) == 1 else 'ies'}): profile {p} has no AKSNodeClass drift hash "
                              f"(provider {since}+): no NodeClassDrift, the node is not drifted there", kind="version"))
    return out


def _existing_node_errors(doc: Document, data: dict, manifests: list[Manifest]) -> list[SourceError]:
    """given.existingNodes: each pod a valid Pod manifest; a managed entry names a NodePool of the
    manifests and its instance type (harness/loop/seed.py)."""
    from harness.loop.clock import start_of
    from harness.model.values.resources import QuantityError, parse_resource
    errors: list[SourceError] = []
    pools = {m.obj["metadata"]["name"] for m in manifests if m.obj.get("kind") == "NodePool"}
    given = data.get("given") or {}
    start = start_of(given)
    for i, entry in enumerate(given.get("existingNodes") or []):
        path = ("given", "existingNodes", i)
        for key in ("createdAt", "initializedAt", "lastPodEventTime", "deleting"):
            # a dump's history is before its time: the simulated clock starts at given.startTime
            if isinstance(entry.get(key), str) and _after(entry[key], start):
                errors.append(doc.error(path + (key,), f"{entry[key]} is after the start "
                                                       f"({given.get('startTime') or 'the default 2026-01-01T00:00:00Z'}"
                                                       "); set given.startTime to the dump's time"))
        if entry.get("nodePool") is not None:
            if entry["nodePool"] not in pools:
                errors.append(doc.error(path + ("nodePool",), f"no NodePool {entry['nodePool']!r} in the manifests "
                                                              f"(NodePools: {', '.join(sorted(pools)) or 'none'})"))
            if not entry.get("instanceType"):
                errors.append(doc.error(path, "a node of a NodePool needs its instanceType"))
        for res, q in (entry.get("requests") or {}).items():
            try:
                parse_resource(res, q)
            except (QuantityError, ValueError, TypeError, ArithmeticError):
                errors.append(doc.error(path + ("requests", res), f"invalid quantity {q!r} for {res}"))
        for j, pod in enumerate(entry.get("pods") or []):
            errors += _check_manifest({"apiVersion": "v1", "kind": "Pod", **pod}, doc, path + ("pods", j))
    return errors


def drop_nulls(obj):
    """A manifest as the API server decodes it: an explicit `null` (Helm renders `resources: null`,
    `nodeSelector: null`, `annotations: null`) is the field left out - a typed field of a built-in kind
    decodes it to its zero value, and a CRD prunes a null its structural schema does not declare nullable
    (k8s.io/apiextensions-apiserver v0.36.3 pkg/apiserver/schema/defaulting/prunenulls.go
    PruneNonNullableNullsWithoutDefaults). A null list item is left for the checks to refuse."""
    if isinstance(obj, dict):
        for k in [k for k, v in obj.items() if v is None]:
            del obj[k]
        for v in obj.values():
            drop_nulls(v)
    elif isinstance(obj, list):
        for v in obj:
            drop_nulls(v)
    return obj


def _manifests_without_nulls(data: dict) -> None:
    """drop_nulls over every manifest the scenario writes inline: its manifests, its steps' applies, the
    pods of its existing nodes."""
    if not isinstance(data, dict):
        return

    def items(v) -> list:             # the schema refuses a scalar where a list belongs, later
        return v if isinstance(v, list) else []
    lists = [data.get("manifests")]
    lists += [s.get("apply") for s in items(data.get("steps")) if isinstance(s, dict)]
    given = data.get("given")
    if isinstance(given, dict):
        lists += [e.get("pods") for e in items(given.get("existingNodes")) if isinstance(e, dict)]
    for each in lists:
        for item in items(each):
            if isinstance(item, dict):
                drop_nulls(item)


def _scenario_from(doc: Document, reads: set[str]) -> Scenario:
    _manifests_without_nulls(doc.data)
    problems = schema_errors(doc)
    if problems:
        raise problems[0]
    data = doc.data
    problems = check_semantics(doc, data) + [doc.error(path, reason) for path, reason in
                                             scenario_value_errors(data, getattr(doc.lines, "mapping_keys", None))]
    problems += _shadowed_expectations(doc, data)
    inert: list = []
    manifests, merrs = _resolve_manifests(doc, data.get("manifests") or [], ("manifests",), reads, inert)
    problems += merrs
    step_manifests = []
    for si, step in enumerate(data.get("steps") or []):
        ms, serrs = _resolve_manifests(doc, step.get("apply") or [], ("steps", si, "apply"), reads, inert)
        step_manifests.append(ms)
        problems += serrs
    problems += _existing_node_errors(doc, data, manifests)
    if not problems:
        problems += lifecycle_errors(doc, manifests, step_manifests, list(data.get("steps") or []))
    if problems:
        raise problems[0]
    meta = data["metadata"]
    sc = Scenario(
        file=Path(doc.file), doc=doc, name=meta["name"], tags=list(meta.get("labels") or []),
        description=str(data.get("description") or "").strip(), given=dict(data.get("given") or {}),
        manifests=manifests, expect=dict(data.get("expect") or {}),
        expect_by_profile=dict(data.get("expectByProfile") or {}), steps=list(data.get("steps") or []),
        xfail=dict(data.get("xfail") or {}), line=doc.start_line, step_manifests=step_manifests)
    from harness.scenario.envelope import inert_notices, scenario_warnings
    problems, sc.warnings = scenario_warnings(sc)
    sc.warnings = (release_notices(doc, doc.data) + core_release_notices(doc, doc.data)
                   + drift_release_notices(doc, doc.data)
                   + knob_notices(doc, doc.data, sc.api_versions)
                   + inert_notices(inert) + sc.warnings)
    if problems:
        raise problems[0]
    return sc


def load_scenarios(path: str | Path, text: str | None = None) -> list[Scenario]:
    """Every Scenario document in a file. Raises SourceError (`file:line: reason`) on bad input.
    A file loaded cleanly before, unchanged with all it references, comes from the disk cache
    (harness/scenario/loadcache.py)."""
    path = Path(path)
    if text is None:
        return loadcache.cached(path, _load)
    return _load(path, set(), text)


def _size(path: Path, text: str | None) -> int:
    """The bytes a load reads (0 when the file cannot be read: load_documents says why)."""
    if text is not None:
        return len(text)
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _load(path: Path, reads: set[str], text: str | None = None) -> list[Scenario]:
    with no_collections(_size(path, text)):         # the file's data holds no cycle (harness/heap.py)
        docs = load_documents(path, text)
    if not docs:
        raise SourceError(path, 1, "no scenario in file")
    out = []
    seen: dict[str, int] = {}
    for doc in docs:
        if not isinstance(doc.data, dict):
            raise doc.error((), "a scenario must be a mapping (apiVersion, kind: Scenario, metadata, given, manifests, expect)")
        sc = _scenario_from(doc, reads)
        if sc.name in seen:
            raise doc.error(("metadata", "name"), f"duplicate scenario name {sc.name!r} (first at line {seen[sc.name]})")
        seen[sc.name] = doc.line(("metadata", "name"))
        out.append(sc)
    return out


def scenario_from_data(data: dict, path: Path, lines: Mapping[tuple, int] | None = None,
                       start_line: int = 1) -> Scenario:
    """A scenario from data not read from text (what `harness new` is about to write): the same checks; an
    error or notice is at the line `lines` gives its path (the writer's: dumpwriter.dump_with_lines), else
    at `start_line`."""
    return _scenario_from(Document(str(path), data, {} if lines is None else lines, start_line), set())


def load_scenarios_text(text: str, name: str = "<text>", base_dir: Path | None = None) -> list[Scenario]:
    """Scenarios from a string (manifests by relative path resolve against `base_dir`)."""
    return load_scenarios((base_dir or Path.cwd()) / name, text)


def find_scenario_files(paths: list[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(x for x in p.rglob(f"*{SUFFIX}"))
        else:
            out.append(p)
    return out


def load_all(paths: list[str | Path]) -> list[Scenario]:
    """Every scenario of the scenario files in `paths` (files or directories); SourceError on a bad one."""
    return [sc for f in find_scenario_files(paths) for sc in load_scenarios(f)]