"""What a customer's Karpenter log (and the events sent with it) says happened, object by object: each
NodeClaim's NodePool, size, zone, capacity type and Node, its creation, launch, registration,
initialization, disruption (reason and decision), drain and deletion; the pods its provisioning rounds and
failed evictions name, with the eviction API's answer; the launch and other errors; the region the provider
IDs name; and the incident: where the lines that matter begin. harness/dump/logscenario.py makes the
scenario of it. The words read are karpenter-log.yaml's, per core version (harness/runner/karpenterlog.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.dump import aksnames
from harness.runner import karpenterlog as kl

# the `... and 3 other(s)` tail of pretty.Slice (sigs.k8s.io/karpenter v1.14.0 pkg/utils/pretty/pretty.go Slice)
_OTHERS = re.compile(r"\s+and\s+(\d+)\s+other\(s\)$")
# a pod a FailedDraining event names: serrors' `(Pod=ns/name)` (core v1.5.0+), `evicting pod ns/name violates`
# before (sigs.k8s.io/karpenter v1.4.0 pkg/controllers/node/termination/terminator/eviction.go Queue.Evict)
_EVENT_POD = (re.compile(r"\(Pod=([^/\s)]+)/([^\s),]+)"), re.compile(r"evicting pod ([^/\s]+)/(\S+) violates"))
# the PDBs a DisruptionBlocked event names (core pkg/controllers/state/statenode.go ValidatePodsDisruptable)
_EVENT_PDBS = re.compile(r"PodDisruptionBudget(?:\(s\))?=\[([^\]]*)\]")


@dataclass
class Claim:
    """One NodeClaim as the log tells it (epoch seconds; None: no line says)."""
    name: str
    line: int                                   # the first line naming it
    nodepool: str | None = None
    node: str | None = None
    instance_type: str | None = None
    listed_types: list[str] = field(default_factory=list)     # its `created nodeclaim` line's instance-types
    zone: str | None = None
    capacity_type: str | None = None
    requests: dict = field(default_factory=dict)
    created: float | None = None
    launched: float | None = None
    registered: float | None = None
    initialized: float | None = None
    disrupted: tuple[float, str, str, int] | None = None      # (when, reason, decision, line)
    replacement: bool = False                   # created by a disruption command
    tainted: float | None = None                # its Node's drain began
    deleted: float | None = None                # the NodeClaim's (else its Node's) deletion


@dataclass
class LogPod:
    """A pod the log or the events name: where it ran and what refused its eviction."""
    key: str                                    # namespace/name
    line: str                                   # where it is first named (`log:12`, `events.txt:5`)
    claim: str | None = None
    placed_by: str = ""                         # how its node is known
    refusals: dict[str, int] = field(default_factory=dict)    # refusal id -> failed evictions seen
    unschedulable: str = ""                     # core's `could not schedule pod` error, when it logged one

    @property
    def namespace(self) -> str:
        return self.key.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.key.split("/", 1)[1]


@dataclass
class Story:
    """The log and events read whole (harness/dump/logscenario.py turns it into the scenario)."""
    path: str
    entries: list[kl.Entry]
    claims: dict[str, Claim] = field(default_factory=dict)
    pods: dict[str, LogPod] = field(default_factory=dict)
    regions: list[tuple[str, str]] = field(default_factory=list)      # (region, where)
    errors: list[kl.Entry] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)                  # Karpenter's FailedDraining, as read
    pdb_names: dict[str, list[str]] = field(default_factory=dict)     # Node -> the PDB keys its events name
    unplaced_rounds: list[str] = field(default_factory=list)   # rounds whose pods the log does not place
    events_end: float | None = None

    @property
    def start(self) -> float | None:
        return next((e.t for e in self.entries if e.t is not None), None)

    @property
    def last_line(self) -> float | None:
        return max((e.t for e in self.entries if e.t is not None), default=None)

    @property
    def end(self) -> float | None:
        ends = [e.t for e in self.entries if e.t is not None] + ([self.events_end] if self.events_end else [])
        return max(ends, default=None)

    def at(self, n: int) -> str:
        return f"{self.path}:{n}"

    def claim_of_node(self, node: str) -> Claim | None:
        """The NodeClaim of a Node name: the one the log registered it to, else `aks-<NodeClaim>` (the
        provider names a NodeClaim's VM and Node so)."""
        for c in self.claims.values():
            if c.node == node:
                return c
        return self.claims.get(node[4:]) if node.startswith("aks-") else None


def split_pods(text: str) -> tuple[list[str], int]:
    """`ns/a, ns/b and 3 other(s)` -> (['ns/a', 'ns/b'], 3): the pods a line names, and how many it left out."""
    text = str(text or "").strip()
    m = _OTHERS.search(text)
    more = int(m.group(1)) if m else 0
    if m:
        text = text[:m.start()]
    return [p.strip() for p in text.split(",") if p.strip()], more


def region_of_provider_id(pid: str) -> tuple[str, str] | None:
    """(region, resource group) of an AKS provider ID (`.../resourceGroups/MC_rg_cluster_westeurope/...`)."""
    group = aksnames.provider_id_group(pid)
    region = aksnames.region_of_rg(group) if group else None
    return (region, group) if region else None


def read(path: str, text: str, events: list[tuple[dict, str]]) -> Story:
    """The story of a log's text and of Event objects (each with where it was read)."""
    story = Story(path, kl.read(text))
    _lines(story)
    _events(story, events)
    return story


def _claim(story: Story, name: str, line: int) -> Claim:
    if name not in story.claims:
        story.claims[name] = Claim(name, line)
    return story.claims[name]


def _lines(story: Story) -> None:
    round_pods: list[str] = []
    round_more = 0
    round_claims: list[Claim] = []
    round_line = 0

    def close_round():
        if not round_pods:
            return
        if len(round_claims) == 1:
            c = round_claims[0]
            for key in round_pods:
                pod = story.pods.setdefault(key, LogPod(key, story.at(round_line)))
                if pod.claim is None:
                    pod.claim, pod.placed_by = c.name, (f"the provisioning round at {story.at(round_line)} made "
                                                        f"NodeClaim {c.name} for it alone")
            if round_more:
                story.unplaced_rounds.append(f"{story.at(round_line)}: {round_more} more pod(s) the line does not "
                                             "name (`and N other(s)`)")
        elif round_claims:
            story.unplaced_rounds.append(f"{story.at(round_line)}: {len(round_pods) + round_more} pod(s) over "
                                         f"{len(round_claims)} NodeClaims ({', '.join(c.name for c in round_claims)}): "
                                         "which pod went where is not in the log")

    node_claim: dict[str, str] = {}
    for e in story.entries:
        n, t, f, rec = e.line or e.n, e.t, e.facts, e.record
        nc = f.get("NodeClaim")
        if e.id == "provisionable":
            close_round()
            round_pods, round_more = split_pods(f.get("Pods", ""))
            round_claims, round_line = [], n
        elif e.id == "created" and nc:
            c = _claim(story, nc, n)
            c.created, c.nodepool = t, f.get("NodePool") or c.nodepool
            c.requests = {str(k): str(v) for k, v in (rec.get("requests") or {}).items()}
            c.listed_types = split_pods(rec.get("instance-types", ""))[0]
            if kl.controller_of(rec) == "disruption":
                c.replacement = True
            else:
                round_claims.append(c)
        elif e.id == "launched" and nc:
            c = _claim(story, nc, n)
            c.launched = t
            c.instance_type = rec.get("instance-type") or c.instance_type
            c.zone = rec.get("zone") or c.zone
            c.capacity_type = rec.get("capacity-type") or c.capacity_type
            _region(story, rec, n)
        elif e.id in ("registered", "initialized") and nc:
            c = _claim(story, nc, n)
            setattr(c, e.id, t)
            if f.get("Node"):
                c.node = f["Node"]
                node_claim[f["Node"]] = nc
            _region(story, rec, n)
        elif e.id == "disrupting":
            for name in f.get("candidates", ()):
                claim = name if f.get("candidates-kind") == "NodeClaim" else node_claim.get(name)
                if claim is None and name.startswith("aks-"):
                    claim = name[4:]
                if claim:
                    _claim(story, claim, n).disrupted = (t, f.get("reason") or "", f.get("decision") or "", n)
        elif e.id == "expired" and nc:
            _claim(story, nc, n).disrupted = (t, "Expired", "delete", n)
        elif e.id == "tainted":
            node = f.get("Node")
            claim = nc or node_claim.get(node or "") or (node[4:] if node and node.startswith("aks-") else None)
            if claim:
                c = _claim(story, claim, n)
                c.node = c.node or node
                if c.tainted is None:
                    c.tainted = t
        elif e.id in ("deleted-nodeclaim", "garbage-collected", "deleted-node"):
            node = f.get("Node")
            claim = nc or node_claim.get(node or "") or (node[4:] if node and node.startswith("aks-") else None)
            if claim:
                c = _claim(story, claim, n)
                c.deleted = t if c.deleted is None else c.deleted
        elif e.id in kl.error_ids():
            story.errors.append(e)
            if e.id == "eviction-failed" and f.get("Pod"):
                _refused(story, f["Pod"], f.get("refusal"), story.at(n), _draining(story, t))
            elif e.id == "schedule-failed" and f.get("Pod"):
                pod = story.pods.setdefault(f["Pod"], LogPod(f["Pod"], story.at(n)))
                pod.unschedulable = f.get("error", "")
    close_round()


def _region(story: Story, rec: dict, n: int) -> None:
    got = region_of_provider_id(rec.get("provider-id", ""))
    if got:
        story.regions.append((got[0], f"{story.path}:{n} (provider ID in resource group {got[1]})"))
    m = aksnames.ZONE.match(str(rec.get("zone") or ""))
    if m:
        story.regions.append((m.group(1), f"{story.path}:{n} (zone {rec['zone']})"))


def _draining(story: Story, t: float | None) -> Claim | None:
    """The NodeClaim whose drain a failed eviction at `t` belongs to: the one node draining then (tainted
    before `t`, not deleted by it); None when none or several are."""
    if t is None:
        return None
    draining = [c for c in story.claims.values() if c.tainted is not None and c.tainted <= t
                and (c.deleted is None or c.deleted > t)]
    return draining[0] if len(draining) == 1 else None


def _refused(story: Story, key: str, refusal: str | None, where: str, claim: Claim | None, count: int = 1) -> None:
    """A refused eviction of pod `key`: counted by what refused it; its node the one draining (`claim`)."""
    pod = story.pods.setdefault(key, LogPod(key, where))
    if refusal:
        pod.refusals[refusal] = pod.refusals.get(refusal, 0) + count
    if claim is not None and (pod.claim is None or pod.placed_by.startswith("the provisioning round")):
        pod.claim = claim.name
        pod.placed_by = f"its eviction failed while Node {claim.node or 'aks-' + claim.name} drained ({where})"


def _events(story: Story, events: list[tuple[dict, str]]) -> None:
    """Karpenter's events sent with the log: a FailedDraining naming a pod and the refusal (the pod ran on
    that Node, and what refused its eviction); a DisruptionBlocked naming PodDisruptionBudgets."""
    from harness.model.kube.kubetime import parse_rfc3339
    for ev, where in events:
        obj = ev.get("involvedObject") or ev.get("regarding") or {}
        msg = str(ev.get("message") or ev.get("note") or "")
        for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
            if ev.get(key):
                try:
                    t = parse_rfc3339(str(ev[key]))
                except ValueError:
                    continue
                story.events_end = t if story.events_end is None else max(story.events_end, t)
                break
        if obj.get("kind") != "Node":
            continue
        node = str(obj.get("name") or "")
        if ev.get("reason") == "DisruptionBlocked" and (m := _EVENT_PDBS.search(msg)):
            story.pdb_names.setdefault(node, []).extend(k for k in m.group(1).split() if k)
        if ev.get("reason") != "FailedDraining":
            continue
        story.events.append({"kind": "Node", "name": node, "reason": "FailedDraining", "message": msg,
                             "where": where})
        refusal = kl.refusal_of(msg)
        pod = next((m for p in _EVENT_POD if (m := p.search(msg))), None)
        if refusal and pod:
            claim = story.claim_of_node(node)
            if claim is None:
                claim = _claim(story, node[4:] if node.startswith("aks-") else node, 0)
                claim.node = node
            _refused(story, f"{pod.group(1)}/{pod.group(2)}", refusal["id"], where, claim,
                     int(ev.get("count") or 1))


def incident(story: Story) -> tuple[float, str] | None:
    """When the lines that matter begin, and why those: the first error line, drawn back to the start of
    the trouble of the object it is about (the disruption or drain of the node whose evictions fail, the
    creation of a NodeClaim that failed to launch); else the first node whose drain the events say failed;
    else the first disruption; else the first provisioning round. None for a log without a dated line."""
    def trouble(c: Claim) -> float | None:
        return min((x for x in (c.disrupted[0] if c.disrupted else None, c.tainted) if x is not None), default=None)

    if story.errors:
        first = story.errors[0]
        why = f"its first error line ({story.at(first.line)}: {first.message!r})"
        if first.id == "eviction-failed":
            pod = story.pods.get(first.facts.get("Pod", ""))
            claim = story.claims.get(pod.claim) if pod and pod.claim else None
            began = trouble(claim) if claim else None
            if began is not None and first.t is not None and began <= first.t:
                return began, why + f", from the disruption of NodeClaim {claim.name} it is about"
        elif first.facts.get("NodeClaim") in story.claims:
            claim = story.claims[first.facts["NodeClaim"]]
            if claim.created is not None and first.t is not None and claim.created <= first.t:
                return claim.created, why + f", from the creation of NodeClaim {claim.name} it is about"
        if first.t is not None:
            return first.t, why
    refused = [story.claims[p.claim] for p in story.pods.values() if p.refusals and p.claim in story.claims]
    began = sorted((t, c.name) for c in refused if (t := trouble(c)) is not None)
    if began:
        return began[0][0], f"the drain of NodeClaim {began[0][1]}, whose evictions the events say were refused"
    disrupted = sorted((t, c.name) for c in story.claims.values() if (t := trouble(c)) is not None)
    if disrupted:
        return disrupted[0][0], f"the first disruption (NodeClaim {disrupted[0][1]})"
    first = next((e for e in story.entries if e.id == "provisionable" and e.t is not None), None)
    if first is not None:
        return first.t, f"the first provisioning round ({story.at(first.line)})"
    return (story.start, "its first line") if story.start is not None else None
