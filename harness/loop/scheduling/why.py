"""The `why` view: for a pod Karpenter could not place, which requirement or resource eliminated
how many instance types in each NodePool, and the nearest candidates.

Karpenter core reports only the outcome of filterInstanceTypesByRequirements ("no instance type
met all requirements, requirements=..., resources=...": core `filterInstanceTypesByRequirements`
and `InstanceTypeFilterError`, sigs.k8s.io/karpenter v1.14.0
pkg/controllers/provisioning/scheduling/nodeclaim.go). That text stays the
pod's reason; this view re-runs the same
three tests per instance type (requirements intersect, resources fit with daemon overhead, a
compatible available offering) and counts what failed, per NodePool. It changes nothing in the run.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from difflib import SequenceMatcher

from harness.loop.scheduling.limits import weight_order_key
from harness.loop.scheduling.pods import PodView, untolerated
from harness.loop.scheduling.scheduler import Template, offering_compatible
from harness.loop.scheduling.topology import HOSTNAME
from harness.model.labels.requirements import NEGATIVE_OPERATORS, Requirements
from harness.model.values.resources import add, format_resource_list

NEAREST = 3            # candidates shown per NodePool
VALUES_SHOWN = 5       # distinct values shown per eliminating requirement


@dataclass
class Elimination:
    """One reason instance types were filtered out, and how many it filtered."""

    what: str                     # `karpenter.azure.com/sku-family In [NC]`, `resources: cpu`, `offering`
    source: str                   # "NodePool <name>", "pod", "pod + daemonsets", "offerings"
    count: int                    # instance types this reason eliminates (alone or with others)
    only: int                     # instance types eliminated by this reason alone
    have: dict[str, int] = field(default_factory=dict)   # what those instance types have instead


@dataclass
class Candidate:
    """An instance type that failed on the fewest reasons."""

    name: str
    reasons: list[str]


@dataclass
class NodePoolWhy:
    nodepool: str
    instance_types: int
    fitting: int
    blocked: str | None = None    # the pod cannot use this NodePool at all (taint, requirement)
    eliminations: list[Elimination] = field(default_factory=list)
    nearest: list[Candidate] = field(default_factory=list)

    def render(self, indent: str = "") -> list[str]:
        """The NodePool's part of the why view: how many instance types fit, what eliminated the others, the
        nearest candidates (the run report shows these lines per NodePool)."""
        head = f"{indent}NodePool {self.nodepool}: "
        if self.blocked:
            return [head + self.blocked]
        lines = [head + f"{self.fitting} of {self.instance_types} instance types fit"]
        for e in self.eliminations:
            have = ""
            if e.have:
                shown = list(e.have.items())[:VALUES_SHOWN]
                more = len(e.have) - len(shown)
                have = "; they have " + ", ".join(f"{v} ({n})" for v, n in shown) + (f", {more} more" if more else "")
            lines.append(f"{indent}  {e.what} ({e.source}) eliminates {e.count}"
                         + (f", {e.only} by itself" if e.only != e.count else "") + have)
        if self.nearest:
            lines.append(f"{indent}  nearest: " + "; ".join(f"{c.name} ({', '.join(c.reasons)})" for c in self.nearest))
        return lines


@dataclass
class PodWhy:
    pod: str
    reason: str | None                  # Karpenter's error (its FailedScheduling text), None when it has none
    nodepools: list[NodePoolWhy] = field(default_factory=list)
    scheduler: str | None = None        # kube-scheduler's FailedScheduling message, labelled as its own

    def to_json(self) -> dict:
        return asdict(self)

    def render(self, indent: str = "  ") -> list[str]:
        said = [f"Karpenter: {self.reason or 'no error recorded'}"]
        if self.scheduler:
            said.append(f"kube-scheduler: {self.scheduler}")
        lines = [f"{indent}why Pod {self.pod} has no node ({'; '.join(said)})"]
        if not self.nodepools:
            lines.append(f"{indent}  no Ready NodePool to take it")
        for np in self.nodepools:
            lines += np.render(indent + "  ")
        return lines


def _values(req) -> str:
    """A requirement's values as a short text (`N`, `1 2`, `DoesNotExist`)."""
    if req.operator in ("Exists", "DoesNotExist"):
        return req.operator
    vals = sorted(req.values)
    return " ".join(vals) if vals else req.operator


def _requirement_source(key: str, template: Template, pod_reqs: Requirements) -> str:
    if key in template.requirements and key in pod_reqs:
        return f"NodePool {template.name} + pod"
    return f"NodePool {template.name}" if key in template.requirements else "pod"


def explain_template(pod: PodView, template: Template, well_known: frozenset[str], sem) -> NodePoolWhy:
    """Filter the template's instance types for `pod` the way a new NodeClaim would (sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go filterInstanceTypesByRequirements;
    sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go CanAdd), and count what
    eliminated each one."""
    total = len(template.instance_types)
    taints = untolerated(pod.tolerations, template.taints)
    if taints:
        return NodePoolWhy(template.name, total, 0, "the pod does not tolerate taint " + ", ".join(map(str, taints)))
    pod_reqs = pod.requirements(sem)
    err = template.requirements.compatible(pod_reqs, well_known)
    if err is not None:
        return NodePoolWhy(template.name, total, 0, f"incompatible requirements, {err}")
    merged = template.requirements.copy().add(*pod_reqs.values())
    if HOSTNAME in merged:
        merged = merged.without(HOSTNAME)
    reasons_of: dict[str, list[str]] = {}
    counts: Counter = Counter()
    have: dict[str, Counter] = {}
    sources: dict[str, str] = {}
    rooms: dict[str, int] = {}       # a shown allocatable amount -> its value (largest first)
    needs: dict[str, int] = {}       # a resources reason -> the amount needed
    fitting = 0
    for it in template.instance_types:
        reasons: list[str] = []
        for key, want in merged.items():
            if key not in it.requirements:
                continue
            got = it.requirements[key]
            if got.has_intersection(want) or (got.operator in NEGATIVE_OPERATORS and want.operator in NEGATIVE_OPERATORS):
                continue
            label = str(want)
            reasons.append(label)
            have.setdefault(label, Counter())[_values(got)] += 1
            sources[label] = _requirement_source(key, template, pod_reqs)
        overhead = template.daemon_overhead(it, well_known, sem)
        alloc = it.allocatable()
        need = add(pod.requests, overhead)
        for res, amount in sorted(need.items()):
            room = alloc.get(res, 0)
            if amount > 0 and amount > room:
                label = f"resources: {res} {format_resource_list({res: amount})[res]}"
                reasons.append(label)
                shown = format_resource_list({res: room}).get(res, "0")
                have.setdefault(label, Counter())[shown] += 1
                rooms[shown] = room
                needs[label] = amount
                sources[label] = "pod + daemonsets" if overhead.get(res) else "pod"
        if not any(offering_compatible(o, merged, well_known) for o in it.offerings):
            label = "no available offering compatible with the requirements"
            reasons.append(label)
            sources[label] = "offerings"
        if reasons:
            reasons_of[it.name] = reasons
            counts.update(reasons)
        else:
            fitting += 1
    alone = Counter(r[0] for r in reasons_of.values() if len(r) == 1)
    def have_of(what: str) -> dict[str, int]:
        seen = have.get(what, Counter())
        if what.startswith("resources:"):
            return dict(sorted(seen.items(), key=lambda kv: -rooms.get(kv[0], 0)))
        return dict(seen.most_common())
    elims = [Elimination(what, sources[what], n, alone.get(what, 0), have_of(what))
             for what, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    by_name = {it.name: it for it in template.instance_types}
    # nearest: fewest failed tests, then the closest values (`N` is nearer to `NC` than `D` is)
    nearest = sorted(reasons_of.items(), key=lambda kv: (len(kv[1]), -_closeness(kv[1], by_name[kv[0]], merged, needs),
                                                         kv[0]))[:NEAREST]
    cands = [Candidate(name, [_candidate_reason(r, by_name[name]) for r in reasons]) for name, reasons in nearest]
    return NodePoolWhy(template.name, total, fitting, None, elims, cands)


def _closeness(reasons: list[str], it, merged: Requirements, needs: dict[str, int]) -> float:
    """How near an eliminated instance type's values are to the wanted ones (0..1, text similarity)."""
    scores = []
    for r in reasons:
        if r.startswith("resources:"):
            res, need = r.split()[1], needs.get(r, 0)
            scores.append(min(1.0, it.allocatable().get(res, 0) / need) if need else 0.0)
            continue
        key = r.split(" ", 1)[0]
        if key in it.requirements and key in merged:
            have, want = sorted(it.requirements[key].values), sorted(merged[key].values)
            scores.append(max((SequenceMatcher(None, h, w).ratio() for h in have for w in want), default=0.0))
    return sum(scores) / len(scores) if scores else 0.0


def _candidate_reason(reason: str, it) -> str:
    """`sku-family is N, not In [NC]` for a requirement; the reason itself otherwise."""
    key = reason.split(" ", 1)[0]
    if key in it.requirements and not reason.startswith(("resources:", "no available")):
        return f"{key} is {_values(it.requirements[key])}, not {reason.split(' ', 1)[1]}"
    if reason.startswith("resources:"):
        res = reason.split()[1]
        room = format_resource_list({res: it.allocatable().get(res, 0)}).get(res, "0")
        return f"{reason} needed, {room} allocatable"
    return reason


def explain_pod(pod: PodView, reason: str | None, templates: list[Template], well_known: frozenset[str],
                sem, scheduler: str | None = None) -> PodWhy:
    """The why view of one pod against every NodePool template (weight order, as core tries them).
    `reason` is Karpenter's error, `scheduler` kube-scheduler's message: each is shown as its own."""
    ordered = sorted(templates, key=lambda t: weight_order_key(t.nodepool))     # equal weights: name descending
    return PodWhy(f"{pod.namespace}/{pod.name}", reason,
                  [explain_template(pod, t, well_known, sem) for t in ordered], scheduler)


def current_templates(sim) -> list[Template]:
    """The NodeClaimTemplates a provisioning pass would build now (the loop's own step,
    harness/loop/provisioning/provisioner.py Provisioner.templates, standing for sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/provisioning/provisioner.go NewScheduler; sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/scheduler.go NewScheduler), read without
    recording anything in the run's result."""
    return sim.templates(record=False)


EVERY_PENDING = "*"      # in explain_pending's `pods`: every pending pod Karpenter reported an error for


def explain_pending(sim, pods: list[str] | None = None) -> dict[str, PodWhy]:
    """The why view of every pod Karpenter reported an error for and that is still pending (or of
    the pods named in `pods`: `name`, `namespace/name` or an owning Deployment's name; EVERY_PENDING asks
    for the view of a passing run, which has none unless asked)."""
    wanted = set(pods or []) - {EVERY_PENDING}
    chosen = []
    for key, view in sim.pod_views.items():
        pr = sim.result.pods.get(key)
        if pr is None or view.owner_kind == "DaemonSet" or pr.state != "pending":
            continue
        if wanted and not wanted & {key, pr.name, pr.owner_name}:
            continue
        if not wanted and not pr.karpenter_error:
            continue
        chosen.append((key, view, pr))
    if not chosen:
        return {}
    templates = current_templates(sim)
    well_known = sim.profile.well_known_labels
    out: dict[str, PodWhy] = {}
    seen: dict[tuple, PodWhy] = {}
    for key, view, pr in chosen:
        # replicas of one Deployment share requirements and requests: explain each shape once
        shape = (view.requirements(sim.sem).signature(), tuple(sorted(view.requests.items())),
                 repr(view.spec.get("tolerations")))
        hit = seen.get(shape)
        if hit is None:
            hit = seen[shape] = explain_pod(view, pr.karpenter_error, templates, well_known, sim.sem,
                                            scheduler=pr.scheduler_error)
            out[key] = hit
    return out
