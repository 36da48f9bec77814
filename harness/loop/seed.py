"""Customer state before the first pass: existing Nodes, Karpenter NodeClaims and the pods running on
them (`given.existingNodes`, and what `harness new` reads from a dump).

Why it is built this way: docs/architecture/loop.md."""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from harness.backends.base import ADMIN, NODE_LIFECYCLE, APIRejected, Identity
from harness.loop.azure.provider import PendingMachine
from harness.model.kube.kubetime import parse_rfc3339, rfc3339
from harness.loop.provisioning.nodepool import ready_nodepools
from harness.loop.lifecycle.hashes import (NODECLASS_HASH, NODECLASS_HASH_VERSION, NODEPOOL_HASH, NODEPOOL_HASH_VERSION,
                                 nodepool_hash, restamps)
from harness.loop.provisioning.nodeclaimobject import SeedError, refused_because, seeded_nodeclaim, template_for
from harness.loop.result import NodeResult
from harness.model.azure.params import NodeClassParams
from harness.model.kube import podtermination
from harness.loop.scheduling.topology import selector_matches
from harness.model.values.resources import format_resource_list, parse_resource_list
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE, ZONE
from harness.model.labels.writers import cloud_node_controller_labels, kubelet_self_labels

ARCH, OS = "kubernetes.io/arch", "kubernetes.io/os"
NOT_READY = "node.kubernetes.io/not-ready"     # k8s.io/api core/v1 well_known_taints.go TaintNodeNotReady
UNREACHABLE = "node.kubernetes.io/unreachable"  # ... TaintNodeUnreachable
DISRUPTED = "karpenter.sh/disrupted"          # core v1.14.0 pkg/apis/v1/taints.go DisruptedTaintKey
# a Node's Ready status other than True -> the key of the taints kube-controller-manager's node lifecycle
# controller puts on it, with both effects (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle
# node_lifecycle_controller.go nodeConditionToTaintKeyStatusMap for NoSchedule, doNoExecuteTaintingPass's
# NotReadyTaintTemplate / UnreachableTaintTemplate for NoExecute; the eviction NoExecute leads to is the
# taint-eviction controller's, which neither engine runs: docs/limits.md)
CONDITION_TAINT = {"False": NOT_READY, "Unknown": UNREACHABLE}
# the Ready condition a kubelet posts when it is not ready, and the one the node lifecycle controller writes
# once the kubelet stops posting (node_lifecycle_controller.go tryUpdateNodeHealth)
NOT_READY_CONDITION = {"False": {"type": "Ready", "status": "False", "reason": "KubeletNotReady"},
                       "Unknown": {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown",
                                   "message": "Kubelet stopped posting node status."}}


def ready_status(entry: dict) -> str:
    """An entry's Ready condition status: True (the default), False (`ready: false`) or Unknown."""
    ready = entry.get("ready", True)
    return "True" if ready is True else "Unknown" if str(ready) == "Unknown" else "False"


def condition_taints(status: str) -> list[dict]:
    """The taints the node lifecycle controller keeps on a Node whose Ready is `status` (none when True)."""
    key = CONDITION_TAINT.get(status)
    return [{"key": key, "effect": "NoSchedule"}, {"key": key, "effect": "NoExecute"}] if key else []


@dataclass
class Seeded:
    """What one entry became: the Node's name (None while it has no Node) and its NodeClaim, if any."""
    node: str | None
    nodeclaim: str | None


def seed_existing_nodes(sim, entries: list[dict]) -> list[Seeded]:
    """Create every entry (in order) in the simulation's cluster; returns what each became."""
    out = []
    templates = _Templates(sim)
    for i, entry in enumerate(entries or []):
        where = f"given.existingNodes[{i}]"
        if entry.get("nodePool") and sim.exited:
            # the controller exited at its start (a fault on its SKU list): no Karpenter launches the
            # entry's NodeClaim, here or on the real engine (runner/engines/real/cluster/existing.py seed)
            sim.trace(f"[seed] {where} not seeded: the controller exited at its start")
            out.append(Seeded(None, None))
        elif entry.get("nodePool"):
            out.append(_managed(sim, entry, where, templates))
        else:
            out.append(_unmanaged(sim, entry, i, where))
    return out


# -- a node Karpenter manages -----------------------------------------------------------------------
class _Templates:
    """What Provisioner.templates(record=False) gives for a NodePool at each entry, without building it
    anew: the Template.from_nodepool part is kept per stored NodePool and instance-type set (a write replaces
    a stored object; the provider answers with the same set until its inputs change), the provider still
    asked for every Ready NodePool's types at each entry, as templates() asks. The DaemonSet pods
    (Provisioner.daemon_pods) are read only for an entry whose requests count them (seeded_nodeclaim: one
    without `requests`): nothing reads a NodeClaim's template afterwards but its NodePool."""

    def __init__(self, sim):
        self.sim = sim
        self._params: dict[str, tuple] = {}   # AKSNodeClass name -> (its stored object, NodeClassParams)
        self._built: dict[str, tuple] = {}    # NodePool name -> (stored object, instance types, its Template)

    def get(self, name: str, daemons: bool):
        """The Ready NodePool `name`'s template (with its DaemonSet pods if `daemons`), or None."""
        s = self.sim.state
        found = None
        # every Ready NodePool's types asked for, as templates() asks (the stored NodePools, read only)
        for np, its in self.sim.provisioner.nodepool_types(shared=True, params=self._nodeclass_params):
            if np["metadata"]["name"] == name:
                found = (np, its)
        if found is None:
            return None
        np, its = found
        built = self._built.get(name)
        if built is None or built[0] is not np or built[1] is not its:
            built = self._built[name] = (np, its, template_for(copy.deepcopy(np), list(its.instance_types), s.profile,
                                                               s.sem, s.core, []))
        if not daemons:
            return built[2]
        return dataclasses.replace(built[2], daemon_pods=self.sim.provisioner.daemon_pods(), _overhead={}, _daemons={},
                                   _groups=None, _indexed={})

    def _nodeclass_params(self, name: str):
        """nodeclass_params, kept per stored AKSNodeClass."""
        obj = self.sim.state.cluster.get("AKSNodeClass", name, shared=True) if name else None     # read only
        if obj is None:
            return None
        kept = self._params.get(name)
        if kept is None or kept[0] is not obj:
            kept = self._params[name] = (obj, NodeClassParams.from_manifest(obj))
        return kept[1]


def _managed(sim, entry: dict, where: str, templates: _Templates) -> Seeded:
    s = sim.state
    np_name = entry["nodePool"]
    template = templates.get(np_name, daemons=not entry.get("requests"))
    if template is None:
        ready = [np["metadata"]["name"] for np in ready_nodepools(s)]
        raise SeedError(f"{where}.nodePool", f"no Ready NodePool {np_name!r} (Ready: {', '.join(ready) or 'none'})"
                        + refused_because(s.result.nodepools.get(np_name)))
    # the NodeClaim Karpenter made for the pods that run there, built as the real engine's seeding builds it
    # (nodeclaimobject.seeded_nodeclaim); named as the dump named it, so its Node (aks-<name>) is the one the
    # customer's objects name, else generated (the real engine names it <nodePool>-existing-<i> instead:
    # its name cannot come from this run's random stream)
    seeded = seeded_nodeclaim(entry, where, template, s.profile, s.sem, s.core, s.rng,
                              str(entry.get("nodeClaim") or "") or (lambda: s.name(template.name + "-")))
    it = seeded.instance_type
    before = len(s.claims)
    if not sim.provisioner.write_nodeclaim(seeded.obj, seeded.requirements, template, []) or len(s.claims) == before:
        raise SeedError(where, f"the NodeClaim was refused: {s.result.nodeclaims[-1].rejected}")
    claim = s.claims[-1]
    out = s.provider.create(claim.obj, claim.requirements, claim.nodeclass, claim.nodeclass_name)
    if isinstance(out, PendingMachine):          # aksmachineapiheaderbatch: a seeded machine is a batch of its own
        s.provider.flush_batch()
        out = out.finish()
    if not hasattr(out, "vm_name"):
        raise SeedError(where, f"launching {it.name} failed: {out.reason}: {out.message}")
    sim.launch.populate(claim, out, seeded=True)
    _history(sim, claim, entry, where)
    if entry.get("registered", True):
        sim.registration.kubelet_register(claim)
        if claim.node_name and not claim.refused:
            sim.registration.register(claim)
            _report_resources(sim, claim.node_name, entry)
            if entry.get("initialized", True) and claim.registered:
                sim.initialization.initialize(claim)
    if claim.node_name:
        _decorate(sim, claim.node_name, entry)
        if ready_status(entry) != "True":
            _not_ready(sim, claim.node_name, ready_status(entry))
        _pods(sim, claim.node_name, entry, where)
        _settled_pods(sim, claim, entry)
        if entry.get("deleting"):
            _mark_deleting(sim, claim.node_name)
            # core's node termination answers the Node's deletion by deleting its NodeClaim at once (core
            # v1.14.0 pkg/controllers/node/termination/controller.go finalize), long before the kubelet of an
            # in-flight node reports Ready: the lifecycle controller then only finalizes it
            # (nodeclaim/lifecycle/controller.go Reconcile), so it is never initialized
            sim.node_termination.begin(claim, "", _deleted_at(entry))
    elif entry.get("deleting"):           # a NodeClaim deleted before its Node joined
        sim.node_termination.begin(claim, "", _deleted_at(entry))
    _dumped_phases(claim, entry, where)
    s.trace(f"existing NodeClaim {claim.result.name} ({it.name}, {out.zone}, {out.capacity_type})"
            + ("" if claim.node_name else ", launched without a Node")
            + ("" if claim.initialized else ", not initialized"))
    return Seeded(claim.node_name, claim.result.name)


def _at(entry: dict, key: str, where: str) -> float | None:
    value = entry.get(key)
    if value is None or isinstance(value, bool):
        return None
    try:
        return parse_rfc3339(str(value))
    except ValueError:
        raise SeedError(f"{where}.{key}", f"{value!r} is not an RFC 3339 time") from None


def _history(sim, claim, entry: dict, where: str) -> None:
    """What the dump says happened before the start: the NodeClaim's creation time (its age counts from
    there: expireAfter, the drift check's instance-type wait), its Initialized and lastPodEventTime times
    (consolidateAfter counts from the later), and the hash annotations it was launched with. The launch
    facts are recorded first (lifecycle/conditions.py record_launch stamps the current AKSNodeClass hash
    once), so the dump's older hash is the one drift compares; `drifted` without the dump's annotation
    gets a placeholder hash that matches no spec."""
    s = sim.state
    created = _at(entry, "createdAt", where)
    if created is not None:
        if created > s.clock.now():
            raise SeedError(f"{where}.createdAt", f"{entry['createdAt']} is after given.startTime "
                            f"({s.clock.timestamp()})")
        claim.created_at = created
        claim.obj["metadata"]["creationTimestamp"] = rfc3339(created)
    claim.dis.initialized_at = _at(entry, "initializedAt", where)
    claim.dis.last_pod_event = _at(entry, "lastPodEventTime", where)
    ann = {str(k): str(v) for k, v in (entry.get("annotations") or {}).items()}
    drifted = entry.get("drifted")
    if not ann and not drifted:
        return
    sim.nodeclaim_disruption.record_launch(claim, {})
    have = claim.obj["metadata"].setdefault("annotations", {})
    if drifted == "NodeClassDrifted":
        version = s.profile.nodeclass_hash_version
        if version is not None:     # a release with no AKSNodeClass hash finds none drifted (scenario notices say so)
            ann.setdefault(NODECLASS_HASH, "launched-from-an-older-aksnodeclass")
            ann.setdefault(NODECLASS_HASH_VERSION, version)
    elif drifted:
        ann.setdefault(NODEPOOL_HASH, "launched-from-an-older-nodepool")
        ann.setdefault(NODEPOOL_HASH_VERSION, s.profile.nodepool_hash_version)
    # a hash the dump does not call drifted is current: the loop's own stays (its digits are not upstream's)
    current = {"NodeClassDrifted": (NODEPOOL_HASH,), "NodePoolDrifted": (NODECLASS_HASH,)}.get(
        str(drifted), (NODEPOOL_HASH, NODECLASS_HASH))
    ann = {k: v for k, v in ann.items() if k not in current}
    have.update(ann)
    _restamp(sim, claim, bool(drifted))


def _restamp(sim, claim, drifted: bool) -> None:
    """A seeded NodeClaim of another NodePool hash version, as core's NodePool hash controller leaves it at its
    first reconcile (hashes.py restamps): the release's version, and the current hash unless Drifted; else, its
    NodePool being at the release's version already, as it was (never compared)."""
    s = sim.state
    have = claim.obj["metadata"].setdefault("annotations", {})
    version, stamped = s.profile.nodepool_hash_version, have.get(NODEPOOL_HASH_VERSION)
    np = s.cluster.get("NodePool", claim.template.name)
    if stamped is None or stamped == version or np is None:
        return
    subject, related = f"NodeClaim/{claim.result.name}", (f"NodePool/{claim.template.name}",)
    if not restamps(stamped, np, s.profile):
        s.trace(f"NodeClaim {claim.result.name} keeps nodepool-hash-version {stamped}: its NodePool is at {version}")
        s.decide("disruption", "hash-version-kept", subject,
                 f"its {NODEPOOL_HASH_VERSION} {stamped} is not the release's {version}, and its NodePool's already "
                 f"is, so core's hash controller re-stamps nothing: drift never compares its NodePool hash", related)
        return
    have[NODEPOOL_HASH_VERSION] = version
    if not drifted:
        have[NODEPOOL_HASH] = nodepool_hash(np, s.profile)
    s.trace(f"NodeClaim {claim.result.name} re-stamped nodepool-hash-version {stamped} -> {version}")
    s.decide("disruption", "hash-restamped", subject,
             f"{NODEPOOL_HASH_VERSION} {stamped} re-stamped {version} by core's NodePool hash controller"
             + (" (its hash kept: it is Drifted already)" if drifted else " with the current hash: not drifted"),
             related)


def _settled_pods(sim, claim, entry: dict) -> None:
    """The entry's pods ran there before the start: their binding is no pod event now (podevents.py
    would stamp lastPodEventTime at the start), and each started at its status.startTime (a duration-valued
    do-not-disrupt annotation counts from it)."""
    s = sim.state
    keys = [s.pod_key(p) for p in entry.get("pods") or []]
    for key, pod in zip(keys, entry.get("pods") or []):
        started = ((pod.get("status") or {}).get("startTime"))
        if key in s.result.pods and s.result.pods[key].node:
            sim.podevents.settled(key, s.result.pods[key].node)
            s.disruption.pod_started[key] = parse_rfc3339(str(started)) if started else s.clock.now()
    if claim.dis.initialized_at is None and entry.get("createdAt") and claim.initialized:
        claim.dis.initialized_at = claim.created_at


def _deleted_at(entry: dict) -> float | None:
    """A dump's deletionTimestamp: termination counts the NodeClaim's terminationGracePeriod from it, and
    the run's timeline says it was deleting since then (None: deleted at the start, or the dump gives no time)."""
    return parse_rfc3339(entry["deleting"]) if isinstance(entry.get("deleting"), str) else None


def _dumped_phases(claim, entry: dict, where: str) -> None:
    """The NodeClaim's phases as the dump dates them, not as the seeding performed them at the start:
    created (and launched: the provider launches within the create's reconcile) at createdAt,
    registered and initialized at initializedAt (else createdAt). Only times the dump gives move."""
    created = _at(entry, "createdAt", where)
    initialized = _at(entry, "initializedAt", where)
    at = claim.result.at
    if created is not None:
        for phase in ("created", "launched"):
            if phase in at:
                at[phase] = created
    for phase in ("registered", "initialized"):
        if phase in at and (initialized or created) is not None:
            at[phase] = initialized if initialized is not None else created


# -- a node Karpenter does not manage -------------------------------------------------------------------
def _unmanaged(sim, entry: dict, i: int, where: str) -> Seeded:
    s = sim.state
    name = str(entry.get("name") or f"existing-{i}")
    labels: dict[str, str] = {}
    capacity: dict[str, int] = {}
    alloc: dict[str, int] = {}
    zone, ct, it_name = str(entry.get("zone") or ""), str(entry.get("capacityType") or ""), ""
    if entry.get("instanceType"):
        it = s.provider.instance_types(NodeClassParams()).get(entry["instanceType"])
        if it is None:
            raise SeedError(f"{where}.instanceType", f"{entry['instanceType']!r} is not in the scenario's SKUs")
        it_name = it.name
        arch = it.requirements.get(ARCH).single_value() or "amd64"
        labels.update(kubelet_self_labels(name, arch))
        labels.update(cloud_node_controller_labels(it.name, zone or "0", s.cfg.cluster.region.lower()))
        capacity, alloc = dict(it.capacity), it.allocatable()
    else:
        # a kubelet labels its Node's OS whatever it runs on (the real engine's seeded Node says linux:
        # runner/engines/real/cluster/existing.py unmanaged_node), and kube-controller-manager's node lifecycle
        # controller mirrors it to the beta key (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle
        # node_lifecycle_controller.go labelReconcileInfo)
        labels.update({OS: "linux", "beta.kubernetes.io/os": "linux"})
    labels.setdefault("kubernetes.io/hostname", name)
    labels.update({str(k): str(v) for k, v in (entry.get("labels") or {}).items()})
    if entry.get("capacity"):
        capacity.update(parse_resource_list(entry["capacity"]))
    if entry.get("allocatable"):
        alloc.update(parse_resource_list(entry["allocatable"]))
    if not alloc:
        alloc = dict(capacity)
    ready = ready_status(entry)
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"taints": [dict(t) for t in entry.get("taints") or []]},
            "status": {"capacity": format_resource_list(capacity or alloc), "allocatable": format_resource_list(alloc),
                       "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"} if ready == "True"
                                      else dict(NOT_READY_CONDITION[ready])]}}
    try:
        created = s.cluster.create(node, ADMIN)
        s.cluster.update_status({**created, "status": node["status"]}, ADMIN)
        created = s.cluster.get("Node", name)
        taints = created["spec"].get("taints") or []
        if ready == "True":      # the node lifecycle controller lifts the not-ready taint admission put on it
            wanted = node["spec"]["taints"]
            if taints != wanted:
                created["spec"]["taints"] = [t for t in taints if t["key"] != NOT_READY or t in wanted]
                s.cluster.update(created, NODE_LIFECYCLE)
        else:
            _condition_taints(s, created, ready)
    except APIRejected as e:
        raise SeedError(where, f"the API server refused Node {name}: {e.message}") from None
    nr = NodeResult(name, len(s.nodes), "", "", it_name or labels.get(INSTANCE_TYPE, ""),
                    labels.get(ZONE, zone), labels.get(CAPACITY_TYPE, ct), name,
                    labels=dict(labels), registered=True, initialized=True)
    s.nodes[name] = nr
    s.result.nodes.append(nr)
    s.unmanaged_nodes.append(name)
    _pods(sim, name, entry, where)
    if entry.get("deleting"):
        _mark_deleting(sim, name)
    s.trace(f"existing Node {name} (not managed by Karpenter)")
    return Seeded(name, None)


# -- shared ---------------------------------------------------------------------------------------------
def _report_resources(sim, node_name: str, entry: dict) -> None:
    """What the kubelet reports instead of the instance type's numbers (`capacity` / `allocatable`,
    e.g. an extended resource still zero before its device plugin registers)."""
    if not entry.get("capacity") and not entry.get("allocatable"):
        return
    s = sim.state
    node = s.cluster.get("Node", node_name)
    status = node.setdefault("status", {})
    for key in ("capacity", "allocatable"):
        have = parse_resource_list(status.get(key) or {})
        have.update(parse_resource_list(entry.get(key) or {}))
        status[key] = format_resource_list(have)
    s.cluster.update_status(node, ADMIN)


def _mark_deleting(sim, node_name: str) -> None:
    """A Node being deleted: it keeps a finalizer (deletionTimestamp set, still listed), and carries the
    karpenter.sh/disrupted:NoSchedule taint Karpenter's termination puts on it (core v1.14.0
    pkg/apis/v1/taints.go DisruptedNoScheduleTaint), so no new pod binds there."""
    s = sim.state
    node = s.cluster.get("Node", node_name)
    node["metadata"]["finalizers"] = sorted(set(node["metadata"].get("finalizers") or []) | {"karpenter.sh/termination"})
    taints = node["spec"].get("taints") or []
    if not any(t["key"] == DISRUPTED for t in taints):
        node["spec"]["taints"] = taints + [{"key": DISRUPTED, "effect": "NoSchedule"}]
    s.cluster.update(node, ADMIN)
    s.cluster.delete("Node", node_name, identity=ADMIN)


def _not_ready(sim, node_name: str, ready: str) -> None:
    """A managed Node whose kubelet reports NotReady (`ready` False) or stopped posting (Unknown), after its
    initialization: its Ready condition, and the taints the node lifecycle controller keeps for it. Karpenter
    counts it as disrupting in its NodePool's budget (core BuildDisruptionBudgetMapping), and no pod schedules
    to it (kube-scheduler and Karpenter's simulation read the taints of an initialized Node as they are).
    Nothing makes it Ready again; what follows on a real cluster is not simulated (docs/limits.md)."""
    s = sim.state
    node = s.cluster.get("Node", node_name)
    node["status"]["conditions"] = [c for c in node["status"].get("conditions") or [] if c.get("type") != "Ready"] \
        + [dict(NOT_READY_CONDITION[ready])]
    s.cluster.update_status(node, NODE_LIFECYCLE if ready == "Unknown" else Identity.node(node_name))
    _condition_taints(s, s.cluster.get("Node", node_name), ready)
    s.trace(f"existing Node {node_name}: Ready {ready}")


def _condition_taints(s, node: dict, ready: str) -> None:
    """The Node's not-ready and unreachable taints made the node lifecycle controller's for Ready `ready`."""
    kept = condition_taints(ready)
    have = node["spec"].get("taints") or []
    wanted = [t for t in have if t["key"] not in (NOT_READY, UNREACHABLE)
              or any((t["key"], t.get("effect")) == (k["key"], k["effect"]) for k in kept)]
    wanted += [k for k in kept if not any((t["key"], t.get("effect")) == (k["key"], k["effect"]) for t in wanted)]
    if wanted != have:
        node["spec"]["taints"] = wanted
        s.cluster.update(node, NODE_LIFECYCLE)


def _decorate(sim, node_name: str, entry: dict) -> None:
    """Labels and taints the entry gives, put on the Node after Karpenter's registration. The not-ready and
    unreachable taints are kube-controller-manager's node lifecycle controller's, which keeps the ones that
    match the Node's Ready condition (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle
    node_lifecycle_controller.go doNoScheduleTaintingPass: Ready False -> not-ready, Unknown -> unreachable),
    as it does on the real engine's cluster: with `ready` given they are its (_not_ready), else this Node's
    kubelet reports Ready and a NoSchedule `unreachable` taint goes. An uninitialized entry with the not-ready
    taint has a kubelet that reports NotReady for good (the real engine holds it so:
    runner/engines/real/cluster/existing.py never_ready), so the lifecycle controller's NoExecute not-ready taint
    joins it."""
    if not entry.get("labels") and not entry.get("taints"):
        return
    s = sim.state
    node = s.cluster.get("Node", node_name)
    node["metadata"]["labels"].update({str(k): str(v) for k, v in (entry.get("labels") or {}).items()})
    if "ready" in entry:
        taints = [t for t in entry.get("taints") or [] if t.get("key") not in (NOT_READY, UNREACHABLE)]
    else:
        taints = [t for t in entry.get("taints") or [] if (t.get("key"), t.get("effect")) != (UNREACHABLE, "NoSchedule")]
        if not entry.get("initialized", True) and any(t.get("key") == NOT_READY for t in taints):
            taints.append({"key": NOT_READY, "effect": "NoExecute"})
    if taints:
        have = node["spec"].get("taints") or []
        node["spec"]["taints"] = have + [dict(t) for t in taints
                                         if not any(h["key"] == t["key"] and h.get("effect") == t.get("effect") for h in have)]
    s.cluster.update(node, ADMIN)


def _live_owner_references(cluster, pod: dict) -> None:
    """Keep an owner reference that names its uid, or whose owner is in the cluster, with that owner's uid (as the
    real engine's bind_pods does): the API server refuses a reference without a uid (k8s.io/apimachinery
    v0.36.3 pkg/api/validation/objectmeta.go validateOwnerReference: uid "must not be empty"), and its garbage collector deletes a dependent
    whose owner uid does not exist. A dump's pods name ReplicaSets the scenario does not have; the
    owner's kind and name read above still say which workload the pod belongs to."""
    meta = pod.setdefault("metadata", {})
    namespace = meta.get("namespace") or "default"
    refs = []
    for ref in meta.get("ownerReferences") or []:
        live = cluster.get(ref.get("kind", ""), ref.get("name", ""), namespace) \
            if ref.get("kind") in ("DaemonSet", "Deployment", "StatefulSet", "ReplicaSet") else None
        if live is not None:
            refs.append({**ref, "uid": live["metadata"]["uid"]})
        elif ref.get("uid"):
            refs.append(ref)          # as written (a mirror pod's Node reference: core's pod.IsOwnedByNode)
    if refs:
        meta["ownerReferences"] = refs
    else:
        meta.pop("ownerReferences", None)


def _release_unmatched(s, pod: dict) -> bool:
    """A pod whose controller reference names one of the scenario's DaemonSets while its labels do not match
    that DaemonSet's selector is released by the DaemonSet controller (k8s.io/kubernetes v1.36.3
    pkg/controller/controller_ref_manager.go ClaimObject: owned, selector does not match, release), as
    kube-controller-manager does on the real engine's cluster: the reference goes and True is returned."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    refs = meta.get("ownerReferences") or []
    kept = [r for r in refs if not (r.get("controller") and r.get("kind") == "DaemonSet" and any(
        ds["metadata"]["name"] == r.get("name") and (ds["metadata"].get("namespace") or "default") == (meta.get("namespace") or "default")
        and not selector_matches((ds.get("spec") or {}).get("selector"), labels) for ds, _ in s.daemonsets))]
    if len(kept) == len(refs):
        return False
    meta["ownerReferences"] = kept
    return True


def _own_copy(pod: dict) -> dict:
    """A copy of a dump's pod that _pods and LoopState.create_pod may change without changing the entry:
    they set or replace keys of the pod, its metadata and its spec only (the API server's create copies
    the rest)."""
    pod = dict(pod)
    for key in ("metadata", "spec"):
        if isinstance(pod.get(key), dict):
            pod[key] = dict(pod[key])
    return pod


def _pods(sim, node_name: str, entry: dict, where: str) -> None:
    """The entry's pods, created bound to the node (running, as ExpectManualBinding leaves them)."""
    s = sim.state
    for j, pod in enumerate(entry.get("pods") or []):
        pod = _own_copy(pod)
        pod.setdefault("apiVersion", "v1")
        pod.setdefault("kind", "Pod")
        owner = next((o for o in (pod.get("metadata") or {}).get("ownerReferences") or []
                      if o.get("controller", True)), None) or {}
        kind, owner_name = "", ""
        if owner.get("kind") == "DaemonSet":
            kind, owner_name = "DaemonSet", owner.get("name", "")
        elif owner.get("kind") == "ReplicaSet" and ((pod.get("metadata") or {}).get("namespace") or "default",
                                                    owner.get("name")) in s.replicasets:     # a bare ReplicaSet's
            kind, owner_name = "ReplicaSet", owner.get("name", "")
        elif owner.get("kind") == "ReplicaSet":      # a Deployment's pod (<deployment>-<pod-template-hash>)
            kind, owner_name = "Deployment", str(owner.get("name", "")).rsplit("-", 1)[0]
        elif owner.get("kind") == "Job":             # the Job adopts it when applied (loop/kube/jobs.py)
            kind, owner_name = "Job", owner.get("name", "")
        if _release_unmatched(s, pod):
            kind, owner_name = "", ""
        stopping = _still_stopping(pod, s.clock.now(), f"{where}.pods[{j}]")
        if stopping and owner.get("kind") == "StatefulSet":    # its set's already: no controller adopts a pod
            kind, owner_name = "StatefulSet", owner.get("name", "")    # being deleted (ClaimObject)
        _live_owner_references(s.cluster, pod)
        terminating = bool(pod["metadata"].pop("deletionTimestamp", None))
        pod["metadata"].pop("deletionGracePeriodSeconds", None)
        try:
            s.create_pod(pod, kind, owner_name, node=node_name)
        except APIRejected as e:
            raise SeedError(f"{where}.pods[{j}]", f"the API server refused the pod: {e.message}") from None
        nr = s.nodes.get(node_name)
        if nr is not None:
            nr.pods.append(s.pod_key(pod))
        if stopping:
            _stopping(s, s.pod_key(pod), stopping)
        elif terminating:
            _terminate(s, s.pod_key(pod))


def _still_stopping(pod: dict, now: float, where: str) -> dict | None:
    """The deletion fields of a dump's pod whose containers are still stopping at the start (its
    deletionTimestamp, a grace period, and podtermination.stops_at after `now`), else None."""
    meta = pod.get("metadata") or {}
    given = (meta.get("annotations") or {}).get(podtermination.STOPS_AT)
    if given is not None:
        try:
            parse_rfc3339(str(given))
        except ValueError:
            raise SeedError(f"{where}.metadata.annotations[{podtermination.STOPS_AT!r}]",
                            f"{given!r} is not an RFC 3339 time (when the pod's containers stop)") from None
    if not meta.get("deletionTimestamp") or not meta.get("deletionGracePeriodSeconds"):
        return None
    stop = podtermination.stops_at(pod)
    if stop is None or stop <= now:
        return None
    return {"deletionTimestamp": meta["deletionTimestamp"],
            "deletionGracePeriodSeconds": meta["deletionGracePeriodSeconds"]}


def _stopping(s, key: str, fields: dict) -> None:
    """A dump's pod deleted before the start whose containers have not stopped: terminating with the dump's
    deletion fields until podtermination.stops_at, as a graceful delete leaves it (LoopState.terminate_pod)."""
    pv = s.pod_views[key]
    pv.obj["metadata"].update(fields)
    s.changed_in_place(key)
    s.terminating.setdefault(key, "deleted")
    s.result.pods[key].at.setdefault("terminating", s.clock.now())
    s.trace(f"pod {key} terminating until {fields['deletionTimestamp']} (seeded)")


def _terminate(s, key: str) -> None:
    """A dump's terminating pod (metadata.deletionTimestamp): deleted after its binding. Its finalizers hold
    it; without any it is gone at once. The kubelet (whose containers have stopped) confirms with a
    grace-period-0 delete, which moves deletionTimestamp to now (kubernetes v1.36.3
    pkg/registry/core/pod/strategy.go CheckGracefulDelete; the real engine's kubelet stand-in does the
    same: engines/real/cluster/existing.py finish_terminating_pods)."""
    pv = s.pod_views[key]
    if not pv.obj["metadata"].get("finalizers"):
        s.delete_pod(key, "terminated")
        return
    s.cluster.delete("Pod", pv.name, pv.namespace, identity=ADMIN)
    pv.obj["metadata"]["deletionTimestamp"] = rfc3339(s.clock.now())
    s.changed_in_place(key)
    s.trace(f"pod {key} terminating (held by {', '.join(pv.obj['metadata']['finalizers'])})")
