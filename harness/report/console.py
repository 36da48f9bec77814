"""Human-readable renderings of scenario outcomes: failure diffs, summaries, and what happened (per
NodePool its NodeClaims with instance type, zone, capacity type and price; per pod its node or the
reasons Karpenter and kube-scheduler gave; refused objects; the Nodes' labels by writer on request)."""
from __future__ import annotations

import re

from harness.model.kube.kubetime import rfc3339
from harness.loop.history import Moment, claim_lines, history, human_trace, price_of, timeline_lines
from harness.loop.result import RunResult
from harness.loop.scheduling.pods import Taint
from harness.runner.engines.base import Outcome, verdict
from harness.scenario.expect.fold import fold_counts, fold_trace

MAX_TRACE = 40


def failure_text(outcome: Outcome, trace: bool = False, labels: bool = False, over_time: bool | None = None) -> str:
    """A failed run's report; `over_time` (default: with `trace`) adds the NodeClaims' lives, the disruption
    steps and the events in time order."""
    sc = outcome.scenario
    r = outcome.final
    if outcome.error is not None:
        return f"ERROR {outcome.error}"
    on = (f"on the real engine (controller {outcome.version})" if outcome.engine == "real"
          else f"on backend {outcome.backend!r}")
    diffs = moved_on(outcome)
    if diffs is not None and from_log(sc):     # a customer's log the run did not reproduce: the answer, not a bug
        head = (f"{sc.file}:{sc.line}: scenario {sc.name!r} did not reproduce the log under profile "
                f"{outcome.profile!r} {on} (seed {sc.seed}); what differs from the log's end:")
    elif diffs is not None:        # a dump's state, and the cluster went on from it: the answer, not a bug
        head = (f"{sc.file}:{sc.line}: scenario {sc.name!r} moved on from the dump under profile "
                f"{outcome.profile!r} {on} (seed {sc.seed}): the cluster went on from the snapshot; "
                "what differs from the dump:")
    else:
        head = f"{sc.file}:{sc.line}: scenario {sc.name!r} failed under profile {outcome.profile!r} {on} (seed {sc.seed})"
    lines = [head] + [f"  {line}" for line in mismatch_lines(sc.file, outcome.mismatches)]
    if assumed(outcome):
        lines.append(f"  assumed: {assumed(outcome)}")
    lines.append("  --- what happened ---")
    lines += ["  " + line for line in restart_lines(r)]
    lines += ["  " + line for line in happened_lines(happened(r, labels=labels),
                                                      None if trace or over_time or labels else SHOWN)]
    if outcome.why:
        lines.append("  --- why (instance types each NodePool's filter eliminated) ---")
        for w in outcome.why.values():
            lines += w.render("  ")
    if outcome.engine == "real" and not trace:
        # why each settle ended (a run that ended too early names its cause without --trace), whether
        # the controller was one kept from earlier runs (keeper.py), who deleted a deleted pod, which
        # API server answered (another Kubernetes version's, for a scenario naming one)
        lines += [f"  {t}" for t in r.trace if t.startswith(("[settle]", "[controller]", "[cluster]", "[deleted]"))]
    if trace if over_time is None else over_time:
        lines += ["  " + line for line in over_time_lines(r)]
    if trace and r.trace:
        lines.append("  --- loop trace ---")
        lines += [f"  {human_trace(t, r.started)}" for t in fold_trace(r.trace)[-MAX_TRACE:]]
    lines += [f"  {n.render()}" for n in outcome.not_applicable]
    if trace and outcome.log_tail:
        lines += ["  --- controller log (tail) ---"] + [f"  {line}" for line in outcome.log_tail.splitlines()]
    return "\n".join(lines)


# a difference found this many times or more, the same but for list indices, is one line (a 5,000-node dump
# whose nodes consolidated away differs in thousands of `expect.nodes[i].deleted`)
GROUP_AT = 5
_INDEX = re.compile(r"\[\d+\]")


def mismatch_lines(file, mismatches: list) -> list[str]:
    """Each unmet expectation as `file:line: what`, in order; the ones that differ only in their list indices
    (`expect.nodes[0].deleted`, `expect.nodes[2].deleted`, ...) with the same expected and actual value, when
    there are GROUP_AT or more, as one line at the first one's line with the count and the first few paths."""
    groups: dict[tuple, list] = {}
    for m in mismatches:
        groups.setdefault((_INDEX.sub("[*]", m.path), repr(m.expected), repr(m.actual), m.detail), []).append(m)
    out, done = [], set()
    for m in mismatches:
        key = (_INDEX.sub("[*]", m.path), repr(m.expected), repr(m.actual), m.detail)
        group = groups[key]
        if len(group) < GROUP_AT:
            out.append((f"{file}:{m.line}: " if m.line else "") + m.render())
        elif key not in done:
            done.add(key)
            first = group[0]
            text = type(first)(key[0], first.expected, first.actual, first.detail).render()
            shown = ", ".join(g.path + (f" (line {g.line})" if g.line else "") for g in group[:3])
            out.append((f"{file}:{first.line}: " if first.line else "")
                       + f"{text}: {len(group):,} times: {shown} and {len(group) - 3:,} more")
    return out


def over_time_lines(result) -> list[str]:
    """`--details` / `--trace`: each NodeClaim's life, then the disruption steps and events in time order
    (offset from the run's start and UTC)."""
    h = history(result)
    if not h.claims and not h.events and not h.steps:
        return []
    lines = [f"--- over time (from {h.start}) ---"] + claim_lines(h)
    steps = timeline_lines(h)
    if steps:
        lines += ["disruption steps and events:"] + ["  " + line for line in steps]
    return lines


def live_nodes(result) -> list:
    """The Nodes there at the end (draining ones included); a Node disruption or the garbage collector
    deleted is history, not part of the count."""
    return [n for n in result.nodes if not n.deleted]


def node_count(result) -> str:
    """`7 node(s), 2 deleted`: the live Nodes, then the run's deleted ones as such."""
    live = len(live_nodes(result))
    gone = len(result.nodes) - live
    return f"{live} node(s)" + (f", {gone} deleted" if gone else "")


# pod states that are not waiting for a node: bound, gone with its node, or a Job's that completed
NOT_PENDING = ("scheduled", "deleted", "succeeded")


def pending_pods(result) -> list:
    """The pods still waiting for a node at the end (a DaemonSet's pods follow the Nodes, not Karpenter)."""
    return [p for p in result.pods.values() if p.state not in NOT_PENDING and p.owner_kind != "DaemonSet"]


def not_created(result) -> list[str]:
    """The workloads (by name) that still lack pods at the end because the API server refused them (FailedCreate)."""
    return [w.split("/", 1)[-1] for w in result.unmade]


def unmade_entries(result) -> list[dict]:
    """Each workload still lacking pods (RunResult.unmade) with how many and its last FailedCreate: object,
    message."""
    last = {f["workload"]: f for f in result.failed_creates()}
    out = []
    for workload, missing in result.unmade.items():
        f = last.get(workload) or {}
        out.append({"workload": workload, "missing": missing, "object": f.get("object"), "message": f.get("message")})
    return out


def outcome_summary(result) -> str:
    """One line a support engineer compares across releases: refusals, then the nodes there at the end
    (instance type, capacity type x count, NodePool; the deleted counted apart), then the pods left pending."""
    from collections import Counter
    parts = []
    for name, np in sorted(result.nodepools.items()):
        if np.rejected:
            parts.append(f"NodePool {name} refused ({np.stage}): {(np.causes[0] if np.causes else np.message or '')[:100]}")
    for name, nc in sorted(result.nodeclasses.items()):
        if not nc.accepted:
            parts.append(f"AKSNodeClass {name} refused: {(nc.causes[0] if nc.causes else nc.message or '')[:100]}")
    # each kind with its NodePool: the same size from the fallback pool is another outcome
    kinds = Counter((n.nodepool or "", f"{n.instance_type} {n.capacity_type or 'existing'}") for n in live_nodes(result))
    parts.append(node_count(result) + (": " + ", ".join(f"{k} x{c}" + (f" (NodePool {pool})" if pool else "")
                                                        for (pool, k), c in sorted(kinds.items()))
                                       if kinds else ""))
    # a Deployment's pods by the Deployment's name: their own names are random, and would read as a change
    pending = sorted(p.owner_name if p.owner_kind == "Deployment" and p.owner_name else p.name
                     for p in pending_pods(result))
    if pending:
        pending = [f"{n} x{c}" if c > 1 else n for n, c in sorted(Counter(pending).items())]
        shown = ", ".join(pending[:3]) + (f" +{len(pending) - 3}" if len(pending) > 3 else "")
        parts.append(f"pending: {shown}")
    refused = not_created(result)
    if refused:
        shown = ", ".join(refused[:3]) + (f" +{len(refused) - 3}" if len(refused) > 3 else "")
        parts.append(f"pods not created (FailedCreate): {shown}")
    if result.runaway:
        parts.append("runaway")
    return "; ".join(parts)


def unsettled(o: Outcome) -> str | None:
    """Why a run ended before it settled (`not steady after 60 iterations (given.loop.maxIterations)`), or
    None: it settled, ran away (said apart), raised, or the scenario bounded it itself (given.loop.horizon or
    maxIterations, or an expectation of `loop.steady: false`). Its outcome is where the loop stopped."""
    r = o.final
    if r.steady or r.runaway or o.error is not None or o.skipped:
        return None
    loop = o.scenario.given.get("loop") or {}
    expects = [o.scenario.expect, *(s.get("expect") or {} for s in o.scenario.steps)]
    if "horizon" in loop or "maxIterations" in loop or any((e.get("loop") or {}).get("steady") is False for e in expects):
        return None
    said = [t.split("] ", 1)[1] for t in r.trace if t.startswith("[settle] not steady")]
    return said[-1] if said else "not steady"


def moved_on(o: Outcome) -> list[str] | None:
    """How a run of a scenario made from a dump (label `dump`, harness/dump/new.py) differs from the
    dump, when that is all its failure is: its `expect` is the dump's state, and the cluster went on from
    the snapshot (a node expired, a drift was carried out). None when it passed, is not from a dump, or
    failed otherwise: an object refused (the release does not take the dump's manifests), a run that did
    not settle or ran away, an error, or a mismatch in a step the user added."""
    from harness.dump.new import DUMP_LABEL
    from harness.dump.moment import dump_roots
    r = o.final
    if DUMP_LABEL not in o.scenario.tags or verdict(o) != "FAIL" or r.runaway or unsettled(o):
        return None
    refused = (any(np.rejected for np in r.nodepools.values()) or any(not nc.accepted for nc in r.nodeclasses.values())
               or any(c.rejected for c in r.nodeclaims) or r.rejected_pods)
    if refused or not all(m.path.startswith(dump_roots(o.scenario)) for m in o.mismatches):
        return None
    return [m.render() for m in o.mismatches]


def from_log(sc) -> bool:
    """A scenario `harness new --log` made from a customer's log (harness/dump/logscenario.py)."""
    from harness.dump.logscenario import LOG_LABEL
    return LOG_LABEL in sc.tags


def dump_verdict(o: Outcome) -> str | None:
    """`reproduced the dump` or `moved on from the dump: <what differs>` for a scenario made from a dump
    (from a log: `reproduced the log` or `did not reproduce the log: ...`); None otherwise (a failure that is
    not the cluster moving on stays a FAIL)."""
    from harness.dump.new import DUMP_LABEL
    if DUMP_LABEL not in o.scenario.tags:
        return None
    source = "log" if from_log(o.scenario) else "dump"
    if verdict(o) == "pass":
        return f"reproduced the {source}"
    diffs = moved_on(o)
    if diffs is None:
        return None
    return (NOT_REPRODUCED + " the log: " if source == "log" else "moved on from the dump: ") + "; ".join(diffs[:3]) \
        + (f" (+{len(diffs) - 3} more)" if len(diffs) > 3 else "")


NOT_REPRODUCED = "did not reproduce"


def assumed(o: Outcome) -> str | None:
    """What the run's scenario assumed of what its input lacked (the stand-in pods `harness new` made for pods
    a dump did not hold: harness/scenario/standins.py; the lines it wrote as given.assumed), or None: said beside
    every verdict."""
    from harness.scenario import standins
    names = standins.in_scenario(o.scenario.given, o.scenario.manifests)
    said = [standins.said(names)] if names else []
    lines = (o.scenario.given or {}).get("assumed") or []
    if lines:
        said.append(f"harness new assumed {len(lines)} thing(s) the input did not hold: " + "; ".join(lines))
    return "; ".join(said) or None


def assumed_tag(o: Outcome) -> str:
    """The result column's tail: `, stand-ins assumed` for a scenario holding stand-in pods, `, assumed` for one
    with given.assumed, else ""."""
    from harness.scenario import standins
    if standins.in_scenario(o.scenario.given, o.scenario.manifests):
        return ", stand-ins assumed"
    return ", assumed" if (o.scenario.given or {}).get("assumed") else ""


def restarts_note(o: Outcome) -> str:
    """`, Karpenter restarted N time(s)` when the controller's process was started again in the run (a `crash`
    step, or the real controller's own exit its pod restarted: RunResult.restarts), else ""."""
    n = len(o.final.restarts)
    return f", Karpenter restarted {n} time{'s' if n != 1 else ''}" if n else ""


def restart_lines(r: RunResult) -> list[str]:
    """One line per restart of the controller: when (from the run's start), why, when its pod started it again;
    after an exit of the controller's own, its last log lines."""
    def when(t: float) -> str:
        return Moment.of(t, r.started).text if r.started is not None else rfc3339(t)
    out = []
    for e in r.restarts:
        out.append(f"Karpenter restarted: {e['why']} at {when(e['at'])}"
                   + (f", started again at {when(e['restart_at'])} (CrashLoopBackOff)"
                      if e["restart_at"] > e["at"] else ""))
        if not e["planned"] and e.get("log"):       # an exit of its own: its last words say why
            out += ["  | " + ln for ln in e["log"].splitlines()]
    return out


def said_verdict(o: Outcome) -> str:
    """The verdict with what it rests on: a dump's `reproduced the dump` / `moved on ...`, else the verdict, and
    the assumption a scenario made of an incomplete input."""
    out = dump_verdict(o) or verdict(o)
    return f"{out}; {assumed(o)}" if assumed(o) else out


def shown_verdict(o: Outcome) -> str:
    """The result column: a dump scenario's `reproduced` / `moved on` (a log's: `not reproduced`), else the
    verdict."""
    said = dump_verdict(o)
    if said is None:
        return verdict(o)
    if said.startswith("reproduced"):
        return "reproduced"
    return "not reproduced" if said.startswith(NOT_REPRODUCED) else "moved on"


def unserved_apis(o: Outcome) -> tuple[str, ...]:
    """The scenario's `kind group/version`s the run's release does not serve, with the versions it does
    (`AKSNodeClass karpenter.azure.com/v1beta1 (only v1alpha2)`): its API server refuses those manifests
    (harness.model.crd.apiversions served_rejection), so the run says nothing else about that release."""
    from harness.model.upstream.knobrelease import unserved
    from harness.model.upstream.profile import ProfileError, raw_profile
    try:
        raw = raw_profile(o.profile)
    except ProfileError:
        return ()
    apis = raw.get("apis") or {}
    out = []
    for pair in unserved(raw, o.scenario.api_versions):
        served = (apis.get(pair.split(" ", 1)[0]) or {}).get("served") or ()
        out.append(pair + (f" (only {', '.join(served)})" if served else ""))
    return tuple(out)


def outcome_json(o: Outcome, labels: bool = False) -> dict:
    """One run for `harness run --json`: the verdict, the failures and what the engine could not answer."""
    out = {"file": str(o.scenario.file), "scenario": o.scenario.name, "profile": o.profile, "backend": o.backend,
           "engine": o.engine, "verdict": verdict(o), "passed": o.passed and not o.skipped, "skipped": o.skipped,
           "seconds": round(o.seconds, 4), "nodes": len(live_nodes(o.final)),
           "deletedNodes": len(o.final.nodes) - len(live_nodes(o.final)), "runaway": o.final.runaway,
           "steady": o.final.steady, "unsettled": unsettled(o), "fromDump": dump_verdict(o),
           "mismatches": [m.render() for m in o.mismatches],
           "notApplicable": [n.render() for n in o.not_applicable], "error": o.error, "notices": list(o.notices),
           "why": {k: w.to_json() for k, w in o.why.items()},
           "release": o.result.release, "coreNotices": list(o.final.core_notices),
           # what the run rests on that its input did not give: stand-in pods for pods a dump lacked, then the
           # timings it assumed (harness/loop/assumed.py)
           "assumed": [a for a in [assumed(o)] if a] + list(o.final.assumed),
           "outcome": outcome_summary(o.final),
           "happened": happened(o.final, labels=labels)}
    # what happened when (harness/loop/history.py): the NodeClaims' and pods' lives, the disruption steps, the
    # events; and the disruption records, their `at` as offset and UTC
    h = history(o.final).to_json()
    out["events"] = h.pop("events")
    out["timeline"] = h
    start = o.final.started
    out["disruptions"] = [{**d, "at": Moment.of(d["at"], start).to_json()} if start is not None and d.get("at") else d
                          for d in o.final.disruptions]
    out["decisions"] = [d.to_json(start) for d in o.final.decisions]
    out["controllerRestarts"] = [
        {"at": Moment.of(e["at"], start).to_json() if start is not None else e["at"],
         "restartAt": Moment.of(e["restart_at"], start).to_json() if start is not None else e["restart_at"],
         "why": e["why"], "planned": e["planned"], **({"log": e["log"]} if e.get("log") else {})}
        for e in o.final.restarts]
    if o.deciding is not None:
        out["deciding"] = o.deciding.to_json(start)
    if o.engine == "real":
        out.update(controller=o.version, hosts=o.hosts)
    return out


_REJECTED = re.compile(r"^\[t=[0-9.]+s\] (?P<kind>[A-Za-z]+) (?P<name>\S+) rejected: (?P<message>.*)$")
_OWN_REJECTIONS = ("NodePool", "AKSNodeClass", "NodeClaim")


def _pod_entry(p) -> dict:
    entry: dict = {"state": p.state}
    if p.owner_kind:
        entry["owner"] = f"{p.owner_kind}/{p.owner_name}"
    if p.node:
        entry["node"] = p.node
    if p.state == "ignored":
        entry["karpenter"] = p.karpenter_error or p.reason
    elif p.state != "scheduled":
        if p.karpenter_error:
            entry["karpenter"] = p.karpenter_error
        if p.scheduler_error:
            entry["kubeScheduler"] = p.scheduler_error
        if not p.karpenter_error and not p.scheduler_error and p.reason:
            entry["reason"] = p.reason
    if p.nodeclaims:
        entry["nodeClaims"] = list(p.nodeclaims)
    return entry


def _node_labels(n) -> dict:
    return {k: {"value": v, "writer": n.writer(k), "writers": n.writers(k)} for k, v in sorted(n.labels.items())}


def happened(result, labels: bool = False) -> dict:
    """What a run did, without any expectation: `harness run`'s view of a passing run, `--json`'s
    `happened`, and the failure report's `what happened` section."""
    nodes_by_claim = {n.nodeclaim: n for n in result.nodes if n.nodeclaim}
    pools: dict = {}
    for name, np in sorted(result.nodepools.items()):
        entry: dict = {"state": "rejected" if np.rejected else "not managed" if np.unmanaged else
                       ("ready" if np.ready else "not ready")}
        if np.rejected:
            entry.update(stage=np.stage, message=np.message)
        elif np.unmanaged:
            entry["nodeClassRef"] = np.unmanaged
        if np.events:
            entry["events"] = fold_counts([f"{e.get('reason')}: {e.get('message')}" for e in np.events])
        entry["nodeClaims"] = []
        pools[name] = entry
    claimed = set()
    # a pod left pending is often waiting out a taint (not-ready, a startup taint): its Node's taints say so
    pending = any(p.state == "pending" for p in result.pods.values())
    for c in result.nodeclaims:
        claim: dict = {"name": c.name}
        n = nodes_by_claim.get(c.name)
        if n is not None:
            claimed.add(n.name)
            claim.update(instanceType=n.instance_type, zone=n.zone, capacityType=n.capacity_type,
                         price=price_of(result, n.instance_type, n.zone, n.capacity_type), node=n.name,
                         pods=sorted(n.pods))
            if pending and n.taints:
                claim["taints"] = [str(Taint.from_dict(t)) for t in n.taints]
            if n.kubelet_refused:
                claim["kubeletRefused"] = n.kubelet_refused
            if n.node_restriction_denied:
                claim["registrationRefused"] = n.node_restriction_denied
        elif c.rejected:
            claim["rejected"] = c.rejected
        elif not c.launched:
            claim["launched"] = False
        if c.failures:
            claim["failures"] = fold_counts([f"{f.get('reason')}: {f.get('message')}" for f in c.failures])
        if c.deleted:
            claim["deleted"] = c.deleted
        pools.setdefault(c.nodepool, {"state": "unknown", "nodeClaims": []})["nodeClaims"].append(claim)
    other = [{"node": n.name, "instanceType": n.instance_type, "zone": n.zone, "capacityType": n.capacity_type,
              **({"nodePool": n.nodepool} if n.nodepool else {}), "pods": sorted(n.pods)}
             for n in result.nodes if n.name not in claimed]
    pods = {key: _pod_entry(p) for key, p in sorted(result.pods.items())
            if p.owner_kind != "DaemonSet" and p.state != "deleted"}
    rejected = [{"kind": "NodePool", "name": n, "stage": np.stage, "message": np.message}
                for n, np in sorted(result.nodepools.items()) if np.rejected]
    rejected += [{"kind": "AKSNodeClass", "name": n, "message": nc.message}
                 for n, nc in sorted(result.nodeclasses.items()) if not nc.accepted]
    rejected += [{"kind": "NodeClaim", "name": c.name, "message": c.rejected} for c in result.nodeclaims if c.rejected]
    for line in result.trace:
        m = _REJECTED.match(line)
        if m and m.group("kind") not in _OWN_REJECTIONS:
            rejected.append({"kind": m.group("kind"), "name": m.group("name"), "message": m.group("message")})
    out = {"nodePools": pools, "pods": pods}
    unmade = unmade_entries(result)
    if unmade:
        # a workload's pods the API server refused: they do not exist, so no pod line says it
        out["notCreated"] = unmade
    if other:
        out["otherNodes"] = other
    if rejected:
        out["rejected"] = rejected
    if result.runaway:
        out["runaway"] = result.runaway_reason
    if labels:
        out["nodeLabels"] = {n.name: _node_labels(n) for n in result.nodes}
    return out


def _claim_line(c: dict) -> str:
    if "instanceType" in c:
        price = f" ${c['price']:.4f}/h" if c.get("price") is not None else ""
        pods = f" pods: {', '.join(c['pods'])}" if c.get("pods") else " no pods"
        text = (f"NodeClaim {c['name']}: {c['instanceType']} zone={c['zone']} {c['capacityType']}{price}"
                f" -> Node {c['node']};{pods}")
        if c.get("taints"):
            text += f"; taints: {', '.join(c['taints'])}"
        for k, what in (("kubeletRefused", "kubelet refused to start"), ("registrationRefused", "registration refused")):
            if c.get(k):
                text += f"; {what}: {c[k]}"
    elif "rejected" in c:
        text = f"NodeClaim {c['name']}: refused by the API server: {c['rejected']}"
    else:
        text = f"NodeClaim {c['name']}: not launched"
    if c.get("deleted"):
        text += f" (deleted: {c['deleted']})"
    return text


# `harness run`'s view of a run lists this many NodeClaims per NodePool and bound pods, then counts the rest
# (a customer's dump holds thousands; --details and --json list every one)
SHOWN = 50


def happened_lines(h: dict, limit: int | None = None) -> list[str]:
    """`happened` as text, one object a line, details indented; with `limit`, at most that many NodeClaims per
    NodePool and bound pods, the rest counted (pods not bound are always listed)."""
    from collections import Counter
    lines = []
    for name, np in h["nodePools"].items():
        state = np["state"]
        if state == "rejected":
            state = f"refused at {np.get('stage')}: {np.get('message')}"
        elif state == "not managed":
            state = f"not managed: its nodeClassRef names {np.get('nodeClassRef')}"
        lines.append(f"NodePool {name}: {state}" + ("" if np["nodeClaims"] else "; no NodeClaim"))
        # status-condition transitions (the real controller's NodePool events) are state, said above
        lines += [f"  event {e}" for e in np.get("events") or [] if "Status condition transitioned" not in e]
        claims = np["nodeClaims"]
        for c in claims[:limit]:
            lines.append("  " + _claim_line(c))
            # an SDK error runs over several lines (azcore prints the response): keep it under its claim
            lines += ["    launch failed: " + f.replace("\n", "\n      ") for f in c.get("failures") or []]
        rest = claims[limit:] if limit is not None else []
        if rest:
            gone = Counter(str(c["deleted"]) for c in rest if c.get("deleted"))
            lines.append(f"  ... and {len(rest):,} more NodeClaims"
                         + (" (deleted: " + ", ".join(f"{n:,} {why}" for why, n in sorted(gone.items())) + ")"
                            if gone else "") + ": --details or --json lists every one")
    for n in h.get("otherNodes") or []:
        owner = f"NodePool {n['nodePool']}, no NodeClaim of this run" if n.get("nodePool") else "not Karpenter's"
        lines.append(f"Node {n['node']} ({owner}): {n['instanceType']} zone={n['zone']}"
                     + (f" {n['capacityType']}" if n["capacityType"] else "")
                     + (f"; pods: {', '.join(n['pods'])}" if n["pods"] else ""))
    bound = 0
    for key, p in h["pods"].items():
        if limit is not None and p["state"] == "scheduled":
            bound += 1
            if bound > limit:
                continue
        head = f"Pod {key}" + (f" ({p['owner']})" if p.get("owner") else "") + f": {p['state']}"
        if p.get("node"):
            head += f" on {p['node']}"
        lines.append(head)
        for k, who in (("karpenter", "Karpenter"), ("kubeScheduler", "kube-scheduler"), ("reason", "reason")):
            if p.get(k):
                lines.append(f"  {who}: {p[k]}")
    if limit is not None and bound > limit:
        lines.append(f"... and {bound - limit:,} more pods scheduled: --details or --json lists every one")
    for f in h.get("notCreated") or []:
        lacks = f"{f['missing']} pod(s)" if f.get("missing") is not None else "pods"
        lines.append(f"{f['workload']}: {lacks} not created: FailedCreate on {f['object']}: {f['message']}")
    for r in h.get("rejected") or []:
        if r["kind"] != "NodePool":          # the NodePool line says it
            lines.append(f"refused: {r['kind']} {r['name']}: {r['message']}")
    if h.get("runaway"):
        lines.append(f"runaway provisioning: {h['runaway']}")
    for node, labels in (h.get("nodeLabels") or {}).items():
        lines.append(f"labels on Node {node} (value, the writer whose value is on the Node, every writer):")
        width = max((len(k) for k in labels), default=0)
        for k, v in labels.items():
            others = [w for w in v["writers"] if w != v["writer"]]
            lines.append(f"  {k.ljust(width)}  {v['value']!r}  {v['writer'] or '?'}"
                         + (f" (also: {', '.join(others)})" if others else ""))
    return lines
