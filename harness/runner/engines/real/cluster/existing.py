"""The real engine's side of customer state and updates: applying an object that exists (an update, as
`kubectl apply` makes it) and the scenario's `given.existingNodes` (harness/loop/seed.py is
the simulated engine's). Small functions over a cluster, the fake and the kubelet stand-ins, so they can
move with the engine interface.

Why it is built this way: docs/architecture/real-engine.md."""
from __future__ import annotations

import copy
import random
import time
from dataclasses import dataclass

from harness.backends.base import ADMIN, APIRejected, retry_on_conflict
from harness.loop.clock import start_of
from harness.loop.provisioning.nodeclaimobject import SeedError, refused_because, seeded_nodeclaim, template_for
from harness.loop.scheduling.pods import daemonset_pod_view
from harness.loop.scheduling.topology import selector_matches
from harness.model.kube import podtermination
from harness.model.crd.apiversions import to_model_version
from harness.model.upstream.corebehaviour import CoreBehaviour
from harness.model.kube.poddefaults import POD_TEMPLATE_HASH, made_from_template
from harness.model.upstream.profile import Profile
from harness.model.labels.aksmachine import is_machine_mode
from harness.model.labels.semantics import semantics_for
from harness.runner.engines.azureside import machine_vm_name
from harness.runner.engines.real.cluster import history
from harness.runner.engines.real.cluster.jobruns import JOB_TRACKING, SEEDED_BY
from harness.runner.engines.real.outcome.observe import nodepool_decided, scenario_replicasets
from harness.runner.engines.real.cluster.runclock import CLOCK

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
# the disruption taint a deleting entry's Node carries, by the NodeClaim's version (core v1.0 pkg/apis/v1/
# taints.go DisruptedNoScheduleTaint; v0.36.1 pkg/apis/v1beta1/taints.go DisruptionNoScheduleTaint)
DISRUPTION_TAINT = {"v1": {"key": "karpenter.sh/disrupted", "effect": "NoSchedule"},
                    "v1beta1": {"key": "karpenter.sh/disruption", "value": "disrupting", "effect": "NoSchedule"}}
HASH, HASH_VERSION = "karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version"
REVISION_HASH = "controller-revision-hash"       # k8s.io/api apps/v1 ControllerRevisionHashLabelKey
ADOPTERS = ("ReplicaSet", "DaemonSet")   # owners a seeded pod may name without the scenario creating them
SEED_TIMEOUT = 90.0       # a seeded NodeClaim reaches its state (launched, registered, initialized) within this
HISTORY_SETTLE = 0.5      # a dump's history written on the NodeClaims is read back after this (write_history)
HISTORY_WRITES = 5
# managed entries launched together (seed_groups): the live controller launches, and the stand-ins register,
# a group's NodeClaims side by side; one at a time a 100-node dump took ~2.3 s a node at load 3
SEED_BATCH = 25
SEED_RETRIES = 2          # a seeded NodeClaim the controller deleted meanwhile is seeded again (_relaunch)
# requests made side by side where each writes an object of its own (side_by_side): the dump's ReplicaSets,
# its history, a group's labels and pods. One after the other each waited on the API server's answer: at 100
# nodes the ReplicaSets took 45 s, the labels and pods 41 s, the history 24 s at load 10-15
WRITERS = 8


def side_by_side(fn, items) -> list:
    """`fn` of each of `items`, WRITERS at a time; the results in the items' order, the first error raised."""
    items = list(items)
    if len(items) < 2:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(min(WRITERS, len(items)), thread_name_prefix="seed-write") as pool:
        return list(pool.map(fn, items))


# A dumped claim says it is bound (pv.kubernetes.io/bind-completed) to a volume whose claimRef, dumped too,
# lost the claim's uid: kube-controller-manager's PV controller then marks the claim Lost (kubernetes
# v1.36.3 pkg/controller/volume/persistentvolume/pv_controller.go syncBoundClaim, "Bound claim has lost
# reference to PersistentVolume") and Karpenter ignores its pods (sigs.k8s.io/karpenter v1.14.0
# pkg/controllers/provisioning/scheduling/volumetopology.go ValidatePersistentVolumeClaims). Without the
# PV controller's own annotations the claim asks for that volume by name (spec.volumeName) and the
# controller binds the two again, as it had in the cluster the dump came from.
BIND_ANNOTATIONS = ("pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller")


def rebindable(cluster, obj: dict) -> dict:
    """A claim as the API server should get it: without the PV controller's binding annotations when the
    volume it names is already stored, pre-bound to it without a uid (a dump's). A claim whose volume comes
    later, or has no claimRef, keeps them: the PV controller then completes the binding itself
    (pv_controller.go syncBoundClaim binds an unbound volume to a claim that says it is bound)."""
    ann = (obj.get("metadata") or {}).get("annotations") or {}
    if obj.get("kind") == "PersistentVolumeClaim" and any(a in ann for a in BIND_ANNOTATIONS):
        name = (obj.get("spec") or {}).get("volumeName")
        pv = cluster.get("PersistentVolume", name) if name else None
        if pv is not None and _claims(pv["spec"].get("claimRef"), obj):
            obj["metadata"]["annotations"] = {k: v for k, v in ann.items() if k not in BIND_ANNOTATIONS}
    return obj


def _claims(ref: dict | None, claim: dict) -> bool:
    meta = claim.get("metadata") or {}
    return bool(ref) and ref.get("name") == meta.get("name") and \
        (ref.get("namespace") or "default") == (meta.get("namespace") or "default") and not ref.get("uid")


def claim_uid_for(cluster, pv: dict) -> dict:
    """A volume pre-bound to a claim by name (spec.claimRef without a uid, as manifests and dumps give it)
    gets the claim's uid when the claim exists: the PV controller binds the two only when the uids match
    (kubernetes v1.36.3 pkg/controller/volume/persistentvolume/pv_controller.go isVolumeBoundToClaim)."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if pv.get("kind") == "PersistentVolume" and ref and not ref.get("uid"):
        claim = cluster.get("PersistentVolumeClaim", ref.get("name"), ref.get("namespace") or "default")
        if claim is not None and _claims(ref, claim):
            ref["uid"] = claim["metadata"]["uid"]
    return pv


def complete_volume_ref(cluster, claim: dict) -> None:
    """After a claim is stored: the volume it names, pre-bound to it without a uid, gets its uid. The PV
    controller writes the volume meanwhile (its phase, once it has seen it): a write that lost that race
    (409, "the object has been modified") reads the volume again and retries."""
    name = (claim.get("spec") or {}).get("volumeName")
    if not name or claim.get("kind") != "PersistentVolumeClaim":
        return

    def write() -> None:
        pv = cluster.get("PersistentVolume", name)
        if pv is not None and _claims(pv["spec"].get("claimRef"), claim):
            pv["spec"]["claimRef"]["uid"] = claim["metadata"]["uid"]
            cluster.update(pv, ADMIN)
    retry_on_conflict(write)


def apply_object(cluster, obj: dict) -> dict:
    """Create `obj`, or update the stored object when it exists (raises APIRejected as the API server does)."""
    try:
        return cluster.create(obj, ADMIN)
    except APIRejected as e:
        if e.status != 409:
            raise
    meta = obj.get("metadata") or {}
    current = cluster.get(obj["kind"], meta["name"], meta.get("namespace"))
    if current is None:
        raise APIRejected(404, "NotFound", f'{obj["kind"]} "{meta["name"]}" vanished during the update')
    new = copy.deepcopy(current)
    for key in ("labels", "annotations"):
        if key in meta or obj["kind"] == "Pod":
            new["metadata"][key] = dict(meta.get(key) or {})
    if obj["kind"] != "Pod":
        for key, value in obj.items():
            if key not in ("apiVersion", "kind", "metadata", "status"):
                new[key] = copy.deepcopy(value)
    return cluster.update(new, ADMIN)


# -- existing nodes -----------------------------------------------------------------------------------
def seed_unmanaged(run, entry: dict, index: int, skus: dict, when: history.Instants | None = None) -> str:
    """A Node not managed by Karpenter, Ready, with the entry's labels, taints, allocatable and pods, and
    the providerID Azure's cloud-node-manager gives an AKS agent pool's node (a scale set instance).
    Karpenter's cluster state leaves out a Node labelled with a NodePool and no providerID, and waits for
    every Node before its first pass (core v1.14.0 pkg/controllers/state/cluster.go UpdateNode, Synced):
    such a Node would stop provisioning for good or not at all, by whether Karpenter synced before it."""
    cluster = run.cluster
    node, status = unmanaged_node(entry, index, skus, run.fake.region)
    name = node["metadata"]["name"]
    node["spec"]["providerID"] = (f"azure:///subscriptions/{run.fake.subscription_id}/resourceGroups/"
                                  f"{run.kubelets.rg.lower()}/providers/Microsoft.Compute/virtualMachineScaleSets/"
                                  f"aks-existing-vmss/virtualMachines/{index}")
    if when is not None:
        run.clock_at(when.created, touch=False)
    cluster.create(node, ADMIN)
    run.kubelets.heartbeat(name)
    # a merge patch: the node lifecycle controller updates a new Node concurrently
    cluster.client(ADMIN).patch("Node", name, {"status": status}, sub="status")
    bind_pods(cluster, name, entry, scenario_deployments(run.scenario))
    if entry.get("deleting"):
        if when is not None:
            run.clock_at(when.deleted, touch=False)
        mark_deleting(cluster, name)
    return name


def _instance_type(skus: dict, name: str | None, region: str, profile: Profile | None = None,
                   prices: dict | None = None):
    """The provider's instance type of a SKU the scenario lists (its capacity, allocatable, labels and
    offerings, as the release `profile` builds them from the region's `prices`), or None."""
    from harness.model.azure import instancetypes as itmod
    from harness.model.azure.params import ClusterParams
    sku = skus.get(str(name or "").lower())
    return itmod.build_instance_types([sku], cluster=ClusterParams(region=region), profile=profile,
                                        prices=prices).get(sku["name"]) \
        if sku else None


def unmanaged_node(entry: dict, index: int, skus: dict, region: str) -> tuple[dict, dict]:
    """The unmanaged entry's Node and its status: what its kubelet and the cloud node controller label an
    Azure VM of its instance type with in the scenario's region (harness/model/labels/writers.py, as the
    simulation's seeding does: loop/seed.py), its capacity, then the entry's own labels,
    capacity and allocatable."""
    from harness.model.values.resources import format_resource_list, parse_resource_list
    from harness.model.labels.writers import cloud_node_controller_labels, kubelet_self_labels
    name = str(entry.get("name") or f"existing-{index}")
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "beta.kubernetes.io/os": "linux"}
    capacity: dict[str, int] = {}
    it = _instance_type(skus, entry.get("instanceType"), region)
    if it is not None:
        capacity = dict(it.capacity)
        labels.update(kubelet_self_labels(name, it.requirements.get("kubernetes.io/arch").single_value() or "amd64"))
        labels.update(cloud_node_controller_labels(it.name, str(entry.get("zone") or "0"), region.lower()))
    elif entry.get("zone"):
        labels["topology.kubernetes.io/zone"] = str(entry["zone"])
    labels.update({str(k): str(v) for k, v in (entry.get("labels") or {}).items()})
    alloc = dict(capacity)
    if entry.get("capacity"):
        capacity.update(parse_resource_list(entry["capacity"]))
    if entry.get("allocatable"):
        alloc.update(parse_resource_list(entry["allocatable"]))
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"taints": [dict(t) for t in entry.get("taints") or []]}}
    ready = entry.get("ready", True)
    now = CLOCK.stamp()
    # a kubelet's heartbeat times: the node lifecycle controller compares them with its saved copy
    status = {"capacity": format_resource_list(capacity or alloc), "allocatable": format_resource_list(alloc),
              "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                              "reason": "KubeletReady" if ready else "KubeletNotReady",
                              "lastHeartbeatTime": now, "lastTransitionTime": now}]}
    return node, status


def bind_pods(cluster, node_name: str, entry: dict, deployments: list[dict] = ()) -> None:
    """The entry's pods, created and bound to the node (the binding subresource). `deployments`: the
    scenario's (scenario_deployments), whose ReplicaSets the pods may name."""
    for pod in entry.get("pods") or []:
        pod = copy.deepcopy(pod)
        pod.setdefault("apiVersion", "v1")
        pod.setdefault("kind", "Pod")
        pod.setdefault("metadata", {}).setdefault("namespace", "default")
        terminating = bool(pod["metadata"].pop("deletionTimestamp", None))
        # an owner reference names the live owner's uid, or goes: the garbage collector deletes a
        # dependent whose owner (by uid) does not exist; a terminating pod keeps a reference with a uid
        # as written (its finalizers hold it whatever the collector does), as the simulation does
        refs = []
        for ref in pod["metadata"].get("ownerReferences") or []:
            kind = ref.get("kind")
            if kind == "Node":
                # a mirror (static) pod: its owner is the Node it runs on (kubelet pod/mirror_client.go)
                node = cluster.get("Node", node_name)
                refs.append({**ref, "apiVersion": "v1", "name": node_name, "uid": node["metadata"]["uid"]})
                continue
            owner = _scenario_owner(cluster, kind, ref.get("name", ""), pod["metadata"]["namespace"])
            if owner is not None:
                refs.append({**ref, "uid": owner["metadata"]["uid"]})
                if kind == "DaemonSet":
                    pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}),
                                                 REVISION_HASH: revision_hash(cluster, owner)}
            elif terminating and ref.get("uid"):
                refs.append(ref)
            elif kind == "Job" and ref.get("name") and ref.get("controller"):
                # its Job, created after the seeding, selects and adopts it (jobruns.as_created), adding the
                # tracking finalizer then; an orphan's would be taken off by the Job controller's orphan
                # worker, maybe after the adoption (k8s.io/kubernetes v1.36.3 pkg/controller/job
                # job_controller.go handleSingleOrphanPod), and its completion would not be counted
                pod["metadata"]["labels"] = {**(pod["metadata"].get("labels") or {}), SEEDED_BY: ref["name"]}
                finalizers = [f for f in pod["metadata"].get("finalizers") or [] if f != JOB_TRACKING]
                if finalizers:
                    pod["metadata"]["finalizers"] = finalizers
                else:
                    pod["metadata"].pop("finalizers", None)
            elif kind in ADOPTERS and ref.get("name"):                   # adopted later (adopt_orphans)
                dep = deployment_of(kind, ref["name"], pod["metadata"], deployments)
                pod["metadata"]["labels"] = _hash_labels(pod, dep, ref["name"]) if dep is not None \
                    else _owner_labels(pod, ref["name"])
        if refs:
            pod["metadata"]["ownerReferences"] = refs
        else:
            pod["metadata"].pop("ownerReferences", None)
        # created bound (spec.nodeName): the real kube-scheduler would otherwise bind it first
        pod.setdefault("spec", {})["nodeName"] = node_name
        cluster.create(pod, ADMIN)
        if terminating:
            # a dump's terminating pod: deleted once bound; its finalizers hold it, else it goes at once
            # (the kubelet stand-in's grace-0 delete, finish_terminating_pods; loop/seed.py _terminate)
            cluster.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])


def revision_hash(cluster, ds: dict) -> str:
    """The DaemonSet's current revision hash, once its controller has recorded it: a DaemonSet pod without
    it (or the deprecated template generation) is of an old revision, which the DaemonSet controller's
    rolling update deletes and replaces (kubernetes v1.36.3 pkg/controller/daemon/update.go
    findUpdatedPodsOnNode, util/daemonset_util.go IsPodUpdated), so a seeded pod would vanish while
    Karpenter counts it. A customer's running DaemonSet pods carry it."""
    meta = ds["metadata"]
    path = f"/apis/apps/v1/namespaces/{meta.get('namespace') or 'default'}/controllerrevisions"

    def current() -> str | None:
        items = [r for r in (cluster.admin.request("GET", path) or {}).get("items") or []
                 if any(o.get("uid") == meta["uid"] for o in r["metadata"].get("ownerReferences") or [])]
        latest = max(items, key=lambda r: int(r.get("revision") or 0), default=None)
        return ((latest or {}).get("metadata", {}).get("labels") or {}).get(REVISION_HASH)
    got = wait_for(current)
    if got is None:
        raise RuntimeError(f"DaemonSet {meta['name']}: no ControllerRevision in {SEED_TIMEOUT:.0f}s")
    return got


def mark_deleting(cluster, node_name: str, version: str = "v1") -> None:
    """Deleting, held by a finalizer, tainted with the disruption taint of the NodeClaim's `version`
    (DISRUPTION_TAINT; loop/seed.py)."""
    node = cluster.get("Node", node_name)
    finalizers = sorted(set(node["metadata"].get("finalizers") or []) | {"karpenter.sh/termination"})
    taints = node["spec"].get("taints") or []
    taint = DISRUPTION_TAINT.get(version, DISRUPTION_TAINT["v1"])
    if not any(t["key"] == taint["key"] for t in taints):
        taints = taints + [dict(taint)]
    cluster.client(ADMIN).patch("Node", node_name, {"metadata": {"finalizers": finalizers}, "spec": {"taints": taints}})
    cluster.delete("Node", node_name)


def managed_nodeclaim(entry: dict, index: int, nodepool: dict, profile: Profile, instance_types: list,
                      daemonsets: list[dict] = ()) -> dict:
    """The NodeClaim a managed entry starts from: the one the simulation's seeding creates too
    (harness/loop/provisioning/nodeclaimobject.py seeded_nodeclaim: the NodePool's template pinned to the entry, its
    pods' requests plus the overhead of `daemonsets` on its instance type), named `<nodePool>-existing-<i>`
    unless the entry names it, with the drift hash the live controller stamped on the NodePool in place of
    the simulation's (its digits are not upstream's): without core's hash the NodeClaim never drifts on a
    NodePool change (nodeclaim/disruption/drift.go areStaticFieldsDrifted), and the nodepool.hash
    controller stamps existing NodeClaims only when the hash version changes. `instance_types`: the
    entry's, as the provider builds it from the scenario's SKU (none: SeedError)."""
    sem, core = semantics_for(profile), CoreBehaviour.of(profile)
    template = template_for(to_model_version(nodepool), instance_types, profile, sem, core,
                            [daemonset_pod_view(ds) for ds in daemonsets])
    name = str(entry.get("nodeClaim") or f"{nodepool['metadata']['name']}-existing-{index}")
    # a random draw only resolves a custom label the NodePool requires from several values
    # (resolved_requirement_labels); seeded per entry
    nc = seeded_nodeclaim(entry, f"given.existingNodes[{index}]", template, profile, sem, core,
                          random.Random(index), name).obj
    annotations = {k: v for k, v in nc["metadata"]["annotations"].items() if k not in (HASH, HASH_VERSION)}
    stamped = nodepool["metadata"].get("annotations") or {}
    nc["metadata"]["annotations"] = {**annotations, **{k: stamped[k] for k in (HASH, HASH_VERSION) if k in stamped}}
    return nc


def wait_for(predicate, timeout: float = SEED_TIMEOUT, step=None, poll: float = 0.3):
    """Poll `predicate` (driving `step` between polls) until it returns a true value or time runs out."""
    deadline = time.monotonic() + timeout
    while True:
        if step is not None:
            step()
        got = predicate()
        if got:
            return got
        if time.monotonic() > deadline:
            return None
        time.sleep(poll)


def vm_name_of(nodeclaim_name: str, run=None) -> str:
    """The VM of a NodeClaim: the one the provider creates (provider v1.14.0 GenerateResourceName: aks-<name>),
    or in a run of an AKS Machine API mode the one AKS makes for its machine (azureside.machine_vm_name)."""
    cfg = getattr(run, "cfg", None) or {}
    if is_machine_mode(str(cfg.get("provisionMode") or "")):
        return machine_vm_name(cfg, run.profile, nodeclaim_name)
    return f"aks-{nodeclaim_name}"


def seed_groups(entries: list[dict], start: float, clocked: bool, size: int = SEED_BATCH) -> list[list[int]]:
    """The managed entries' indices in the groups seed_group launches together, in the order they are
    seeded. On a moved clock (`clocked`) the newest createdAt first, so the clock only goes back while
    NodeClaims wait to register: core's liveness deletes a NodeClaim not registered 15 minutes after its
    Registered condition went Unknown, and a launch on the clock of an earlier entry would count from then
    (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/lifecycle/liveness.go Reconcile). An entry
    in flight (not registered or not initialized) or deleting is a group of its own, seeded on its own
    clock as before: its conditions stay as the controller stamps them, and its deletion time moves the
    clock on. Up to `size` entries a group. Why: docs/architecture/real-engine.md "Seeding at size"."""
    managed = [i for i, e in enumerate(entries) if e.get("nodePool")]
    if clocked:
        managed.sort(key=lambda i: (-history.instants(entries[i], start).created, i))
    groups: list[list[int]] = []
    open_group = False          # the last group takes more entries
    for i in managed:
        e = entries[i]
        alone = not e.get("registered", True) or not e.get("initialized", True) or bool(e.get("deleting"))
        if open_group and not alone and len(groups[-1]) < size:
            groups[-1].append(i)
        else:
            groups.append([i])
            open_group = not alone
    return groups


def seed(run, entries: list[dict], skus: dict) -> tuple[list[str], dict[str, dict]]:
    """Every entry of given.existingNodes on the live cluster; returns the unmanaged Nodes' names (the
    observer lists managed ones through their NodeClaims, in the entries' order) and the NodePools'
    disruption held meanwhile. Its consolidateAfter is restored at the end, so core marks the NodeClaims
    Consolidatable while the workloads are applied; its budgets stay at no allowed disruption for the caller to
    restore (restore_budgets) once the scenario's workloads are applied: the simulation's first pass comes
    after them, and a 1,000-node dump's 1,000 Deployments take minutes to apply, in which the real controller
    deleted 52 nodes before the run watched. The unmanaged entries
    first, one by one; the managed ones in groups launched together (seed_groups, seed_group). Managed
    entries in flight are held (their kubelet does not boot) until the kubelet stand-ins release them. The
    existing nodes are the state the scenario starts from, so Karpenter's disruption sees them all at once:
    their NodePools' disruption is held (`hold_disruption`) while they are seeded. A
    dump's history (history.py) is seeded with the run's clock at each entry's createdAt and deletion time,
    then back at the start, and written on the NodeClaims before their disruption is restored."""
    entries = entries or []
    pools = sorted({e["nodePool"] for e in entries if e.get("nodePool")})
    held = hold_disruption(run.cluster, pools)
    unmanaged, initialized, dated = [], [], []
    placed: dict[int, str] = {}
    claims: dict[int, str] = {}
    start = start_of(run.scenario.given)
    # the run's clock reads the scenario's start (engine.py RealRun placed): the dump's times are on it, and an entry
    # that dates nothing was there at the start, as the simulation seeds it (history.at_start)
    clocked = run.placed

    def when(entry: dict) -> history.Instants | None:
        # created and deleted with the clock at the entry's times (history.py)
        got = history.instants(entry, start) if clocked else None
        if got is not None:
            run.kubelets.started.update(history.pod_starts(history.at_start(entry, start)))
        return got
    try:
        for i, entry in enumerate(entries):
            if not entry.get("nodePool"):
                placed[i] = seed_unmanaged(run, entry, i, skus, when(entry))
                unmanaged.append(placed[i])
        for group in seed_groups(entries, start, clocked):
            # None when the controller exited at its start (a fault on its SKU list): nothing launches the
            # entries' NodeClaims (the simulation's seed leaves them out the same way:
            # harness/loop/seed.py)
            got = seed_group(run, [(i, entries[i], when(entries[i])) for i in group], skus)
            if got is None:
                break
            for i, (nodeclaim, node_name, ready) in zip(group, got):
                claims[i] = nodeclaim
                if node_name:
                    placed[i] = node_name
                if clocked:
                    dated.append((nodeclaim, history.at_start(entries[i], start)))
                elif ready:
                    initialized.append(nodeclaim)
        run.observer.seeded.extend(claims[i] for i in sorted(claims))
        if clocked:
            run.clock_at(start)
        adopt_orphans(run.cluster, [(entries[i], placed[i]) for i in sorted(placed)], scenario_deployments(run.scenario),
                      scenario_replicasets(run.scenario))
        stamp_pod_events(run.cluster, initialized)
        write_history(run, dated)
    except BaseException:
        restore_disruption(run.cluster, held)
        raise
    restore_disruption(run.cluster, held, budgets=False)
    return unmanaged, held


def write_history(run, dated: list[tuple[str, dict]]) -> None:
    """Each dated entry's status and annotations on its NodeClaim (history.write), read back after the
    controller's next writes (HISTORY_SETTLE): a status patch core sends from a copy older than ours
    (nodeclaim/lifecycle/controller.go patches status without the optimistic lock) would take it back, so
    it is written again (at most HISTORY_WRITES times; then the seeding fails naming what core rewrote)."""
    left = list(dated)
    nodepools = {(m.obj.get("metadata") or {}).get("name"): m.obj for m in run.scenario.manifests
                 if m.obj.get("kind") == "NodePool"}
    restamp = {name: history.restamped(entry, nodepools.get(entry.get("nodePool")), run.profile)
               for name, entry in dated}
    for _ in range(HISTORY_WRITES):
        side_by_side(lambda item: history.write(run.cluster, *item, restamp[item[0]]), left)
        time.sleep(HISTORY_SETTLE)
        differs = side_by_side(lambda item: bool(history.differs(run.cluster, *item)), left)
        left = [item for item, d in zip(left, differs) if d]
        if not left:
            return
    raise RuntimeError("; ".join(f"NodeClaim {name}: the controller rewrote its "
                                 f"{', '.join(history.differs(run.cluster, name, entry))} after the seeding wrote "
                                 "the dump's" for name, entry in left))


def hold_disruption(cluster, pools: list[str]) -> dict[str, dict]:
    """Each NodePool's spec.disruption as stored, replaced by one under which no disruption method
    acts and none says anything: a consolidateAfter of a year (no Consolidatable condition: core v1.14.0
    nodeclaim/disruption/consolidation.go) and no allowed disruption (disruption/helpers.go
    BuildDisruptionBudgetMapping). Not `Never`: every pass would publish "NodePool ... has consolidation
    disabled" for each seeded node (disruption/consolidation.go, emptiness.go ShouldDisrupt), and the
    recorder would then drop the node's next Unconsolidatable event for 15 minutes
    (disruption/events/events.go). The disruption block is not part of the NodePool's drift hash
    (`hash:"ignore"`, pkg/apis/v1/nodepool.go)."""
    held = {}
    for name in pools:
        np = cluster.get("NodePool", name)
        if np is None:
            continue
        held[name] = copy.deepcopy((np.get("spec") or {}).get("disruption") or {})
        hold = {"consolidateAfter": "8760h", "budgets": [{"nodes": "0"}]}
        if str(np.get("apiVersion") or "").endswith("/v1beta1"):
            # core v0.36's v1beta1 CRD refuses a consolidateAfter with WhenUnderutilized, and its
            # consolidation takes every initialized node of such a pool: WhenEmpty with a year's
            # consolidateAfter is the quiet hold there (v0.36.1 disruption/consolidation.go, emptiness.go
            # ShouldDisrupt say nothing for it), the budget kept at 0 besides
            hold["consolidationPolicy"] = "WhenEmpty"
        cluster.client(ADMIN).patch("NodePool", name, {"spec": {"disruption": hold}})
    return held


def stamp_pod_events(cluster, nodeclaims: list[str]) -> None:
    """One status.lastPodEventTime, now, on every seeded initialized NodeClaim whose entry dates nothing (a
    dated one gets the dump's: write_history): consolidateAfter counts
    from it (core v1.14.0 pkg/controllers/nodeclaim/disruption/consolidation.go: the last pod event, else
    the Initialized condition's transition), so the nodes seeded one by one over several seconds become
    Consolidatable together, as the simulated engine's existing nodes, all there at its time zero. The
    podevents controller leaves a stamp younger than its 10 s dedupe alone (podevents/controller.go)."""
    stamp = CLOCK.stamp()

    def one(name: str) -> None:
        if str((cluster.get("NodeClaim", name) or {}).get("apiVersion") or "").endswith("/v1beta1"):
            return          # core v0.36's NodeClaim has no lastPodEventTime (nor a Consolidatable condition)
        cluster.client(ADMIN).patch("NodeClaim", name, {"status": {"lastPodEventTime": stamp}}, sub="status")
    side_by_side(one, nodeclaims)


def restore_disruption(cluster, held: dict[str, dict], budgets: bool = True) -> None:
    """Each NodePool's disruption as hold_disruption found it; `budgets` False: all but its budgets, which
    stay at no allowed disruption (restore_budgets)."""
    for name, disruption in held.items():
        restore = {"consolidateAfter": disruption.get("consolidateAfter")}
        if budgets:
            restore["budgets"] = disruption.get("budgets")
        if "consolidationPolicy" in disruption:
            restore["consolidationPolicy"] = disruption["consolidationPolicy"]
        cluster.client(ADMIN).patch("NodePool", name, {"spec": {"disruption": restore}})


def restore_budgets(cluster, held: dict[str, dict]) -> None:
    """Each NodePool's disruption budgets as hold_disruption found them."""
    for name, disruption in held.items():
        cluster.client(ADMIN).patch("NodePool", name, {"spec": {"disruption": {"budgets": disruption.get("budgets")}}})


def unmarked(reads, nodeclaims: list[str], now: float) -> list[str]:
    """The seeded NodeClaims core has not yet marked Consolidatable though their NodePool's consolidateAfter
    has passed since their last pod event, else their initialization, at run instant `now` (core v1.14.0
    pkg/controllers/nodeclaim/disruption/consolidation.go Reconcile: the condition a consolidation candidate
    needs). Core marks them one reconcile at a time once the hold's consolidateAfter is gone: a 1,000-node
    dump's in ~1.5 min, and a pass meanwhile sees a few (its first command took 19 nodes where the dump's
    state gives 100)."""
    from harness.model.values.durations import scenario_duration
    from harness.model.kube.kubetime import parse_rfc3339
    out = []
    for name in nodeclaims:
        nc = reads.get("NodeClaim", name)
        if nc is None or (nc.get("metadata") or {}).get("deletionTimestamp") or \
                str(nc.get("apiVersion") or "").endswith("/v1beta1"):       # core v0.36: no such condition
            continue
        conds = {c.get("type"): c for c in (nc.get("status") or {}).get("conditions") or []}
        init = conds.get("Initialized") or {}
        if "Consolidatable" in conds or init.get("status") != "True":
            continue
        pool = reads.get("NodePool", ((nc.get("metadata") or {}).get("labels") or {}).get("karpenter.sh/nodepool", ""))
        after = (((pool or {}).get("spec") or {}).get("disruption") or {}).get("consolidateAfter")
        since = (nc.get("status") or {}).get("lastPodEventTime") or init.get("lastTransitionTime")
        if not after or after == "Never" or not since:
            continue
        if parse_rfc3339(since) + scenario_duration(after) <= now:
            out.append(name)
    return out


def adopt_orphans(cluster, placed: list[tuple[dict, str]], deployments: list[dict] = (),
                  own: frozenset[tuple[str, str]] = frozenset()) -> None:
    """The ReplicaSets and DaemonSets the entries' pods name as their owner and the scenario does not
    create, made once the pods are bound: each adopts its pods (they match its selector and have no
    controller; k8s.io/kubernetes v1.36.3 pkg/controller/controller_ref_manager.go ClaimPods), as the
    owner in a customer's cluster would. A ReplicaSet's replicas are the pods that name it, so it creates
    none at first. One of a scenario's Deployment (`deployments`; deployment_of) is that Deployment's
    (deployment_replicaset); any other replaces a pod Karpenter evicts from the first pod's spec (the
    simulated engine recreates such pods the same way). A DaemonSet runs on the nodes of its pods only
    (node affinity on their hostnames, so Karpenter counts it on no new node) and never replaces them
    (updateStrategy OnDelete: an adopted pod lacks its controller-revision-hash). A ReplicaSet of the scenario's own
    (`own`: (namespace, name)) is applied after the seeding and adopts its pods itself."""
    owned: dict[tuple[str, str, str], list[tuple[dict, str]]] = {}
    for entry, node_name in placed:
        for pod in entry.get("pods") or []:
            meta = pod.get("metadata") or {}
            if meta.get("deletionTimestamp"):
                continue      # an orphan being deleted is not adopted (controller_ref_manager.go ClaimObject)
            ns = meta.get("namespace") or "default"
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "ReplicaSet" and (ns, ref.get("name")) in own:
                    continue
                if ref.get("kind") in ADOPTERS and ref.get("name") and _scenario_owner(cluster, ref["kind"], ref["name"], ns) is None:
                    owned.setdefault((ref["kind"], ns, ref["name"]), []).append((pod, node_name))
    side_by_side(lambda item: _adopter(cluster, *item, deployments), sorted(owned.items()))


def _adopter(cluster, key: tuple[str, str, str], pods: list[tuple[dict, str]], deployments) -> None:
    """The owner `key` (kind, namespace, name) of the seeded `pods` (each with its Node), made (adopt_orphans)."""
    kind, ns, name = key
    dep = deployment_of(kind, name, {**(pods[0][0].get("metadata") or {}), "namespace": ns}, deployments)
    if dep is not None:
        cluster.admin.request("POST", f"/apis/apps/v1/namespaces/{ns}/replicasets",
                              deployment_replicaset(dep, name, [p for p, _ in pods]))
        return
    labels = _owner_labels(pods[0][0], name)         # a replacement is made in the first pod's image
    spec = {k: v for k, v in copy.deepcopy(pods[0][0].get("spec") or {}).items() if k != "nodeName"}
    body: dict = {"selector": {"matchLabels": {OWNER_LABEL: name}},
                  "template": {"metadata": {"labels": labels}, "spec": spec}}
    if kind == "ReplicaSet":
        body["replicas"] = len(pods)
    else:
        hosts = sorted({node for _, node in pods})
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": hosts}]}]}}}
        body["updateStrategy"] = {"type": "OnDelete"}
    owner = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": body}
    if kind == "DaemonSet":
        cluster.create(owner, ADMIN)
    else:          # a kind scenarios do not create (harness/backends/kinds.py): straight to the API server
        cluster.admin.request("POST", f"/apis/apps/v1/namespaces/{ns}/replicasets", owner)


# -- a Deployment's ReplicaSet ------------------------------------------------------------------------
def default_selector(obj: dict) -> None:
    """apps/v1 requires spec.selector; scenarios written for the simulation often leave it out (the
    simulated engine creates the pods itself). Default it to the pod template's labels, which is
    the selector a user would write, and give the template a label when it has none."""
    spec = obj.setdefault("spec", {})
    tmpl_meta = spec.setdefault("template", {}).setdefault("metadata", {})
    labels = tmpl_meta.setdefault("labels", {}) or {"app.kubernetes.io/name": obj["metadata"]["name"]}
    tmpl_meta["labels"] = labels
    spec.setdefault("selector", {"matchLabels": dict(labels)})


def scenario_deployments(scenario) -> list[dict]:
    """The scenario's Deployments as the engine applies them (default_selector)."""
    out = []
    for m in scenario.manifests:
        if m.obj.get("kind") == "Deployment":
            dep = copy.deepcopy(m.obj)
            default_selector(dep)
            out.append(dep)
    return out


def deployment_of(kind: str | None, name: str, pod_meta: dict, deployments: list[dict]) -> dict | None:
    """The Deployment of `deployments` whose ReplicaSet `name` is, for a pod (`pod_meta`) that names it:
    the Deployment controller names a ReplicaSet `<deployment>-<pod-template-hash>` (k8s.io/kubernetes
    v1.36.3 pkg/controller/deployment/sync.go getNewReplicaSet), and it owns only pods its selector
    matches; None for any other owner."""
    if kind != "ReplicaSet":
        return None
    ns = pod_meta.get("namespace") or "default"
    for dep in deployments:
        meta = dep.get("metadata") or {}
        if name.startswith(f"{meta.get('name')}-") and (meta.get("namespace") or "default") == ns and \
                selector_matches((dep.get("spec") or {}).get("selector"), pod_meta.get("labels") or {}):
            return dep
    return None


def _template_hash(dep: dict, rs_name: str) -> str:
    return rs_name[len(dep["metadata"]["name"]) + 1:]


def _hash_labels(pod: dict, dep: dict, rs_name: str) -> dict[str, str]:
    """A seeded pod's labels with its ReplicaSet's pod-template-hash, the one its name ends with (the
    ReplicaSet selects its pods by it, as the Deployment controller made it)."""
    return {**((pod.get("metadata") or {}).get("labels") or {}), POD_TEMPLATE_HASH: _template_hash(dep, rs_name)}


def deployment_replicaset(dep: dict, name: str, pods: list[dict]) -> dict:
    """The ReplicaSet `name` of the scenario's Deployment `dep` that the seeded `pods` name, as the
    Deployment controller made it in the customer's cluster (k8s.io/kubernetes v1.36.3
    pkg/controller/deployment/sync.go getNewReplicaSet): labelled and selecting by its pod-template-hash,
    the pods' count as replicas. Its template is the Deployment's when the pods were made from it
    (poddefaults.made_from): stored and defaulted alike, FindNewReplicaSet (EqualIgnoreHash) finds it as
    the Deployment's new ReplicaSet and no second one is made. Else the pods are an old revision's and
    its template is the first pod's: the Deployment rolls to a new ReplicaSet (rolling.go rolloutRolling),
    as the customer's would. No owner reference: the Deployment adopts it when applied (pkg/controller/
    controller_ref_manager.go ClaimReplicaSets), with its uid."""
    spec = dep.get("spec") or {}
    made = made_from_template(spec.get("template") or {})
    if all(made(p) for p in pods):
        template = copy.deepcopy(spec.get("template") or {})
    else:
        first = pods[0]
        template = {"metadata": {"labels": dict((first.get("metadata") or {}).get("labels") or {})},
                    "spec": {k: v for k, v in copy.deepcopy(first.get("spec") or {}).items() if k != "nodeName"}}
    h = _template_hash(dep, name)
    meta = template.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), POD_TEMPLATE_HASH: h}
    selector = copy.deepcopy(spec.get("selector") or {})
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: h}
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": name, "namespace": dep["metadata"].get("namespace") or "default",
                         "labels": dict(meta["labels"])},
            "spec": {"replicas": len(pods), "selector": selector, "template": template}}


def live_owner_uids(cluster, obj: dict) -> dict:
    """A manifest's owner references carry the live owner's uid when the scenario made the owner: manifests
    (and core's tests they port) name owners with placeholder uids, and the garbage collector deletes a
    dependent whose owner uid does not exist (kubernetes v1.36.3 pkg/controller/garbagecollector
    attemptToDeleteItem), so a DaemonSet's pod would vanish before Karpenter counts it."""
    meta = obj.get("metadata") or {}
    refs = meta.get("ownerReferences")
    if not refs or obj.get("kind") in ("Node", "NodeClaim"):
        return obj
    ns = meta.get("namespace") or "default"
    out = []
    for ref in refs:
        owner = _scenario_owner(cluster, ref.get("kind"), ref.get("name", ""), ns)
        out.append({**ref, "uid": owner["metadata"]["uid"]} if owner is not None else ref)
    meta["ownerReferences"] = out
    return obj


def _scenario_owner(cluster, kind: str | None, name: str, namespace: str) -> dict | None:
    """The live owner a seeded pod names, when the scenario made it (its manifests hold Deployments and
    DaemonSets, never ReplicaSets)."""
    return cluster.get(kind, name, namespace) if kind in ("DaemonSet", "Deployment") else None


OWNER_LABEL = SEEDED_BY


def _owner_labels(pod: dict, owner: str) -> dict[str, str]:
    """A seeded pod's labels with the one its adopting owner selects it by: the owner's name, whatever else
    the pod carries (core's tests give the pods of one ReplicaSet different labels: selected by the first
    pod's, the others stayed orphans, listed apart from their workload)."""
    return {**((pod.get("metadata") or {}).get("labels") or {}), OWNER_LABEL: owner}


@dataclass
class _Launch:
    """One managed entry on its way: its NodeClaim as created, its VM, what state it is seeded in."""
    index: int
    entry: dict
    when: history.Instants | None
    nc: dict
    unregistered: bool
    uninitialized: bool

    @property
    def name(self) -> str:
        return self.nc["metadata"]["name"]

    def reached(self, nc: dict | None) -> bool:
        """Whether the stored NodeClaim `nc` is as far along as the entry says."""
        conds = {c["type"]: c.get("status") for c in ((nc or {}).get("status") or {}).get("conditions") or []}
        if self.unregistered:
            return conds.get("Launched") == "True"
        wanted = "Registered" if self.uninitialized else "Initialized"
        return conds.get(wanted) == "True" and bool(((nc or {}).get("status") or {}).get("nodeName"))


def seed_group(run, group: list[tuple[int, dict, history.Instants | None]],
               skus: dict) -> list[tuple[str, str | None, bool]] | None:
    """A group of managed entries (seed_groups), launched together: each NodeClaim created with the clock at
    its entry's createdAt, then all awaited in one poll loop (the live controller launches and registers them
    side by side), then each one's labels, taints, pods and deletion. Per entry: its NodeClaim's name, its
    Node's (None while unregistered) and whether it is initialized. None when the controller exited at its start
    (before its controllers ran, so no hash came: provider v1.14.0 pkg/operator/operator.go NewOperator panics
    on the SKU list before core's controllers start). Only the requests on the group's own VMs and NICs are held from
    the scenario's faults (FakeAzure.faults_held): the controller is live, and its SKU list, its other
    launches and its garbage collectors meet them as they would."""
    cluster = run.cluster
    nodepools: dict[str, dict] = {}
    daemonsets = [m.obj for m in run.scenario.manifests if m.obj.get("kind") == "DaemonSet"]
    launching = []
    for index, entry, when in group:
        if entry["nodePool"] not in nodepools:
            nodepool = _hashed_nodepool(run, entry, index)
            if nodepool is None:
                return None
            nodepools[entry["nodePool"]] = nodepool
        nodepool = nodepools[entry["nodePool"]]
        it = _instance_type(skus, entry["instanceType"], run.fake.region, run.profile,
                            run.fake.region_prices(run.fake.region))
        nc = managed_nodeclaim(entry, index, nodepool, run.profile, [it] if it is not None else [], daemonsets)
        unregistered = not entry.get("registered", True)
        launch = _Launch(index, entry, when, nc, unregistered, not unregistered and not entry.get("initialized", True))
        _hold_kubelet(run.kubelets, launch, vm_name_of(launch.name, run))
        launching.append(launch)
    # the VM and its NIC share the name (provider v1.14.0 pkg/providers/instance/vminstance.go GenerateResourceName)
    with run.fake.faults_held(names=[vm_name_of(launch.name, run).lower() for launch in launching]):
        for launch in launching:
            if launch.when is not None:
                # the API server's read of the clock is what stamps the creationTimestamp; the controller's is
                # confirmed once, before the group is awaited (each confirmation reads its metrics: ~1.2 s a
                # move at load 15 with 100 nodes, more with more)
                run.clock_at(launch.when.created, touch=False, confirm=launch is launching[-1])
            cluster.create(launch.nc, ADMIN)
        gone = _await_group(run, launching)
        for _ in range(SEED_RETRIES):
            if not gone:
                break
            # seeded again one by one, each on its own clock, once the rest of the group has registered
            gone = [launch for launch in gone if _relaunch(run, launch)]
        if gone:
            raise RuntimeError("; ".join(f"given.existingNodes[{launch.index}]: NodeClaim {launch.name} was deleted "
                                         f"while seeded, {SEED_RETRIES + 1} times" for launch in gone))
        deployments = scenario_deployments(run.scenario)
        if any(launch.entry.get("deleting") for launch in launching):      # moves the clock: alone (seed_groups)
            return [_finish_seeded(run, launch, deployments) for launch in launching]
        return side_by_side(lambda launch: _finish_seeded(run, launch, deployments), launching)


def _vm_lost(nc: dict, vms: set[str], run=None) -> bool:
    """Whether a launched, unregistered NodeClaim's VM is gone from the fake: the provider's instance garbage
    collection took it (_relaunch), and the NodeClaim would wait for core's 15-minute registration timeout."""
    conds = {c["type"]: c.get("status") for c in (nc.get("status") or {}).get("conditions") or []}
    return conds.get("Launched") == "True" and conds.get("Registered") != "True" and \
        vm_name_of(nc["metadata"]["name"], run).lower() not in vms


def _relaunch(run, launch: _Launch) -> bool:
    """The entry's NodeClaim again, once the controller has deleted the one seeded or its VM: True when this
    one is lost too. The provider's instance garbage collection deletes a VM it lists before the VM's NodeClaim
    shows its providerID, unless the VM is 5 minutes old (provider v1.14.0 pkg/controllers/nodeclaim/
    garbagecollection/instance_garbagecollection.go Reconcile: `time.Since` the VM's timeCreated), and the
    fake's VMs were created months before the wall clock (runclock.FakeAzureClock), so with a group
    launching side by side the race is there every 2 minutes; on Azure a VM of seconds is never collected."""
    cluster = run.cluster
    try:        # one whose VM was collected: its termination finds the VM gone and lets it go
        cluster.delete("NodeClaim", launch.name)
    except APIRejected as e:
        if e.status != 404:
            raise
    if not wait_for(lambda: cluster.get("NodeClaim", launch.name) is None, step=run.tend):
        raise RuntimeError(f"given.existingNodes[{launch.index}]: NodeClaim {launch.name} was deleted while "
                           f"seeded and is still there {SEED_TIMEOUT:.0f}s later")
    run.kubelets.forget(vm_name_of(launch.name, run))
    if launch.when is not None:
        run.clock_at(launch.when.created, touch=False)
    cluster.create(launch.nc, ADMIN)
    return bool(_await_group(run, [launch]))


def _hashed_nodepool(run, entry: dict, index: int) -> dict | None:
    """The entry's NodePool once core's nodepool.hash controller has stamped its drift hash and its
    readiness is decided (observe.nodepool_decided); None when the controller exited at its start."""
    cluster = run.cluster
    if cluster.get("NodePool", entry["nodePool"]) is None:
        raise SeedError(f"given.existingNodes[{index}].nodePool", f"no NodePool {entry['nodePool']!r}"
                        + refused_because(run.observer.nodepools.get(entry["nodePool"])))

    def hashed() -> dict | bool | None:
        if run.controller_exited():
            return True
        np = cluster.get("NodePool", entry["nodePool"])
        return np if np is not None and HASH in (np["metadata"].get("annotations") or {}) \
            and nodepool_decided(np) else None
    nodepool = wait_for(hashed)
    if nodepool is True:
        return None
    if nodepool is None:
        raise RuntimeError(f"given.existingNodes[{index}].nodePool: NodePool {entry['nodePool']!r} got no {HASH} "
                           f"annotation or readiness in {SEED_TIMEOUT:.0f}s")
    unready = unready_nodepool(nodepool, run.observer.nodeclasses, run.profile.name)
    if unready is not None:
        raise RuntimeError(f"given.existingNodes[{index}].nodePool: {unready}")
    return nodepool


def _hold_kubelet(kubelets, launch: _Launch, vm_name: str) -> None:
    """What the entry's stand-in kubelet does once its VM (`vm_name`) runs: boot later (unregistered), register
    NotReady (uninitialized), or register initialized, as a long-running node is."""
    vm, entry = vm_name.lower(), launch.entry
    if launch.unregistered:
        kubelets.held.add(vm)              # launched, no Node yet
    elif launch.uninitialized:
        kubelets.not_ready.add(vm)         # registered, NotReady: not initialized
        if any(t.get("key") == NOT_READY_TAINT for t in entry.get("taints") or []):
            # NotReady for good: kube-controller-manager's node lifecycle controller would lift the taint
            # from a Ready node (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle, TaintNodesByCondition)
            kubelets.never_ready.add(vm)
    else:
        kubelets.initialized.add(vm)
    if entry.get("capacity") or entry.get("allocatable"):
        kubelets.reports[vm] = {k: dict(entry[k]) for k in ("capacity", "allocatable") if entry.get(k)}


def _await_group(run, launching: list[_Launch]) -> list[_Launch]:
    """Until every NodeClaim of the group is as far along as its entry says, or deleted, driving the kubelet
    stand-ins between polls; read from the run's watch cache (one request per NodeClaim per poll would be
    thousands at size). Returns the deleted ones (_relaunch); fails when none of those left got anywhere in
    SEED_TIMEOUT."""
    reads = getattr(run, "reads", None) or run.cluster
    waiting = {launch.name: launch for launch in launching}
    gone: list[_Launch] = []
    deadline = time.monotonic() + SEED_TIMEOUT
    while True:
        run.tend()
        done = []
        vms = run.fake.vm_names(run.kubelets.rg)
        for name, launch in waiting.items():
            nc = reads.get("NodeClaim", name)
            if nc is None or (nc.get("metadata") or {}).get("deletionTimestamp") or _vm_lost(nc, vms, run):
                gone.append(launch)
                done.append(name)
            elif launch.reached(nc):
                done.append(name)
        for name in done:
            del waiting[name]
        if not waiting:
            return gone
        if done:
            deadline = time.monotonic() + SEED_TIMEOUT
        elif time.monotonic() > deadline:
            raise RuntimeError("; ".join(f"given.existingNodes[{launch.index}]: NodeClaim {name} did not reach its "
                                         f"state in {SEED_TIMEOUT:.0f}s" for name, launch in waiting.items()))
        time.sleep(0.3)


def unready_nodepool(nodepool: dict, nodeclasses: dict, release: str) -> str | None:
    """Why a NodeClaim of `nodepool` cannot be what a cluster at `release` holds, or None when the NodePool
    is Ready (a karpenter.sh/v1beta1 one has no conditions: observe.nodepool_decided). The cluster a
    scenario starts from cannot hold a NodeClaim of a NodePool that is not Ready: its launch resolves the
    NodePool's class first, and a class not found fails it as insufficient capacity and deletes the
    NodeClaim (github.com/Azure/karpenter-provider-azure v0.7.5 pkg/cloudprovider/cloudprovider.go Create;
    sigs.k8s.io/karpenter v1.0.6 pkg/controllers/nodeclaim/lifecycle/launch.go launchNodeClaim), so the
    seeding would only wait out its timeout. The simulation's seeding refuses it too
    (harness/loop/seed.py: "no Ready NodePool").
    `nodeclasses`: the run's AKSNodeClass results by name (a refused one says why it is missing)."""
    conds = {c["type"]: c for c in (nodepool.get("status") or {}).get("conditions") or []}
    if conds.get("Ready", {}).get("status") == "True" or \
            (not conds and str(nodepool.get("apiVersion") or "").endswith("/v1beta1")):
        return None
    name = nodepool["metadata"]["name"]
    why = "; ".join(f"{t} {c.get('reason') or c.get('status')}: {c.get('message')}" if c.get("message") else
                    f"{t} {c.get('reason') or c.get('status')}"
                    for t, c in sorted(conds.items()) if t != "Ready" and c.get("status") == "False")
    out = f"NodePool {name!r} is not Ready at {release} ({why or 'Ready ' + str(conds.get('Ready', {}).get('status'))})"
    ref = (((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
    refused = nodeclasses.get(ref.get("name"))
    if refused is not None and not refused.accepted:
        out += f": its AKSNodeClass {ref.get('name')!r} was refused: {refused.message}"
    return out + "; a NodeClaim of it cannot launch, so none exists to seed"


def _finish_seeded(run, launch: _Launch, deployments: list[dict]) -> tuple[str, str | None, bool]:
    """A launched entry's labels, taints and pods, and its deletion (the clock at its `deleting` time);
    `deployments`: the scenario's (scenario_deployments)."""
    cluster, entry, index, nc, name, when = run.cluster, launch.entry, launch.index, launch.nc, launch.name, launch.when
    if launch.unregistered:
        return name, None, False
    node_name = cluster.get("NodeClaim", name)["status"]["nodeName"]
    if entry.get("labels") or entry.get("taints"):
        node = cluster.get("Node", node_name)
        patch = {"metadata": {"labels": {str(k): str(v) for k, v in (entry.get("labels") or {}).items()}}}
        if entry.get("taints"):
            have = node["spec"].get("taints") or []
            patch["spec"] = {"taints": have + [dict(t) for t in entry["taints"] if not any(
                h["key"] == t["key"] and h.get("effect") == t.get("effect") for h in have)]}
        cluster.client(ADMIN).patch("Node", node_name, patch)
    bind_pods(cluster, node_name, entry, deployments)
    if entry.get("ready", True) is not True and not launch.uninitialized:
        not_ready(run, launch.name, node_name, "Unknown" if str(entry.get("ready")) == "Unknown" else "False")
    if entry.get("deleting"):
        # its pods ran before the deletion, as the simulation's seeded pods do: core drains at once, and the
        # eviction API deletes a Pending pod whatever its PodDisruptionBudget (kubernetes v1.36.3
        # pkg/registry/core/pod/storage/eviction.go canIgnorePDB)
        run.kubelets.run_pods([p for p in cluster.list("Pod") if (p.get("spec") or {}).get("nodeName") == node_name])
        if when is not None:
            run.clock_at(when.deleted, touch=False)
        mark_deleting(cluster, node_name, str(nc.get("apiVersion") or "").rsplit("/", 1)[-1])
        # core's node termination deletes the NodeClaim once it sees the Node deleting
        # (node/termination/controller.go finalize): with the clock still at the dump's deletion time both
        # carry it, as the simulation's seeding has them (node_termination.begin)
        if when is not None and not wait_for(
                lambda: (cluster.get("NodeClaim", name) or {}).get("metadata", {}).get("deletionTimestamp"),
                step=run.tend):
            raise RuntimeError(f"given.existingNodes[{index}]: NodeClaim {name} was not deleted with its Node "
                               f"in {SEED_TIMEOUT:.0f}s")
    return name, node_name, not launch.uninitialized


def not_ready(run, nodeclaim: str, node_name: str, status: str) -> None:
    """A seeded managed Node that went not Ready after its initialization, from the run's instant (the simulation's
    loop/seed.py _not_ready): its stand-in kubelet posts Ready False and keeps posting it (`False`), or stops,
    Lease and all, and the node lifecycle controller's Ready Unknown is written for it (`Unknown`); the node
    lifecycle controller then taints it. Neither heals it: node repair (NodeRepair) is what may replace it."""
    from harness.backends.base import NODE_LIFECYCLE, Identity
    from harness.loop.seed import NOT_READY_CONDITION
    vm = vm_name_of(nodeclaim, run).lower()
    run.kubelets.not_ready.add(vm)
    run.kubelets.never_ready.add(vm)
    if status == "Unknown":
        run.kubelets.silent.add(node_name)
    now = CLOCK.stamp()
    cond = {**NOT_READY_CONDITION[status], "lastHeartbeatTime": now, "lastTransitionTime": now}
    who = NODE_LIFECYCLE if status == "Unknown" else Identity.node(node_name)
    retry_on_conflict(lambda: run.cluster.client(who).patch("Node", node_name, {"status": {"conditions": [cond]}},
                                                            sub="status"))


def finish_terminating_pods(cluster, pods: list[dict], now: float | None = None,
                            keep: frozenset[tuple[str, str]] = frozenset()) -> None:
    """The kubelet's part of a graceful delete: a pod with a deletionTimestamp on a node is removed
    (a delete with grace period 0) once its containers stop, at harness/model/kube/podtermination.py stops_at
    (at once without a preStop sleep; the simulated loop's kubelet reads the same rule). Called every poll:
    `pods` as the observer last listed them, `now` the run's instant (the API server's clock: runclock.py);
    `keep`: (namespace, name) of pods left terminating for now (outcome/podevents.py unstamped)."""
    now = CLOCK.now() if now is None else now
    for p in pods:
        stop = podtermination.stops_at(p)
        if stop is not None and stop <= now and (p.get("spec") or {}).get("nodeName") and \
                (p["metadata"].get("namespace") or "default", p["metadata"]["name"]) not in keep:
            try:
                cluster.delete("Pod", p["metadata"]["name"], p["metadata"].get("namespace"))
            except APIRejected as e:
                if e.status != 404:
                    raise


def unmanaged_results(cluster, names: list[str], result) -> None:
    """The unmanaged seeded Nodes in the run's result, first (as the simulated engine lists them)."""
    from harness.loop.result import NodeResult
    extra = []
    for i, name in enumerate(names):
        node = cluster.get("Node", name)
        if node is None:
            continue
        labels = dict(node["metadata"].get("labels") or {})
        nr = NodeResult(name, i, "", "", labels.get("node.kubernetes.io/instance-type", ""),
                        labels.get("topology.kubernetes.io/zone", ""), labels.get("karpenter.sh/capacity-type", ""),
                        name, labels=labels, taints=list((node.get("spec") or {}).get("taints") or []),
                        registered=True, initialized=True)
        nr.pods = [k for k, p in result.pods.items() if p.node == name]
        extra.append(nr)
    for nr in result.nodes:
        nr.index += len(extra)
    result.nodes[:0] = extra
