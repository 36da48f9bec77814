"""`harness new --log`: a scenario whose nodes, pods and clock come from a customer's Karpenter log (with the
events and the NodePools sent with it) where no dump gives NodeClaims or Nodes.

The scenario starts a minute before the incident (harness/dump/logstory.py incident) with the NodeClaims the
log shows running then and the pods it names on them; what the log shows after the start is the run's to do
again (a drifted NodeClaim is seeded drifted, an expiry is the NodePool's expireAfter, a drain no line
explains is a `delete` step); its expectations are the log's end: which nodes are there, draining or gone,
which pods still run where, Karpenter's FailedDraining events. What the log cannot give is assumed and
named: a NodePool it names but the input lacks, the pods' requests (their round's NodeClaim's, shared), the
PodDisruptionBudgets a refused eviction implies (karpenter-log.yaml `refusals`). A log that names no node
and no pod makes no scenario. Why: docs/karpenter-log.md (A customer's log as the input).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.model.kube.kubetime import rfc3339 as timestamp
from harness.dump import aksnames
from harness.runner import karpenterlog as kl
# the step that checks the log's end starts its description so (report.py reads its mismatches as a dump's)
from harness.dump.moment import LOG_STEP
from harness.dump.logstory import Claim, LogPod, Story, incident
from harness.scenario.yamlsource import SourceError

# the scenario starts this long before the incident's first line, so the seeded cluster has settled when the
# log's first decision is due (harness assumption: a minute is less than any decision's wait in core)
MARGIN = 60.0
# a drain that starts within this of a NodeClaim's creation + the NodePool's expireAfter is its expiry
# (harness assumption: core's expiration controller requeues at the expiry; the termination controller
# taints within seconds of the deletion)
EXPIRY_SLACK = 120.0
# the label of a scenario `harness new` made from a log (beside `dump`, whose verdicts it takes)
LOG_LABEL = "log"
# the label the pods of one workload get, which the PodDisruptionBudgets assumed for them select
WORKLOAD_LABEL = "harness.karpenter.azure.com/workload"
# a Deployment's pod (`<name>-<pod-template-hash>-<5>`) or a StatefulSet's (`<name>-<ordinal>`)
_REPLICASET_POD = re.compile(r"^(.+)-[a-z0-9]{6,10}-[a-z0-9]{5}$")
_ORDINAL_POD = re.compile(r"^(.+)-\d+$")
PER_POD = ("pods",)          # NodeClaim requests that are no pod's share
# consolidation pricing a candidate whose size has no offering for its zone and capacity type (core before
# v1.9.0, sigs.k8s.io/karpenter v1.0.6 pkg/controllers/disruption/consolidation.go getCandidatePrices: "unable to
# determine offering for %s/%s/%s" of size, capacity type, zone; v1.5.0 to v1.8.x serrors.Wrap of "unable to
# determine offering" with instance-type, capacity-type and zone; switch unpricedCandidate)
_NO_OFFERING = (re.compile(r"unable to determine offering for ([^/\s]+)/([^/\s]+)/([^\s,)]+)"),
                re.compile(r"unable to determine offering \(([^)]*)\)"))


@dataclass
class LogScenario:
    """What the log gives the scenario: its start, `given` fields, manifests, seeded nodes, steps, the
    expectations at the log's end, the profiles its wording asks for, and the notes (assumed ... first)."""
    start: float
    given: dict = field(default_factory=dict)
    manifests: list[dict] = field(default_factory=list)
    existing: list[dict] = field(default_factory=list)
    steps: list[dict] = field(default_factory=list)
    expect: dict = field(default_factory=dict)
    profiles: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def leads(dump) -> bool:
    """Whether the log gives the scenario its nodes: the dump holds no NodeClaim and no Node."""
    return not dump.nodeclaims and not dump.nodes


def workload(pod_name: str) -> str:
    """The workload a pod's name says it is of (`checkout-6f9c7d8b5-2kq8w` -> checkout, `ledger-1` -> ledger),
    else the pod's own name."""
    for pattern in (_REPLICASET_POD, _ORDINAL_POD):
        if (m := pattern.match(pod_name)):
            return m.group(1)
    return pod_name


def build(story: Story, manifests: list[dict], at: float | None, profiles: list[str]) -> LogScenario:
    """The scenario's parts from `story`, the input's manifests (its NodePools, PDBs, pods) and the profiles
    asked (the first is the customer's). `at`: --at, else a minute before the incident."""
    inc = incident(story)
    if inc is None:
        raise SourceError(story.path, None, "no dated Karpenter line in it: nothing to start the clock from")
    start = float(int(at if at is not None else inc[0] - MARGIN))
    out = LogScenario(start)
    out.notes.append(f"the clock starts at {timestamp(start)}" + (" (--at)" if at is not None else
                     f", {int(MARGIN)}s before the incident in {story.path}: {inc[1]} at {timestamp(inc[0])}"))
    out.notes += _wording(story, profiles, out)
    pools = {m["metadata"]["name"]: m for m in manifests if m.get("kind") == "NodePool"}
    seeded = _seed(story, start, pools, out)
    if not seeded and not any(p.claim for p in story.pods.values()):
        raise SourceError(story.path, None, _too_little(story, start))
    _assumed_nodepools(story, seeded, pools, profiles, out)
    _pods(story, seeded, manifests, out)
    _expect(story, seeded, out)
    _steps(story, start, seeded, pools, out)
    _gone_offerings(story, seeded, out)
    _errors(story, out)
    _boot(story, out)
    groups = {aksnames.provider_id_group(e.record.get("provider-id", "")) for e in story.entries} - {None, ""}
    if len(groups) == 1:
        out.given["nodeResourceGroup"] = next(iter(groups))
    # the notes a reader must check first: warnings, the clock, what was assumed
    out.notes.sort(key=lambda n: 0 if n.startswith("WARNING") else 1 if n.startswith("the clock") else
                   2 if n.startswith("assumed") else 3)
    sizes = sorted({c.instance_type for c in story.claims.values() if c.instance_type}
                   | {t for c in story.claims.values() for t in c.listed_types})
    out.given["sizes"] = sizes
    out.given["zones"] = sorted({c.zone.rsplit("-", 1)[1] for c in story.claims.values()
                                 if c.zone and c.zone.rsplit("-", 1)[-1].isdigit()}, key=lambda z: (len(z), z))
    return out


def _boot(story: Story, out: LogScenario) -> None:
    """given.loop.nodeBoot: how long the log's VMs took from launched to registered (the median), where the
    default (at once) would make the run's new nodes join minutes before the customer's did."""
    from harness.model.values.durations import go_duration_text
    took = sorted(c.registered - c.launched for c in story.claims.values()
                  if c.launched is not None and c.registered is not None and c.registered >= c.launched)
    if not took:
        return
    median = round(took[len(took) // 2])
    if median >= 1:
        out.given["loop"] = {"nodeBoot": go_duration_text(median)}
        out.notes.append(f"given.loop.nodeBoot {go_duration_text(median)}: the median of the log's {len(took)} launched to "
                         f"registered time(s) ({go_duration_text(round(took[0]))} to {go_duration_text(round(took[-1]))})")


def _too_little(story: Story, start: float) -> str:
    return (f"the log names no NodeClaim running at {timestamp(start)} and no pod on one "
            f"({len(story.entries)} Karpenter line(s), {len(story.claims)} NodeClaim(s), {len(story.pods)} pod(s)): "
            "a scenario of it would hold nothing to reproduce. Send the cluster's objects with it "
            "(`kubectl get nodepools,nodeclaims,nodes,pods,pdb -A -o yaml`), or a log from before the incident")


def _wording(story: Story, profiles: list[str], out: LogScenario) -> list[str]:
    """The log's wording against the customer's release (the first release profile asked; a label policy is
    none); the newest release whose core writes the log's words joins the profiles when that one's does not."""
    from harness.model.upstream.profile import ProfileError
    from harness.model.upstream.releases import modeled
    chosen = None
    for name in profiles:
        try:
            m = modeled(name)
        except ProfileError:         # a set's name (all-releases): the loader expands it
            continue
        if not m.get("policy") and m["core"]:
            chosen = m
            break
    if chosen is None:
        return []
    notes = kl.wording_notes(story.entries, chosen["core"], story.path, f"profile {chosen['profile']}")
    parts = kl.wording(story.entries)
    if parts and not parts[-1].covers(chosen["core"]):
        releases = kl.releases_of(parts[-1])
        if releases:
            out.profiles.append(releases[-1])
            notes.append(f"profile {releases[-1]} added: the newest release whose core writes the log's words "
                         f"({parts[-1].text}); the run at {chosen['profile']} says what that release would do")
    return notes


def _seed(story: Story, start: float, pools: dict, out: LogScenario) -> list[Claim]:
    """The NodeClaims running at the start, as given.existingNodes (the log's names kept); the others named."""
    seeded: list[Claim] = []
    for c in sorted(story.claims.values(), key=lambda c: (c.launched or c.created or 0, c.name)):
        if c.launched is not None and c.launched > start:
            out.notes.append(f"NodeClaim {c.name} (launched {timestamp(c.launched)}, after the start): the run "
                             f"makes its own{' replacement' if c.replacement else ''}, under a name of its own")
            continue
        if c.deleted is not None and c.deleted <= start:
            continue
        if c.launched is None and c.registered is None and c.tainted is None and c.line:
            if c.created is not None and c.created <= start:
                out.notes.append(f"NodeClaim {c.name} (created {timestamp(c.created)}) has no launched line by the "
                                 "start: not seeded; the run's provisioning decides again")
            continue
        if not c.instance_type:
            out.notes.append(f"NodeClaim {c.name}: no `launched nodeclaim` line gives its size: not seeded")
            continue
        seeded.append(c)
    for c in seeded:
        entry: dict = {"nodeClaim": c.name, "nodePool": _pool_of(c), "instanceType": c.instance_type}
        if c.zone:
            entry["zone"] = c.zone
        if c.capacity_type:
            entry["capacityType"] = c.capacity_type
        born = c.created or c.launched
        if born is not None:
            entry["createdAt"] = timestamp(born)
        else:
            out.notes.append(f"assumed NodeClaim {c.name} created at the start: no line of the log dates it")
        if c.initialized is not None and c.initialized <= start:
            entry["initializedAt"] = timestamp(c.initialized)
        elif c.registered is not None and c.registered <= start:
            entry["initialized"] = False
        elif c.registered is not None or (c.tainted is None and c.node is None):
            entry["registered"] = False            # launched, its Node not joined by the start (or ever)
        if c.requests:
            entry["requests"] = {k: v for k, v in c.requests.items()}
        if c.tainted is not None and c.tainted <= start:
            entry["deleting"] = timestamp(c.tainted)
        if c.node and c.node != f"aks-{c.name}":
            out.notes.append(f"NodeClaim {c.name}'s Node is {c.node} in the log; the run names it aks-{c.name}, as "
                             "the provider names a NodeClaim's VM")
        out.existing.append(entry)
    # in flight last, as the seeding wants them: a registered entry's place is its node's index
    order = sorted(range(len(seeded)), key=lambda i: not out.existing[i].get("registered", True))
    out.existing[:] = [out.existing[i] for i in order]
    return [seeded[i] for i in order]


def _pool_of(c: Claim) -> str:
    if c.nodepool:
        return c.nodepool
    c.nodepool = c.name.rsplit("-", 1)[0] if "-" in c.name else c.name
    return c.nodepool


def _assumed_nodepools(story: Story, seeded: list[Claim], pools: dict, profiles: list[str], out: LogScenario) -> None:
    """A NodePool the log names and the input lacks: one allowing the sizes and capacity types the log saw
    in it, the AKSNodeClass `default`, nothing else set."""
    named: dict[str, list[Claim]] = {}
    for c in story.claims.values():
        if c.nodepool or c in seeded:
            named.setdefault(_pool_of(c), []).append(c)
    for pool, claims in named.items():
        if pool in pools:
            continue
        sizes = sorted({c.instance_type for c in claims if c.instance_type} | {t for c in claims for t in c.listed_types})
        capacity = sorted({c.capacity_type for c in claims if c.capacity_type})
        reqs = [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": sizes}] if sizes else []
        if capacity:
            reqs.append({"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity})
        obj = {"apiVersion": _nodepool_api(profiles), "kind": "NodePool", "metadata": {"name": pool},
               "spec": {"template": {"spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass",
                                                                "name": "default"}, "requirements": reqs}}}}
        if obj["apiVersion"].endswith("v1beta1"):
            obj["spec"]["template"]["spec"]["nodeClassRef"] = {"name": "default"}
        out.manifests.append(obj)
        pools[pool] = obj
        out.notes.append(f"assumed NodePool {pool}: the log names it ({story.at(claims[0].line)}), the input does not "
                         f"hold it: instance types {', '.join(sizes) or 'any'}"
                         + (f", capacity type {', '.join(capacity)}" if capacity else "")
                         + " (what the log saw), AKSNodeClass default, no budgets, expireAfter or consolidation "
                         f"set; add it (kubectl get nodepool {pool} -o yaml)")


def _nodepool_api(profiles: list[str]) -> str:
    """karpenter.sh/v1 where every profile serves it, else the version they all serve."""
    from harness.model.crd.apiversions import served
    from harness.model.upstream.profile import ProfileError, load_profile
    loaded = []
    for p in profiles:
        try:
            loaded.append(load_profile(p))
        except ProfileError:
            continue
    versions = [v for v in ("v1", "v1beta1") if all(v in served(p, "NodePool") for p in loaded)] if loaded else ["v1"]
    return f"karpenter.sh/{(versions or ['v1'])[0]}"


def _shares(claim: Claim, pods: list[LogPod]) -> dict[str, str]:
    """Each of `pods`' requests: its NodeClaim's requests (what its round asked for) shared equally."""
    from harness.model.values.resources import format_resource, parse_quantity
    out = {}
    for k, v in claim.requests.items():
        if k in PER_POD:
            continue
        try:
            amount = parse_quantity(v)
        except ValueError:                   # (QuantityError)
            continue
        share = amount / len(pods)
        base = share * 1000 if k == "cpu" else share
        out[k] = format_resource(k, int(base))
    return out


def _pods(story: Story, seeded: list[Claim], manifests: list[dict], out: LogScenario) -> None:
    """The pods the log names on a seeded NodeClaim, as bare Pods on it (unless the input holds them); the
    PodDisruptionBudgets their refused evictions imply (unless the input holds PDBs for them)."""
    have = {((m.get("metadata") or {}).get("namespace") or "default", m["metadata"]["name"])
            for m in manifests if m.get("kind") == "Pod"}
    pdbs_given = [m for m in manifests if m.get("kind") == "PodDisruptionBudget"]
    by_claim: dict[str, list[LogPod]] = {}
    for p in story.pods.values():
        if p.claim and any(c.name == p.claim for c in seeded):
            by_claim.setdefault(p.claim, []).append(p)
        elif p.claim:
            out.notes.append(f"Pod {p.key} ({p.line}) ran on NodeClaim {p.claim}, which is not running at the start: "
                             "not seeded")
        elif p.unschedulable:
            out.notes.append(f"Pod {p.key} ({p.line}) could not be scheduled ({p.unschedulable[:160]}): not in the "
                             "scenario: the log does not hold its spec (kubectl get pod -o yaml)")
        else:
            out.notes.append(f"Pod {p.key} ({p.line}): the log does not say which node it ran on: not seeded")
    for said in story.unplaced_rounds:
        out.notes.append(f"not seeded: {said}")
    namespaces = set()
    implied: dict[tuple[str, str, str], list[LogPod]] = {}
    for c in seeded:
        pods = sorted(by_claim.get(c.name, []), key=lambda p: p.key)
        if not pods:
            continue
        requests = _shares(c, pods) if c.requests else {}
        entry = next(e for e in out.existing if e["nodeClaim"] == c.name)
        kept = []
        for p in pods:
            if (p.namespace, p.name) in have:
                continue
            namespaces.add(p.namespace)
            kept.append({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": p.name, "namespace": p.namespace,
                                      "labels": {WORKLOAD_LABEL: workload(p.name)}},
                         "spec": {"containers": [{"name": "app", "image": "from-the-log",
                                                  **({"resources": {"requests": dict(requests)}} if requests else {})}]}})
            out.notes.append(f"assumed Pod {p.key} on NodeClaim {c.name}: {p.placed_by}; a bare pod (the log does not "
                             "say its owner)" + (f", requests {_text(requests)} (NodeClaim {c.name}'s requests shared by "
                                                 f"its {len(pods)} pod(s))" if requests else ", no requests"))
            for refusal in p.refusals:
                implied.setdefault((p.namespace, workload(p.name), refusal), []).append(p)
        if kept:
            entry["pods"] = kept
    for ns in sorted(namespaces - {"default"}):
        out.manifests.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    refusal = {r["id"]: r for r in kl.refusals()}
    for (ns, wl, rid), pods in sorted(implied.items()):
        if any(((m.get("metadata") or {}).get("namespace") or "default") == ns for m in pdbs_given):
            out.notes.append(f"the refused evictions of {', '.join(p.key for p in pods)} ({refusal[rid]['says']}): the "
                             f"input's PodDisruptionBudgets in {ns} are taken as they are")
            continue
        named = _named_pdbs(story, pods, ns)
        count = refusal[rid]["pdbs"]
        names = (named + [f"{wl}-assumed-{i + 1}" for i in range(count)])[:count] if count > 1 else \
            (named[:1] or [f"{wl}-assumed"])
        seen = sum(p.refusals[rid] for p in pods)
        for name in names:
            spec = {"selector": {"matchLabels": {WORKLOAD_LABEL: wl}}}
            # one PDB refuses when it allows nothing (maxUnavailable 0); two refuse whatever they allow, so
            # each allows everything alone (minAvailable 0), as core before v1.7.0 judged each alone
            spec.update({"maxUnavailable": 0} if count == 1 else {"minAvailable": 0})
            out.manifests.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                                  "metadata": {"name": name, "namespace": ns}, "spec": spec})
        out.notes.append(f"assumed PodDisruptionBudget(s) {', '.join(f'{ns}/{n}' for n in names)} selecting "
                         f"{', '.join(p.key for p in pods)}: {seen:,} failed eviction(s) say {refusal[rid]['says']}; "
                         + ("named by the events; " if named else "")
                         + ("maxUnavailable 0" if count == 1 else "minAvailable 0 each") + " (add the customer's: "
                         f"kubectl get pdb -n {ns} -o yaml)")


def _named_pdbs(story: Story, pods: list[LogPod], ns: str) -> list[str]:
    """The PDB names DisruptionBlocked events give for the nodes these pods ran on, in `ns`."""
    out = []
    for p in pods:
        c = story.claims.get(p.claim or "")
        for key in story.pdb_names.get((c.node if c else None) or f"aks-{p.claim}", []):
            kns, _, name = key.partition("/")
            if kns == ns and name not in out:
                out.append(name)
    return out


def _text(res: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in res.items())


def _steps(story: Story, start: float, seeded: list[Claim], pools: dict, out: LogScenario) -> None:
    """How the run reaches what the log shows after the start: a drift as the NodeClaim seeded drifted, a
    consolidation by the run's own, an expiry by the NodePool's expireAfter; any other deletion (a user's, an
    expiry the NodePool does not explain, a drain no line explains: an expiry logs at DEBUG) as a `delete`
    step at its time. The last step advances to the log's end and checks it there (LOG_STEP)."""
    from harness.model.values.durations import go_duration, go_duration_text
    from harness.loop.history import offset_text
    from harness.dump.moment import Arrival, steps
    arrivals = []
    for c in seeded:
        entry = next(e for e in out.existing if e["nodeClaim"] == c.name)
        t, reason, decision, line = c.disrupted or (c.tainted, "", "", 0)
        if t is None or t <= start:
            continue
        said = f"the log's {reason} {decision} at {story.at(line)}" if line else "its Node's drain (tainted node)"
        if reason == "Drifted":
            entry["drifted"] = "NodePoolDrifted"
            out.notes.append(f"assumed NodeClaim {c.name} drifted (seeded as launched from an older NodePool template): "
                             f"{said} ({timestamp(t)}) says Drifted, not what drifted")
            continue
        if reason in ("Underutilized", "Empty"):
            out.notes.append(f"NodeClaim {c.name}: {said} ({timestamp(t)}) is the run's own consolidation to decide")
            continue
        expire = _expire_after(pools.get(_pool_of(c)) or {})
        born = c.created or c.launched
        try:
            life = go_duration(str(expire)) if expire and expire != "Never" else None
        except ValueError:
            life = None
        if life is not None and born is not None and abs(born + life - t) <= EXPIRY_SLACK:
            out.notes.append(f"NodeClaim {c.name}: {said} ({timestamp(t)}) is its expiry (created {timestamp(born)}, "
                             f"NodePool {_pool_of(c)} expireAfter {expire}): the run expires it")
            continue
        arrivals.append(Arrival(t, {}, f"delete NodeClaim {c.name}", {"kind": "NodeClaim", "name": c.name}))
        out.notes.append(f"assumed NodeClaim {c.name} deleted at {timestamp(t)}, played as a delete step: {said} "
                         + ("is not one the run can decide from the log" if reason else
                            "has no line saying why (an expiry logs at DEBUG, a user's delete not at all)"))
    out.steps, step_notes = steps(start, arrivals, None, [])
    out.notes += step_notes
    end = max(story.end or start, start)
    done = sum(round(go_duration(st["advance"])) for st in out.steps)
    out.steps.append({"description": f"{LOG_STEP} ({timestamp(end)}): what the log shows at its end is checked here",
                      "advance": go_duration_text(max(round(end - start) - done, 0)), "expect": out.expect})
    out.expect = {}
    out.notes.append(f"steps: {offset_text(end - start)} ({timestamp(end)}) the log's end ("
                     + ("its events" if story.events_end == end and story.events_end != story.last_line else
                        "its last line") + "): what it shows then is checked there")


def _expire_after(pool: dict):
    spec = pool.get("spec") or {}
    return ((spec.get("template") or {}).get("spec") or {}).get("expireAfter") or spec.get("expireAfter")


def _expect(story: Story, seeded: list[Claim], out: LogScenario) -> None:
    """The log's end as expectations: each seeded node there, draining or gone; the live node count; the
    pods whose node is still there on it; Karpenter's FailedDraining events as the customer saw them."""
    end = story.end or out.start
    nodes = []
    registered = [c for c in seeded if next(e for e in out.existing if e["nodeClaim"] == c.name).get("registered", True)]
    for i, c in enumerate(registered):
        gone = c.deleted is not None and c.deleted <= end
        draining = not gone and (c.tainted is not None or (c.disrupted is not None and c.disrupted[0] <= end))
        nodes.append({"index": i, "nodePool": _pool_of(c), "instanceType": c.instance_type,
                      **({"zone": c.zone} if c.zone else {}), "deleted": gone, "deleting": draining})
    if nodes:
        out.expect["nodes"] = nodes
    live = [c for c in story.claims.values() if c.launched is not None and c.launched <= end
            and (c.deleted is None or c.deleted > end)]
    out.expect["nodeCount"] = len(live)
    out.notes.append(f"expect: the log's end ({timestamp(end)}): {len(live)} node(s) there ("
                     + ", ".join(f"{c.name}{' draining' if c.tainted else ''}" for c in live) + ")"
                     + "; nodes the log has no line about are not in the scenario")
    for c in seeded:
        held = c.tainted is not None and (c.deleted is None or c.deleted > end)
        if held and not any(p.refusals for p in story.pods.values() if p.claim == c.name):
            out.notes.append(f"WARNING: Node {c.node or 'aks-' + c.name}'s drain began at {timestamp(c.tainted)} and "
                             f"had not ended by the log's end, and nothing in the input says what held it (a refused "
                             "eviction is an ERROR line before core v1.7.0 and an event from then, a do-not-disrupt "
                             "pod or a volume an event only): the run drains it as the input allows; send `kubectl "
                             "get events -A` and the PodDisruptionBudgets")
    pods = {}
    for i, c in enumerate(registered):
        if c.deleted is not None and c.deleted <= end:
            continue
        for p in sorted((p for p in story.pods.values() if p.claim == c.name), key=lambda p: p.key):
            pods[p.name] = {"scheduled": True, "node": i}
    if pods:
        out.expect["pods"] = pods
    # the drain's failure as the customer's events show it, by Node and reason: core publishes one FailedDraining
    # per Node every two minutes, whichever of its texts comes first (sigs.k8s.io/karpenter v1.10.0
    # pkg/events/recorder.go defaultDedupeTimeout, dedupeKey), so which text a run shows is not the log's
    names = {c.node or f"aks-{c.name}": f"aks-{c.name}" for c in seeded}
    events = []
    for ev in story.events:
        want = {"kind": "Node", "name": names.get(ev["name"], ""), "reason": ev["reason"]}
        if ev["name"] in names and want not in events:
            events.append(want)
            out.notes.append(f"expect: a {ev['reason']} event on Node {want['name']}, as {ev['where']} shows (its text "
                             "not word for word: core publishes one per Node every 2 minutes, whichever comes first)")
    if events:
        out.expect["events"] = events


def _errors(story: Story, out: LogScenario) -> None:
    """The error lines, counted by what they say: each a note; an eviction's refusal is the PDBs assumed
    above, a launch error a fault the run does not play unless the scenario gives it (given.faults)."""
    groups: dict[tuple[str, str], list[kl.Entry]] = {}
    for e in story.errors:
        text = e.facts.get("error", "")
        key = (e.id, e.facts.get("refusal") or text[:160])
        groups.setdefault(key, []).append(e)
    for (id_, _), es in groups.items():
        first, last = es[0], es[-1]
        span = f"{timestamp(first.t)} to {timestamp(last.t)}" if first.t and last.t else "undated"
        about = sorted({e.facts.get("Pod") or e.facts.get("NodeClaim") or "" for e in es} - {""})
        text = first.facts.get("error", first.message)
        line = (f"{story.path}: {len(es):,} {first.message!r} error line(s) ({story.at(first.line)}, {span})"
                + (f" about {', '.join(about[:4])}{' ...' if len(about) > 4 else ''}" if about else "")
                + f": {text[:200]}")
        if id_ == "eviction-failed":
            line += " -> the PodDisruptionBudgets assumed above" if first.facts.get("refusal") else \
                " -> not reproduced: the run's eviction API refuses only for PodDisruptionBudgets"
        elif id_ == "launch-failed" or (id_ == "reconcile-failed" and "launching nodeclaim" in text):
            line += " -> not reproduced: give the Azure error as given.faults (docs/scenario-format.md) to play it"
        elif id_ == "schedule-failed":
            line += " -> not reproduced: the pod's spec is not in the log"
        elif (gone := no_offering(text)) is not None:
            line += (f" -> given.restrict {gone[0]} in zone {gone[2]} (assumed above)")
        else:
            line += " -> not reproduced"
        out.notes.append(line)


def no_offering(text: str) -> tuple[str, str, str] | None:
    """(size, capacity type, zone) of consolidation's "unable to determine offering" error, in either wording."""
    if (m := _NO_OFFERING[0].search(text)):
        return m.group(1), m.group(2), m.group(3)
    if (m := _NO_OFFERING[1].search(text)):
        kv = dict(p.strip().split("=", 1) for p in m.group(1).split(",") if "=" in p)
        if kv.get("instance-type") and kv.get("zone"):
            return kv["instance-type"], kv.get("capacity-type", ""), kv["zone"]
    return None


def _gone_offerings(story: Story, seeded: list[Claim], out: LogScenario) -> None:
    """A size the log's consolidation found no offering for in a seeded node's zone: Azure no longer offers it
    there (a zone restriction, given.restrict), which the run's catalog must say, else it prices the node and
    consolidates what the customer's controller could not."""
    gone: dict[tuple[str, str], tuple[str, kl.Entry]] = {}
    for e in story.errors:
        found = no_offering(e.facts.get("error", "") or e.message)
        if found and found[2].rsplit("-", 1)[-1].isdigit():
            gone.setdefault((found[0], found[2]), (found[1], e))
    if gone:
        placed = [p for p in story.pods.values() if p.claim in {c.name for c in seeded}]
        out.notes.append(
            f"assumed the {len(placed):,} pod(s) the log's provisioning rounds placed on the seeded nodes still run "
            "there: core prices consolidation candidates only once its simulation fits their pods on one new node, "
            "so the nodes held fewer or smaller pods when the errors began; the log does not say which left (give "
            "the pods that ran then: kubectl get pods -A -o yaml)")
    for (size, zone), (capacity, e) in gone.items():
        nodes = [c.name for c in seeded if c.instance_type == size and c.zone == zone]
        out.given.setdefault("restrict", []).append({"size": size, "zones": [zone]})
        out.notes.append(
            f"assumed {size} is no longer offered in zone {zone} (given.restrict): core found no {capacity or 'such'} "
            f"offering of it there when it priced a consolidation candidate ({story.at(e.line)})"
            + (f", NodeClaim(s) {', '.join(nodes)}" if nodes else "") + ": Azure took the size away from the zone "
            "after the node launched (a zone restriction: `az vm list-skus --size " + size + " --location "
            + zone.rsplit("-", 1)[0] + "` shows it), or the offering left the provider's list; from the start, "
            "as the log's first line of it is the run's first pass")


def assumed_lines(notes: list[str]) -> list[str]:
    """The `assumed ...` notes as the scenario's given.assumed, which every run says: one line per assumption,
    the pods placed from the log counted in one."""
    pods = [n for n in notes if n.startswith("assumed Pod ")]
    out = [n[len("assumed "):] for n in notes if n.startswith("assumed ") and not n.startswith("assumed Pod ")]
    if pods:
        names = [n[len("assumed Pod "):].split(" ", 1)[0] for n in pods]
        out.append(f"{len(pods):,} pod(s) ({', '.join(names[:3])}{f' and {len(names) - 3:,} more' if len(names) > 3 else ''})"
                   " placed where the log's lines put them, bare pods, their requests their NodeClaims' shared")
    return out


def log_notes(story: Story, profiles: list[str]) -> list[str]:
    """What the log says beside a dump that gives the nodes: its wording against the customer's release, and
    its error lines counted."""
    out = LogScenario(0.0)
    notes = _wording(story, profiles, out)
    _errors(story, out)
    return notes + out.notes
