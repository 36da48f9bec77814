"""Topology spread and pod (anti-)affinity in Karpenter's scheduling simulation.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/: topology.go
(Topology: NewTopology, buildDomainGroups, countDomains, Update, Record, AddRequirements,
buildNamespaceList), topologygroup.go (TopologyGroup: nextDomainTopologySpread, domainMinCount,
nextDomainAffinity, anyCompatiblePodDomain, nextDomainAntiAffinity, Hash), topologydomaingroup.go
(TopologyDomainGroup: domains with the taints of the NodePools offering them) and
topologynodefilter.go (TopologyNodeFilter: nodeAffinityPolicy / nodeTaintsPolicy).

A group per (type, key, namespaces, selector, maxSkew, node filter) counts matching pods per domain
over a universe of domains built from every NodePool x instance type (plus registered nodes), and
narrows a NodeClaim's requirements to the domains the constraint allows. The empty string doubles
as "no domain chosen", so a universe containing "" (regional offerings before #1615) can make a
spread unsatisfiable (Azure/karpenter-provider-azure#1384).

Where core breaks a tie by Go map iteration order (a random pick), `TiePicker` picks with the run's
seed (see its docstring).
"""
from __future__ import annotations

import hashlib
import json
from typing import Iterable, Mapping, Sequence

from harness.loop.scheduling.pods import Taint, tolerates
from harness.model.values.gostrconv import parse_int64
from harness.model.labels.requirements import DOES_NOT_EXIST, EXISTS, IN, Requirement, Requirements

HOSTNAME = "kubernetes.io/hostname"
MAX_INT32 = 2**31 - 1
LABEL_SELECTOR_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
HONOR, IGNORE = "Honor", "Ignore"
_OWNER = "topology"          # PodView.topology_cache: the Topology its entries belong to
_LABELS = "labels"           # ... the pod's (namespace, labels) as a hashable identity
_KEY = "key"                 # ... namespace/name (tie picks)
_ALL = "all"                 # ... its _PodGroups
# k8s.io/api v0.36.3 core/v1 well_known_labels.go LabelMetadataName: the API server sets it on every
# Namespace (k8s.io/kubernetes v1.36.3 pkg/registry/core/namespace/strategy.go PrepareForCreate)
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

SPREAD, AFFINITY, ANTI_AFFINITY = "topology spread", "pod affinity", "pod anti-affinity"


# -- label selectors ---------------------------------------------------------------------------------
def match_expression(labels: Mapping[str, str], e: dict) -> bool:
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


def selector_matches(selector: dict | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics (k8s.io/apimachinery v0.36.3 pkg/apis/meta/v1/helpers.go
    LabelSelectorAsSelector: a nil selector matches nothing, an empty one everything).
    Operators a LabelSelector does not have are not checked."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != str(v):
            return False
    return all(match_expression(labels, e) for e in selector.get("matchExpressions") or []
               if e["operator"] in LABEL_SELECTOR_OPERATORS)


def selector_is_empty(selector: dict | None) -> bool:
    """labels.Selector.Empty() of LabelSelectorAsSelector: an empty (non-nil) selector has no
    requirements; a nil one is labels.Nothing(), which is not Empty."""
    return selector is not None and not selector.get("matchLabels") and not selector.get("matchExpressions")


def merge_label_keys(selector: dict | None, pod_labels: Mapping[str, str], match_keys: Iterable[str] = (),
                     mismatch_keys: Iterable[str] = ()) -> dict | None:
    """matchLabelKeys / mismatchLabelKeys merged into the selector: `key In (value)` / `key NotIn
    (value)` for each key the pod carries (k8s.io/kubernetes v1.36.3 pkg/registry/core/pod/strategy.go
    applyLabelKeysToLabelSelector, applyMatchLabelKeysAndMismatchLabelKeys, applyMatchLabelKeys: the API
    server does it at creation; core v1.14.0 topology.go newForTopologies and kube-scheduler's
    podtopologyspread/common.go filterTopologySpreadConstraints do it again for a spread, which
    matches the same pods). A nil selector stays nil (it matches nothing). Merging twice matches
    the same pods, so a selector the API server already merged is unchanged in effect."""
    match_keys, mismatch_keys = list(match_keys or ()), list(mismatch_keys or ())
    if selector is None or not (match_keys or mismatch_keys):
        return selector
    exprs = list(selector.get("matchExpressions") or [])
    for keys, op in ((match_keys, "In"), (mismatch_keys, "NotIn")):
        for key in keys:
            if key in pod_labels:
                e = {"key": key, "operator": op, "values": [str(pod_labels[key])]}
                if e not in exprs:
                    exprs.append(e)
    out = dict(selector)
    out["matchExpressions"] = exprs
    return out


def term_selector(pod, term: dict) -> dict | None:
    """A pod (anti-)affinity term's selector as the API server stores it (matchLabelKeys and
    mismatchLabelKeys merged)."""
    return merge_label_keys(term.get("labelSelector"), pod.labels, term.get("matchLabelKeys"),
                            term.get("mismatchLabelKeys"))


def spread_selector(pod, tsc: dict) -> dict | None:
    return merge_label_keys(tsc.get("labelSelector"), pod.labels, tsc.get("matchLabelKeys"))


def term_namespaces(pod, term: dict, namespace_labels: Mapping[str, Mapping[str, str]]) -> frozenset[str]:
    """The namespaces a pod (anti-)affinity term selects pods in: core v1.14.0 topology.go
    buildNamespaceList (the pod's own namespace when neither `namespaces` nor `namespaceSelector` is
    given; else the listed ones plus every Namespace the selector matches; an empty selector matches
    all). kube-scheduler v1.36.3 agrees (k8s.io/kube-scheduler v0.36.3 framework/types.go
    getNamespacesFromPodAffinityTerm, AffinityTerm.Matches; interpodaffinity/plugin.go
    mergeAffinityTermNamespacesIfNotEmpty)."""
    listed = [str(n) for n in term.get("namespaces") or []]
    ns_selector = term.get("namespaceSelector")
    if not listed and ns_selector is None:
        return frozenset({pod.namespace})
    if ns_selector is None:
        return frozenset(listed)
    return frozenset(listed) | {ns for ns, labels in namespace_labels.items() if selector_matches(ns_selector, labels)}


def namespace_labels(namespaces: Iterable[dict], extra: Iterable[str] = ()) -> dict[str, dict[str, str]]:
    """Namespace name -> labels, with the `kubernetes.io/metadata.name` label the API server sets
    (NAMESPACE_NAME_LABEL). `extra` names namespaces known to exist (a pod's own, "default") that no
    Namespace object in `namespaces` describes."""
    out: dict[str, dict[str, str]] = {}
    for ns in namespaces:
        name = ns["metadata"]["name"]
        out[name] = {**(ns["metadata"].get("labels") or {}), NAMESPACE_NAME_LABEL: name}
    for name in extra:
        out.setdefault(name, {NAMESPACE_NAME_LABEL: name})
    return out


def tolerates_all(tolerations: Sequence[dict], taints: Iterable[Taint]) -> bool:
    """core v1.14.0 pkg/scheduling/taints.go Taints.Tolerates: every taint, of any effect
    (PreferNoSchedule included), is tolerated."""
    return all(tolerates(list(tolerations), t) for t in taints)


# -- ties ------------------------------------------------------------------------------------------
class TiePicker:
    """Picks one of several equally good domains where core picks by Go map iteration order
    (nextDomainTopologySpread's `for domain := range t.domains`, Requirement.Values() =
    sets.UnsortedList(), nextDomainAffinity's bootstrap): upstream chooses at random. We choose
    with the run's seed: a hash of (seed, pod, node, group, candidates), so the same question always
    gets the same answer within a run, a different seed can answer differently, a pod asked about
    two NodeClaims gets two independent answers as in core, and the answer does not
    depend on how often or in which order the scheduler asks (its claim scan skips claims it knows
    will fail, harness/loop/scheduling/scheduler.py Scheduler._scan). With `seed=None` the smallest name wins
    (unit tests)."""

    def __init__(self, seed: int | None = 0):
        self.seed = seed

    def pick(self, candidates: Iterable[str], *context: str) -> str:
        ordered = sorted(candidates)
        if len(ordered) == 1 or self.seed is None:
            return ordered[0]
        text = json.dumps([self.seed, *context, ordered])
        h = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")
        return ordered[h % len(ordered)]


# -- node filter -------------------------------------------------------------------------------------
class NodeFilter:
    """core v1.14.0 topologynodefilter.go TopologyNodeFilter (a topology spread's node inclusion):
    with nodeAffinityPolicy Honor (the default) a node counts only if its requirements are
    compatible with the pod's nodeSelector plus one of its required node-affinity terms; with
    nodeTaintsPolicy Honor (default Ignore) only if the pod tolerates every taint of it."""

    __slots__ = ("requirements", "taint_policy", "affinity_policy", "tolerations", "ident", "_open")

    def __init__(self, requirements: list[Requirements], taint_policy: str, affinity_policy: str,
                 tolerations: list[dict], ident: str):
        self.requirements, self.taint_policy, self.affinity_policy = requirements, taint_policy, affinity_policy
        self.tolerations, self.ident = tolerations, ident
        # an empty requirement set is compatible with any node: then the affinity test always passes
        self._open = any(len(r) == 0 for r in requirements)

    @staticmethod
    def for_pod(pod, taint_policy: str, affinity_policy: str, sem) -> "NodeFilter":
        """MakeTopologyNodeFilter."""
        selector = pod.node_selector
        base = [Requirement.new(k, IN, [v], sem) for k, v in selector.items()]
        terms = pod.required_terms() if pod.has_required_terms() else None
        reqs: list[Requirements] = []
        if terms is None:
            reqs.append(Requirements(base))
        else:
            for term in terms:
                r = Requirements(base)
                r.add(*(Requirement.new(e["key"], e["operator"], e.get("values") or (), sem)
                        for e in term.get("matchExpressions") or []))
                reqs.append(r)
        tolerations = list(pod.tolerations)
        ident = json.dumps([sorted(selector.items()), terms, taint_policy, affinity_policy, tolerations],
                           sort_keys=True, default=str)
        return NodeFilter(reqs, taint_policy, affinity_policy, tolerations, ident)

    def matches(self, taints: Iterable[Taint], reqs: Requirements, allow_undefined: frozenset[str] = frozenset()) -> bool:
        """Matches: affinity (any requirement set compatible) and taints."""
        if self.affinity_policy == HONOR and self.requirements and not self._open and not any(
                reqs.is_compatible(r, allow_undefined) for r in self.requirements):
            return False
        if self.taint_policy == HONOR and not tolerates_all(self.tolerations, taints):
            return False
        return True


# -- the universe of domains -----------------------------------------------------------------------
class DomainGroup(dict):
    """core v1.14.0 topologydomaingroup.go TopologyDomainGroup: domain -> the taint sets of the
    NodePools that offer it (an empty set first means every pod can get it)."""

    def insert(self, domain: str, taints: Sequence[Taint] = ()) -> None:
        taints = tuple(taints)
        have = self.get(domain)
        if have is None or not taints:
            self[domain] = [taints]
            return
        if not have[0]:
            return
        have.append(taints)

    def domains_for(self, tolerations: Sequence[dict], taint_policy: str) -> list[str]:
        """ForEachDomain: every domain, or with nodeTaintsPolicy Honor those some taint set of
        which the pod tolerates."""
        if taint_policy != HONOR:
            return list(self)
        return [d for d, groups in self.items() if any(tolerates_all(tolerations, ts) for ts in groups)]


def universe_for(keys: set[str], templates) -> dict[str, DomainGroup]:
    """buildDomainGroups: for each key, every value of the NodePool's requirements and labels
    intersected with each instance type's requirements (a complement contributes its excluded
    values, as Requirement.Values() returns them), plus each `In` value of the NodePool alone;
    each domain remembers the NodePool's taints."""
    out: dict[str, DomainGroup] = {k: DomainGroup() for k in keys}
    for t in templates:
        taints = tuple(t.taints)
        for key in keys:
            base = t.requirements[key] if key in t.requirements else None
            for it in t.instance_types:
                if key in it.requirements:
                    r = it.requirements[key] if base is None else base.intersection(it.requirements[key])
                elif base is not None:
                    r = base
                else:
                    continue
                for v in r.values:
                    out[key].insert(v, taints)
            if base is not None and base.operator == IN:
                for v in base.values:
                    out[key].insert(v, taints)
    return out


# -- groups ----------------------------------------------------------------------------------------
class TopologyGroup:
    """core v1.14.0 topologygroup.go TopologyGroup: counts of matching pods per domain."""

    def __init__(self, type: str, key: str, namespaces: frozenset[str], selector: dict | None, max_skew: int,
                 min_domains: int | None, domains: Mapping[str, int] | None = None,
                 node_filter: NodeFilter | None = None, picker: TiePicker | None = None, ident: str = ""):
        self.type, self.key, self.namespaces, self.selector = type, key, namespaces, selector
        self.max_skew, self.min_domains, self.node_filter = max_skew, min_domains, node_filter
        self.domains: dict[str, int] = dict(domains or {})
        self.empty: set[str] = {d for d, n in self.domains.items() if n == 0}    # emptyDomains
        self.picker = picker or TiePicker(None)
        self.ident = ident

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        return namespace in self.namespaces and selector_matches(self.selector, labels)

    def counts(self, pod, taints: Iterable[Taint], reqs: Requirements, allow_undefined: frozenset[str] = frozenset()) -> bool:
        """Counts: the pod is selected and the node passes the group's node filter."""
        return self.selects(pod.namespace, pod.labels) and (
            self.node_filter is None or self.node_filter.matches(taints, reqs, allow_undefined))

    def register(self, *domains: str) -> None:
        for d in domains:
            if d not in self.domains:
                self.domains[d] = 0
                self.empty.add(d)

    def record(self, *domains: str) -> None:
        for d in domains:
            self.domains[d] = self.domains.get(d, 0) + 1
            self.empty.discard(d)

    # -- topology spread ---------------------------------------------------------------------------
    def min_count(self, pod_domains: Requirement) -> int:
        """domainMinCount: hostname spreads always have a zero minimum (a new node is a new domain);
        fewer supported domains than minDomains make the minimum zero."""
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

    def next_domain(self, self_selecting: bool, pod_domains: Requirement, node_domains: Requirement,
                    pod_key: str = "") -> Requirement:
        """nextDomainTopologySpread: a least-loaded node domain within maxSkew, else DoesNotExist.
        Among equally loaded domains core takes the first in map order (a random one)."""
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            count = self.domains.get(host, 0) + (1 if self_selecting else 0)
            if count <= self.max_skew:
                return Requirement(self.key, False, frozenset({host}))
            return Requirement(self.key, False, frozenset())
        low = self.min_count(pod_domains)
        add = 1 if self_selecting else 0
        if node_domains.operator == IN:
            candidates = [d for d in node_domains.values if d in self.domains]
        else:
            candidates = [d for d in self.domains if node_domains.has(d)]
        best: list[str] = []
        best_count = MAX_INT32
        for domain in candidates:
            count = self.domains[domain] + add
            if count - low > self.max_skew:
                continue
            if count < best_count:
                best, best_count = [domain], count
            elif count == best_count:
                best.append(domain)
        if not best or best == [""]:
            return Requirement(self.key, False, frozenset())   # "" is also "nothing chosen"
        # core keeps the first strictly smaller count in map order: "" can win a tie and then means
        # "nothing chosen" too
        chosen = self.picker.pick(best, pod_key, self.ident, "spread")
        if chosen == "":
            return Requirement(self.key, False, frozenset())
        return Requirement(self.key, False, frozenset({chosen}))

    # -- pod affinity ------------------------------------------------------------------------------
    def any_compatible_pod_domain(self, pod_domains: Requirement) -> bool:
        """anyCompatiblePodDomain: a domain the pod may use already holds a matching pod."""
        return any(n > 0 and pod_domains.has(d) for d, n in self.domains.items())

    def may_bootstrap(self, self_selecting: bool, pod_domains: Requirement) -> bool:
        return self_selecting and (len(self.domains) == len(self.empty) or not self.any_compatible_pod_domain(pod_domains))

    def next_domain_affinity(self, self_selecting: bool, node_domains: Requirement,
                             pod_domains: Requirement | None = None, pod_key: str = "") -> Requirement:
        """nextDomainAffinity: node domains the pod may use that already hold a matching pod. A pod
        that selects itself may open a domain only while no matching pod exists in a domain it may
        use (the first domain only: a hostname-affinity batch lands on one new node).

        Karpenter and kube-scheduler disagree here, and each is modeled where it decides: Karpenter
        bootstraps while no matching pod is in a domain *this pod may use* (anyCompatiblePodDomain), so
        two self-affine pods pinned to different zones get a node each; kube-scheduler lets a pod with
        required affinity in only when no pod *in the cluster* matches and it matches its own terms
        (k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/interpodaffinity/filtering.go
        satisfyPodAffinity; harness/loop/kube/kubescheduler.py Cycle._filter_affinity), so the second of
        them stays pending on its node (scenarios/upstream-core/topology/pod-affinity.scenario.yaml)."""
        pod_domains = pod_domains if pod_domains is not None else Requirement(self.key, True, frozenset())
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            if not pod_domains.has(host):
                return Requirement(self.key, False, frozenset())
            if self.domains.get(host, 0) > 0 or self.may_bootstrap(self_selecting, pod_domains):
                return Requirement(self.key, False, frozenset({host}))
            return Requirement(self.key, False, frozenset())
        if node_domains.operator == IN:
            options = {d for d in node_domains.values if pod_domains.has(d) and self.domains.get(d, 0) > 0}
        else:
            options = {d for d, n in self.domains.items() if n > 0 and pod_domains.has(d) and node_domains.has(d)}
        if options:
            return Requirement(self.key, False, frozenset(options))
        if self.may_bootstrap(self_selecting, pod_domains):
            # two independent map-order picks: one domain of pod x node domains, one of the pod's
            intersected = [d for d in self.domains if pod_domains.has(d) and node_domains.has(d)]
            if intersected:
                options.add(self.picker.pick(intersected, pod_key, self.ident, "affinity-node"))
            possible = [d for d in self.domains if pod_domains.has(d)]
            if possible:
                options.add(self.picker.pick(possible, pod_key, self.ident, "affinity-pod"))
        return Requirement(self.key, False, frozenset(options))

    # -- pod anti-affinity -------------------------------------------------------------------------
    def next_domain_anti_affinity(self, node_domains: Requirement, pod_domains: Requirement | None = None) -> Requirement:
        """nextDomainAntiAffinity: node domains the pod may use that hold no matching pod (a new
        hostname is empty)."""
        pod_domains = pod_domains if pod_domains is not None else Requirement(self.key, True, frozenset())
        if self.key == HOSTNAME and len(node_domains.values) == 1:
            host = next(iter(node_domains.values))
            ok = self.domains.get(host, 0) == 0
            return Requirement(self.key, False, frozenset({host} if ok else ()))
        if node_domains.operator == IN and len(node_domains.values) < len(self.empty):
            options = {d for d in node_domains.values if d in self.empty and pod_domains.has(d)}
        else:
            options = {d for d in self.empty if node_domains.has(d) and pod_domains.has(d)}
        return Requirement(self.key, False, frozenset(options))

    def get(self, self_selecting: bool, pod_domains: Requirement, node_domains: Requirement,
            pod_key: str = "") -> Requirement:
        """TopologyGroup.Get."""
        if self.type == SPREAD:
            return self.next_domain(self_selecting, pod_domains, node_domains, pod_key)
        if self.type == AFFINITY:
            return self.next_domain_affinity(self_selecting, node_domains, pod_domains, pod_key)
        return self.next_domain_anti_affinity(node_domains, pod_domains)

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
        if self.type == SPREAD:
            return self.max_skew - (1 if self_selecting else 0) + 1
        if self.type == ANTI_AFFINITY:
            return 1
        return None


def _pretty_counts(domains: dict[str, int], limit: int = 25) -> str:
    """operatorpkg pretty.Map: sorted `k: v` pairs joined by ", ", truncated."""
    items = [f"{k}: {v}" for k, v in sorted(domains.items())]
    if len(items) > limit:
        items = items[:limit] + [f"and {len(domains) - limit} other(s)"]
    return ", ".join(items)


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


class TopologyConflict(str):
    """Requirements.Compatible failing after the topology narrowed the node's requirements
    (core v1.14.0 nodeclaim.go CanAdd / existingnode.go CanAdd: `nodeClaimRequirements.Compatible(
    topologyRequirements)`): two groups of one key chose disjoint domains, or a group chose a domain
    of a key the node does not define."""


# -- which terms and constraints are in force --------------------------------------------------------
def affinity_terms(pod, kind: str, preferred: bool = False) -> list[dict]:
    """Required podAffinity / podAntiAffinity terms; with `preferred`, also the preferred terms still
    in force (heaviest first, the relaxed ones dropped: PreferencePolicy Respect, sigs.k8s.io/karpenter
    v1.14.0 pkg/controllers/provisioning/scheduling/preferences.go)."""
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
    """The topology groups of one provisioning pass (core v1.14.0 topology.go Topology)."""

    def __init__(self, universe: Mapping[str, "DomainGroup | set[str]"], node_labels: dict[str, dict[str, str]],
                 bound: list[tuple[str, dict, str]], bound_pods: list | None = None, *, sem=None,
                 well_known: frozenset[str] = frozenset(), seed: int | None = 0,
                 namespaces: Mapping[str, Mapping[str, str]] | None = None,
                 node_taints: Mapping[str, Sequence[Taint]] | None = None, registered: Iterable[str] | None = None,
                 spread_policies: bool = True):
        """universe: key -> domains from NodePools x instance types (universe_for); node_labels:
        existing node (registered or in flight) -> labels; bound: (namespace, pod labels, node name)
        of the pods counted where they are (bound);
        bound_pods: (PodView, node name) of those with required anti-affinity (the inverse groups);
        sem: label semantics for the node filters; well_known: AllowUndefinedWellKnownLabels for a
        NodeClaim's requirements; seed: ties (TiePicker); namespaces: Namespace name -> labels
        (namespaceSelector); node_taints: node -> taints; registered: the nodes that are Nodes (core
        countDomains discovers domains only from those, not from in-flight NodeClaims); spread_policies:
        core-behaviour.yaml topologySpreadPolicies (False: a core before v1.3.0, #852, whose spreads read
        neither policy - taints never filter, node affinity always does - and whose countDomains discovers no
        domain from the Nodes: sigs.k8s.io/karpenter v1.0.6 scheduling/topology.go countDomains,
        topologynodefilter.go MakeTopologyNodeFilter)."""
        self.spread_policies = spread_policies
        self.universe: dict[str, DomainGroup] = {}
        for key, domains in universe.items():
            if isinstance(domains, DomainGroup):
                self.universe[key] = domains
            else:
                g = DomainGroup()
                for d in domains:
                    g.insert(d)
                self.universe[key] = g
        self.node_labels = node_labels
        self.node_taints = dict(node_taints or {})
        self.registered = set(node_labels) if registered is None else set(registered)
        self.bound = bound
        self.sem = sem
        self.well_known = well_known
        self.picker = TiePicker(seed)
        self.namespace_labels = dict(namespaces or {})
        self.groups: dict[str, TopologyGroup] = {}
        self.inverse: dict[str, TopologyGroup] = {}
        self.inverse_owners: dict[str, set[str]] = {}
        self._registrations = 0      # grows whenever a pod becomes an inverse-group owner (cache key)
        self._selects_cache: dict[tuple[int, tuple], bool] = {}
        self._selecting: dict[tuple, tuple[int, list[TopologyGroup]]] = {}
        self._idents: dict[tuple, tuple] = {}
        # by the ids of their groups (alive as long as the Topology: its groups dicts hold them)
        self._shared: dict[tuple, list[TopologyGroup]] = {}
        self._entries: dict[tuple, _PodGroups] = {}
        self._inverse_cache: dict[tuple, tuple[tuple[int, int], list[TopologyGroup]]] = {}
        self._node_reqs: dict[str, Requirements] = {}
        self._hostnames: set[str] = set()
        for name, labels in node_labels.items():
            self._hostnames.add(labels.get(HOSTNAME, name))    # ExistingNode registers its hostname
        for pv, node in bound_pods or []:
            for term in affinity_terms(pv, "podAntiAffinity"):
                g = self._inverse_group(pv, term)
                domain = self.node_labels.get(node, {}).get(g.key)
                if domain is not None:
                    g.record(domain)

    # -- group construction ------------------------------------------------------------------------
    def _requirements_of(self, node: str) -> Requirements:
        r = self._node_reqs.get(node)
        if r is None:
            r = self._node_reqs[node] = Requirements.from_labels(self.node_labels.get(node, {}), self.sem) \
                if self.sem is not None else Requirements(Requirement(k, False, frozenset({v}))
                                                          for k, v in self.node_labels.get(node, {}).items())
        return r

    def _new_group(self, kind: str, key: str, namespaces: frozenset[str], selector: dict | None, max_skew: int,
                   min_domains: int | None, node_filter: NodeFilter | None, tolerations: Sequence[dict],
                   ident: str) -> TopologyGroup:
        universe = self.universe.get(key) or DomainGroup()
        policy = node_filter.taint_policy if node_filter is not None else IGNORE
        domains = {d: 0 for d in universe.domains_for(tolerations, policy)}
        g = TopologyGroup(kind, key, namespaces, selector, max_skew, min_domains, domains, node_filter,
                          self.picker, ident)
        if key == HOSTNAME:
            g.register(*self._hostnames)
        return g

    def _inverse_group(self, pod, term: dict) -> TopologyGroup:
        """updateInverseAntiAffinity: anti-affinity works both ways, so the domains of pods *with*
        the term block the pods it selects."""
        namespaces = term_namespaces(pod, term, self.namespace_labels)
        selector = term_selector(pod, term)
        ident = json.dumps(["inverse", term["topologyKey"], sorted(namespaces), selector], sort_keys=True)
        g = self.inverse.get(ident)
        if g is None:
            g = self._new_group(ANTI_AFFINITY, term["topologyKey"], namespaces, selector, MAX_INT32, None, None, (),
                                ident)
            self.inverse[ident] = g
        owners = self.inverse_owners.setdefault(ident, set())
        if pod.uid not in owners:
            owners.add(pod.uid)
            self._registrations += 1
        return g

    def _group(self, pod, kind: str, key: str, namespaces: frozenset[str], selector: dict | None, max_skew: int,
               min_domains: int | None, node_filter: NodeFilter | None) -> TopologyGroup:
        """A group by core's Hash (type, key, namespaces, maxSkew, node filter, selector; minDomains
        is not part of it), counted once (countDomains) when first seen."""
        ident = json.dumps([kind, key, sorted(namespaces), selector, max_skew,
                            node_filter.ident if node_filter is not None else None], sort_keys=True)
        g = self.groups.get(ident)
        if g is None:
            tolerations = node_filter.tolerations if node_filter is not None else ()
            g = self._new_group(kind, key, namespaces, selector, max_skew, min_domains, node_filter, tolerations, ident)
            self._count_domains(g)
            self.groups[ident] = g
        return g

    def _count_domains(self, g: TopologyGroup) -> None:
        """countDomains: the domains of registered nodes the node filter admits (from core v1.3.0), then
        every counted pod where its node is (a hostname group uses the node's name when it has no
        hostname label; a node without the key does not count)."""
        for name in sorted(self.registered) if self.spread_policies else ():
            labels = self.node_labels.get(name)
            if labels is None or g.key not in labels:
                continue
            if g.node_filter is not None and not g.node_filter.matches(self.node_taints.get(name, ()),
                                                                      self._requirements_of(name)):
                continue
            g.register(labels[g.key])
        for ns, labels, node in self.bound:
            if not g.selects(ns, labels):
                continue
            nlabels = self.node_labels.get(node)
            if nlabels is None:
                continue
            domain = nlabels.get(g.key)
            if domain is None and g.key == HOSTNAME:
                domain = node
            if domain is None:
                continue
            if g.node_filter is not None and not g.node_filter.matches(self.node_taints.get(node, ()),
                                                                      self._requirements_of(node)):
                continue
            g.record(domain)

    def _spread_group(self, pod, tsc: dict) -> TopologyGroup:
        """newForTopologies: the pod's namespace only; matchLabelKeys merged; node filter."""
        taints, affinity = IGNORE, HONOR          # the defaults, and all a core before v1.3.0 knows
        if self.spread_policies:
            taints, affinity = tsc.get("nodeTaintsPolicy") or IGNORE, tsc.get("nodeAffinityPolicy") or HONOR
        node_filter = NodeFilter.for_pod(pod, taints, affinity, self.sem)
        min_domains = tsc.get("minDomains")
        return self._group(pod, SPREAD, tsc["topologyKey"], frozenset({pod.namespace}), spread_selector(pod, tsc),
                           int(tsc.get("maxSkew", 1)), int(min_domains) if min_domains is not None else None,
                           node_filter)

    def _term_group(self, pod, term: dict, kind: str) -> TopologyGroup:
        """newForAffinities: namespaces (buildNamespaceList), no node filter, no skew."""
        return self._group(pod, kind, term["topologyKey"], term_namespaces(pod, term, self.namespace_labels),
                           term_selector(pod, term), MAX_INT32, None, None)

    def _constraints(self, pod) -> list[TopologyGroup]:
        """The pod's own groups (Topology.Update), cached on the pod per relaxation state for this
        Topology only: a pod outlives the Topology of one pass or one consolidation simulation, and a
        later Topology must build (and register the inverse groups of) its own. The cache names its
        Topology by reference, not by id(): a freed Topology's address is reused by the next one."""
        cache = self._cache(pod)
        key = (pod.dropped_schedule_anyway, pod.dropped_pod_affinity, pod.dropped_pod_anti_affinity,
               pod.tolerate_prefer_no_schedule)
        groups = cache.get(key)
        if groups is None:
            groups = [self._spread_group(pod, tsc) for tsc in spread_constraints(pod)]
            groups += [self._term_group(pod, t, AFFINITY) for t in affinity_terms(pod, "podAffinity", True)
                       if t.get("topologyKey")]
            for term in affinity_terms(pod, "podAntiAffinity"):
                if term.get("topologyKey"):
                    self._inverse_group(pod, term)       # only required anti-affinity works both ways
            groups += [self._term_group(pod, t, ANTI_AFFINITY) for t in affinity_terms(pod, "podAntiAffinity", True)
                       if t.get("topologyKey")]
            # pods of one workload have the same groups: they share one list (read-only)
            groups = cache[key] = self._shared.setdefault(tuple(map(id, groups)), groups)
        return groups

    def _cache(self, pod) -> dict:
        """The pod's topology_cache, emptied if another Topology filled it."""
        cache = pod.topology_cache
        if cache.get(_OWNER) is not self:
            cache.clear()
            cache[_OWNER] = self
        return cache

    def _label_ident(self, pod) -> tuple:
        cache = self._cache(pod)
        ident = cache.get(_LABELS)
        if ident is None:
            ident = (pod.namespace, frozenset(pod.labels.items()))
            # pods of one workload share one identity object (one per pod would live the whole pass)
            ident = cache[_LABELS] = self._idents.setdefault(ident, ident)
        return ident

    def _selects(self, g: TopologyGroup, pod) -> bool:
        """g.selects(pod), cached per pass by (namespace, labels): a pod's do not change in a pass,
        and many pods share them."""
        key = (id(g), self._label_ident(pod))
        hit = self._selects_cache.get(key)
        if hit is None:
            hit = self._selects_cache[key] = g.selects(pod.namespace, pod.labels)
        return hit

    def _applicable_inverse(self, pod) -> list[TopologyGroup]:
        """getMatchingTopologies' inverse part: the inverse anti-affinity groups that select the pod
        (its own too: a pod with self anti-affinity is held off the domains of its peers by both
        groups). Cached on the pass per (namespace, labels), what selection depends on, until a group
        is added or any pod becomes an owner."""
        stamp = (len(self.inverse), self._registrations)
        ident = self._label_ident(pod)
        hit = self._inverse_cache.get(ident)
        if hit is None or hit[0] != stamp:
            groups = [g for g in self.inverse.values() if self._selects(g, pod)]
            hit = self._inverse_cache[ident] = (stamp, groups)
        return hit[1]

    def prepare(self, pods) -> None:
        """NewTopology's Update of every pod of the batch: each pod's groups (and inverse
        registrations) exist before any pod is placed, so a placement is recorded in every group that
        counts it, not only in the groups already asked about."""
        for pod in pods:
            self._constraints(pod)

    def pod_groups(self, pod) -> list[TopologyGroup]:
        """Every group add_requirements checks for the pod, in its order (creates the pod's groups
        and inverse registrations, as its first add_requirements call would)."""
        return self._pod_entry(pod).groups

    def _pod_entry(self, pod) -> "_PodGroups":
        """The pod's groups with what the scheduler asks of them each placement, cached on the pod
        for its relaxation state until an inverse group or owner is added."""
        cache = self._cache(pod)
        state = (pod.dropped_schedule_anyway, pod.dropped_pod_affinity, pod.dropped_pod_anti_affinity,
                 pod.tolerate_prefer_no_schedule)
        hit = cache.get(_ALL)
        if hit is not None and hit.state == state and hit.stamp == (len(self.inverse), self._registrations):
            return hit
        groups = self._constraints(pod)
        inverse = self._applicable_inverse(pod)
        groups = groups + inverse if inverse else groups
        stamp = (len(self.inverse), self._registrations)
        selects = tuple(self._selects(g, pod) for g in groups)
        # one entry per distinct (state, groups, selects): pods of one workload share it (read-only)
        key = (state, stamp, tuple(map(id, groups)), selects)
        hit = self._entries.get(key)
        if hit is None:
            hit = self._entries[key] = _PodGroups(state, stamp, groups, selects)
        cache[_ALL] = hit
        return hit

    def hostname_gates(self, pod) -> list[tuple[TopologyGroup, int]]:
        """(group, threshold) for each of the pod's hostname groups whose rejection at a NodeClaim's
        own hostname is permanent once that hostname's count reaches the threshold."""
        return self._pod_entry(pod).host_gates

    def domain_gates(self, pod, pod_reqs: Requirements) -> list[tuple[str, frozenset[str]]]:
        """(key, domains) for each of the pod's affinity groups on a key other than the hostname that
        cannot bootstrap now: nextDomainAffinity then admits a node only through one of `domains`
        (those holding a matching pod, within the pod's own requirement on the key: `pod_reqs` as
        add_requirements gets them), so a NodeClaim whose requirement on the key allows none of them
        is rejected until a matching pod lands in a domain it allows."""
        out = []
        for g, selects in self._pod_entry(pod).affinity:
            pod_domains = pod_reqs[g.key] if g.key in pod_reqs else Requirement(g.key, True, frozenset())
            if not g.may_bootstrap(selects, pod_domains):
                out.append((g.key, frozenset(d for d, n in g.domains.items() if n > 0 and pod_domains.has(d))))
        return out

    def pod_key(self, pod) -> str:
        cache = self._cache(pod)
        key = cache.get(_KEY)
        if key is None:
            key = cache[_KEY] = f"{pod.namespace}/{pod.name}"
        return key

    def _groups_selecting(self, pod) -> list[TopologyGroup]:
        """The (non-inverse) groups whose selector picks the pod, in group order; cached per
        (namespace, labels) until a group is added."""
        ident = self._label_ident(pod)
        hit = self._selecting.get(ident)
        if hit is None or hit[0] != len(self.groups):
            hit = self._selecting[ident] = (len(self.groups), [g for g in self.groups.values() if self._selects(g, pod)])
        return hit[1]

    def add_requirements(self, pod, pod_reqs: Requirements, node_reqs: Requirements, explain: bool = True,
                         allow_undefined: frozenset[str] | None = None) -> "Requirements | TopologyError | TopologyConflict":
        """Topology.AddRequirements and the Compatible check after it: each group chooses domains
        against the node's requirements as given (not as narrowed by another group), the choices are
        intersected into a copy, and a copy incompatible with the node's requirements is a
        TopologyConflict. `allow_undefined` is AllowUndefinedWellKnownLabels for a NodeClaim (the
        default) and nothing for an existing node."""
        reqs = node_reqs
        copied = False
        touched: list[str] = []
        # A tie is asked per (pod, node): core draws a fresh map order on every TopologyGroup.Get,
        # so a pod refused by an in-flight claim can win the tie on the next claim it tries.
        host = node_reqs[HOSTNAME] if HOSTNAME in node_reqs else None
        pkey = self.pod_key(pod)
        if host is not None and not host.complement and len(host.values) == 1:
            pkey = f"{pkey}@{next(iter(host.values))}"
        entry = self._pod_entry(pod)
        for g, selects in zip(entry.groups, entry.selects):
            key = g.key
            pod_domains = pod_reqs[key] if key in pod_reqs else Requirement(key, True, frozenset())
            node_domains = node_reqs[key] if key in node_reqs else Requirement(key, True, frozenset())
            chosen = g.get(selects, pod_domains, node_domains, pkey)
            if len(chosen) == 0:
                return g.error(pod_domains, node_domains, explain)
            # Requirements.Add intersects: skip the copy when that leaves the requirement as it is
            have = reqs[key] if key in reqs else None
            if have is not None and _narrows_nothing(have, chosen):
                continue
            if not copied:
                reqs = reqs.copy()
                copied = True
            reqs.add(chosen)
            touched.append(key)
        if touched:
            allow = self.well_known if allow_undefined is None else allow_undefined
            err = node_reqs.compatible(Requirements(reqs[k] for k in dict.fromkeys(touched)), allow)
            if err is not None:
                return TopologyConflict(err)
        return reqs

    def record(self, pod, reqs: Requirements, taints: Sequence[Taint] = (),
               allow_undefined: frozenset[str] | None = None) -> None:
        """Topology.Register (a NodeClaim's hostname) and Topology.Record: count the pod where it
        committed in every group it counts for (anti-affinity blocks every possible domain, spread
        and affinity only a single known one), and its required anti-affinity where it may land."""
        allow = self.well_known if allow_undefined is None else allow_undefined
        host = reqs[HOSTNAME] if HOSTNAME in reqs else None
        if host is not None and not host.complement and len(host.values) == 1:
            name = next(iter(host.values))
            if name not in self._hostnames:
                self._hostnames.add(name)
                for g in (*self.groups.values(), *self.inverse.values()):
                    if g.key == HOSTNAME:
                        g.register(name)
        for g in self._groups_selecting(pod):
            if g.key in reqs and (g.node_filter is None or g.node_filter.matches(taints, reqs, allow)):
                r = reqs[g.key]
                if g.type == ANTI_AFFINITY:
                    g.record(*r.values)
                elif not r.complement and len(r.values) == 1:
                    g.record(next(iter(r.values)))
        for ident, g in self.inverse.items():
            if pod.uid in self.inverse_owners.get(ident, ()) and g.key in reqs:
                g.record(*reqs[g.key].values)


class _PodGroups:
    """Topology.pod_groups of one pod in one relaxation state, with whether each group selects the
    pod, its hostname gates and its affinity groups on other keys (Topology.domain_gates)."""

    __slots__ = ("state", "stamp", "groups", "selects", "host_gates", "affinity")

    def __init__(self, state: tuple, stamp: tuple, groups: list[TopologyGroup], selects: tuple[bool, ...]):
        # tuples, not lists: one of these lives per pod, and the cyclic collector stops tracking a
        # tuple of atoms (selects) and never allocates for an empty one
        self.state, self.stamp, self.groups, self.selects = state, stamp, groups, selects
        self.host_gates = tuple((g, t) for g, sel in zip(groups, selects)
                                if (t := g.hostname_threshold(sel)) is not None)
        self.affinity = tuple((g, sel) for g, sel in zip(groups, selects) if g.type == AFFINITY and g.key != HOSTNAME)


def _narrows_nothing(have: Requirement, chosen: Requirement) -> bool:
    """have.intersection(chosen) == have, without building the intersection where both are plain
    `In` sets (what topology groups choose): then it holds exactly when have's values are chosen's."""
    if (not have.complement and not chosen.complement and have.gte is None and have.lte is None
            and chosen.gte is None and chosen.lte is None and chosen.min_values is None and not chosen.exclusive):
        return have.values <= chosen.values
    return have.intersection(chosen) == have


def topology_keys(pod) -> set[str]:
    keys = {t["topologyKey"] for t in pod.spec.get("topologySpreadConstraints") or []}
    for kind in ("podAffinity", "podAntiAffinity"):
        keys |= {t["topologyKey"] for t in affinity_terms(pod, kind, True) if t.get("topologyKey")}
    return keys


def has_term_without_selector(spec: dict, inverse: bool = False) -> bool:
    """Whether a pod spec has a topology spread constraint or a pod (anti-)affinity term, required or preferred,
    without a labelSelector (the API does not require one; the term selects no pods). With `inverse`, only its
    required anti-affinity terms: those core counts for a running pod (updateInverseAffinities). Core v1.7.0
    panics hashing such a term (core-behaviour.yaml nilLabelSelectorTopology)."""
    affinity = spec.get("affinity") or {}
    terms = list((affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ())
    if not inverse:
        terms += spec.get("topologySpreadConstraints") or []
        for kind in ("podAffinity", "podAntiAffinity"):
            aff = affinity.get(kind) or {}
            if kind == "podAffinity":
                terms += aff.get("requiredDuringSchedulingIgnoredDuringExecution") or []
            terms += [w.get("podAffinityTerm") or {}
                      for w in aff.get("preferredDuringSchedulingIgnoredDuringExecution") or ()]
    return any(isinstance(t, dict) and t.get("labelSelector") is None for t in terms)


__all__ = ["Topology", "TopologyGroup", "TopologyError", "TopologyConflict", "TiePicker", "NodeFilter",
           "DomainGroup", "universe_for", "spread_constraints", "affinity_terms", "selector_matches",
           "selector_is_empty", "match_expression", "merge_label_keys", "term_selector", "spread_selector",
           "term_namespaces", "namespace_labels", "tolerates_all", "topology_keys", "has_term_without_selector",
           "HOSTNAME", "EXISTS",
           "DOES_NOT_EXIST", "SPREAD", "AFFINITY", "ANTI_AFFINITY", "HONOR", "IGNORE"]
