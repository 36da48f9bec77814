"""Karpenter's own log of a run, written and read: the run's decisions as the controller of its core release
logs them (zap JSON lines: level, time, logger, message, controller and the keys of that core's source), a
customer's or the real controller's log read back into the same entries, and the first place two logs part.

The message table is harness/data/karpenter-log.yaml (message, level, controller, keys and source per core
version); the disruption command's wordings are parsed by harness/runner/engines/real/outcome/disruptions.py
parse_command. docs/karpenter-log.md says how to use it and what is compared.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from harness.loop.lifecycle.health import UNHEALTHY
from harness.loop.lifecycle.launch import ASYNC_PROVISIONING_EVENT
from harness.loop.history import offset_text
from harness.model.data import load_yaml
from harness.model.upstream.releases import parse as parse_version
from harness.runner.engines.real.outcome import disruptions

DATA = Path(__file__).resolve().parent.parent / "data" / "karpenter-log.yaml"
# the keys every line has, which say nothing of the decision (zap's encoder and controller-runtime's context)
FRAME_KEYS = frozenset({"level", "time", "ts", "logger", "caller", "message", "msg", "commit", "controller",
                        "controllerGroup", "controllerKind", "namespace", "name", "reconcileID", "command-id"})
# the lifecycle's order of one object's lines logged in the same instant (the simulated clock gives many the
# same time; the real controller writes them in this order)
PHASE = {"provisionable": 0, "computed-new": 1, "computed-unready": 2, "created": 3, "launched": 4, "registered": 5,
         "initialized": 6, "expired": 7, "unhealthy": 7, "garbage-collected": 7, "multi-node-timeout": 7, "multi-node-timeout-command": 7,
         "single-node-timeout": 7, "disrupting": 8, "tainted": 12, "deleted-node": 13, "deleted-nodeclaim": 14}
# a disruption command's replacement: created by the command, its life after it
REPLACEMENT_PHASE = {"created": 9, "launched": 10, "registered": 11, "initialized": 11}
# the seeding trace of a NodeClaim the scenario gives (harness/loop/seed.py): not the provisioner's
SEEDED = "existing NodeClaim "
# the disruption command's method types at core v0.36 (v0.36.1 pkg/metrics/constants.go), by reason
_VIA_METHOD = {"Underutilized": "consolidation", "Empty": "emptiness", "Drifted": "drift", "Expired": "expiration"}
NAMED = ("NodeClaim", "Node", "NodePool")


@dataclass(frozen=True)
class Variant:
    """One message as one range of core versions logs it."""
    id: str
    message: str
    level: str
    controller: str
    keys: tuple[str, ...]
    source: str
    compare: tuple[str, ...]
    modeled: bool


@lru_cache(maxsize=1)
def table() -> list[dict]:
    return load_yaml(DATA.read_text())["messages"]


def _covers(cores: list, core: str) -> bool:
    v = parse_version(core)
    lo, hi = cores
    return (lo is None or v >= parse_version(lo)) and (hi is None or v < parse_version(hi))


@lru_cache(maxsize=32)
def variants(core: str) -> dict[str, Variant]:
    """The messages of core version `core` (`v1.6.2`), by id."""
    out = {}
    for m in table():
        for v in m["variants"]:
            if _covers(v["cores"], core):
                out[m["id"]] = Variant(m["id"], v["message"], v["level"], v.get("controller") or m["controller"],
                                       tuple(v.get("keys") or ()), v["source"], tuple(m.get("compare") or ()),
                                       m.get("modeled", True))
                break
    return out


def _knative(core: str) -> bool:
    """Core before v1.0 logs through knative's zap logger: `logger: controller.<name>`, lower-case keys."""
    return parse_version(core) < parse_version("v1.0.0")


# -- writing ---------------------------------------------------------------------------------------
@dataclass(order=True)
class _Line:
    t: float
    phase: int
    seq: int
    id: str = field(compare=False)
    keys: dict = field(compare=False, default_factory=dict)   # the message's own keys, in its order
    subject: tuple[str, str] | None = field(compare=False, default=None)   # (Kind, name) of a reconciler's object
    controller: str | None = field(compare=False, default=None)             # when not the table's
    text: dict = field(compare=False, default_factory=dict)   # fills a message with {placeholders}


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _slice(items: list[str], n: int = 5) -> str:
    """pretty.Slice / instanceTypeList (sigs.k8s.io/karpenter v1.14.0 pkg/utils/pretty/pretty.go Slice)."""
    out = ", ".join(items[:n])
    return out + (f" and {len(items) - n} other(s)" if len(items) > n else "")


def _quantities(res: dict) -> dict:
    out = {}
    for k, v in sorted((res or {}).items()):
        if v:
            out[k] = f"{v}m" if k == "cpu" and isinstance(v, int) else str(v)
    return out


def _reconcile_id(*parts) -> str:
    return str(uuid.UUID(hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()[:32]))


def lines(result, core: str) -> list[dict]:
    """The log records of a run (RunResult) as core `core` writes them, in time order."""
    nodes = {n.nodeclaim: n for n in result.nodes}
    started = result.started or 0.0
    out: list[_Line] = []
    seq = iter(range(1_000_000))

    replacement_of = {r["nodeClaim"]: d for d in result.disruptions for r in d.get("replacements") or []}
    # the scenario's existing NodeClaims: the harness created them, core launched them (real engine) or had
    # launched them before the log began (a dump)
    seeded = {line.split(SEEDED, 1)[1].split(" ", 1)[0] for line in result.trace if SEEDED in line}

    def add(t, id_, keys=None, subject=None, controller=None, text=None):
        claim = subject[1] if subject and subject[0] == "NodeClaim" else (keys or {}).get("NodeClaim", {}).get("name")
        phase = REPLACEMENT_PHASE.get(id_, PHASE[id_]) if claim in replacement_of else PHASE[id_]
        out.append(_Line(t, phase, next(seq), id_, keys or {}, subject, controller, text or {}))

    # provisioning rounds: the NodeClaims the provisioner created at one instant (replacements are the
    # disruption controller's); NodeClaims that were there before the run are not in its log
    rounds: dict[float, list] = {}
    for nc in result.nodeclaims:
        t = nc.at.get("created")
        if t is None or t < started or nc.rejected or nc.name in seeded:
            continue
        if nc.name not in replacement_of:
            rounds.setdefault(t, []).append(nc)
    for t, claims in sorted(rounds.items()):
        pods = sorted({p for nc in claims for p in nc.pods})
        add(t, "provisionable", {"Pods": _slice(pods), "duration": "0s"})
        add(t, "computed-new", {"nodeclaims": len(claims), "pods": sum(len(nc.pods) for nc in claims)})
    for nc in result.nodeclaims:
        t = nc.at.get("created")
        if t is None or t < started or nc.rejected or nc.name in seeded:
            continue
        node = nodes.get(nc.name)
        its = next((r.get("values") or [] for r in nc.requirements if r.get("key") == "node.kubernetes.io/instance-type"), [])
        add(t, "created", {"NodePool": {"name": nc.nodepool}, "NodeClaim": {"name": nc.name},
                           "requests": dict((node.nodeclaim_requests if node else {}) or {}),
                           "instance-types": _slice(sorted(its))},
            controller="disruption" if nc.name in replacement_of else None)
    # a VM the provider returned and that failed afterwards (provider.asyncProvisioning): core logged its
    # launch before the provider's AsyncProvisioningError event and delete (seen on the real v1.14.0 controller)
    failed_after = {e["name"]: e.get("t") for e in result.events
                    if e.get("kind") == "NodeClaim" and e.get("reason") == ASYNC_PROVISIONING_EVENT}
    for nc in result.nodeclaims:
        node = nodes.get(nc.name)
        if node is None and nc.name in failed_after and nc.failures and "launched" not in nc.at:
            tried = nc.failures[-1].get("attempted") or {}
            add(failed_after[nc.name], "launched", {
                "provider-id": f"azure:///subscriptions/harness/resourcegroups/harness/providers/"
                               f"Microsoft.Compute/virtualMachines/aks-{nc.name}",
                "instance-type": tried.get("size"), "zone": tried.get("zone"),
                "capacity-type": tried.get("capacityType"), "allocatable": {}}, ("NodeClaim", nc.name))
        if node is None:
            continue
        pid = f"azure:///subscriptions/harness/resourcegroups/harness/providers/Microsoft.Compute/virtualMachines/{node.vm_name}"
        it = result.instance_types.get(node.instance_type)
        alloc = _quantities(it.allocatable()) if it is not None and hasattr(it, "allocatable") else {}
        subject = ("NodeClaim", nc.name)
        for what in ("launched", "registered", "initialized"):
            t = nc.at.get(what)
            if t is None or t < started:
                continue
            if what == "launched":
                keys = {"provider-id": pid, "instance-type": node.instance_type, "zone": node.zone,
                        "capacity-type": node.capacity_type, "allocatable": alloc}
            elif what == "registered":
                keys = {"provider-id": pid, "Node": {"name": node.name}}
            else:
                keys = {"provider-id": pid, "Node": {"name": node.name}, "allocatable": alloc}
            add(t, what, keys, subject)
    _disruption_lines(result, core, add, nodes)
    out.sort()
    return [_record(ln, core) for ln in out]


def _timeout_lines(result, add) -> None:
    """A consolidation method that ran out of its time (the decision record's `consolidation-timed-out`)."""
    for d in getattr(result, "decisions", None) or ():
        if d.action != "consolidation-timed-out":
            continue
        if d.data.get("method") == "single":
            n = d.data.get("candidatesEvaluated", 0)
            add(d.t, "single-node-timeout", {"candidates_evaluated": n}, text={"n": n})
        elif d.data.get("logValues") is None:
            batch = d.data.get("lastBatchSize", 0)
            add(d.t, "multi-node-timeout", {"last_batch_size": batch}, text={"batch": batch})
        else:
            lv = d.data["logValues"]
            nodes = ", ".join(f"{x['Node']['name']}/{x['instance-type']}/{x['capacity-type']}" for x in lv["disrupted-nodes"])
            text = f"{lv['decision']}, terminating {lv['disrupted-node-count']} nodes ({lv['pod-count']} pods) {nodes}"
            add(d.t, "multi-node-timeout-command", dict(lv), text={"command": text})


def _disruption_lines(result, core: str, add, nodes: dict) -> None:
    """Commands, expirations, garbage collection, consolidation timeouts, and each deleted NodeClaim's
    termination."""
    _timeout_lines(result, add)
    knative = _knative(core)
    commands: dict = {}
    for d in result.disruptions:
        if d.get("commandIndex") is None and not (knative and d.get("reason") == "Expired"):
            t = d.get("at")
            if t is None:
                continue
            if d.get("reason") == "Expired":
                add(t, "expired", {"Node": {"name": d.get("node")}}, ("NodeClaim", d["nodeClaim"]))
            elif d.get("reason") == UNHEALTHY:
                # the Node is what core's node.health reconciles: controller-runtime names it
                add(t, "unhealthy", {"NodeClaim": {"name": d["nodeClaim"]}}, ("Node", d.get("node") or ""))
            else:
                add(t, "garbage-collected", {"NodeClaim": {"name": d["nodeClaim"]}, "provider-id": "",
                                             "nodepool": d.get("nodePool")})
            continue
        key = d.get("command") or d.get("commandIndex") or d["nodeClaim"]
        commands.setdefault(key, []).append(d)
    tainted = {e.get("nodeClaim"): e.get("t") for e in result.timeline if e.get("action") == "tainted"}
    created = {nc.name: nc.at.get("created") for nc in result.nodeclaims}

    def started(recs: list[dict]) -> float:
        # a command starts by tainting its candidates and creating its replacements (core v1.14.0
        # pkg/controllers/disruption/queue.go StartCommand); its records' `at` is when they were deleted
        ts = [r.get("at") for r in recs] + [tainted.get(r["nodeClaim"]) for r in recs]
        ts += [created.get(x.get("nodeClaim")) for r in recs for x in r.get("replacements") or []]
        return min(t for t in ts if t is not None)

    for key, recs in sorted(commands.items(), key=lambda kv: started(kv[1])):
        first = recs[0]
        t = started(recs)
        reps = first.get("replacements") or []
        cid = _reconcile_id("command", key)
        cands = [{"Node": {"name": r.get("node")}, "NodeClaim": {"name": r["nodeClaim"]},
                  "instance-type": r.get("instanceType"), "capacity-type": r.get("capacityType")} for r in recs]
        pods = sum(len(n.pods) for r in recs if (n := nodes.get(r["nodeClaim"])))
        reason, decision = first.get("reason") or "", first.get("decision") or "delete"
        rep_nodes = [{"capacity-type": (nodes.get(r.get("nodeClaim")).capacity_type if nodes.get(r.get("nodeClaim"))
                                        else "on-demand")} for r in reps]
        if len(rep_nodes) == 1:
            rep_nodes[0]["instance-types"] = reps[0].get("instanceType") or ""
        names = ", ".join(r.get("node") or r["nodeClaim"] for r in recs)
        pools = ",".join(dict.fromkeys(r.get("nodePool") or "" for r in recs))
        logv = {"decision": decision, "disrupted-node-count": len(recs), "replacement-node-count": len(reps),
                "pod-count": pods, "disrupted-nodes": cands, "replacement-nodes": rep_nodes}
        v = parse_version(core)
        if v >= parse_version("v1.9.0"):
            pools_part = f"nodepools=[{pools}]: " if v >= parse_version("v1.12.0") else ""
            arrow = f" -> [{len(reps)} replacement{'s' if len(reps) != 1 else ''}]" if reps else ""
            add(t, "disrupting", {"command": f"{reason}/{cid}: {decision}: {pools_part}[{names}]{arrow} (savings: $0.00)",
                                  **logv})
        elif v >= parse_version("v1.3.0"):
            add(t, "disrupting", {"command-id": cid, "reason": reason.lower(), **logv})
        else:
            text = f"{decision}, terminating {len(recs)} nodes ({pods} pods) " + ", ".join(
                f"{r.get('node') or r['nodeClaim']}/{r.get('instanceType')}/{r.get('capacityType')}" for r in recs)
            if len(reps) == 1:
                text += f" and replacing with {rep_nodes[0]['capacity-type']} node from types {reps[0].get('instanceType')}"
            elif reps:
                spot = sum(1 for r in rep_nodes if r["capacity-type"] == "spot")
                text += f" and replacing with {spot} spot and {len(reps) - spot} on-demand, from types " \
                        f"{reps[0].get('instanceType')}"
            if knative:
                method = _VIA_METHOD.get(reason, reason.lower())
                add(t, "disrupting", {"command-id": cid}, text={"method": method, "command": text})
            else:
                add(t, "disrupting", {"command-id": cid, "reason": reason.lower()}, text={"command": text})
    # termination: the Node tainted when its drain starts, deleted with its instance, then the NodeClaim
    when: dict[str, dict[str, float]] = {}
    for e in result.timeline:
        when.setdefault(e.get("nodeClaim") or "", {}).setdefault(e.get("action"), e.get("t"))
    for nc in result.nodeclaims:
        t_end = nc.at.get("deleted")
        seen = when.get(nc.name, {})
        # a Node still draining at the end (a do-not-disrupt pod, a PDB) was tainted, not yet deleted
        t_taint = seen.get("draining", seen.get("deleting", t_end))
        if t_taint is None:
            continue
        node = nodes.get(nc.name)
        node_name = node.name if node else nc.node
        if node_name and nc.at.get("registered") is not None:
            add(t_taint, "tainted", {"NodeClaim": {"name": nc.name}, "taint.Key": "karpenter.sh/disrupted",
                                     "taint.Value": "", "taint.Effect": "NoSchedule"}, ("Node", node_name))
            if t_end is not None:
                add(t_end, "deleted-node", {"NodeClaim": {"name": nc.name}}, ("Node", node_name))
        if t_end is not None:
            add(t_end, "deleted-nodeclaim", {"provider-id": "", "Node": {"name": node_name or ""}},
                ("NodeClaim", nc.name))


def _record(ln: _Line, core: str) -> dict:
    """One zap JSON record: zap's frame, controller-runtime's context, the message's keys (those the core's
    variant lists, in its order)."""
    var = variants(core).get(ln.id)
    if var is None:
        raise KeyError(f"core {core} has no {ln.id!r} line in {DATA.name}")
    ctl = ln.controller or var.controller
    msg = var.message.format(**ln.text) if ln.text else var.message
    have = {k.lower(): k for k in ln.keys}       # core v0.36's keys are the lower-case `nodeclaim`, `node`, ...
    keys = {k: ln.keys[have[k.lower()]] for k in var.keys if k.lower() in have}
    if _knative(core):
        rec = {"level": var.level, "time": _iso(ln.t), "logger": f"controller.{ctl}", "message": msg,
               "commit": "harness"}
        if ln.subject:
            rec[ln.subject[0].lower()] = ln.subject[1]
        for k, v in keys.items():
            rec[k] = v["name"] if isinstance(v, dict) and set(v) == {"name"} else v
        return rec
    rec = {"level": var.level, "time": _iso(ln.t), "logger": "controller", "message": msg, "commit": "harness",
           "controller": ctl}
    if ln.subject:
        kind, name = ln.subject
        rec.update({"controllerGroup": "karpenter.sh" if kind == "NodeClaim" else "", "controllerKind": kind,
                    kind: {"name": name}, "namespace": "", "name": name,
                    "reconcileID": _reconcile_id(ln.id, kind, name, ln.t)})
    else:
        rec.update({"namespace": "", "name": "", "reconcileID": _reconcile_id(ln.id, ln.t, ln.seq)})
    rec.update(keys)
    return rec


def dumps(records: list[dict]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


# -- reading ---------------------------------------------------------------------------------------
@dataclass
class Entry:
    """One known message of a log: its position among them (1-based), when, which message, the facts
    compared, and the record as read."""
    n: int
    id: str
    t: float | None
    message: str
    facts: dict
    record: dict
    modeled: bool = True
    line: int = 0                 # the line of the file it was read from (1-based)


@lru_cache(maxsize=1)
def _by_message() -> dict[str, list[tuple[str, str, bool]]]:
    """Each exact message -> the (id, controller, modeled) of the messages that write it: one, except for a
    message several controllers share (controller-runtime's `Reconciler error`), told apart by controller."""
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for m in table():
        for v in m["variants"]:
            if "{" not in v["message"]:
                ctl = v.get("controller", m["controller"]) or ""
                got = out.setdefault(v["message"], [])
                if (m["id"], ctl, m.get("modeled", True)) not in got:
                    got.append((m["id"], ctl, m.get("modeled", True)))
    return out


@lru_cache(maxsize=1)
def _error_templates() -> list[tuple[re.Pattern, str]]:
    """The templated messages of error lines (`evicting pod, {error}`) as patterns, with their id."""
    out = []
    for m in table():
        if not m.get("error"):
            continue
        for v in m["variants"]:
            if "{" in v["message"]:
                out.append((_pattern(v["message"]), m["id"]))
    return out


def _pattern(message: str) -> re.Pattern:
    """A table message with `{placeholders}` as a pattern of the whole text, each placeholder a named group."""
    parts = re.split(r"\{(\w+)\}", message)
    return re.compile("^" + "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*?)" for i, p in enumerate(parts))
                      + "$", re.S)


def controller_of(rec: dict) -> str:
    """The controller that wrote a record: controller-runtime's key, or core v0.36's `controller.<name>` logger."""
    ctl = rec.get("controller")
    if isinstance(ctl, str) and ctl:
        return ctl
    logger = str(rec.get("logger") or "")
    return logger.split(".", 1)[1] if logger.startswith("controller.") else ""


def _which(choices: list[tuple[str, str, bool]], rec: dict) -> tuple[str, bool]:
    """The message a record is, among those that share its text: the record's controller's, else the one
    any controller writes (controller ""), else the only one."""
    if len(choices) == 1:
        return choices[0][0], choices[0][2]
    ctl = controller_of(rec)
    for id_, c, modeled in choices:
        if c == ctl:
            return id_, modeled
    id_, _, modeled = next((x for x in choices if not x[1]), choices[0])
    return id_, modeled


@lru_cache(maxsize=1)
def refusals() -> list[dict]:
    """What an eviction's failure says (karpenter-log.yaml `refusals`): id, pdbs, says, match."""
    return load_yaml(DATA.read_text()).get("refusals") or []


def refusal_of(text: str) -> dict | None:
    """The refusal an error or event text names (its `refusals` entry), or None."""
    for r in refusals():
        if any(m in text for m in r["match"]):
            return r
    return None


def _compare_of(id_: str) -> tuple[str, ...]:
    return next(tuple(m.get("compare") or ()) for m in table() if m["id"] == id_)


def _time(rec: dict) -> float | None:
    t = rec.get("time") or rec.get("ts")
    if isinstance(t, (int, float)):
        return float(t)
    if isinstance(t, str):
        try:
            return dt.datetime.fromisoformat(t).timestamp()
        except ValueError:
            return None
    return None


def _get_name(rec: dict, kind: str) -> str | None:
    v = rec.get(kind, rec.get(kind.lower()))
    return disruptions.ref_name(v) if v is not None else None


def _facts(id_: str, rec: dict) -> dict:
    facts: dict = {}
    for k in NAMED:
        if (name := _get_name(rec, k)):
            facts[k] = name
    if id_ == "disrupting":
        cmd = disruptions.parse_command(rec, 1)
        if cmd is not None:
            facts.update({"reason": cmd.reason, "decision": cmd.decision, "candidates": tuple(cmd.claims),
                          "replacement-node-count": cmd.replacements})
            # core v1.3+ names the candidates by NodeClaim, before by Node
            facts["candidates-kind"] = "NodeClaim" if rec.get("message") == disruptions.COMMAND_LINE else "Node"
        for k in NAMED:
            facts.pop(k, None)
    for k in ("instance-type", "capacity-type", "zone", "nodeclaims", "pods"):
        if k in rec:
            facts[k] = rec[k]
    if id_ == "provisionable":
        facts["Pods"] = rec.get("Pods", rec.get("pods", ""))
    if rec.get("level") == "ERROR" or id_ in error_ids():
        if "error" in rec:
            facts["error"] = str(rec["error"])
            if (r := refusal_of(facts["error"])) is not None:
                facts["refusal"] = r["id"]
        if id_ in ("eviction-failed", "schedule-failed") and (pod := _pod_key(rec)):
            facts["Pod"] = pod
    return facts


@lru_cache(maxsize=1)
def error_ids() -> frozenset[str]:
    return frozenset(m["id"] for m in table() if m.get("error"))


def _pod_key(rec: dict) -> str | None:
    """`namespace/name` of the pod an eviction line is about: klog.KRef's {"name", "namespace"} (core v1.0+),
    core v0.36's `pod` text, or the reconcile request's `namespace` and `name` (core v1.6+'s eviction queue)."""
    ref = rec.get("Pod", rec.get("pod"))
    if isinstance(ref, dict) and ref.get("name"):
        return f"{ref.get('namespace') or 'default'}/{ref['name']}"
    if isinstance(ref, str) and ref:
        return ref if "/" in ref else f"default/{ref}"
    if rec.get("name"):
        return f"{rec.get('namespace') or 'default'}/{rec['name']}"
    return None


def read(text: str) -> list[Entry]:
    """The known messages of a log (any core's wording), in log order. Lines need not be pure JSON: a
    `kubectl logs --prefix` or timestamp prefix before the first `{` is skipped; other lines are ignored."""
    known = _by_message()
    out: list[Entry] = []
    for line_no, line in enumerate(text.splitlines(), 1):
        at = line.find("{")
        if at < 0:
            continue
        try:
            rec = json.loads(line[at:])
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        msg = str(rec.get("message", rec.get("msg", "")))
        rec = {**rec, "message": msg}
        if msg in known:
            id_, modeled = _which(known[msg], rec)
        elif disruptions.parse_command(rec, 1) is not None:
            id_, modeled = "disrupting", True
        elif (hit := next(((p, i) for p, i in _error_templates() if p.match(msg)), None)) is not None:
            id_, modeled = hit[1], False
            rec.setdefault("error", hit[0].match(msg).groupdict().get("error", ""))
        else:
            continue
        out.append(Entry(len(out) + 1, id_, _time(rec), msg, _facts(id_, rec), rec, modeled, line_no))
    return out


def trim(text: str) -> str:
    """Only the decision lines of a log, as they were (what the test fixtures of real controllers' logs keep)."""
    out = []
    for line in text.splitlines():
        at = line.find("{")
        if at >= 0 and read(line[at:]):
            out.append(line[at:] + "\n")
    return "".join(out)


def read_file(path) -> list[Entry]:
    return read(Path(path).read_text(errors="replace"))


# -- which core release worded a log ---------------------------------------------------------------
_SEMVER = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
Span = tuple[tuple | None, tuple | None]          # [from, before) as version tuples; None: open


def version_tuple(text: str | None) -> tuple | None:
    """`v1.12.1-0.2026...` -> (1, 12, 1): the release a core version (a pseudo-version too) is of."""
    m = _SEMVER.match(str(text or "").strip())
    return tuple(int(x) for x in m.groups()) if m else None


def _span_of(cores: list) -> Span:
    return version_tuple(cores[0]), version_tuple(cores[1])


def _meet(a: list[Span], b: list[Span]) -> list[Span]:
    out = []
    for lo1, hi1 in a:
        for lo2, hi2 in b:
            lo = max((x for x in (lo1, lo2) if x is not None), default=None)
            hi = min((x for x in (hi1, hi2) if x is not None), default=None)
            if lo is None or hi is None or lo < hi:
                out.append((lo, hi))
    return out


_CONTEXT_KEYS = frozenset(k.lower() for k in NAMED)


def _fits(variant: dict, message: dict, rec: dict) -> bool:
    """Whether core's `variant` of `message` could have written `rec`: the same text (a templated one as its
    pattern), every key it adds, the controller where the message's variants differ in it, and zap's frame
    (core before v1.0 logs through knative: `logger: controller.<name>`, no `controller` key)."""
    text = variant["message"]
    if not (_pattern(text).match(rec["message"]) if "{" in text else text == rec["message"]):
        return False
    # a reconciled object's key (NodeClaim, Node) comes from the reconcile's context, which may lack it (an
    # `initialized nodeclaim` registered in the same reconcile, a NodeClaim deleted before its Node joined)
    if any(k not in rec for k in variant.get("keys") or () if k.lower() not in _CONTEXT_KEYS):
        return False
    ctls = {v.get("controller", message["controller"]) or "" for v in message["variants"]}
    if len(ctls) > 1 and (variant.get("controller", message["controller"]) or "") != controller_of(rec):
        return False
    knative = str(rec.get("logger") or "").startswith("controller.")
    hi = version_tuple(variant["cores"][1])
    before_v1 = hi is not None and hi <= (1, 0, 0)
    return knative == before_v1 if "logger" in rec else True


def cores_of(e: Entry) -> list[Span] | None:
    """The core versions whose wording `e` is (karpenter-log.yaml's variants that fit its record); None when
    no variant fits it (a line the table words otherwise)."""
    message = next(m for m in table() if m["id"] == e.id)
    spans = sorted((_span_of(v["cores"]) for v in message["variants"] if _fits(v, message, e.record)),
                   key=lambda s: s[0] or ())
    merged: list[Span] = []
    for lo, hi in spans:                     # adjacent variants as one stretch of versions
        if merged and merged[-1][1] is not None and lo is not None and merged[-1][1] >= lo:
            last_hi = merged[-1][1]
            merged[-1] = (merged[-1][0], None if hi is None else max(last_hi, hi))
        else:
            merged.append((lo, hi))
    return merged or None


@dataclass
class Wording:
    """A stretch of a log that one core release could have written: its core versions, its first and last
    line, and the lines that narrowed the versions to these (line, message, their own versions)."""
    spans: list[Span]
    first: int
    last: int
    narrowed_by: list[tuple[int, str, list[Span]]] = field(default_factory=list)

    def covers(self, core: str) -> bool:
        v = version_tuple(core)
        return v is not None and any((lo is None or v >= lo) and (hi is None or v < hi) for lo, hi in self.spans)

    @property
    def text(self) -> str:
        return " or ".join(span_text(s) for s in self.spans)


def span_text(span: Span) -> str:
    """`core v1.3.0 to v1.8.x`, `core v1.9.0 and later`."""
    lo, hi = span
    low = "v" + ".".join(map(str, lo)) if lo else "v0.36.0"
    if hi is None:
        return f"core {low} and later"
    if hi[2] == 0 and hi[1] > 0:
        high = f"v{hi[0]}.{hi[1] - 1}.x"
    else:
        high = "before v" + ".".join(map(str, hi))
    return f"core {low} to {high}"


def wording(entries: list[Entry]) -> list[Wording]:
    """The log's stretches by the core release their words are of: one for a log one controller wrote; a
    new one where a line fits none of the versions before it (an upgrade in the middle of the log)."""
    out: list[Wording] = []
    for e in entries:
        spans = cores_of(e)
        if spans is None:
            continue
        cur = out[-1] if out else None
        met = _meet(cur.spans, spans) if cur else []
        if cur is None or not met:
            out.append(Wording(spans, e.line or e.n, e.line or e.n, [(e.line or e.n, e.message, spans)]))
            continue
        if met != cur.spans:
            cur.narrowed_by.append((e.line or e.n, e.message, spans))
        cur.spans, cur.last = met, e.line or e.n
    return out


def wording_notes(entries: list[Entry], core: str, where: str, whose: str) -> list[str]:
    """What the log's wording says of the release that wrote it, against `core` (`whose`: the profile or
    release that core is of): nothing when it fits; a WARNING naming the lines and the releases whose core
    writes them when it does not, or when the log's words change in the middle."""
    parts = wording(entries)
    if not parts:
        return []
    if len(parts) == 1 and parts[0].covers(core):
        return [f"{where}: its words are {parts[0].text}'s, as {whose} (core {core}) writes them"]
    out = []
    if len(parts) > 1:
        out.append(f"WARNING: {where}: its words change in the middle: " + "; ".join(
            f"lines {w.first}-{w.last}: {w.text}" for w in parts) + " (the controller was upgraded or rolled "
            "back in between?)")
    for w in parts:
        if w.covers(core):
            continue
        why = "; ".join(f"line {n} {msg!r}: {' or '.join(span_text(s) for s in spans)}"
                        for n, msg, spans in w.narrowed_by[-2:])
        releases = releases_of(w)
        out.append(f"WARNING: {where}" + (f" lines {w.first}-{w.last}" if len(parts) > 1 else "") +
                   f" is worded as {w.text} writes it, not as core {core} ({whose}) does ({why})" +
                   (f": the controller that wrote it is of provider {', '.join(releases)}, not the release named"
                    if releases else ""))
    return out


def releases_of(w: Wording) -> list[str]:
    """The release profiles (harness/data/releases/index.yaml) whose core wrote a log stretch's words."""
    from harness.model.upstream.releaseindex import index
    return [name for name, entry in (index().get("profiles") or {}).items() if w.covers(str(entry.get("core") or ""))]


# -- comparing -------------------------------------------------------------------------------------
class _Names:
    """Generated names of the two sides matched as they are met: each side's name maps to one of the
    other's, per kind (a NodeClaim, a Node, a NodePool)."""

    def __init__(self):
        self.ab: dict[tuple[str, str], str] = {}
        self.ba: dict[tuple[str, str], str] = {}

    def fits(self, kind: str, a: str, b: str) -> bool:
        return self.ab.get((kind, a), b) == b and self.ba.get((kind, b), a) == a

    def bind(self, kind: str, a: str, b: str) -> None:
        self.ab[(kind, a)] = b
        self.ba[(kind, b)] = a


def _pairs(a: Entry, b: Entry) -> list[tuple[str, object, object]]:
    """(key, a's value, b's value) of the compared keys."""
    out = []
    for k in _compare_of(a.id):
        if k == "candidates":
            ka, kb = a.facts.get("candidates-kind", "Node"), b.facts.get("candidates-kind", "Node")
            out.append((k, (ka, a.facts.get(k, ())), (kb, b.facts.get(k, ()))))
        else:
            out.append((k, a.facts.get(k), b.facts.get(k)))
    return out


def _same(a: Entry, b: Entry, names: _Names, bind: bool = False) -> list[str]:
    """The compared keys on which `a` and `b` differ (names through `names`; bound when `bind` and equal)."""
    if a.id != b.id:
        return ["message"]
    diff, binds = [], []
    for k, va, vb in _pairs(a, b):
        if k == "candidates":
            (ka, la), (kb, lb) = va, vb
            if len(la) != len(lb) or ka != kb:
                diff.append(k)
                continue
            if all(names.fits(ka, x, y) for x, y in zip(la, lb)):
                binds += [(ka, x, y) for x, y in zip(la, lb)]
            else:
                diff.append(k)
        elif k in NAMED:
            if (va is None) != (vb is None) or (va is not None and not names.fits(k, va, vb)):
                diff.append(k)
            elif va is not None:
                binds.append((k, va, vb))
        elif va != vb:
            diff.append(k)
    if not diff and bind:
        for kind, x, y in binds:
            names.bind(kind, x, y)
    return diff


def _about(e: Entry) -> tuple[set[str], set[tuple[str, str]]]:
    """What orders a line against others: the controller loop it belongs to where that is one at a time
    (a provisioning round, a disruption pass) and the objects it is about."""
    groups = {"provisioner"} if e.id in ("provisionable", "computed-new", "computed-unready") or (
        e.id == "created" and e.record.get("controller", "provisioner") == "provisioner") else set()
    if e.id == "disrupting":
        groups.add("disruption")
    objs = {(k, e.facts[k]) for k in ("NodeClaim", "Node") if e.facts.get(k)}
    objs |= {(e.facts.get("candidates-kind", "Node"), n) for n in e.facts.get("candidates", ())}
    return groups, objs


def _ordered(e: Entry, f: Entry, names: _Names) -> bool:
    """Whether `e` (left) may not pass `f` (right): same loop, or an object both may be about."""
    ge, oe = _about(e)
    gf, of = _about(f)
    if ge & gf:
        return True
    if e.facts.get("NodeClaim") and f.facts.get("NodeClaim"):     # a NodeClaim and its Node go together
        oe = {o for o in oe if o[0] == "NodeClaim"}
        of = {o for o in of if o[0] == "NodeClaim"}
    for kind, x in oe:
        for kind2, y in of:
            if kind != kind2:
                continue
            mapped = names.ab.get((kind, x))
            if mapped == y or (mapped is None and (kind, y) not in names.ba):
                return True
    return False


@dataclass
class Divergence:
    """Where two logs first part: the n-th compared message of each side (None: that side has ended)."""
    left: Entry | None
    right: Entry | None
    matched: int
    differs: list[str]
    left_start: float | None
    right_start: float | None
    left_label: str = "run"
    right_label: str = "log"
    labels: dict = field(default_factory=dict)      # (side, kind, name) -> `nodeclaim-1`

    def render(self) -> list[str]:
        where = []
        for label, e in ((self.left_label, self.left), (self.right_label, self.right)):
            where.append(f"{label} message {e.n}" if e else f"{label}: no further message")
        out = [f"the {self.left_label} and the {self.right_label} part after {self.matched} matching message(s): "
               f"{', '.join(where)}" + (f" (differ in: {', '.join(self.differs)})" if self.differs else "")]
        for side, label, e, start in (("a", self.left_label, self.left, self.left_start),
                                      ("b", self.right_label, self.right, self.right_start)):
            if e is None:
                out.append(f"  {label:4} -")
                continue
            off = offset_text(e.t - start) if e.t is not None and start is not None else "?"
            out.append(f"  {label:4} #{e.n} {off:>8} {e.message!r} {json.dumps(self._shown(side, e), sort_keys=False)}")
        return out

    def _shown(self, side: str, e: Entry) -> dict:
        shown = {}
        for k, v in e.facts.items():
            if k == "candidates-kind":
                continue
            if k in NAMED:
                shown[k] = f"{v} ({self.labels.get((side, k, v), '?')})"
            elif k == "candidates":
                kind = e.facts.get("candidates-kind", "Node")
                shown[k] = [f"{n} ({self.labels.get((side, kind, n), '?')})" for n in v]
            else:
                shown[k] = v
        return shown


def _labels(entries: list[Entry], side: str, out: dict) -> None:
    """Each generated name's label by order of first appearance on its side: `nodeclaim-1`, `node-2`."""
    count: dict[str, int] = {}
    for e in entries:
        refs = [(k, e.facts[k]) for k in NAMED if e.facts.get(k)]
        refs += [(e.facts.get("candidates-kind", "Node"), n) for n in e.facts.get("candidates", ())]
        for kind, name in refs:
            if (side, kind, name) not in out:
                count[kind] = count.get(kind, 0) + 1
                out[(side, kind, name)] = f"{kind.lower()}-{count[kind]}"


def _debug(e: Entry) -> bool:
    return str(e.record.get("level", "")).upper() == "DEBUG"


def _debug_seen(entries: list[Entry]) -> bool:
    return any(_debug(e) for e in entries)


@dataclass(frozen=True)
class Timing:
    """How `compare` weighs the two sides' times: each side's zero (epoch s; None: its first compared line)
    and how far apart two matched lines' offsets from their zeros may be (None: times are not compared)."""
    left_zero: float | None = None
    right_zero: float | None = None
    tolerance: float | None = None


def names_of(entries: list[Entry]) -> set[tuple[str, str]]:
    """(kind, name) of every NodeClaim and Node the entries name, candidates included."""
    out = set()
    for e in entries:
        out |= {(k, e.facts[k]) for k in ("NodeClaim", "Node") if e.facts.get(k)}
        out |= {(e.facts.get("candidates-kind", "Node"), n) for n in e.facts.get("candidates", ())}
    return out


def compare(left: list[Entry], right: list[Entry], left_label: str = "run", right_label: str = "log",
            window: int = 12, timing: Timing = Timing()) -> Divergence | None:
    """Where `left` and `right` first part, or None when their compared messages agree. Lines of different
    objects may come in either order (controllers run concurrently): a line matches the other side's first
    unmatched line like it when no unmatched line before that one is about the same object (within
    `window` lines), and, with `timing.tolerance`, when their offsets from each side's zero are that close.
    A NodeClaim or Node name both sides hold pairs with itself (a scenario made from the log keeps its
    names); the other names are generated, and pair as they are met."""
    a = [e for e in left if e.modeled]
    b = [e for e in right if e.modeled]
    # a log at the default INFO level has no DEBUG line (`deleting expired nodeclaim`, garbage collection):
    # the other side's are left out too
    if not all(map(_debug_seen, (a, b))):
        a = [e for e in a if not _debug(e)]
        b = [e for e in b if not _debug(e)]
    names = _Names()
    for kind, name in names_of(a) & names_of(b):
        names.bind(kind, name, name)
    zero_a = timing.left_zero if timing.left_zero is not None else _first_time(a)
    zero_b = timing.right_zero if timing.right_zero is not None else _first_time(b)

    def apart(x: Entry, y: Entry) -> bool:
        return (timing.tolerance is not None and None not in (x.t, y.t, zero_a, zero_b)
                and abs((x.t - zero_a) - (y.t - zero_b)) > timing.tolerance)

    used = [False] * len(b)
    matched = 0
    i = 0
    while i < len(a):
        e = a[i]
        pending = [j for j in range(len(b)) if not used[j]][:window]
        hit = None
        for j in pending:
            if not _same(e, b[j], names) and not apart(e, b[j]):
                hit = j
                break
            if _ordered(e, b[j], names):
                break
        if hit is None:
            first = pending[0] if pending else None
            other = b[first] if first is not None else None
            return _divergence(e, other, matched, names, a, b, left_label, right_label, (zero_a, zero_b),
                               timing.tolerance if other is not None and apart(e, other) else None)
        _same(e, b[hit], names, bind=True)
        used[hit] = True
        matched += 1
        i += 1
    rest = [j for j in range(len(b)) if not used[j]]
    if rest:
        return _divergence(None, b[rest[0]], matched, names, a, b, left_label, right_label, (zero_a, zero_b))
    return None


def _divergence(e, other, matched, names, left, right, left_label, right_label, zeros, late=None) -> Divergence:
    differs = _same(e, other, names) if e is not None and other is not None else []
    if late is not None:
        differs.append(f"time: more than {offset_text(late)[1:]} apart")
    labels: dict = {}
    _labels(left, "a", labels)
    _labels(right, "b", labels)
    return Divergence(e, other, matched, differs, zeros[0], zeros[1], left_label, right_label, labels)


def _first_time(entries: list[Entry]) -> float | None:
    return next((x.t for x in entries if x.t is not None), None)


# -- the run's side ----------------------------------------------------------------------------------
def core_of(outcome) -> str:
    """The core version whose wording the run's log takes (its release's)."""
    return str((outcome.result.release or {}).get("core") or "v1.14.0")


def run_log(outcome) -> str:
    """The log of a finished run: the real controller's own (Outcome.controller_log) on the real engine, else
    the simulation's decisions written as its core logs them."""
    if outcome.engine == "real" and getattr(outcome, "controller_log", ""):
        return outcome.controller_log
    return dumps(lines(outcome.final, core_of(outcome)))


def log_path(out: str, outcome, many: bool) -> Path:
    """Where `--karpenter-log OUT` writes a run's log: OUT itself for one run, else OUT/<scenario>[<profile>].log."""
    if not many:
        return Path(out)
    return Path(out) / f"{outcome.scenario.name}[{outcome.profile}].log"


# -- a customer's log as the scenario's clock --------------------------------------------------------
def clock(entries: list[Entry]) -> dict:
    """When the log's decisions happened, for `harness new --log`: its first decision's time (the scenario's
    start) and, per NodeClaim, when it was created, launched, registered, initialized, disrupted, deleted
    (epoch s)."""
    claims: dict[str, dict[str, float]] = {}
    first = next((e.t for e in entries if e.t is not None), None)
    node_claim: dict[str, str] = {}
    for e in entries:
        if e.t is None:
            continue
        nc, node = e.facts.get("NodeClaim"), e.facts.get("Node")
        if nc and node:
            node_claim[node] = nc
        action = {"created": "created", "launched": "launched", "registered": "registered",
                  "initialized": "initialized", "deleted-nodeclaim": "deleted", "expired": "disrupted",
                  "garbage-collected": "disrupted"}.get(e.id)
        if action and nc:
            claims.setdefault(nc, {}).setdefault(action, e.t)
        if e.id == "disrupting":
            for name in e.facts.get("candidates", ()):
                claim = name if e.facts.get("candidates-kind") == "NodeClaim" else node_claim.get(name, name)
                claims.setdefault(claim, {}).setdefault("disrupted", e.t)
    provisionable = [e.t for e in entries if e.id == "provisionable" and e.t is not None]
    return {"start": first, "provisionable": provisionable, "nodeClaims": claims,
            "end": max((e.t for e in entries if e.t is not None), default=None)}


# how far apart a run's line and a log's may be, from each side's zero, and still be the same decision: the
# real controller's logs of the library scenarios under tests/runner/karpenterlogs/ part from the simulation's
# by 60 s at most (`fast` timing: a node boots in seconds there, and the simulation's waits are core's own)
TOLERANCE = 120.0


@dataclass(frozen=True)
class Against:
    """`--against-log LOG [--log-from TIME] [--log-tolerance D]`."""
    path: str
    since: float | None = None           # compare the log's lines from this time on (epoch s)
    tolerance: float = TOLERANCE


def _zeros(o, theirs: list[Entry], against: Against) -> tuple[float | None, float | None, str]:
    """Each side's zero and why: --log-from; else the scenario's given.startTime where the log has lines
    from then on (a scenario made from the log starts there); else each side's first compared line."""
    from harness.model.kube.kubetime import parse_rfc3339
    from harness.model.kube.kubetime import rfc3339 as timestamp
    start = o.scenario.given.get("startTime")
    run_zero = None
    try:
        run_zero = parse_rfc3339(str(start)) if start else None
    except ValueError:
        run_zero = None
    if against.since is not None:
        return run_zero, against.since, f"from {timestamp(against.since)} (--log-from)"
    if run_zero is not None and any(e.t is not None and e.t >= run_zero for e in theirs):
        return run_zero, run_zero, f"from {timestamp(run_zero)} (the scenario's given.startTime)"
    return None, None, "from each side's first line"


def _not_compared(theirs: list) -> str:
    """`; not compared: ...`: the log's lines the run does not write (karpenter-log.yaml `modeled: false`, its
    error lines among them), counted by message, so a match is not read as the whole log's."""
    counts: dict[str, int] = {}
    for e in theirs:
        if not e.modeled:
            counts[e.message] = counts.get(e.message, 0) + 1
    if not counts:
        return ""
    return (f"; not compared: {sum(counts.values()):,} line(s) the run does not write ("
            + ", ".join(f"{m!r} x{n:,}" for m, n in sorted(counts.items(), key=lambda kv: -kv[1])[:4])
            + (", ..." if len(counts) > 4 else "") + ")")


def report(outcomes: list, karpenter_log: str | None, against: Against | None) -> list[str]:
    """`harness run --karpenter-log OUT --against-log LOG`: write each run's log, compare each with LOG (from
    a time on, names paired by name, times within a tolerance); the lines to print. A log worded by another
    core release than the run's is said."""
    done = [o for o in outcomes if not o.skipped and o.error is None]
    out: list[str] = []
    everything = read_file(against.path) if against else None
    worded: set[str] = set()
    for o in done:
        text = run_log(o)
        whose = "the real controller's log" if o.engine == "real" and o.controller_log else \
            f"the run's decisions as core {core_of(o)} logs them"
        if karpenter_log:
            path = log_path(karpenter_log, o, len(done) > 1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            out.append(f"{o.scenario.name} [{o.profile}]: wrote {path} ({whose}, {len(read(text))} decision line(s))")
        if everything is None:
            continue
        for note in wording_notes(everything, core_of(o), against.path, f"profile {o.profile}"):
            if note.startswith("WARNING") and note not in worded:
                worded.add(note)
                out.append(note)
        run_zero, log_zero, since = _zeros(o, everything, against)
        theirs = [e for e in everything if log_zero is None or e.t is None or e.t >= log_zero]
        ours = read(text)
        timing = Timing(run_zero, log_zero, against.tolerance)
        how = f"{since}, times within {offset_text(against.tolerance)[1:]}"
        d = compare(ours, theirs, timing=timing)
        if d is None:
            compared = sum(e.modeled for e in theirs)
            said = (f"the run's {sum(e.modeled for e in ours)} decision line(s) match {against.path}" if compared else
                    f"nothing compared: {against.path} holds no decision line the run writes")
            out.append(f"{o.scenario.name} [{o.profile}]: {said} ({compared} compared {how}; {whose})"
                       + _not_compared(theirs))
        else:
            out.append(f"{o.scenario.name} [{o.profile}] against {against.path} ({how}; {whose}):")
            out += ["  " + line for line in d.render()]
    if not done:
        out.append("no run finished: no log to write or compare")
    return out
