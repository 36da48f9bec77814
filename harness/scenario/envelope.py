"""The honest envelope: every scenario warning that does not stop a run.

- Manifest fields the simulation does not model (harness/data/envelope.yaml lists, per accepted kind,
  what the loop reads, what cannot change a provisioning decision, and what is not simulated): each
  unmodeled field present in a manifest is a Notice at its own line, naming the field and what to do.
- The catalog: SKUs synthesized from their names, prices borrowed or estimated
  (harness/scenario/catalogs.py).

`harness validate` and `harness run` print the notices; the pytest plugin raises them as
HarnessWarning.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from harness.model.crd.apiversions import FOREIGN_NODECLASS, foreign_nodeclass
from harness.model.data import DATA_DIR, load_yaml
from harness.model.kube.replicationcontroller import KIND as RC_KIND, RUN_AS
from harness.model.kube.kubefields import KUBERNETES, unknown_fields
from harness.scenario.notices import Notice
from harness.scenario.yamlsource import Document, SourceError, load_documents

# where each workload kind holds its pod template (its fields follow the Pod rules there)
POD_TEMPLATE_PATHS = {"Deployment": ("spec", "template"), "StatefulSet": ("spec", "template"),
                      "DaemonSet": ("spec", "template"), "Job": ("spec", "template"),
                      "CronJob": ("spec", "jobTemplate", "spec", "template"), "ReplicaSet": ("spec", "template")}
# the status of a field the API server drops on create (envelope.yaml `dropped`): DROPPED + its advice key
DROPPED = "dropped:"
_SEGMENT = re.compile(r"\[([^\]]*)\]|([^.\[\]]+)")


def _split(path: str) -> tuple[str, ...]:
    return tuple(a or b for a, b in _SEGMENT.findall(path))


@dataclass(frozen=True)
class Rules:
    """Field status per path for one kind: 'modeled', 'inert', an advice key (unmodeled), or DROPPED and an
    advice key (a field the API server drops)."""

    status: dict[tuple[str, ...], str]
    prefixes: frozenset[tuple[str, ...]]        # every proper prefix of a rule path
    defaults: dict[tuple[str, ...], str] = dataclasses.field(default_factory=dict)   # unmodeled fields' API defaults

    def deeper(self, path: tuple[str, ...]) -> bool:
        return path in self.prefixes


@functools.lru_cache(maxsize=1)
def _data() -> dict:
    return load_yaml((DATA_DIR / "envelope.yaml").read_text())


@functools.lru_cache(maxsize=16)
def rules_for(kind: str) -> Rules:
    data = _data()
    status: dict[tuple[str, ...], str] = {}
    for section in (data["common"], data["kinds"].get(kind) or {}):
        for p in section.get("modeled") or []:
            status[_split(p)] = "modeled"
        for p in section.get("inert") or []:
            status[_split(p)] = "inert"
        for p, advice in (section.get("unmodeled") or {}).items():
            status[_split(p)] = advice
        for p, advice in (section.get("dropped") or {}).items():
            status[_split(p)] = DROPPED + advice
    template = POD_TEMPLATE_PATHS.get(kind)
    if template:
        for path, st in rules_for("Pod").status.items():
            if path and path[0] in ("metadata", "spec"):
                status.setdefault(template + path, st)
    if kind == "CronJob":       # its jobTemplate is a Job's metadata and spec
        for path, st in rules_for("Job").status.items():
            if path and path[0] in ("metadata", "spec"):
                status.setdefault(("spec", "jobTemplate") + path, st)
    # a field holding the value the API server defaults it to asks for nothing the simulation lacks
    defaults = {_split(p): str(v) for p, v in ((data.get("defaults") or {}).get(kind) or {}).items()}
    if template:
        defaults.update({template + path: v for path, v in rules_for("Pod").defaults.items()})
    prefixes = frozenset(p[:i] for p in status for i in range(1, len(p)))
    return Rules(status, prefixes, defaults)


def inert_kind(kind) -> str | None:
    """Why a manifest of `kind` cannot change a scheduling outcome (accepted, not applied), or None when the
    kind is not one of envelope.yaml's `inertKinds`."""
    return (_data().get("inertKinds") or {}).get(kind) if isinstance(kind, str) else None


def inert_notices(skipped: list) -> list[Notice]:
    """One notice per inert kind among the scenario's manifests (`skipped`: (kind, name, file, line)), at its
    first object's line, naming the objects; a ReplicationController's says it runs as a ReplicaSet."""
    from harness.scenario.notices import plural_kind
    by_kind: dict[str, list] = {}
    for entry in skipped:
        by_kind.setdefault(entry[0], []).append(entry)
    out = []
    for kind, entries in by_kind.items():
        names = [str(e[1]) for e in entries]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        what = f"{kind} {shown}" if len(names) == 1 else f"{len(names)} {plural_kind(kind)} ({shown})"
        said = RUN_AS if kind == RC_KIND else f"accepted, not applied: {inert_kind(kind)}"
        out.append(Notice(str(entries[0][2]), entries[0][3], f"{what}: {said}"))
    return out


# what a release's NodePool hash does with a NodePool field (nodepool_hash_reads): HASHED, a change drifts every node
# of the NodePool (NodePoolDrifted); HASH_IGNORED, `hash:"ignore"` (drifts no node through the hash); NOT_IN_TEMPLATE,
# no field of the release's template spec type; NOT_HASHED, outside spec.template
HASHED, HASH_IGNORED, NOT_IN_TEMPLATE, NOT_HASHED = "hashed", "ignored", "not in the template", "not hashed"
HASH_READS = (HASHED, HASH_IGNORED, NOT_IN_TEMPLATE, NOT_HASHED)


def nodepool_hash_reads(path: str, profile) -> str:
    """What the profile's release reads a NodePool field (an envelope.yaml path) for in its drift hash: one of
    HASH_READS, derived from core's source at the release (NodePool.Hash of spec.template, whose metadata is
    hashed; its spec fields per core-behaviour.yaml nodePoolHashedFields and nodePoolHashIgnored)."""
    parts = _split(path)
    if parts[:2] != ("spec", "template"):
        return NOT_HASHED
    if parts[2:3] != ("spec",) or len(parts) < 4:
        return HASHED
    if parts[3] in profile.nodepool_hashed_fields:
        return HASHED
    return HASH_IGNORED if parts[3] in profile.nodepool_hash_ignored else NOT_IN_TEMPLATE


def advice(key: str) -> str:
    return str(_data()["advice"].get(key, key))


@dataclass(frozen=True)
class Finding:
    path: tuple                  # the document path (with list indices) of the field
    field: str                   # the field path as written in envelope.yaml
    advice: str


def unmodeled_fields(obj: dict) -> list[Finding]:
    """Every field of `obj` the simulation does not model, first occurrence per field path."""
    rules = rules_for(str(obj.get("kind")))
    found: dict[str, Finding] = {}

    def walk(node, doc_path: tuple, path: tuple[str, ...], inherited: str | None) -> None:
        st = rules.status.get(path, inherited) if path else None
        if st not in (None, "modeled", "inert"):
            if path in rules.defaults and isinstance(node, (str, int, float, bool)) \
                    and str(node) == rules.defaults[path]:
                return
            found.setdefault(_join(path), Finding(doc_path, _join(path), st))
            return
        deeper = rules.deeper(path) or not path
        if st is None and not deeper:
            found.setdefault(_join(path), Finding(doc_path, _join(path), "unlisted"))
            return
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, doc_path + (i,), path, st)
        elif isinstance(node, dict) and deeper:
            for k, v in node.items():
                walk(v, doc_path + (k,), path + (str(k),), st)

    walk(obj, (), (), None)
    return list(found.values())


def unmodeled_values(obj: dict) -> list[tuple[tuple, str, str, str]]:
    """(document path, field, value, advice key) for each modeled field holding a value the
    simulation does not follow (envelope.yaml `values`, e.g. a Balanced consolidation policy)."""
    out = []
    for field, values in ((_data().get("values") or {}).get(str(obj.get("kind"))) or {}).items():
        found = [((), obj)]
        for part in _split(field):          # list items add no segment: each item is walked (a LimitRange's limits)
            nxt = []
            for at, node in found:
                items = list(enumerate(node)) if isinstance(node, list) else [(None, node)]
                for i, item in items:
                    if isinstance(item, dict) and part in item:
                        nxt.append((at + ((i,) if i is not None else ()) + (part,), item[part]))
            found = nxt
        for at, node in found:
            if isinstance(node, (str, int, float, bool)) and str(node) in values:
                out.append((at, field, str(node), values[str(node)]))
    return out


def _join(path: tuple[str, ...]) -> str:
    return "".join((f"[{p}]" if "." in p else f".{p}") for p in path).lstrip(".")


def _locate(sc, m) -> tuple[Document, tuple] | None:
    """The document and path a manifest came from, for per-field line numbers."""
    if str(m.file) == str(sc.file):
        data = sc.doc.data or {}
        for i, item in enumerate(data.get("manifests") or []):
            if item is m.obj:
                return sc.doc, ("manifests", i)
        for si, step in enumerate(data.get("steps") or []):
            for i, item in enumerate(step.get("apply") or []):
                if item is m.obj:
                    return sc.doc, ("steps", si, "apply", i)
        return None
    try:
        docs = load_documents(Path(m.file))
    except SourceError:
        return None
    for d in docs:
        if isinstance(d.data, dict) and d.data.get("kind") == "List":
            for j, _ in enumerate(d.data.get("items") or []):
                if d.line(("items", j)) == m.line:
                    return d, ("items", j)
        elif d.line(()) == m.line:
            return d, ()
    return None


def manifest_notices(sc) -> list[Notice]:
    out: list[Notice] = []
    manifests = list(sc.manifests) + [m for ms in sc.step_manifests for m in ms]
    for m in manifests:
        unknown = unknown_fields(m.obj)
        findings = unmodeled_fields(m.obj)
        if unknown:          # a field the API server drops is said as such, not as one the harness lacks
            findings = [f for f in findings if not any(f.path[:len(u)] == u for u, _ in unknown)]
        pruned = _pruned_by_profile(m.obj, sc.profiles)
        everywhere = [_split(f) for f, ps in pruned.items() if len(ps) == len(sc.profiles)]
        if everywhere:       # pruned at every profile: said as the API server's, not as a field the harness lacks
            findings = [f for f in findings if not any(_named(f.path)[:len(p)] == p for p in everywhere)]
        untimed = _untimed_job(m.obj)
        foreign = foreign_nodeclass(m.obj) if m.obj.get("kind") == "NodePool" else None
        if not findings and not pruned and not unmodeled_values(m.obj) and not untimed and not unknown and not foreign \
                and not _gated(m.obj, sc.given.get("featureGates") or {}):
            continue
        loc = _locate(sc, m)
        name = (m.obj.get("metadata") or {}).get("name")

        def at(path: tuple) -> tuple[str, int]:
            return (str(loc[0].file), loc[0].line(loc[1] + path)) if loc else (str(m.file), m.line)
        for path, text in unknown:
            out.append(Notice(*at(path), f"{m.obj.get('kind')} {name}: {text} is no field of a {m.obj.get('kind')} "
                                         f"(Kubernetes {KUBERNETES[1]}): the API server drops it (kubectl prints: "
                                         f'Warning: unknown field "{text}")'))
        for f in findings:
            if f.advice.startswith(DROPPED):
                out.append(Notice(*at(f.path), f"{m.obj.get('kind')} {name}: {f.field} is dropped by the API server: "
                                              f"{advice(f.advice[len(DROPPED):])}"))
                continue
            out.append(Notice(*at(f.path), f"{m.obj.get('kind')} {name}: {f.field} is not modeled: "
                                          f"{advice(f.advice)}; the result ignores it"))
        for path, field, value, key in unmodeled_values(m.obj):
            out.append(Notice(*at(path), f"{m.obj.get('kind')} {name}: {field}: {value} is not modeled: "
                                         f"{advice(key)}"))
        if untimed:
            out.append(Notice(*at(()), f"{m.obj.get('kind')} {name}: how long its pods run is in no API object: "
                                       f"they run until the scenario ends; set {untimed} (a duration, e.g. "
                                       "10m) for them to complete"))
        if foreign:
            out.append(Notice(*at(("spec", "template", "spec", "nodeClassRef")),
                              f"NodePool {name}: its nodeClassRef names {foreign}, not karpenter.azure.com/AKSNodeClass: "
                              f"{FOREIGN_NODECLASS}"))
        for path, gate in _gated(m.obj, sc.given.get("featureGates") or {}):
            if path in everywhere:
                continue            # pruned at every profile: the release has no such field to gate
            out.append(Notice(*at(path), f"{m.obj.get('kind')} {name}: {_join(path)} needs core's {gate} feature "
                                         f"gate, off here (given.featureGates): {gate_words(gate)}"))
        for field, profiles in pruned.items():
            whose = "the provider's AKSNodeClass" if m.obj.get("kind") == "AKSNodeClass" else f"core's {m.obj.get('kind')}"
            out.append(Notice(*at(_split(field)), f"{m.obj.get('kind')} {name}: {field} is not in {whose} schema "
                                                 f"(profile {', '.join(profiles)}): the API server prunes it, so "
                                                 f'Karpenter never sees it (kubectl prints: Warning: unknown field "{field}")'))
    return out


def gate_words(gate: str) -> str:
    """What core does with a gated field while its gate is off (envelope.yaml `gates`)."""
    return " ".join(str((_data().get("gates") or {})[gate]["words"]).split())


def _gated(obj: dict, gates: dict) -> list[tuple[tuple, str]]:
    """(path, gate) for each field of `obj` that core reads only with a feature gate that `gates`
    (given.featureGates) leaves off (envelope.yaml `gates`)."""
    out = []
    for gate, rule in (_data().get("gates") or {}).items():
        if gates.get(gate):
            continue
        for field in rule.get(str(obj.get("kind"))) or ():
            node = obj
            for part in _split(field):
                node = node.get(part) if isinstance(node, dict) else None
            if node is not None:
                out.append((_split(field), gate))
    return out


def _untimed_job(obj: dict) -> str | None:
    """Where a Job's (or CronJob's Jobs') run-duration annotation belongs, when it is not there."""
    kind, spec = obj.get("kind"), obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    meta, where = (obj.get("metadata"), "metadata") if kind == "Job" else \
        ((spec.get("jobTemplate") or {}).get("metadata"), "spec.jobTemplate.metadata") if kind == "CronJob" else (None, "")
    if not where:
        return None
    # (imported here, for a Job: the loop's controllers are 0.2 CPU-s of a dump's `harness new`)
    from harness.loop.kube.jobs import RUN_DURATION
    if RUN_DURATION in ((meta or {}).get("annotations") or {}):
        return None
    return f"{where}.annotations[{RUN_DURATION}]"


def _named(doc_path: tuple) -> tuple:
    """A document path without its list indices (a field path as _split gives it)."""
    return tuple(p for p in doc_path if not isinstance(p, int))


def _pruned_by_profile(obj: dict, profiles) -> dict[str, list[str]]:
    """Fields of an AKSNodeClass, NodePool or NodeClaim spec the API server would prune (its structural
    schema at the profile's release, in the object's API version), with the profiles whose schema lacks them
    (harness.model.crd.schema.prune)."""
    kind = obj.get("kind")
    if kind not in ("AKSNodeClass", "NodePool", "NodeClaim") or not isinstance(obj.get("spec"), dict):
        return {}
    from harness.model.crd import apiversions
    from harness.model.crd.schema import prune
    from harness.model.upstream.profile import ProfileError, load_profile
    out: dict[str, list[str]] = {}
    for p in profiles:
        try:
            profile = load_profile(p)
        except ProfileError:       # an unknown profile is reported by the loader itself
            continue
        if kind == "AKSNodeClass":
            schema = profile.aks_nodeclass_schema
        elif apiversions.served_rejection(obj, profile) is None:
            schema = apiversions.admission_profile(obj, profile).crd_spec_schema(kind)
        else:
            continue               # a version the release does not serve: refused, not pruned (admitcheck.py)
        if schema is not None:
            for field in prune(copy.deepcopy(obj["spec"]), schema, "spec"):
                out.setdefault(field, []).append(p)
    return out


def scenario_warnings(sc) -> tuple[list[SourceError], list[Notice]]:
    """(errors, notices) for a loaded scenario: its catalog, then its manifests' envelope."""
    from harness.scenario.catalogs import check, price_notices
    errors, notices = check(sc)
    if errors:
        return errors, []
    from harness.scenario.existingnotices import existing_notices
    return [], notices + price_notices(sc) + manifest_notices(sc) + existing_notices(sc)
