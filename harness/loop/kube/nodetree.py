"""Which Nodes one kube-scheduler cycle filters, and in which order: its cache's node tree (zones taken in
turn), the point where the previous cycle stopped, and how many feasible Nodes are enough.

k8s.io/kubernetes v1.36.3 pkg/scheduler/backend/cache/node_tree.go (addNode, removeNode, updateNode, list)
and pkg/scheduler/schedule_one.go (findNodesThatFitPod, findNodesThatPassFilters, numFeasibleNodesToFind).
In a cluster of fewer than 100 Nodes every Node is filtered; in a larger one kube-scheduler stops once it has
found max(100, nodes x max(5, 50 - nodes/125)%) feasible Nodes and scores only those, and the next cycle
starts where this one stopped. Why this matters for the harness: docs/architecture/loop.md.
"""
from __future__ import annotations

from bisect import bisect_left, insort
from typing import Callable, Iterable, Sequence

from harness.model.labels.wellknown import ZONE

# schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
REGION = "topology.kubernetes.io/region"                 # k8s.io/api core/v1 well_known_labels.go
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"


def num_feasible_nodes_to_find(num_all_nodes: int, percentage: int = 0) -> int:
    """numFeasibleNodesToFind: how many feasible Nodes end the search (`percentage` 0: the adaptive default
    of a configuration that does not set percentageOfNodesToScore, as the default profile does not)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * percentage // 100, MIN_FEASIBLE_NODES_TO_FIND)


def zone_key(labels: dict[str, str]) -> str:
    """utilnode.GetZoneKey (k8s.io/component-helpers v0.36.3 node/topology/helpers.go): region and zone
    (the GA labels, else the beta ones), "" when neither is set."""
    zone = labels.get(ZONE, labels.get(BETA_ZONE, ""))
    region = labels.get(REGION, labels.get(BETA_REGION, ""))
    return "" if not region and not zone else f"{region}:\x00:{zone}"


class NodeTree:
    """kube-scheduler's cache of Node names per zone, in the order the Nodes were added, and the scheduler's
    nextStartNodeIndex. A pass hands it the Nodes it sees (`update`); Nodes new since the last pass are added
    in name order, as the informer's first list hands them (harness assumption: between two passes the
    loop does not keep the order in which Nodes were created)."""

    def __init__(self) -> None:
        self.zones: list[str] = []
        self.tree: dict[str, list[str]] = {}
        self.zone_of: dict[str, str] = {}
        self.next_start = 0

    def update(self, nodes: Iterable[dict]) -> list[str]:
        """Add, move and remove Nodes to match `nodes`; the names in list() order."""
        seen: dict[str, str] = {}
        for n in nodes:
            meta = n["metadata"]
            seen[meta["name"]] = zone_key(meta.get("labels") or {})
        for name in [n for n in self.zone_of if n not in seen]:
            self._remove(name)
        for name in sorted(seen):
            zone = seen[name]
            if self.zone_of.get(name) != zone:        # new, or its zone labels changed (updateNode)
                if name in self.zone_of:
                    self._remove(name)
                self._add(name, zone)
        return self.list()

    def _add(self, name: str, zone: str) -> None:
        if zone not in self.tree:
            self.zones.append(zone)
            self.tree[zone] = []
        self.tree[zone].append(name)
        self.zone_of[name] = zone

    def _remove(self, name: str) -> None:
        zone = self.zone_of.pop(name)
        self.tree[zone].remove(name)
        if not self.tree[zone]:
            del self.tree[zone]
            self.zones.remove(zone)

    def list(self) -> list[str]:
        """The zones in turn, each zone's Nodes in the order they were added."""
        out: list[str] = []
        rows = [self.tree[z] for z in self.zones]
        for i in range(max((len(r) for r in rows), default=0)):
            out.extend(r[i] for r in rows if i < len(r))
        return out

    def find(self, nodes: Sequence[dict], fits: Callable[[dict], list[str]]) -> tuple[list[dict], list[str]]:
        """findNodesThatPassFilters over `nodes` (in list() order): from nextStartNodeIndex, each Node filtered
        until numFeasibleNodesToFind fit; returns the feasible Nodes and the reasons of the ones that did not,
        and moves nextStartNodeIndex past every Node processed. Upstream filters with 16 goroutines and stops
        them when enough are found, so which Nodes beyond the first ones it reaches is a race; the harness
        takes them in order (harness assumption: one worker's outcome)."""
        total = len(nodes)
        if total == 0:
            return [], []
        want = num_feasible_nodes_to_find(total)
        feasible: list[dict] = []
        reasons: list[str] = []
        failed = 0
        start = self.next_start % total
        for i in range(total):
            node = nodes[(start + i) % total]
            why = fits(node)
            if why:
                reasons.extend(why)
                failed += 1
            else:
                feasible.append(node)
                if len(feasible) == want:
                    break
        self.next_start = (start + len(feasible) + failed) % total
        return feasible, reasons

    def find_in(self, nodes: Sequence[dict], verdicts: Verdicts) -> tuple[list[dict], list[str]]:
        """find() over the verdicts a pod class already has on every Node (`nodes` in list() order): the same
        feasible Nodes and the same nextStartNodeIndex, without filtering a Node again; the reasons of the
        Nodes that did not fit only when none did (the one case kube-scheduler's message reads them)."""
        positions, reasons = self.positions_in(len(nodes), verdicts)
        return [nodes[p] for p in positions], reasons

    def positions_in(self, total: int, verdicts: Verdicts) -> tuple[list[int], list[str]]:
        """find_in() as the feasible Nodes' places in list() order."""
        if total == 0:
            return [], []
        want = num_feasible_nodes_to_find(total)
        start = self.next_start % total
        fit = verdicts.fit
        i = bisect_left(fit, start)
        if len(fit) >= want:
            take = fit[i:i + want]
            if len(take) < want:
                take += fit[:want - len(take)]
            processed = (take[-1] - start) % total + 1
        else:
            take = fit[i:] + fit[:i]
            processed = total
        self.next_start = (start + processed) % total
        reasons = [] if take else [r for why in verdicts.why for r in why]
        return take, reasons


class Verdicts:
    """One pod class's Filter verdict on every Node of a kube-scheduler pass, in list() order, kept as the
    pass binds pods: a pod whose filters read only the Node, its pods' count and its summed requests (no
    host ports, volumes, spread or inter-pod constraints) fails where every pod of the same tolerations,
    node selection and requests fails (binding.py). A pass placing the pods of a thousand removed Nodes
    filtered most of the cluster for each pod once most Nodes were full (pods x Nodes); with the verdicts a
    pod reads only the Nodes it takes."""

    def __init__(self, nodes: Sequence[dict], fails: Callable[[dict], list[str]]):
        self.fails = fails
        self.why = [fails(n) for n in nodes]
        self.fit = [i for i, why in enumerate(self.why) if not why]     # ascending

    def changed(self, position: int, node: dict) -> None:
        """The Node at `position` took a pod: filter it again."""
        was, now = self.why[position], self.fails(node)
        self.why[position] = now
        if bool(was) == bool(now):
            return
        if now:
            self.fit.pop(bisect_left(self.fit, position))
        else:
            insort(self.fit, position)
