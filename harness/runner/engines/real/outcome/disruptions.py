"""What Karpenter's disruption did in a real-engine run, in the shapes the simulated loop records
(harness/loop/disruption/orchestration.py `disruption_record`, `RunResult.timeline`/`protected`) so the
same `expect.disruption` blocks judge both engines.

Why it is built this way: docs/architecture/real-engine.md."""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field

from harness.runner.engines.real.cluster.runclock import CLOCK

# the taint a command's candidates get first, key -> value (None: any): core v1.0+'s karpenter.sh/disrupted
# (sigs.k8s.io/karpenter v1.0.6 pkg/apis/v1/taints.go DisruptedNoScheduleTaint), core v0.36's
# karpenter.sh/disruption=disrupting (v0.36.1 pkg/apis/v1beta1/taints.go DisruptionNoScheduleTaint)
DISRUPTED_TAINTS = {"karpenter.sh/disrupted": None, "karpenter.sh/disruption": "disrupting"}
COMMAND_LINE = "disrupting node(s)"
# core's DisruptionReason values (sigs.k8s.io/karpenter v1.6.2 pkg/apis/v1/nodepool.go), by their lower case
_REASONS = {r.lower(): r for r in ("Underutilized", "Empty", "Drifted")}
# core v1.0's line: the command as text (sigs.k8s.io/karpenter v1.0.6 pkg/controllers/disruption/controller.go
# executeCommand, types.go Command.String), each candidate as `<node>/<instance type>/<capacity type>`
COMMAND_TEXT = "disrupting nodeclaim(s) via "
_COMMAND_TEXT = re.compile(r"^disrupting nodeclaim\(s\) via (\w+), terminating \d+ nodes \(\d+ pods\) (.*?)"
                           r"(?: and replacing with (?:(\d+) spot and (\d+) on-demand.*|.*))?$")
# core v0.36's line: `disrupting via <method type> <action>, ...`, the same Command.String but with each
# method's Type() (sigs.k8s.io/karpenter v0.36.1 pkg/controllers/disruption/controller.go executeCommand,
# types.go Command.String) and no reason field
COMMAND_VIA = "disrupting via "
_COMMAND_VIA = re.compile(r"^disrupting via (\w+) (\w+), terminating \d+ nodes \((\d+) pods\) (.*?)"
                          r"(?: and replacing with (?:(\d+) spot and (\d+) on-demand.*|.*))?$")
# ... the method types (v0.36.1 pkg/metrics/constants.go) as the DisruptionReason core v1.0 gave each method.
# The line does not say which consolidation method decided: a delete of candidates with no reschedulable
# pod is the empty-node consolidation (emptynodeconsolidation.go), the one v1.0 made Emptiness (`Empty`)
_VIA_REASONS = {"consolidation": "Underutilized", "drift": "Drifted", "emptiness": "Empty", "expiration": "Expired"}
EXPIRED_LINE = "deleting expired nodeclaim"
GC_LINE = "garbage collecting nodeclaim with no cloudprovider representation"
# node repair's delete (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/node/health/controller.go deleteNodeClaim; its
# NodeClaim key from core v1.3.0, #1999), which the simulation records as reason Unhealthy, method repair
UNHEALTHY_LINE = "deleting unhealthy node"
_METHODS = {"Empty": "empty", "Drifted": "drift", "Expired": "expiration"}
_BUDGET = re.compile(r"No allowed disruptions for disruption reason (\w+) due to blocking budget")
# core v0.36's budget is the NodePool's, for every method: one event without a reason (v0.36.1
# pkg/controllers/disruption/events/events.go NodePoolBlocked; later cores publish it beside the per-reason ones)
BUDGET_ALL = "No allowed disruptions due to blocking budget"
# DisruptionBlocked messages (types.go NewCandidate, pretty.Sentence) -> the protection's name; core v0.36's
# own words ("PDB %q prevents pod evictions", "Nominated for a pending pod": v0.36.1 disruption/types.go NewCandidate)
_BLOCKED_BY = (("do-not-disrupt", "do-not-disrupt"), ("Pdb ", "pdb"), ("PDBs", "pdb"), ("PDB ", "pdb"),
               ("nominated", "nominated"), ("Nominated", "nominated"))


def ref_name(ref) -> str | None:
    """klog.KObj as zap writes it ({"name": ...}) or a plain string."""
    if isinstance(ref, dict):
        return ref.get("name")
    return ref or None


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


@dataclass
class Command:
    index: int                      # 1 for the run's first command
    reason: str
    decision: str
    claims: list[str]               # the candidates' NodeClaims, in the command's order
    replacements: int

    @property
    def method(self) -> str:
        return _METHODS.get(self.reason) or ("multi" if len(self.claims) > 1 else "single")


def by_claim(commands: list[Command], node_of: dict[str, str]) -> list[Command]:
    """`commands` with each candidate named by its NodeClaim (`node_of`: NodeClaim -> Node), where a
    line named it by its Node (core v1.0, COMMAND_TEXT)."""
    claim_of = {node: claim for claim, node in node_of.items() if node}
    return [dataclasses.replace(c, claims=[claim_of.get(n, n) for n in c.claims]) for c in commands]


def parse_command(rec: dict, index: int) -> Command | None:
    """The disruption command of one log record (a decoded JSON line) in any core's wording, numbered
    `index`; None for any other line. Core v1.0/v0.36 name the candidates by Node, later cores by NodeClaim."""
    msg = rec.get("message")
    if msg == COMMAND_LINE:
        # `command: Drifted/...` since core v1.9; before it `reason: drifted`, lower-cased (core v1.6.2
        # pkg/controllers/disruption/queue.go StartCommand), of the DisruptionReason constants
        reason = (str(rec.get("command") or "").split("/", 1)[0]
                  or _REASONS.get(str(rec.get("reason") or "").lower(), str(rec.get("reason") or "")))
        claims = [n for n in (ref_name(d.get("NodeClaim")) for d in rec.get("disrupted-nodes") or []) if n]
        return Command(index, reason, str(rec.get("decision") or ""), claims, int(rec.get("replacement-node-count") or 0))
    if (m := _COMMAND_TEXT.match(str(msg or ""))):
        # candidates by Node name (StateNode.Name): read_log's caller maps them to their NodeClaims
        names = [c.strip().split("/", 1)[0] for c in m.group(2).split(",") if c.strip()]
        reps = int(m.group(3)) + int(m.group(4)) if m.group(3) else (1 if " and replacing with " in msg else 0)
        return Command(index, _REASONS.get(str(rec.get("reason") or ""), ""), m.group(1), names, reps)
    if (m := _COMMAND_VIA.match(str(msg or ""))):
        names = [c.strip().split("/", 1)[0] for c in m.group(4).split(",") if c.strip()]
        reps = int(m.group(5)) + int(m.group(6)) if m.group(5) else (1 if " and replacing with " in msg else 0)
        reason = _VIA_REASONS.get(m.group(1), m.group(1))
        if reason == "Underutilized" and m.group(2) == "delete" and m.group(3) == "0":
            reason = "Empty"
        return Command(index, reason, m.group(2), names, reps)
    return None


def read_log(path) -> tuple[list[Command], list[tuple[str, str]]]:
    """The disruption commands, and the NodeClaims deleted outside a command as (name, why: expired | unhealthy |
    garbage-collected), in log order."""
    commands: list[Command] = []
    others: list[tuple[str, str]] = []
    try:
        lines = path.read_text(errors="replace").splitlines() if path else []
    except OSError:
        return commands, others
    for line in lines:
        if not any(k in line for k in (COMMAND_LINE, EXPIRED_LINE, GC_LINE, UNHEALTHY_LINE, COMMAND_TEXT, COMMAND_VIA)):
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        msg = rec.get("message")
        if (cmd := parse_command(rec, len(commands) + 1)) is not None:
            commands.append(cmd)
        elif msg in (EXPIRED_LINE, GC_LINE, UNHEALTHY_LINE):
            name = ref_name(rec.get("NodeClaim"))
            if name:
                others.append((name, {EXPIRED_LINE: "expired", UNHEALTHY_LINE: "unhealthy"}.get(msg, "garbage-collected")))
    return commands, others


@dataclass
class DisruptionWatch:
    """Fed every poll; keeps the timeline of what it saw change."""
    timeline: list[dict] = field(default_factory=list)
    _tainted: set[str] = field(default_factory=set)
    _seen: set[str] = field(default_factory=set)
    _done: set[tuple[str, str]] = field(default_factory=set)      # (NodeClaim, action) recorded once
    _draining: set[str] = field(default_factory=set)
    claim_nodes: dict[str, str] = field(default_factory=dict)     # NodeClaim -> Node, as last seen
    nodes: dict[str, dict] = field(default_factory=dict)          # Node name -> last seen object
    drift_reasons: dict[str, str] = field(default_factory=dict)   # NodeClaim -> its Drifted condition's reason

    def _add(self, claim: str, node: str | None, action: str, detail: str = "", once: bool = True) -> None:
        if once and (claim, action) in self._done:
            return
        self._done.add((claim, action))
        # on the run's clock (runclock.CLOCK), as the simulation's timeline is on its own: history.py and the
        # Karpenter log count both from the run's start (RunResult.started)
        self.timeline.append({"t": round(CLOCK.now(), 2), "node": node or "", "nodeClaim": claim,
                              "action": action, "detail": detail})

    def poll(self, claims: dict[str, dict], live: set[str], nodes: list[dict], pods: list[dict]) -> None:
        """`claims`: every NodeClaim seen (name -> last object); `live`: the ones that exist now."""
        for name in sorted(live):
            node = (claims[name].get("status") or {}).get("nodeName")
            if node:
                self.claim_nodes[name] = node
        by_node = {n: c for c, n in self.claim_nodes.items()}
        present = {n["metadata"]["name"] for n in nodes}
        self._tainted &= present          # a deleted Node is no longer being disrupted
        for n in nodes:                   # the taint comes before the NodeClaim's deletion
            name = n["metadata"]["name"]
            self.nodes[name] = n
            claim = by_node.get(name, "")
            tainted = any(t.get("key") in DISRUPTED_TAINTS and DISRUPTED_TAINTS[t["key"]] in (None, t.get("value"))
                          for t in (n.get("spec") or {}).get("taints") or [])
            if tainted and name not in self._tainted:
                self._tainted.add(name)
                reason = _conditions(claims.get(claim) or {}).get("DisruptionReason", {}).get("reason") or ""
                self._add(claim, name, "tainted", reason, once=False)
            elif not tainted and name in self._tainted:
                self._tainted.discard(name)
                if not n["metadata"].get("deletionTimestamp"):
                    self._add(claim, name, "untainted", once=False)
        self._claims(claims, live)
        bound: dict[str, int] = {}
        for p in pods:
            owners = p["metadata"].get("ownerReferences") or []
            node = (p.get("spec") or {}).get("nodeName")
            if node and not any(o.get("kind") == "DaemonSet" for o in owners):
                bound[node] = bound.get(node, 0) + 1
        for n in nodes:
            # a drain starts with the disrupted taint on a deleting Node; a Node whose instance is gone
            # and that is not Ready is deleted without one (core v1.14.0 pkg/controllers/node/termination/
            # controller.go finalize)
            name = n["metadata"]["name"]
            if n["metadata"].get("deletionTimestamp") and name in self._tainted:
                claim = by_node.get(name, "")
                if name not in self._draining:
                    self._draining.add(name)
                    self._add(claim, name, "draining")
                if not bound.get(name):
                    self._add(claim, name, "drained")

    def _claims(self, claims: dict[str, dict], live: set[str]) -> None:
        for name in sorted(live):
            nc = claims[name]
            node = self.claim_nodes.get(name)
            conds = _conditions(nc)
            if name not in self._seen:
                self._seen.add(name)
                self._add(name, node, "created")
            if conds.get("Initialized", {}).get("status") == "True":
                self._add(name, node, "initialized")
            drift = conds.get("Drifted", {})
            if drift.get("status") == "True":
                self.drift_reasons[name] = drift.get("reason") or ""
            if nc["metadata"].get("deletionTimestamp"):
                self._add(name, node, "deleting")
            if conds.get("InstanceTerminating", {}).get("status") == "True":
                self._add(name, node, "instance terminating")
        for name in sorted(self._seen - live):
            if (name, "terminated") in self._done:
                continue
            # a NodeClaim with an instance loses its termination finalizer only after cloudProvider.Delete
            # and InstanceTerminating=True (core v1.14.0 pkg/controllers/nodeclaim/lifecycle/controller.go
            # finalize); on a busy machine both can fall between two polls
            if ((claims[name].get("status") or {}).get("providerID")
                    and (name, "instance terminating") not in self._done):
                self._add(name, self.claim_nodes.get(name), "instance terminating")
            self._add(name, self.claim_nodes.get(name), "terminated")

    def busy(self, claims: dict[str, dict], live: set[str]) -> list[str]:
        """What is being disrupted now: tainted Nodes, NodeClaims being deleted."""
        out = [f"Node/{n}" for n in sorted(self._tainted)]
        out += [f"NodeClaim/{n}" for n in sorted(live) if claims[n]["metadata"].get("deletionTimestamp")]
        return out


def candidates(claims: dict[str, dict], live: set[str], never: set[str] = frozenset(),
               underutilized: set[str] = frozenset()) -> list[str]:
    """NodeClaims a disruption pass acts on or speaks about: Consolidatable or Drifted, or initialized
    in a NodePool whose consolidateAfter is Never (`never`: each pass's consolidation methods publish
    Unconsolidatable "NodePool ... has consolidation disabled" for them, core v1.14.0
    pkg/controllers/disruption/consolidation.go ShouldDisrupt); not being deleted. Core v0.36 has no
    Consolidatable condition: its consolidation takes every initialized node of a NodePool whose
    karpenter.sh/v1beta1 consolidationPolicy is WhenUnderutilized (`underutilized`), emptiness and
    expiration the ones Empty or Expired (sigs.k8s.io/karpenter v0.36.1 pkg/controllers/disruption/
    consolidation.go, emptiness.go, expiration.go ShouldDisrupt)."""
    out = []
    for name in sorted(live):
        nc = claims[name]
        conds = _conditions(nc)
        if nc["metadata"].get("deletionTimestamp"):
            continue
        pool = (nc["metadata"].get("labels") or {}).get("karpenter.sh/nodepool")
        if any(conds.get(t, {}).get("status") == "True" for t in ("Consolidatable", "Drifted", "Empty", "Expired")) or (
                pool in (never | underutilized) and conds.get("Initialized", {}).get("status") == "True"):
            out.append(name)
    return out


def records(watch: DisruptionWatch, commands: list[Command], others: list[tuple[str, str]], claims: dict[str, dict],
            deleted: set[str], index_of: dict[str, int], launching: list[str], node_of: dict[str, str]) -> list[dict]:
    """One record per disrupted NodeClaim, as the simulation writes them. `index_of`: NodeClaim ->
    its node's index; `launching`: NodeClaims with a DisruptionLaunching event, in creation order
    (handed to the commands that asked for replacements, in order); `node_of`: NodeClaim -> Node."""
    out: list[dict] = []
    spare = list(launching)

    def base(name: str) -> dict:
        nc = claims.get(name) or {}
        labels = nc.get("metadata", {}).get("labels") or {}
        return {"node": node_of.get(name) or watch.claim_nodes.get(name), "index": index_of.get(name),
                "nodeClaim": name, "nodePool": labels.get("karpenter.sh/nodepool", ""),
                "instanceType": labels.get("node.kubernetes.io/instance-type"),
                "capacityType": labels.get("karpenter.sh/capacity-type"), "driftReason": watch.drift_reasons.get(name)}

    for cmd in commands:
        reps, spare = spare[:cmd.replacements], spare[cmd.replacements:]
        gone = [c for c in cmd.claims if c in deleted or (claims.get(c) or {}).get("metadata", {}).get("deletionTimestamp")]
        for name in gone:
            rec = base(name)
            rec.update(reason=cmd.reason, method=cmd.method, decision=cmd.decision, command=None,
                       commandIndex=cmd.index, candidates=len(cmd.claims),
                       replacements=[{"nodeClaim": r, "node": node_of.get(r),
                                      "instanceType": ((claims.get(r) or {}).get("metadata", {}).get("labels") or {})
                                      .get("node.kubernetes.io/instance-type")} for r in reps])
            if cmd.reason != "Drifted":
                rec["driftReason"] = None
            out.append(rec)
    for name, why in others:
        if name not in claims:
            continue
        rec = base(name)
        if why == "expired":
            rec.update(reason="Expired", method="expiration")
        elif why == "unhealthy":
            rec.update(reason="Unhealthy", method="repair")
        else:
            spot = rec["capacityType"] == "spot"
            rec.update(reason="Interrupted" if spot else "InstanceTerminated", method="garbage-collection")
        rec.update(decision="delete", command=None, commandIndex=None, candidates=1, replacements=[], driftReason=None)
        out.append(rec)
    return out


def protected(events: list[dict], claims: dict[str, dict], live: set[str], node_of: dict[str, str],
              policies: dict[str, str] | None = None) -> list[dict]:
    """The candidates a protection kept, from DisruptionBlocked events. `policies`: NodePool -> its
    consolidationPolicy, which says whose candidates a core v0.36 budget event (BUDGET_ALL) kept."""
    out: list[dict] = []
    claim_of_node = {n: c for c, n in node_of.items()}

    def add(node: str | None, claim: str | None, by: str, message: str, method: str = "") -> None:
        rec = {"node": node, "nodeClaim": claim, "by": by, "message": message, "method": method}
        if rec not in out:
            out.append(rec)
    for e in events:
        if e.get("reason") != "DisruptionBlocked":
            continue
        msg = e.get("message") or ""
        if e.get("kind") in ("Node", "NodeClaim"):
            node = e["name"] if e["kind"] == "Node" else node_of.get(e["name"])
            claim = e["name"] if e["kind"] == "NodeClaim" else claim_of_node.get(e["name"])
            by = next((b for key, b in _BLOCKED_BY if key in msg), None)
            if by:              # the other reasons (deleting, not initialized, ...) protect nothing
                add(node, claim, by, msg)
        elif e.get("kind") == "NodePool" and (m := _BUDGET.search(msg)):
            reason = m.group(1)
            cond = "Drifted" if reason == "Drifted" else "Consolidatable"
            methods = [_METHODS[reason]] if reason in _METHODS else ["multi", "single"]
            for name in sorted(live):
                nc = claims[name]
                if (nc["metadata"].get("labels") or {}).get("karpenter.sh/nodepool") != e["name"]:
                    continue
                if _conditions(nc).get(cond, {}).get("status") != "True":
                    continue
                for method in methods:
                    add(node_of.get(name), name, "budget", msg, method)
    per_reason = {e["name"] for e in events if e.get("kind") == "NodePool" and _BUDGET.search(e.get("message") or "")}
    for e in events:
        if e.get("kind") == "NodePool" and e.get("message") == BUDGET_ALL and e["name"] not in per_reason:
            for name in sorted(live):
                if (claims[name]["metadata"].get("labels") or {}).get("karpenter.sh/nodepool") == e["name"]:
                    for method in _v036_methods(claims[name], (policies or {}).get(e["name"])):
                        add(node_of.get(name), name, "budget", BUDGET_ALL, method)
    return out


def _v036_methods(nc: dict, policy: str | None) -> list[str]:
    """The methods a core v0.36 NodeClaim is a candidate of (v0.36.1 pkg/controllers/disruption/ drift.go,
    expiration.go, emptiness.go, consolidation.go ShouldDisrupt), in the simulation's names."""
    conds = {t for t, c in _conditions(nc).items() if c.get("status") == "True"}
    out = [m for cond, m in (("Expired", "expiration"), ("Drifted", "drift")) if cond in conds]
    if policy == "WhenEmpty" and "Empty" in conds:
        out.append("empty")
    if policy == "WhenUnderutilized" and "Initialized" in conds:
        out += ["multi", "single"]
    return out


def timeline(watch: DisruptionWatch, launching: set[str], reasons: dict[str, str] | None = None,
             commands: list[Command] = ()) -> list[dict]:
    """The watch's timeline with each replacement's creation and initialization named as such, and
    every other NodeClaim's dropped (provisioning is not disruption). `reasons`: NodeClaim -> why it
    was disrupted, the detail of its taint (seen before the DisruptionReason condition) and of its
    deletion, as the simulation writes them."""
    out = []
    for t in watch.timeline:
        if t["action"] in ("tainted", "deleting") and not t["detail"] and (reasons or {}).get(t["nodeClaim"]):
            t = {**t, "detail": reasons[t["nodeClaim"]]}
        if t["action"] in ("created", "initialized"):
            if t["nodeClaim"] not in launching:
                continue
            t = {**t, "action": f"replacement {t['action']}",
                 "node": t["node"] or watch.claim_nodes.get(t["nodeClaim"], "")}
        out.append(t)
    return _taint_together(out, commands, watch)


def _taint_together(out: list[dict], commands: list[Command], watch: DisruptionWatch) -> list[dict]:
    """A command's candidates are tainted together (core v1.14.0 disruption/queue.go StartCommand
    markDisrupted, before anything else of the command), but a poll can miss a taint that comes and goes
    between two polls (an empty node is drained and deleted within a second): each candidate's taint
    goes right after the first one seen of its command."""
    for cmd in commands:
        seen = [i for i, t in enumerate(out) if t["action"] == "tainted" and t["nodeClaim"] in cmd.claims]
        if not seen:
            continue
        first = out[seen[0]]
        moved = [out[i] for i in seen[1:]]
        have = {first["nodeClaim"]} | {t["nodeClaim"] for t in moved}
        moved += [{**first, "nodeClaim": c, "node": watch.claim_nodes.get(c, "")} for c in cmd.claims if c not in have]
        out = [t for i, t in enumerate(out) if i not in seen[1:]]
        at = out.index(first) + 1
        out[at:at] = [{**t, "t": first["t"]} for t in moved]
    return out
