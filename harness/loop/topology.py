"""Topology spread constraints in Karpenter's scheduling simulation.

Karpenter core's Topology / TopologyGroup (pkg/controllers/provisioning/scheduling/topology.go,
topologygroup.go): a group per (key, namespaces, selector, maxSkew) counts matching pods per domain
over a universe of domains built from every NodePool x instance type (plus existing nodes), and
`nextDomainTopologySpread` narrows a NodeClaim to the least-loaded domain within maxSkew. The
empty string doubles as "no domain chosen", so a universe containing "" (regional offerings
before #1615) can make a spread unsatisfiable (reported-bugs.md R01).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.model.gostrconv import parse_int64
from harness.model.requirements import DOES_NOT_EXIST, EXISTS, IN, Requirement, Requirements

HOSTNAME = "kubernetes.io/hostname"
MAX_INT32 = 2**31 - 1
LABEL_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})


def match_expression(labels: dict[str, str], e: dict) -> bool:
    """NodeSelectorRequirement matching on raw labels (k8s.io/component-helpers v0.36.3
    scheduling/corev1/nodeaffinity nodeSelectorRequirementsAsSelector; k8s.io/apimachinery v0.36.3
    pkg/labels/selector.go NewRequirement, Requirement.Matches); a LabelSelectorRequirement is the same
    with only In/NotIn/Exists/DoesNotExist. Gt/Lt need exactly one value and both sides int64
    (strconv.ParseInt); otherwise no match, as upstream's parse error fails the whole term."""
    key, op, values = e.get("key"), e.get("operator"), [str(v) for v in e.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if not present or len(values) != 1:
            return False
        have, want = parse_int64(labels[key]), parse_int64(values[0])
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want
    return False   # Gte/Lte are Karpenter-only operators; kube-scheduler rejects them


def selector_matches(selector: dict | None, labels: dict[str, str]) -> bool:
    """metav1.LabelSelector semantics (a nil selector matches nothing, an empty one everything).
    Operators a LabelSelector does not have are not checked."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != str(v):
            return False
    return all(match_expression(labels, e) for e in selector.get("matchExpressions") or []
               if e["operator"] in LABEL_SELECTOR_OPERATORS)


def _pretty_counts(domains: dict[str, int], limit: int = 25) -> str:
    """operatorpkg pretty.Map: sorted `k: v` pairs joined by ", ", truncated."""
    items = [f"{k}: {v}" for k, v in sorted(domains.items())]
    if len(items) > limit:
        items = items[:limit] + [f"and {len(domains) - limit} other(s)"]
    return ", ".join(items)


@dataclass
class TopologyGroup:
    type: str                     # "topology spread"
    key: str
    namespaces: frozenset[str]
    selector: dict | None
    max_skew: int
    min_domains: int | None
    domains: dict[str, int] = field(default_factory=dict)

    def selects(self, namespace: str, labels: dict[str, str]) -> bool:
        return namespace in self.namespaces and selector_matches(self.selector, labels)

    def min_count(self, pod_domains: Requirement) -> int:
        """domainMinCount: hostname spreads always have a zero minimum (a new node is a new domain)."""
        if self.key == HOSTNAME:
            return 0
        low, supported = MAX_INT32, 0
        for domain, count in self.domains.items():
            if pod_domains.has(domain):
                supported += 1
                low = min(low, count)
        if self.min_domains is not None and supported < self.min_domains:
            return 0
        return low

    def next_domain(self, self_selecting: bool, pod_domains: Requirement, node_domains: Requirement) -> Requirement:
        """nextDomainTopologySpread: the least-loaded node domain within maxSkew, else DoesNotExist."""
        if self.key == HOSTNAME and node_domains.operator == IN and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            count = self.domains.get(host, 0) + (1 if self_selecting else 0)
            if count <= self.max_skew:
                return Requirement(self.key, False, frozenset({host}))
            return Requirement(self.key, False, frozenset())
        low = self.min_count(pod_domains)
        best, best_count = "", MAX_INT32
        candidates = sorted(node_domains.values) if node_domains.operator == IN else sorted(self.domains)
        for domain in candidates:
            if domain not in self.domains or not node_domains.has(domain):
                continue
            count = self.domains[domain] + (1 if self_selecting else 0)
            if count - low <= self.max_skew and count < best_count:
                best, best_count = domain, count
        if best == "":
            return Requirement(self.key, False, frozenset())   # "" is also "nothing chosen"
        return Requirement(self.key, False, frozenset({best}))

    def next_domain_affinity(self, self_selecting: bool, node_domains: Requirement) -> Requirement:
        """nextDomainAffinity: domains already holding a matching pod; a self-selecting first pod
        bootstraps on any node domain."""
        options = {d for d, n in self.domains.items() if n > 0 and node_domains.has(d)}
        if not options and self_selecting:
            first = next((d for d in sorted(self.domains) if node_domains.has(d)), None)
            if first is None and node_domains.operator == IN:
                first = sorted(node_domains.values)[0]
            if first is not None:
                options = {first}
        return Requirement(self.key, False, frozenset(options))

    def next_domain_anti_affinity(self, node_domains: Requirement) -> Requirement:
        """nextDomainAntiAffinity: node domains holding no matching pod (a new hostname is empty)."""
        if node_domains.operator == IN:
            return Requirement(self.key, False, frozenset(d for d in node_domains.values if self.domains.get(d, 0) == 0))
        return Requirement(self.key, False, frozenset(d for d, n in self.domains.items() if n == 0 and node_domains.has(d)))

    def error(self, pod_domains: Requirement, node_domains: Requirement, explain: bool = True) -> "TopologyError":
        """The rejection; without `explain` (a claim scan that discards its errors) the per-domain
        count table is not copied, and the error must not be rendered."""
        return TopologyError(self, dict(self.domains) if explain else None, pod_domains, node_domains)

    def hostname_threshold(self, self_selecting: bool) -> int | None:
        """For a hostname group: the count at a NodeClaim's own hostname from which every later pod
        this group applies to is rejected there (counts only grow during a pass), else None.
        nextDomainTopologySpread rejects when count (+1 if self-selecting) > maxSkew,
        nextDomainAntiAffinity as soon as the count is non-zero; affinity can become satisfiable."""
        if self.key != HOSTNAME:
            return None
        if self.type == "topology spread":
            return self.max_skew - (1 if self_selecting else 0) + 1
        if self.type == "pod anti-affinity":
            return 1
        return None


class TopologyError:
    """A topologyError, rendered only when needed (most failures are just "try the next claim")."""

    __slots__ = ("group", "counts", "pod_domains", "node_domains")

    def __init__(self, group: "TopologyGroup", counts: dict[str, int] | None, pod_domains: Requirement,
                 node_domains: Requirement):
        self.group, self.counts, self.pod_domains, self.node_domains = group, counts, pod_domains, node_domains

    def __str__(self) -> str:
        assert self.counts is not None, "a topology error built without explain is never rendered"
        return (f"unsatisfiable topology constraint for {self.group.type}, key={self.group.key} "
                f"(counts = {_pretty_counts(self.counts)}, podDomains = {self.pod_domains}, "
                f"nodeDomains = {self.node_domains}")


def affinity_terms(pod, kind: str, preferred: bool = False) -> list[dict]:
    """Required podAffinity / podAntiAffinity terms; with `preferred`, also the preferred terms still
    in force (heaviest first, the relaxed ones dropped: PreferencePolicy Respect, sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/provisioning/scheduling/preferences.go; karpenter-core.md §3.4)."""
    aff = ((pod.spec.get("affinity") or {}).get(kind)) or {}
    terms = list(aff.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
    if preferred and hasattr(pod, "preferred_pod_terms"):
        dropped = pod.dropped_pod_affinity if kind == "podAffinity" else pod.dropped_pod_anti_affinity
        terms += [p.get("podAffinityTerm") or {} for p in pod.preferred_pod_terms(kind)[dropped:]]
    return terms


def spread_constraints(pod) -> list[dict]:
    """The pod's topology spread constraints still in force (ScheduleAnyway ones can be relaxed)."""
    tscs = list(pod.spec.get("topologySpreadConstraints") or [])
    anyway = [t for t in tscs if t.get("whenUnsatisfiable") == "ScheduleAnyway"]
    hard = [t for t in tscs if t.get("whenUnsatisfiable") != "ScheduleAnyway"]
    return hard + anyway[pod.dropped_schedule_anyway:]


class Topology:
    """The topology groups of one provisioning pass."""

    def __init__(self, universe: dict[str, set[str]], node_labels: dict[str, dict[str, str]],
                 bound: list[tuple[str, dict, str]], bound_pods: list | None = None):
        """universe: key -> domains from NodePools x instance types; node_labels: existing node ->
        labels; bound: (namespace, pod labels, node name) of pods already running (counted);
        bound_pods: (PodView, node name) of running pods, for their anti-affinity (inverse)."""
        self.universe = universe
        self.node_labels = node_labels
        self.bound = bound
        self.groups: dict[str, TopologyGroup] = {}
        self.inverse: dict[str, TopologyGroup] = {}
        self.inverse_owners: dict[str, set[str]] = {}
        self._registrations = 0      # grows whenever a pod becomes an inverse-group owner (cache key)
        self._selects_cache: dict[tuple[int, tuple], bool] = {}
        self._label_idents: dict[str, tuple] = {}
        self._inverse_cache: dict[str, tuple[tuple[int, int], list[TopologyGroup]]] = {}
        for pv, node in bound_pods or []:
            for term in affinity_terms(pv, "podAntiAffinity"):
                g = self._inverse_group(pv, term)
                domain = self.node_labels.get(node, {}).get(g.key)
                if domain is not None:
                    g.domains[domain] = g.domains.get(domain, 0) + 1

    def _inverse_group(self, pod, term: dict) -> TopologyGroup:
        """Anti-affinity works both ways: the domains of pods *with* the term block the pods it selects."""
        namespaces = frozenset(term.get("namespaces") or [pod.namespace])
        ident = json.dumps(["inverse", term["topologyKey"], sorted(namespaces), term.get("labelSelector")], sort_keys=True)
        g = self.inverse.get(ident)
        if g is None:
            g = TopologyGroup("pod anti-affinity", term["topologyKey"], namespaces, term.get("labelSelector"),
                              MAX_INT32, None)
            self.inverse[ident] = g
        owners = self.inverse_owners.setdefault(ident, set())
        if pod.uid not in owners:
            owners.add(pod.uid)
            self._registrations += 1
        return g

    def _group(self, pod, tsc: dict, kind: str = "topology spread") -> TopologyGroup:
        key = tsc["topologyKey"]
        sel = tsc.get("labelSelector")
        namespaces = frozenset(tsc.get("namespaces") or [pod.namespace])
        ident = json.dumps([kind, key, sorted(namespaces), sel, tsc.get("maxSkew", 1), tsc.get("minDomains")],
                           sort_keys=True)
        g = self.groups.get(ident)
        if g is None:
            g = TopologyGroup(kind, key, namespaces, sel, int(tsc.get("maxSkew", 1)), tsc.get("minDomains"))
            for domain in self.universe.get(key, ()):
                g.domains[domain] = 0
            for labels in self.node_labels.values():
                if key in labels:
                    g.domains.setdefault(labels[key], 0)
            for ns, labels, node in self.bound:
                domain = self.node_labels.get(node, {}).get(key)
                if domain is not None and g.selects(ns, labels):
                    g.domains[domain] = g.domains.get(domain, 0) + 1
            self.groups[ident] = g
        return g

    def _constraints(self, pod) -> list[TopologyGroup]:
        """The pod's own groups, cached on the pod per relaxation state."""
        key = (id(self), pod.dropped_schedule_anyway, pod.dropped_pod_affinity, pod.dropped_pod_anti_affinity)
        groups = pod.topology_cache.get(key)
        if groups is None:
            groups = [self._group(pod, tsc, "topology spread") for tsc in spread_constraints(pod)]
            groups += [self._group(pod, t, "pod affinity") for t in affinity_terms(pod, "podAffinity", True)]
            for term in affinity_terms(pod, "podAntiAffinity"):
                self._inverse_group(pod, term)       # only required anti-affinity works both ways
            for term in affinity_terms(pod, "podAntiAffinity", True):
                groups.append(self._group(pod, term, "pod anti-affinity"))
            pod.topology_cache[key] = groups
        return groups

    def _selects(self, g: TopologyGroup, pod) -> bool:
        """g.selects(pod), cached per pass by (namespace, labels): a pod's do not change in a pass,
        and many pods share them."""
        ident = self._label_idents.get(pod.uid)
        if ident is None:
            ident = self._label_idents[pod.uid] = (pod.namespace, frozenset(pod.labels.items()))
        key = (id(g), ident)
        hit = self._selects_cache.get(key)
        if hit is None:
            hit = self._selects_cache[key] = g.selects(pod.namespace, pod.labels)
        return hit

    def _applicable_inverse(self, pod) -> list[TopologyGroup]:
        """The inverse anti-affinity groups that select the pod and that it does not own. Cached on
        the pass until a group is added or any pod becomes an owner."""
        stamp = (len(self.inverse), self._registrations)
        hit = self._inverse_cache.get(pod.uid)
        if hit is None or hit[0] != stamp:
            groups = [g for ident, g in self.inverse.items()
                      if pod.uid not in self.inverse_owners.get(ident, ()) and self._selects(g, pod)]
            hit = self._inverse_cache[pod.uid] = (stamp, groups)
        return hit[1]

    def pod_groups(self, pod) -> list[TopologyGroup]:
        """Every group add_requirements checks for the pod, in its order (creates the pod's groups
        and inverse registrations, as its first add_requirements call would)."""
        groups = self._constraints(pod)
        inverse = self._applicable_inverse(pod)
        return groups + inverse if inverse else groups

    def hostname_gates(self, pod) -> list[tuple[TopologyGroup, int]]:
        """(group, threshold) for each of the pod's hostname groups whose rejection at a NodeClaim's
        own hostname is permanent once that hostname's count reaches the threshold."""
        out = []
        for g in self.pod_groups(pod):
            t = g.hostname_threshold(self._selects(g, pod))
            if t is not None:
                out.append((g, t))
        return out

    def add_requirements(self, pod, pod_reqs: Requirements, node_reqs: Requirements,
                         explain: bool = True) -> "Requirements | TopologyError":
        """Topology.AddRequirements: tighten node_reqs per constraint, or the topology error (its
        count table copied only with `explain`)."""
        reqs = node_reqs
        copied = False
        for g in self.pod_groups(pod):
            key = g.key
            pod_domains = pod_reqs[key] if key in pod_reqs else Requirement(key, True, frozenset())
            node_domains = reqs[key] if key in reqs else Requirement(key, True, frozenset())
            selfsel = self._selects(g, pod)
            if g.type == "topology spread":
                chosen = g.next_domain(selfsel, pod_domains, node_domains)
            elif g.type == "pod affinity":
                chosen = g.next_domain_affinity(selfsel, node_domains)
            else:
                chosen = g.next_domain_anti_affinity(node_domains)
            if len(chosen) == 0:
                return g.error(pod_domains, node_domains, explain)
            # Requirements.Add intersects: skip the copy when that leaves the requirement as it is
            if key in reqs and reqs[key].intersection(chosen) == reqs[key]:
                continue
            if not copied:
                reqs = reqs.copy()
                copied = True
            reqs.add(chosen)
        return reqs

    def record(self, pod, reqs: Requirements) -> None:
        """Topology.Record: count the pod where it committed (anti-affinity blocks every possible
        domain, spread and affinity only a single known one)."""
        for g in self.groups.values():
            if g.key in reqs and self._selects(g, pod):
                r = reqs[g.key]
                values = set(r.values) if g.type == "pod anti-affinity" and not r.complement else (
                    {r.single_value()} if r.single_value() is not None else set())
                for value in values:
                    g.domains[value] = g.domains.get(value, 0) + 1
        for ident, g in self.inverse.items():
            if pod.uid in self.inverse_owners.get(ident, ()) and g.key in reqs and not reqs[g.key].complement:
                for value in reqs[g.key].values:
                    g.domains[value] = g.domains.get(value, 0) + 1


def universe_for(keys: set[str], templates) -> dict[str, set[str]]:
    """buildDomainGroups: every value of each key over NodePool requirements x instance types."""
    out: dict[str, set[str]] = {k: set() for k in keys}
    for t in templates:
        for key in keys:
            base = t.requirements[key] if key in t.requirements else None
            if base is not None and base.operator == IN:
                out[key] |= set(base.values)
            for it in t.instance_types:
                if key not in it.requirements:
                    continue
                r = it.requirements[key] if base is None else it.requirements[key].intersection(base)
                if not r.complement:
                    out[key] |= set(r.values)
    return out


def topology_keys(pod) -> set[str]:
    keys = {t["topologyKey"] for t in pod.spec.get("topologySpreadConstraints") or []}
    for kind in ("podAffinity", "podAntiAffinity"):
        keys |= {t["topologyKey"] for t in affinity_terms(pod, kind, True) if t.get("topologyKey")}
    return keys


__all__ = ["Topology", "TopologyGroup", "TopologyError", "universe_for", "spread_constraints", "affinity_terms",
           "selector_matches", "match_expression", "topology_keys", "HOSTNAME", "EXISTS", "DOES_NOT_EXIST"]
