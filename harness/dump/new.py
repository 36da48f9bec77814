"""`harness new`: a scenario from a bug report's manifests or a cluster dump.

Input: manifests, `kubectl get ... -o yaml|json` output (`kind: List`), multi-document YAML, `kubectl get
events` as printed (harness/dump/eventstext.py); with `--log` and no NodeClaim or Node, a customer's
Karpenter log gives the nodes, pods and clock (harness/dump/logscenario.py). The dump's
state is the start: its NodeClaims and Nodes, with their pods, become `given.existingNodes` (times,
deletion, drift; `--replay` starts empty instead), the clock starts at the dump's time
(`given.startTime`: the newest timestamp, or `--at`). What the dump shows is the expectation: the seeded
nodes (there, deleting, drifted), pods running where or pending with Karpenter's `FailedScheduling` reason,
NodePool events. Node labels give the region, node resource group and kubelet version; a Node's Ready
and pressure conditions its entry's `ready` and taints. Missing AKSNodeClasses are the release's default, with
a notice; what cannot be kept is named per object; NodeClaims busier than the input's pods say are held so
by stand-in pods (harness/scenario/standins.py) unless `--complete`.
Server-set fields are stripped; pods a Deployment, StatefulSet, DaemonSet or Job of the dump owns are left to it (a
Job's or StatefulSet's running pod is seeded on its node, owned by it, and a StatefulSet's claims and volumes are kept
as they are bound, a volume naming its claim without the claim's uid); a Job keeps status.succeeded/startTime and a
CronJob status.lastScheduleTime, which their controllers carry on from (harness/loop/kube/jobs.py).
An `--at` before the dump's time replays from then (harness/dump/moment.py).
"""
from __future__ import annotations

import gc
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from harness.dump import aksnames, moment as dumpmoment, jsonsource, provisionmode, rymlsource
from harness.heap import no_collections
from harness.model.kube.kubetime import parse_rfc3339, rfc3339
from harness.model.kube import podtermination
from harness.dump.times import Newest, NodePodEvents, TimeSource
from harness.scenario.notices import ObjectNote, plural_kind
from harness.scenario.yamlsource import MAX_DEPTH, MAX_DUMP_BYTES, SourceError, load_documents, read_text

MANIFEST_KINDS = ("Namespace", "AKSNodeClass", "NodePool", "NodeOverlay", "StorageClass", "PersistentVolume",
                  "PersistentVolumeClaim", "PodDisruptionBudget", "RuntimeClass", "DaemonSet", "Deployment",
                  "StatefulSet", "Job", "CronJob", "Pod",
                  # what the API server's admission reads when a pod is created (Priority, LimitRanger, ResourceQuota)
                  "PriorityClass", "LimitRange", "ResourceQuota")
# the status a workload's controller carries on from (harness/loop/kube/jobs.py): a Job's succeeded
# pods and start (activeDeadlineSeconds counts from it), a CronJob's last schedule time
KEPT_STATUS = {"Job": ("succeeded", "startTime"), "CronJob": ("lastScheduleTime",)}
# what the Job controller writes into a Job it creates: its selector and the pod template's labels naming
# its uid (kubernetes v1.36.3 pkg/apis/batch/v1 defaults, pkg/registry/batch/job/strategy.go
# generateSelector); a Job applied with them and no manualSelector is refused
JOB_LABELS = ("controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name")
SERVER_METADATA = ("managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink",
                   "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")
SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision")
KARPENTER_PREFIX = "Failed to schedule pod, "
# the label of a scenario `harness new` made from a dump: its `expect` is the dump's state, so a run that
# fails it moved on from the snapshot (harness/report/console.py dump_verdict)
DUMP_LABEL = "dump"
# Node labels the expectation states through its own fields, or whose value names the node itself
NODE_FIELD_LABELS = {"karpenter.sh/nodepool": "nodePool", "node.kubernetes.io/instance-type": "instanceType",
                     "topology.kubernetes.io/zone": "zone", "karpenter.sh/capacity-type": "capacityType"}
VOLATILE_LABELS = ("kubernetes.io/hostname", "kubernetes.azure.com/node-image-version")


@dataclass
class Dump:
    manifests: list[dict] = field(default_factory=list)
    nodeclaims: list[dict] = field(default_factory=list)
    nodes: list[dict] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    pods: list[dict] = field(default_factory=list)          # every Pod of the input, owned or not
    finished: list[dict] = field(default_factory=list)      # its Succeeded and Failed Pods (not kept)
    notes: list[str] = field(default_factory=list)
    newest: str | None = None                               # the latest timestamp it holds: the dump's time
    newest_source: TimeSource | None = None                 # ... and where it sits
    shares: bool = False                                    # what it keeps shares what it leaves as it was (_kept)
    times: dict[str, float | None] = field(default_factory=dict)   # timestamp texts read -> epoch seconds (split)
    pod_events: NodePodEvents | None = None                 # each node's newest pod event, gathered by split
    running_on: dict[str, list[dict]] | None = None         # each node's running and pending pods, by split


class _Shared(Exception):
    """The scenario made with `share` holds an object twice."""


def read_objects(paths: list[str]) -> list[tuple[dict, str, int]]:
    """Every object in the files, `kind: List` items flattened, with its file and line."""
    out = []
    for p in paths:
        text = read_text(p, MAX_DUMP_BYTES)
        # told apart by content, not by name: `-o json` read by the json module, a large `-o yaml` by rapidyaml
        # where it reads as PyYAML does (rymlsource), any other YAML by libyaml's events (yamlsource)
        with no_collections(len(text)):      # the file's data holds no cycle (harness/heap.py)
            docs = (jsonsource.load_documents(p, text) if jsonsource.looks_like_json(text)
                    else rymlsource.load_documents(p, text) or load_documents(p, text, MAX_DUMP_BYTES))
        for d in docs:
            data = d.data
            if data is None:
                continue
            if not isinstance(data, dict):
                raise d.error((), "expected Kubernetes objects (a mapping, or a List with items)")
            if data.get("kind", "").endswith("List") and isinstance(data.get("items"), list):
                out += [(item, str(p), d.line(("items", j))) for j, item in enumerate(data["items"])
                        if isinstance(item, dict)]
            else:
                out.append((data, str(p), d.line(())))
    _refuse_duplicates(out)
    return out


def _refuse_duplicates(objects: list[tuple[dict, str, int]]) -> None:
    """A cluster holds one object of a kind, namespace and name: the same one twice is two dumps read as one
    (taken at different moments, or the same file given twice), which the scenario cannot be made of."""
    seen: dict[tuple, tuple[str, int]] = {}
    for obj, file, line in objects:
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        if not meta.get("name"):
            continue
        key = (obj.get("kind"), meta.get("namespace") or "", meta["name"])
        first = seen.setdefault(key, (file, line))
        if first != (file, line):
            where = f"line {first[1]}" if first[0] == file else f"{first[0]}:{first[1]}"
            raise SourceError(file, line, f"{key[0]} {'/'.join(k for k in key[1:] if k)} is in the input twice "
                                          f"(first at {where}): give one dump of one moment")


def strip_server_fields(obj: dict) -> dict:
    """The object as a user would apply it: no status, no server-set metadata, no bound nodeName,
    no admission-computed priority. A copy: nothing of it is shared with `obj`."""
    return _stripped(obj, True)


def _kept(obj: dict) -> dict:
    """strip_server_fields without copying what it leaves as it was (a pod's containers, volumes, affinity:
    most of what is kept), for the scenario `harness new` writes once the dump is dropped: the copies of the
    5,000-node dump's 41,000 kept objects were 0.4 CPU-s. A scenario that holds an object twice is made again
    of copies (new_scenario)."""
    return _stripped(obj, False)


def _stripped(obj: dict, copy_all: bool) -> dict:
    # copied without what is dropped (status, managedFields: most of a dumped object)
    o = {k: v for k, v in obj.items() if k != "status"}
    if isinstance(o.get("metadata"), dict):
        o["metadata"] = {k: v for k, v in o["metadata"].items() if k not in SERVER_METADATA}
    if copy_all or o.get("kind") in ("Job", "CronJob", "StatefulSet"):   # (edited deep below: selectors, templates)
        o = json_copy(o)
    else:                                                    # the mappings edited below
        meta = o.get("metadata")
        if isinstance(meta, dict) and type(meta.get("annotations")) is dict:
            meta["annotations"] = dict(meta["annotations"])
        if o.get("kind") == "Pod" and type(o.get("spec")) is dict:
            o["spec"] = dict(o["spec"])
    status = {k: json_copy(v) for k, v in (obj.get("status") or {}).items()
              if k in KEPT_STATUS.get(str(o.get("kind")), ())}
    if status:
        o["status"] = status
    meta = o.setdefault("metadata", {})
    for k in SERVER_METADATA:
        meta.pop(k, None)
    ann = meta.get("annotations") or {}
    for k in SERVER_ANNOTATIONS:
        ann.pop(k, None)
    if "annotations" in meta and not ann:
        meta.pop("annotations")
    if o.get("kind") in ("Job", "CronJob"):
        spec = o.get("spec") or {}
        job = (spec.get("jobTemplate") or {}).get("spec") or {} if o["kind"] == "CronJob" else spec
        if not job.get("manualSelector"):
            job.pop("selector", None)
        tmeta = (job.get("template") or {}).get("metadata") or {}
        for labels in (meta.get("labels"), tmeta.get("labels")):
            for k in JOB_LABELS:
                (labels or {}).pop(k, None)
        for m in (meta, tmeta):
            if "labels" in m and not m["labels"]:
                m.pop("labels")
        if "metadata" in (job.get("template") or {}) and not tmeta:
            job["template"].pop("metadata")
    if o.get("kind") == "PersistentVolume" and isinstance((o.get("spec") or {}).get("claimRef"), dict):
        # the claim it is bound to, by name: the dumped claim's uid and resourceVersion are its cluster's, and a
        # claim made anew has another (the real engine gives the reference the new claim's uid:
        # engines/real/cluster/existing.py claim_uid_for)
        o["spec"] = {**o["spec"], "claimRef": {k: v for k, v in o["spec"]["claimRef"].items()
                                               if k not in ("uid", "resourceVersion")}}
    if o.get("kind") == "StatefulSet":          # a claim template's status is the API server's (phase Pending)
        for claim in (o.get("spec") or {}).get("volumeClaimTemplates") or []:
            if isinstance(claim, dict):
                claim.pop("status", None)
    if o.get("kind") == "Pod":
        spec = o.get("spec") or {}
        spec.pop("nodeName", None)
        # the Priority admission plugin computes both from priorityClassName and refuses a pod that
        # gives other values (k8s.io/kubernetes v1.36.3 plugin/pkg/admission/priority/admission.go
        # admitPod: "the integer value of priority (%d) must not be provided in pod spec")
        spec.pop("priority", None)
        spec.pop("preemptionPolicy", None)
    return o


_owner = dumpmoment.controller_owner


def json_copy(o):
    """A deep copy of data read from a dump (dicts, lists, scalars; nothing shared): a third of
    copy.deepcopy's time."""
    if type(o) is dict:
        return {k: json_copy(v) for k, v in o.items()}
    if type(o) is list:
        return [json_copy(v) for v in o]
    return o


FINISHED_PHASES = ("Succeeded", "Failed")
PLACED_PHASES = ("Running", "Pending")        # a bound pod that holds its node's capacity (no phase: Running)
TIME_FIELDS = ("creationTimestamp", "deletionTimestamp", "lastTransitionTime", "lastPodEventTime", "startTime",
               "lastHeartbeatTime", "lastProbeTime",
               "lastTimestamp", "firstTimestamp", "eventTime", "lastScheduleTime", "lastSuccessfulTime")


def split(objects: list[tuple[dict, str, int]], shares: bool = False) -> Dump:
    """The objects sorted by what the scenario makes of them, in one pass that also reads each object's newest
    timestamp (the dump's time) and each pod's node and pod events while the object is at hand: a pass over the
    5,000-node dump's GB of objects is bound by memory (the newest timestamp, the running pods by node and the
    NodeClaims' last pod events were three). `shares`: each object kept once, its copy sharing what it leaves as
    it was with it (_kept)."""
    times: dict[str, float | None] = {}
    keep = _kept if shares else strip_server_fields
    names: dict[str, set[str]] = {"Deployment": set(), "DaemonSet": set(), "Job": set(), "CronJob": set(),
                                  "StatefulSet": set()}
    found_rs: list[dict] = []
    for o, _, _ in objects:               # the workloads' names, in one pass over the objects' heads
        kind = o.get("kind")
        named = names.get(kind) if isinstance(kind, str) else None
        if named is not None:
            named.add(o["metadata"]["name"])
        elif kind == "ReplicaSet":
            found_rs.append(o)
    deployments, daemonsets, jobs, cronjobs, statefulsets = names.values()
    # a ReplicaSet no Deployment of the input owns runs its own pods (a Deployment's is remade by its Deployment)
    replicasets = {o["metadata"]["name"] for o in found_rs if not _of_deployment(o, deployments)}
    dump = Dump(shares=shares, times=times)
    newest = Newest(TIME_FIELDS, times)
    events: NodePodEvents | None = NodePodEvents(times)
    on_node: dict[str, list[dict]] | None = {}
    for entry in objects:
        newest.see(entry)
        obj, file, line = entry
        kind = obj.get("kind")
        name = (obj.get("metadata") or {}).get("name")
        if kind == "NodeClaim":
            dump.nodeclaims.append(obj)
        elif kind == "Node":
            dump.nodes.append(obj)
        elif kind == "Event":
            dump.events.append(obj)
        elif kind == "Pod":
            status = obj.get("status") or {}
            phase = status.get("phase")
            spec = obj.get("spec")
            node = spec.get("nodeName") if type(spec) is dict else None
            if spec and type(spec) is not dict:
                events = on_node = None       # (read again where they are used, which says what is wrong)
            finished = phase in FINISHED_PHASES
            if events is not None and node and isinstance(node, str):
                events.see(obj, node, finished)
            if finished:                      # a Job's completed pod, an evicted one: it holds no capacity
                dump.notes.append(f"{file}:{line}: Pod {name}: status.phase {phase}: a finished pod is not kept")
                dump.finished.append(obj)
                continue
            dump.pods.append(obj)
            if on_node is not None and node and (phase or "Running") in PLACED_PHASES:
                if isinstance(node, str):
                    on_node.setdefault(node, []).append(obj)
                else:
                    on_node = None
            owner = _owner(obj)
            if owner and owner[0] == "ReplicaSet" and owner[1].rsplit("-", 1)[0] in deployments:
                continue                      # the Deployment recreates it
            if owner and owner[0] == "ReplicaSet" and owner[1] in replicasets:
                continue                      # the ReplicaSet recreates it
            if owner and owner[0] == "DaemonSet" and owner[1] in daemonsets:
                continue
            if owner and owner[0] in ("Job", "StatefulSet") and owner[1] in (jobs if owner[0] == "Job" else statefulsets):
                continue                      # its own: running on a node it is seeded there, else its controller makes it
            if owner and owner[0] not in ("ReplicaSet", "DaemonSet"):
                dump.notes.append(f"{file}:{line}: Pod {name} is owned by {owner[0]} {owner[1]}: kept as a bare Pod")
            elif owner:
                whose = (f"Deployment {owner[1].rsplit('-', 1)[0]}" if owner[0] == "ReplicaSet"
                         else f"DaemonSet {owner[1]}")
                dump.notes.append(ObjectNote(
                    f"{file}:{line}: Pod {name}: its {whose} is not in the input: kept as a bare Pod (no controller "
                    "of the run makes it again)", str(name), ("orphan", file, owner[0]), f"{file}:{line}: ",
                    "Pods", f" whose {'Deployments' if owner[0] == 'ReplicaSet' else 'DaemonSets'} are not in the "
                    "input: kept as bare Pods (no controller of the run makes them again)"))
            dump.manifests.append(keep(obj))
        elif kind == "Job" and (_owner(obj) or ("", ""))[0] == "CronJob" and _owner(obj)[1] in cronjobs:
            # a CronJob's Job: the reference (without its uid) says whose, so Forbid and Replace see it running
            kept = strip_server_fields(obj)
            kept["metadata"]["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                    "name": _owner(obj)[1], "controller": True}]
            dump.manifests.append(kept)
        elif kind == "PriorityClass" and str(name).startswith("system-"):
            dump.notes.append(f"{file}:{line}: PriorityClass {name}: the API server's own (it makes it at start): "
                              "not kept")
        elif kind == "ReplicaSet" and name in replicasets:
            dump.manifests.append(keep(obj))
        elif kind == "ReplicaSet":
            dump.notes.append(ObjectNote(
                f"{file}:{line}: skipped ReplicaSet {name}: its Deployment in the input makes it", str(name),
                ("deployment-replicaset", file, kind), f"{file}:{line}: skipped ", "ReplicaSets",
                ": their Deployments in the input make them"))
        elif kind in MANIFEST_KINDS:
            dump.manifests.append(keep(obj))
        else:
            dump.notes.append(_skipped(file, line, kind, name))
    source = newest.source()
    dump.newest, dump.newest_source = (source.value if source else None), source
    dump.pod_events, dump.running_on = events, on_node
    return dump


def _of_deployment(rs: dict, deployments: set[str]) -> bool:
    """Whether a dumped ReplicaSet is one of the input's Deployments' (its controller reference names one; without
    one, its name is `<deployment>-<pod-template-hash>`, as the pods of such a ReplicaSet are read)."""
    owner = _owner(rs)
    if owner:
        return owner[0] == "Deployment" and owner[1] in deployments
    return str(rs["metadata"]["name"]).rsplit("-", 1)[0] in deployments


def _skipped(file: str, line: int, kind, name) -> str:
    """The note on an object of a kind the harness does not simulate (a dump lists thousands of ReplicaSets:
    printed as one line per kind, harness/scenario/notices.py group_notes)."""
    from harness.scenario.envelope import inert_kind
    reason = inert_kind(kind)
    tail = f": cannot change a scheduling outcome ({reason})" if reason else ": not a kind the harness simulates"
    text = f"{file}:{line}: skipped {kind} {name}{tail}"
    if not isinstance(kind, str) or not kind:
        return text
    return ObjectNote(text, str(name), ("skipped", file, kind), f"{file}:{line}: skipped ", plural_kind(kind), tail)


def _pod_key(pod: dict, deployments: set[str], jobs: set[str] = frozenset(),
             replicasets: set[str] = frozenset()) -> str:
    owner = _owner(pod)
    if owner and owner[0] == "ReplicaSet" and owner[1] in replicasets:
        return owner[1]
    if owner and owner[0] == "ReplicaSet" and owner[1].rsplit("-", 1)[0] in deployments:
        return owner[1].rsplit("-", 1)[0]
    if owner and owner[0] == "Job" and owner[1] in jobs:
        return owner[1]
    return pod["metadata"]["name"]


# the message of the events operatorpkg's status controller publishes on each condition change of a NodePool
# (github.com/awslabs/operatorpkg status/controller.go, which core runs for its objects): the history of a status
# the dump holds, not an outcome a replay that starts from that status reaches again
STATUS_TRANSITION = "Status condition transitioned"


def expectations(dump: Dump, notes: list | None = None) -> dict:
    """What the customer saw, as `expect`; `notes` gets what of it is left out."""
    deployments = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "Deployment"}
    jobs = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "Job"}
    replicasets = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "ReplicaSet"}
    expect: dict = {}
    nodepools = [m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "NodePool"]
    if nodepools:
        expect["nodePools"] = {n: {"accepted": True} for n in nodepools}
        transitions = 0
        for ev in dump.events:                 # Karpenter's NodePool events (NoCompatibleInstanceTypes, ...)
            obj = ev.get("involvedObject") or ev.get("regarding") or {}
            if obj.get("kind") == "NodePool" and obj.get("name") in expect["nodePools"] and ev.get("reason"):
                entry = {"reason": ev["reason"], "message": str(ev.get("message") or ev.get("note") or "")}
                if entry["message"].startswith(STATUS_TRANSITION):
                    transitions += 1
                    continue
                events = expect["nodePools"][obj["name"]].setdefault("events", [])
                if entry not in events:
                    events.append(entry)
        if transitions and notes is not None:
            notes.append(f"left out of expect: {transitions} NodePool event(s) '{STATUS_TRANSITION}, ...': the "
                         "history of the NodePool's status conditions, whose state expect says as accepted")
    states: dict[str, list[tuple[str, str | None]]] = {}      # key -> [(state, Karpenter reason)] per pod
    on_node: dict[str, str] = {}
    reasons = _karpenter_reasons(dump)
    for pod in dump.pods:
        if (_owner(pod) or ("", ""))[0] == "DaemonSet":
            continue
        key = _pod_key(pod, deployments, jobs, replicasets)
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            if key == pod["metadata"]["name"]:
                on_node.setdefault(node, key)       # a bare pod selects its node; a Deployment's may be many
            states.setdefault(key, []).append(("scheduled", None))
        elif pod.get("status") or pod["metadata"]["name"] in reasons:
            states.setdefault(key, []).append(("pending", reasons.get(pod["metadata"]["name"])))
        else:                                   # a manifest as written, no observation: expect it to schedule
            states.setdefault(key, []).append(("scheduled", None))
    pods: dict[str, dict] = {}
    events: list[dict] = []
    for key, got in states.items():
        kinds = {st for st, _ in got}
        why = {r for _, r in got if r}
        if kinds == {"scheduled"}:
            pods[key] = {"scheduled": True}
        elif kinds == {"pending"}:
            pods[key] = {"pending": True, **({"reason": next(iter(why))} if len(why) == 1 else {})}
        else:                                   # a Deployment partly running: count, and the event text
            pods[key] = {"scheduled": True, "count": sum(1 for st, _ in got if st == "scheduled")}
        if len(got) > 1 or len(why) > 1:
            events += [{"kind": "Pod", "reason": "FailedScheduling", "message": KARPENTER_PREFIX + r}
                       for r in sorted(why)]
    for workload, text in _failed_creates(dump, deployments, replicasets):
        pods.setdefault(workload, {})["failedCreate"] = {"messageContains": text}
    if pods:
        expect["pods"] = pods
    if events:
        expect["events"] = events
    nodes_by_name = {n["metadata"]["name"]: n for n in dump.nodes}
    entries = []
    for nc in dump.nodeclaims:
        labels = (nc.get("metadata") or {}).get("labels") or {}
        node_name = (nc.get("status") or {}).get("nodeName")
        node = nodes_by_name.get(node_name or "")
        entries.append(_node_entry(labels, node, on_node.get(node_name or "")))
    claimed = {(nc.get("status") or {}).get("nodeName") for nc in dump.nodeclaims}
    for name, node in nodes_by_name.items():
        labels = node["metadata"].get("labels") or {}
        if name not in claimed and "karpenter.sh/nodepool" in labels:
            entries.append(_node_entry(labels, node, on_node.get(name)))
    if entries:
        expect["nodes"] = entries
        expect["nodeCount"] = len(entries)
    return expect


def _failed_creates(dump: Dump, deployments: set[str], replicasets: set[str]) -> list[tuple[str, str]]:
    """(workload, text) of the dump's FailedCreate events on a workload it holds - a Deployment's ReplicaSet, a
    bare ReplicaSet, a DaemonSet, a Job: the API server refused its pods when the dump was taken (a quota used
    up, a missing PriorityClass). The text is the refusal after the pod's name (`is forbidden: ...`), which names
    the pod by a ReplicaSet hash the run's differs from; the last such event of each workload."""
    kept = {(m["kind"], m["metadata"]["name"]) for m in dump.manifests}
    out: dict[str, str] = {}
    for ev in dump.events:
        obj = ev.get("involvedObject") or ev.get("regarding") or {}
        if ev.get("reason") != "FailedCreate":
            continue
        kind, name = obj.get("kind"), str(obj.get("name") or "")
        if kind == "ReplicaSet" and name not in replicasets:
            name = name.rsplit("-", 1)[0] if name.rsplit("-", 1)[0] in deployments else ""
            kind = "Deployment"
        if not name or (kind, name) not in kept:
            continue
        message = str(ev.get("message") or ev.get("note") or "")
        out[name] = message.split(" is forbidden: ", 1)[1] if " is forbidden: " in message else \
            message.split("Error creating: ", 1)[-1]
    return sorted(out.items())


def existing_nodes(dump: Dump) -> tuple[list[dict], set[str]]:
    """The dump's NodeClaims and Nodes as `given.existingNodes` (harness/loop/seed.py), with
    the pods running on them; and the names of the pods that moved there (they leave the manifests).

    A NodeClaim of a NodePool the dump holds is Karpenter's node (`_claim_entry`): running capacity with
    the pods bound to its node name (pod.spec.nodeName == status.nodeName) whether or not the Node was
    sent; in flight (`registered: false`) only when nothing says it registered. A Node with no NodeClaim
    but a karpenter.sh/nodepool label of such a NodePool is one too; any other Node is given as it is
    (labels, taints, capacity, allocatable). A DaemonSet's pod on a Karpenter node is left to the
    loop's DaemonSet controller when the dump holds the DaemonSet; every other running pod is bound to its
    node as it was. Entries in flight come last: an entry's place among the registered ones is its node's
    index (launch order), which the expectations name."""
    pools = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "NodePool"}
    daemonsets = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "DaemonSet"}
    by_node = dump.running_on
    if by_node is None:                   # (a Dump split did not make, or a pod's node is not a name)
        by_node = {}
        for pod in dump.pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node and ((pod.get("status") or {}).get("phase") or "Running") in PLACED_PHASES:
                by_node.setdefault(node, []).append(pod)
    nodes_by_name = {(n.get("metadata") or {}).get("name"): n for n in dump.nodes}
    moved: set[str] = set()
    keep = _kept if dump.shares else strip_server_fields

    def pods_of(name: str | None, managed: bool) -> list[dict]:
        out = []
        for pod in by_node.get(name or "", []):
            owner = _owner(pod) or ("", "")
            if managed and owner[0] == "DaemonSet" and owner[1] in daemonsets:
                continue                      # the DaemonSet controller places it again
            kept = keep(pod)
            refs = (pod.get("metadata") or {}).get("ownerReferences")
            if refs:
                kept["metadata"]["ownerReferences"] = [{k: v for k, v in r.items() if k != "uid"} for r in refs]
            started = (pod.get("status") or {}).get("startTime")
            if started:                 # a duration-valued do-not-disrupt annotation counts from it
                kept["status"] = {"startTime": str(started)}
            _still_terminating(pod, kept, dump)
            out.append(kept)
            moved.add(pod["metadata"]["name"])
        return out

    entries, inflight, claimed = [], [], set()
    for nc in dump.nodeclaims:
        labels = (nc.get("metadata") or {}).get("labels") or {}
        if labels.get("karpenter.sh/nodepool") not in pools or not labels.get("node.kubernetes.io/instance-type"):
            dump.notes.append(f"NodeClaim {nc['metadata'].get('name')}: its NodePool "
                              f"{labels.get('karpenter.sh/nodepool')!r} or instance type is not in the input: not seeded")
            continue
        node_name = (nc.get("status") or {}).get("nodeName")
        claimed.add(node_name)
        entry = _claim_entry(nc, nodes_by_name.get(node_name or ""), bool(by_node.get(node_name or "")), dump.notes)
        if entry is None:
            continue
        pods = pods_of(node_name, True) if entry.get("registered", True) else []
        if pods:
            entry["pods"] = pods
        (entries if entry.get("registered", True) else inflight).append(entry)
    for node in dump.nodes:
        meta = node.get("metadata") or {}
        name, labels = meta.get("name"), dict(meta.get("labels") or {})
        if name in claimed:
            continue
        managed = labels.get("karpenter.sh/nodepool") in pools and labels.get("node.kubernetes.io/instance-type")
        pods = pods_of(name, bool(managed))
        if managed:
            entry: dict = {"nodePool": labels["karpenter.sh/nodepool"],
                           "instanceType": labels["node.kubernetes.io/instance-type"]}
            if labels.get("topology.kubernetes.io/zone"):
                entry["zone"] = labels["topology.kubernetes.io/zone"]
            if labels.get("karpenter.sh/capacity-type"):
                entry["capacityType"] = labels["karpenter.sh/capacity-type"]
            if labels.get("karpenter.sh/initialized") != "true":
                entry["initialized"] = False
            if meta.get("creationTimestamp"):
                entry["createdAt"] = str(meta["creationTimestamp"])
            taints = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) is not None}
                      for t in (node.get("spec") or {}).get("taints") or []
                      if t.get("key") not in ("karpenter.sh/disrupted", "node.kubernetes.io/not-ready",
                                               "node.kubernetes.io/unreachable", "karpenter.sh/unregistered")]
            if taints:
                entry["taints"] = taints
        else:
            status = node.get("status") or {}
            entry = {"name": name, "labels": labels}
            if (node.get("spec") or {}).get("taints"):
                entry["taints"] = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) is not None}
                                   for t in node["spec"]["taints"]]
            for key in ("capacity", "allocatable"):
                if status.get(key):
                    entry[key] = {k: str(v) for k, v in status[key].items()}
        node_conditions(node, entry, dump.notes)
        if meta.get("deletionTimestamp"):
            entry["deleting"] = str(meta["deletionTimestamp"]) if managed else True
        if pods:
            entry["pods"] = pods
        entries.append(entry)
    return entries + inflight, moved


def _still_terminating(pod: dict, kept: dict, dump: Dump) -> None:
    """A pod the dump shows deleted and still on its node: kept terminating (its deletion fields). Where the
    model's stop (podtermination.stops_at: the delete's instant plus its preStop sleep) is before the dump's
    time, the dump shows the containers stopping slower than the model can say (a preStop exec or httpGet hook,
    a SIGTERM handler): they are assumed to stop when the grace period ends (the kubelet's kill), named in the
    pod's STOPS_AT annotation and in a note. Without it the pod would be seeded running, and what Karpenter does
    about a pod terminating past its node's deadline (core.behaviour.forcedEvictionAfterNodeDeadline) lost."""
    meta = pod.get("metadata") or {}
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if not stamp or not grace or not dump.newest:
        return
    try:
        deadline, seen = parse_rfc3339(str(stamp)), parse_rfc3339(str(dump.newest))
    except ValueError:
        return
    kept["metadata"]["deletionTimestamp"], kept["metadata"]["deletionGracePeriodSeconds"] = str(stamp), int(grace)
    stop = podtermination.stops_at(kept)
    if stop is None or stop >= seen or deadline <= seen:
        return
    kept["metadata"].setdefault("annotations", {})[podtermination.STOPS_AT] = str(stamp)
    since = rfc3339(deadline - int(grace))
    dump.notes.append(
        f"Pod {meta.get('name')}: deleted at {since} with a {int(grace):,} s grace period and still on its node at "
        f"the dump's time {dump.newest}, which its preStop sleep ({podtermination.prestop_sleep(pod.get('spec') or {})} s) "
        f"does not explain (a preStop exec or httpGet hook or a slow SIGTERM handler, which the harness cannot time): "
        f"I assumed its containers stop when its grace period ends, at its deletionTimestamp {stamp} (annotation "
        f"{podtermination.STOPS_AT}; set it to when they stopped if you know)")


# a Drifted condition's reason a hash annotation reproduces -> existingNodes' `drifted` (the provider's
# hash drift is reason NodeClassDrift: harness/loop/azure/drift.py NODECLASS_DRIFT)
DRIFT_REASONS = {"NodePoolDrifted": "NodePoolDrifted", "NodeClassDrift": "NodeClassDrifted",
                 "NodeClassDrifted": "NodeClassDrifted"}
HASH_ANNOTATIONS = ("karpenter.sh/nodepool-hash", "karpenter.sh/nodepool-hash-version",
                    "karpenter.azure.com/aksnodeclass-hash", "karpenter.azure.com/aksnodeclass-hash-version")
DO_NOT_DISRUPT = "karpenter.sh/do-not-disrupt"     # core pkg/apis/v1 DoNotDisruptAnnotationKey

# the provider's drift reasons the seeding does not reproduce (a seeded node is launched as the run's
# AKSNodeClass and cluster make it: its image, kubelet version, kubelet identity and subnet are the run's,
# harness/loop/azure/drift.py); the image reason under each release's name: provider.drift.imageReason
# (ImageVersionDrift before v1.4)
UNSEEDED_DRIFT = {"K8sVersionDrift": "kubelet version", "KubeletIdentityDrift": "kubelet identity",
                  "SubnetDrift": "subnet"}


def _unseeded_drift(reason: str) -> str | None:
    """Why a provider drift reason is lost in the run, or None when it is no such reason."""
    from harness.model.upstream.releases import fact_spans
    if reason in UNSEEDED_DRIFT:
        return (f"a seeded node has the run's {UNSEEDED_DRIFT[reason]}, so the run does not find it drifted "
                "(not modeled)")
    spans = [f"{a}-{b}" if a != b else a for value, a, b in fact_spans("provider.drift.imageReason") if value == reason]
    if spans:
        return (f"the provider's image drift (so named at {', '.join(spans)}): a seeded node runs the image its "
                "AKSNodeClass resolves to in the run, which does not find it drifted (not modeled)")
    return None


# conditions the loop derives itself from what the entry gives (their times are read where they matter)
DERIVED_CONDITIONS = ("Launched", "Registered", "Initialized", "Ready", "Drifted", "Consolidatable", "Empty",
                      "Drained", "VolumesDetached", "InstanceTerminating", "ConsistentStateFound",
                      "DisruptionReason", "Expired")


def _condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c.get("type") == kind), None)


def _claim_entry(nc: dict, node: dict | None, has_pods: bool, notes: list[str]) -> dict | None:
    """One NodeClaim as an existingNodes entry: its NodePool, instance type, zone and capacity type; its
    requests; its creation, Initialized and lastPodEventTime times; deletion (the NodeClaim's or its Node's
    deletionTimestamp); Drifted as the hash annotation it was launched with. What cannot be kept is a
    note naming the object and the field."""
    meta = nc.get("metadata") or {}
    name, labels, status = meta.get("name"), meta.get("labels") or {}, nc.get("status") or {}
    entry: dict = {"nodeClaim": name, "nodePool": labels["karpenter.sh/nodepool"],
                   "instanceType": labels["node.kubernetes.io/instance-type"]}
    if labels.get("topology.kubernetes.io/zone"):
        entry["zone"] = labels["topology.kubernetes.io/zone"]
    if labels.get("karpenter.sh/capacity-type"):
        entry["capacityType"] = labels["karpenter.sh/capacity-type"]
    if meta.get("creationTimestamp"):
        entry["createdAt"] = str(meta["creationTimestamp"])
    # what the round that made it asked for (its pods and DaemonSets then): the seeding's own estimate is
    # today's DaemonSets, and initialization waits for each requested resource
    requests = (((nc.get("spec") or {}).get("resources") or {}).get("requests")) or {}
    if requests:
        entry["requests"] = {str(k): str(v) for k, v in requests.items()}
    registered = _condition(nc, "Registered")
    initialized = _condition(nc, "Initialized")
    node_labels = ((node or {}).get("metadata") or {}).get("labels") or {}
    if node is None and not has_pods and not (registered and registered.get("status") == "True"):
        if not status.get("providerID"):
            notes.append(f"NodeClaim {name}: not launched (no status.providerID): not seeded; the loop makes its own")
            return None
        entry["registered"] = False
    elif (initialized or {}).get("status") != "True" and node_labels.get("karpenter.sh/initialized") != "true" \
            and not (node is None and has_pods):
        entry["initialized"] = False
    if (initialized or {}).get("status") == "True" and initialized.get("lastTransitionTime"):
        entry["initializedAt"] = str(initialized["lastTransitionTime"])
    if status.get("lastPodEventTime"):
        entry["lastPodEventTime"] = str(status["lastPodEventTime"])
    deleted = meta.get("deletionTimestamp") or ((node or {}).get("metadata") or {}).get("deletionTimestamp")
    if deleted:
        entry["deleting"] = str(deleted)
    elif any(t.get("key") == "karpenter.sh/disrupted" for t in ((node or {}).get("spec") or {}).get("taints") or []):
        notes.append(f"Node {node['metadata']['name']}: spec.taints karpenter.sh/disrupted without a deletionTimestamp "
                     "(a disruption command waiting for its replacements) is not kept: the loop decides again")
    drifted = _condition(nc, "Drifted")
    if drifted and drifted.get("status") == "True":
        reason = str(drifted.get("reason") or "")
        if reason in DRIFT_REASONS:
            entry["drifted"] = DRIFT_REASONS[reason]
        elif _unseeded_drift(reason):
            notes.append(f"NodeClaim {name}: status.conditions Drifted reason {reason} is not kept: "
                         f"{_unseeded_drift(reason)}")
        else:
            notes.append(f"NodeClaim {name}: status.conditions Drifted reason {reason or '(none)'} is not kept as such: "
                         "the loop derives it from the NodePool, AKSNodeClass and catalog")
    ann = {k: str(v) for k, v in (meta.get("annotations") or {}).items() if k in HASH_ANNOTATIONS}
    if ann and entry.get("drifted"):
        entry["annotations"] = ann
    # a node's own do-not-disrupt (core v1.14.0 statenode.go ValidateNodeDisruptable reads the Node's, which
    # registration copies from the NodeClaim: the entry's annotations are the NodeClaim's)
    for obj in (node, nc):
        value = (((obj or {}).get("metadata") or {}).get("annotations") or {}).get(DO_NOT_DISRUPT)
        if value is not None:
            entry.setdefault("annotations", {})[DO_NOT_DISRUPT] = str(value)
            break
    for cond in (status.get("conditions") or []):
        if cond.get("type") not in DERIVED_CONDITIONS:
            notes.append(f"NodeClaim {name}: status.conditions {cond.get('type')} is not kept (not modeled)")
    taints = [t for t in ((node or {}).get("spec") or {}).get("taints") or []
              if t.get("key") not in ("karpenter.sh/disrupted", "node.kubernetes.io/not-ready",
                                       "node.kubernetes.io/unreachable", "karpenter.sh/unregistered")]
    if taints:
        entry["taints"] = [{k: t[k] for k in ("key", "value", "effect") if t.get(k) is not None} for t in taints]
    if node is not None:
        node_conditions(node, entry, notes)
    return entry


# a Node condition True -> the NoSchedule taint kube-controller-manager's node lifecycle controller keeps for it
# (k8s.io/kubernetes v1.36.3 pkg/controller/nodelifecycle node_lifecycle_controller.go
# nodeConditionToTaintKeyStatusMap): kube-scheduler reads the taint, not the condition (its default plugins
# read no Node condition: pkg/scheduler/apis/config/v1/default_plugins.go), and Karpenter core reads neither
PRESSURE_TAINTS = {"MemoryPressure": "node.kubernetes.io/memory-pressure",
                   "DiskPressure": "node.kubernetes.io/disk-pressure",
                   "PIDPressure": "node.kubernetes.io/pid-pressure",
                   "NetworkUnavailable": "node.kubernetes.io/network-unavailable"}


def node_conditions(node: dict, entry: dict, notes: list[str]) -> None:
    """A dumped Node's conditions on its existingNodes entry: Ready False or Unknown as `ready` (seeded with the
    node lifecycle controller's not-ready or unreachable taints, harness/loop/seed.py), a pressure
    condition as the taint that stands for it. A managed node not Ready before its initialization is in flight
    (its kubelet reports Ready once it is up), as the entry's `initialized: false` seeds it; said."""
    name = (node.get("metadata") or {}).get("name")
    by_type = {c.get("type"): c for c in (node.get("status") or {}).get("conditions") or [] if isinstance(c, dict)}
    ready = by_type.get("Ready")
    status = str((ready or {}).get("status") or "True")
    if status in ("False", "Unknown"):
        reason = f"{(ready or {}).get('reason') or status}"
        if entry.get("nodePool") and entry.get("initialized", True) is False:
            notes.append(ObjectNote(f"Node {name}: status.conditions Ready {status} ({reason}) before its "
                                    "initialization: seeded in flight, its kubelet reporting Ready once up",
                                    str(name), ("ready-in-flight",), "", "Nodes",
                                    ": status.conditions Ready not True before their initialization: seeded in "
                                    "flight, their kubelets reporting Ready once up"))
        else:
            entry["ready"] = False if status == "False" else "Unknown"
            notes.append(ObjectNote(f"Node {name}: status.conditions Ready {status} ({reason}): seeded not Ready "
                                    "(ready: " + ("false" if status == "False" else "Unknown") + "), with the node "
                                    "lifecycle controller's taints; Karpenter counts it as disrupting in its "
                                    "NodePool's budget", str(name), ("not-ready", status), "",
                                    "Nodes", f": status.conditions Ready {status}: seeded not Ready, with the node "
                                    "lifecycle controller's taints; Karpenter counts each as disrupting in its "
                                    "NodePool's budget"))
    taints = entry.get("taints") or []
    for kind, key in PRESSURE_TAINTS.items():
        if str((by_type.get(kind) or {}).get("status")) == "True" and \
                not any(t.get("key") == key and t.get("effect") == "NoSchedule" for t in taints):
            taints.append({"key": key, "effect": "NoSchedule"})
            notes.append(f"Node {name}: status.conditions {kind} True without its taint {key}:NoSchedule: the taint "
                         "added, as the node lifecycle controller adds it (kube-scheduler reads the taint)")
    if taints:
        entry["taints"] = taints


def _karpenter_reasons(dump: Dump) -> dict[str, str]:
    """Pod name -> the text of Karpenter's last FailedScheduling event on it."""
    out: dict[str, str] = {}
    for ev in dump.events:
        obj = ev.get("involvedObject") or ev.get("regarding") or {}
        msg = str(ev.get("message") or ev.get("note") or "")
        if ev.get("reason") == "FailedScheduling" and obj.get("kind") == "Pod" and msg.startswith(KARPENTER_PREFIX):
            out[str(obj.get("name"))] = msg[len(KARPENTER_PREFIX):]
    return out


def _node_entry(claim_labels: dict, node: dict | None, pod: str | None) -> dict:
    entry: dict = {"pod": pod} if pod else {"nodePool": claim_labels.get("karpenter.sh/nodepool")}
    for label, key in NODE_FIELD_LABELS.items():
        if key != "nodePool" and claim_labels.get(label) is not None:
            entry[key] = claim_labels[label]
    if node is not None:
        name = node["metadata"]["name"]
        labels = {k: v for k, v in sorted((node["metadata"].get("labels") or {}).items())
                  if k not in NODE_FIELD_LABELS and k not in VOLATILE_LABELS and name not in str(v)}
        if labels:
            entry["labels"] = labels
    return entry


def cluster_facts(dump: Dump) -> dict:
    """given.region / given.cluster values the customer's Nodes carry."""
    out: dict = {}
    for node in dump.nodes:
        labels = node["metadata"].get("labels") or {}
        region = labels.get("topology.kubernetes.io/region")
        zone = labels.get("topology.kubernetes.io/zone", "")
        if not region and re.match(r"^[a-z0-9]+-\d+$", zone):
            region = zone.rsplit("-", 1)[0]
        if region:
            out.setdefault("region", region)
        if labels.get("kubernetes.azure.com/cluster"):
            out.setdefault("cluster", {})["nodeResourceGroup"] = labels["kubernetes.azure.com/cluster"]
        version = ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")
        if version:
            out.setdefault("cluster", {}).setdefault("kubernetesVersion", version.lstrip("v").split("+")[0])
    return out


def release_of(profiles: list[str]) -> str:
    """The release a dump's objects are read against: the customer's (the scenario's first release profile), else
    the newest (`upstream`)."""
    from harness.model.upstream.releases import release_profiles
    releases = set(release_profiles())
    return next((p for p in profiles if p in releases), "upstream")


def mode_assumed(found, profile: str) -> str | None:
    """The given.assumed line for the provision mode a dump's reading leaves open at the release `profile`
    (harness/dump/provisionmode.py assumed)."""
    from harness.model.upstream.profile import load_profile
    return provisionmode.assumed(found, load_profile(profile).provision_modes)


def assumed_gates(objects: list[tuple[dict, str, int]], dump: Dump, profile: str,
                  at: str | None) -> tuple[dict[str, bool], list[str]]:
    """The feature gates the dump's objects show the customer's controller ran with (harness/dump/featuregates.py),
    as given.featureGates (the gates read on) and the lines that say what decided each; `profile`: the release
    whose repair policies a Node's conditions are read against."""
    from harness.dump import featuregates
    from harness.model.upstream.profile import load_profile
    prof = load_profile(profile)
    policies = list(prof.provider_setting("repairPolicies") or [])
    release = f"profile {profile}"
    overlays = [o for o, _, _ in objects if o.get("kind") == "NodeOverlay"]
    found = featuregates.readings(dump.manifests, overlays, dump.nodes, dump.events, policies,
                                  parse_rfc3339(at) if at else None, release)
    return {r.gate: True for r in found if r.on}, [r.said for r in found]


def missing_nodeclasses(dump: Dump) -> list[str]:
    """AKSNodeClasses the NodePools reference that the input does not hold."""
    have = {m["metadata"]["name"] for m in dump.manifests if m.get("kind") == "AKSNodeClass"}
    out = []
    for m in dump.manifests:
        if m.get("kind") != "NodePool":
            continue
        ref = (((m.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        if ref.get("name") and ref["name"] not in have and ref["name"] not in out:
            out.append(ref["name"])
    return out


def default_nodeclass(name: str, profiles: list[str]) -> tuple[dict, str]:
    """The AKSNodeClass a release makes of an empty spec (its CRD defaults: image family, OS disk), in an
    apiVersion every profile of the scenario serves; and which version that is."""
    from harness.model.crd.apiversions import served, storage
    from harness.model.upstream.profile import load_profile
    from harness.model.upstream.profile import ProfileError
    loaded = []
    for p in profiles:
        try:
            loaded.append(load_profile(p))
        except ProfileError:          # a release the harness answers with its nearest (resolve), or a set name
            continue
    loaded = loaded or [load_profile("upstream")]
    versions = [v for v in served(loaded[0], "AKSNodeClass") if all(v in served(p, "AKSNodeClass") for p in loaded[1:])]
    version = (storage(loaded[0], "AKSNodeClass") if storage(loaded[0], "AKSNodeClass") in versions else None) \
        or (versions[-1] if versions else storage(loaded[0], "AKSNodeClass") or "v1beta1")
    return ({"apiVersion": f"karpenter.azure.com/{version}", "kind": "AKSNodeClass", "metadata": {"name": name},
             "spec": {}}, version)


def _region_of_labels(labels: dict) -> str | None:
    region = labels.get("topology.kubernetes.io/region") or labels.get("failure-domain.beta.kubernetes.io/region")
    if region:
        return str(region).lower()
    m = aksnames.ZONE.match(str(labels.get("topology.kubernetes.io/zone") or ""))
    return m.group(1) if m else None


def region_sources(dump: Dump, catalog_file: str | None) -> list[tuple[str, str]]:
    """(region, where it came from) for every object that says: Node labels (region, or a zone like
    `westus2-1`), NodeClaim labels and providerID, the AKSNodeClass's vnetSubnetID, the Node's
    kubernetes.azure.com/cluster (the node resource group's name) and the SKU file's locations."""
    out: list[tuple[str, str]] = []
    for node in dump.nodes:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        region = _region_of_labels(labels) or aksnames.region_of_rg(str(labels.get("kubernetes.azure.com/cluster") or ""))
        if region:
            out.append((region, f"Node {meta.get('name')}'s labels"))
    for nc in dump.nodeclaims:
        meta = nc.get("metadata") or {}
        region = _region_of_labels(meta.get("labels") or {})
        m = aksnames.NODE_RG.search(str((nc.get("status") or {}).get("providerID") or ""))
        region = region or (aksnames.region_of_rg(m.group(1)) if m else None)
        if region:
            out.append((region, f"NodeClaim {meta.get('name')}"))
    for m in dump.manifests:
        if m.get("kind") == "AKSNodeClass":
            rg = aksnames.NODE_RG.search(str((m.get("spec") or {}).get("vnetSubnetID") or ""))
            region = aksnames.region_of_rg(rg.group(1)) if rg else None
            if region:
                out.append((region, f"AKSNodeClass {m['metadata']['name']}'s vnetSubnetID (node resource group "
                                    f"{rg.group(1)})"))
    if catalog_file:
        from harness.scenario.catalogs import CatalogError, CatalogSource, catalog_regions, load_source
        try:
            regions = catalog_regions(load_source(CatalogSource(sku_file=str(Path(catalog_file).resolve())))[0])
        except CatalogError as e:
            raise SourceError("--catalog-file", None, str(e)) from None
        if len(regions) == 1:
            out.append((regions[0], f"the SKU file {Path(catalog_file).name}"))
    return out


def pick_region(flag: str | None, sources: list[tuple[str, str]], notes: list[str]) -> str:
    """The scenario's region: --region, else the one region every source agrees on. Never a default:
    none, or sources that disagree, is an error naming the ways to give it."""
    found: dict[str, list[str]] = {}
    for region, where in sources:
        found.setdefault(region, []).append(where)
    if flag:
        others = sorted(set(found) - {flag.lower()})
        if others:
            notes.append(f"--region {flag} overrides what the input says: " +
                         "; ".join(f"{r} ({', '.join(found[r][:2])})" for r in others))
        return flag.lower()
    if len(found) == 1:
        (region, wheres), = found.items()
        notes.append(f"region {region} from {wheres[0]}" + (f" and {len(wheres) - 1:,} more" if len(wheres) > 1 else ""))
        return region
    if found:
        raise SourceError("--region", None, "the input names several regions: " +
                          "; ".join(f"{r} ({', '.join(w[:2])})" for r, w in sorted(found.items())) +
                          "; pass --region REGION")
    raise SourceError("--region", None,
                      "no region in the input, and the harness does not guess one. Give it in any of these ways: "
                      "--region REGION; --catalog-file skus.json (`az vm list-skus --location REGION --all --output "
                      "json`); or add the Nodes or NodeClaims (`kubectl get nodes,nodeclaims -o yaml`), whose "
                      "topology.kubernetes.io/region and zone labels say it")


def place_file(src: str, out: Path, name: str, what: str, copies: list[Path], notes: list[str]) -> str:
    """A path to `src` relative to the scenario that the validator accepts (harness/scenario/references.py:
    inside the scenario's tree, at most MAX_FILE_BYTES): `src` itself when it is inside, else a copy
    beside the scenario (`<name>-<file name>`); a SKU file over the size limit is copied with its
    virtualMachines SKUs only, compacted."""
    from harness.scenario.references import MAX_FILE_BYTES, UnsafeReference, confine, scenario_root
    path = Path(src)
    if not path.is_file():
        raise SourceError(f"--{what}-file", None, f"{src}: no such file")
    out_dir = out.resolve().parent
    rel = os.path.relpath(path.resolve(), out_dir)
    try:
        confine(out_dir, rel, scenario_root(out.resolve()))
        return rel
    except UnsafeReference:
        pass                                    # outside the tree, or too large: copy it beside the scenario
    dest = out_dir / f"{name}-{path.name}"
    data = path.read_bytes()
    if len(data) > MAX_FILE_BYTES and what == "catalog":
        import json
        from fakeazure.catalog import skus_from_document
        try:
            skus = [s for s in skus_from_document(json.loads(data)) if str(s.get("resourceType", "")).lower()
                    == "virtualmachines"]
        except (ValueError, AttributeError, TypeError) as e:
            raise SourceError(f"--{what}-file", None, f"{src}: {e}") from None
        data = json.dumps(skus, separators=(",", ":")).encode()
        notes.append(f"{path.name} is over {MAX_FILE_BYTES // (1024 * 1024)} MiB: copied its {len(skus)} "
                     f"virtualMachines SKUs only")
    if len(data) > MAX_FILE_BYTES:
        raise SourceError(f"--{what}-file", None, f"{src} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB, the "
                                                  "most a scenario reads; save only the region's virtual machine "
                                                  "sizes")
    if dest.exists() and dest.read_bytes() != data and dest not in copies:
        raise SourceError(dest, None, "exists with other content; remove it or choose another --name")
    out_dir.mkdir(parents=True, exist_ok=True)
    if not dest.exists() or dest.read_bytes() != data:
        dest.write_bytes(data)
        copies.append(dest)
    notes.append(f"copied {src} to {dest} (the scenario refers to it as {dest.name})")
    return dest.name


@dataclass
class NewOptions:
    paths: list[str]
    name: str
    output: str | None = None
    profiles: list[str] = field(default_factory=list)
    region: str | None = None
    catalog_file: str | None = None
    prices_file: str | None = None
    force: bool = False
    replay: bool = False          # everything from scratch: the dump's nodes become expectations instead
    provider_version: str | None = None     # the customer's Karpenter provider version: its release profile
    at: str | None = None         # where the clock starts (RFC 3339), at or before the dump's time (the default)
    log: str | None = None        # the customer's Karpenter controller log: the clock and steps where the dump has none
    until: str | None = None      # carry the run on past the dump to this time (RFC 3339): an advance step
    complete: bool = False        # the input holds every pod: no stand-in for requests its pods do not explain
    provision_mode: str | None = None       # the customer's PROVISION_MODE where the dump cannot tell it


def dump_zones(dump: Dump, region: str) -> list[str]:
    """The zones (`1`, `2`, ...) the customer's Nodes and NodeClaims are in (`<region>-<n>` labels)."""
    out = set()
    for obj in dump.nodes + dump.nodeclaims:
        zone = str(((obj.get("metadata") or {}).get("labels") or {}).get("topology.kubernetes.io/zone") or "")
        if zone.startswith(f"{region}-") and zone.rsplit("-", 1)[1].isdigit():
            out.add(zone.rsplit("-", 1)[1])
    return sorted(out)


def dumped_node_expectations(entries: list[dict]) -> list[dict]:
    """What the dump shows of each Karpenter node the scenario seeds, by its index (seeding order: the
    registered entries, in flight ones last): there at the end (`deleted: false`), deleting or not,
    drifted or not. A run that passes reproduced it; one that fails names what changed."""
    out = []
    for i, entry in enumerate(e for e in entries if e.get("registered", True)):
        if not entry.get("nodePool"):
            continue
        want: dict = {"index": i, "nodePool": entry["nodePool"], "instanceType": entry["instanceType"]}
        if entry.get("zone"):
            want["zone"] = entry["zone"]
        want.update({"deleted": False, "deleting": bool(entry.get("deleting")), "drifted": bool(entry.get("drifted"))})
        out.append(want)
    return out


def _pods_where(expect: dict, entries: list[dict]) -> None:
    """A bare pod the dump shows running on a seeded Karpenter node is expected on that node (its index)."""
    registered = [e for e in entries if e.get("registered", True)]
    for i, entry in enumerate(registered):
        for pod in entry.get("pods") or []:
            name = pod["metadata"]["name"]
            if entry.get("nodePool") and not (pod["metadata"].get("ownerReferences")) \
                    and (expect.get("pods") or {}).get(name) == {"scheduled": True}:
                expect["pods"][name] = {"scheduled": True, "node": i}


def new_scenario(opts: NewOptions) -> tuple[Path, str, list[str]]:
    """(output path, scenario text, notes). Raises SourceError on bad input or a refused write.
    Python's cycle collector is off meanwhile: a dump's objects are trees (read from JSON or YAML, copied
    without sharing) that reference counting frees, and its passes over their millions of dicts and lists
    were a fifth of the command on the 5,000-node dump."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            return _new_scenario(opts, True)
        except _Shared:
            return _new_scenario(opts, False)
    except RecursionError:
        # a JSON dump's nesting is bounded by the interpreter, not read level by level as YAML's is: the
        # file and line that nest too deep are found now, by a scan of the text
        for p in opts.paths:
            text = read_text(p, MAX_DUMP_BYTES)
            line = jsonsource.deep_line(text) if jsonsource.looks_like_json(text) else None
            if line:
                raise SourceError(p, line, f"malformed JSON: nesting deeper than {MAX_DEPTH} levels") from None
        raise
    finally:
        if enabled:
            gc.enable()


def _new_scenario(opts: NewOptions, share: bool) -> tuple[Path, str, list[str]]:
    """new_scenario's work; `share`: the scenario shares what it keeps unchanged of the dump's objects (_kept),
    written once the dump is dropped."""
    from harness.model.upstream.releases import policy_profiles
    from harness.scenario.catalogs import available_catalogs
    from harness.scenario.load import API_VERSION
    from harness.scenario.load import schema
    if not re.match(schema()["properties"]["metadata"]["properties"]["name"]["pattern"], opts.name):
        raise SourceError("--name", None, f"{opts.name!r} is not a valid scenario name: use a lowercase DNS-1123 "
                                          "name (a-z, 0-9, '-', '.'), e.g. acme-1234")
    out = Path(opts.output) if opts.output else Path(f"{opts.name}.scenario.yaml")
    if out.exists() and not opts.force:
        raise SourceError(out, None, "exists; pass --force to overwrite it")
    from harness.dump import eventstext
    paths, tables = eventstext.partition(opts.paths)      # `kubectl get events` as printed: its rows, as Events
    objects = read_objects(paths)
    dump = split(objects, share)
    text_events = eventstext.as_events(tables)
    notes = list(dump.notes)
    facts = cluster_facts(dump)
    # what the run rests on that the input did not show: given.assumed, which every run says beside its verdict
    assumed: list[str] = []
    found = provisionmode.provision_mode_of(dump.nodeclaims, dump.nodes)
    if opts.provision_mode:
        if (why := provisionmode.contradicts(found, opts.provision_mode)):
            raise SourceError("--provision-mode", None, why)
        notes.append(provisionmode.given_note(found, opts.provision_mode))
        if opts.provision_mode != "aksscriptless":
            facts.setdefault("cluster", {})["provisionMode"] = opts.provision_mode
    elif found is not None:
        notes.append(provisionmode.note(found))
        if found.mode != "aksscriptless":         # the default stays unwritten
            facts.setdefault("cluster", {})["provisionMode"] = found.mode
    elif dump.nodeclaims:
        notes.append(provisionmode.ASSUMED)
    # default: the label policies and upstream (a release: --profile v1.6.2, or `all-releases` in the file)
    profiles = list(opts.profiles)
    release = ""
    if opts.provider_version:
        from harness.model.upstream.profile import ProfileError
        from harness.model.upstream.releases import resolve
        try:
            res = resolve(opts.provider_version)
        except ProfileError as e:
            raise SourceError("--provider-version", None, str(e)) from None
        if not res.exact:
            notes.append(f"WARNING: {res.notice}")
        release = (f"provider {opts.provider_version}: profile {res.profile}"
                   + ("" if res.exact else " (the nearest release: NOT that release)"))
        notes.append(release)
        # the customer's release and the newest: the run shows where the outcome changes between them. The
        # profile written is the one printed (v1.4.0 is profile v1.4.1's); the version itself goes in the
        # description
        profiles = [res.profile] + [p for p in profiles or ["upstream"] if p != res.profile]
    given: dict = {"profiles": profiles or policy_profiles()}
    story = _log_story(opts.log, [(ev, "the input's events") for ev in dump.events] + text_events) \
        if opts.log else None
    dump.events += [ev for ev, _ in text_events]
    region = pick_region(opts.region, region_sources(dump, opts.catalog_file) + (story.regions if story else []),
                         notes)
    if story is not None and not opts.replay:
        from harness.dump import logscenario
        if logscenario.leads(dump):        # no NodeClaim, no Node: the log gives the nodes, pods and clock
            doc, copies = _log_scenario(opts, out, story, dump, given, region, notes, release)
            return _finish(doc, out, copies, notes, share)
        notes += logscenario.log_notes(story, given["profiles"])
    given["region"] = region
    at = opts.at or dump.newest
    log_clock = None
    if story is not None:
        from harness.runner.karpenterlog import clock
        log_clock = clock(story.entries)
        if log_clock["start"] is None:
            raise SourceError(opts.log, None, "no Karpenter decision line in it (found provisionable pod(s), created "
                                              "nodeclaim, launched nodeclaim, disrupting node(s), ...: JSON lines)")
        if opts.at is None and (opts.replay or not dump.newest):
            # from an empty cluster: the clock starts when the log's first pods became provisionable
            first = (log_clock["provisionable"] or [log_clock["start"]])[0]
            at = rfc3339(first)
            notes.append(f"the clock starts at {at}: the log's first decision ({opts.log})")
    if at:
        try:
            parse_rfc3339(at)
        except ValueError:
            raise SourceError("--at", None, f"{at!r} is not an RFC 3339 time (e.g. 2026-11-20T14:05:00Z)") from None
        given["startTime"] = at
        from harness.dump.times import clock_note
        notes.append(f"the clock starts at {at} (" + ("--at" if opts.at else clock_note(dump.newest_source))
                     + "): ages, expireAfter, consolidateAfter and budget schedules continue from there")
    dumpmoment.check_times(opts.at, opts.until, dump.newest)
    # --at before the dump: the objects as they stood then, what came after as steps (harness/dump/moment.py)
    moment = dumpmoment.rewind(objects, opts.at, dump.newest, MANIFEST_KINDS, FINISHED_PHASES, strip_server_fields) \
        if opts.at and dump.newest and not opts.replay else None
    work = split(moment.objects) if moment else dump
    if moment:
        notes += dumpmoment.notes(moment)
    copies: list[Path] = []
    if opts.catalog_file:
        given["catalog"] = {"file": place_file(opts.catalog_file, out, opts.name, "catalog", copies, notes)}
        if opts.prices_file:
            given["catalog"]["prices"] = place_file(opts.prices_file, out, opts.name, "prices", copies, notes)
    elif region not in available_catalogs():
        seen = sorted({(nc.get("metadata") or {}).get("labels", {}).get("node.kubernetes.io/instance-type")
                       for nc in dump.nodeclaims + dump.nodes} - {None})
        if seen:
            given["skus"] = seen
        zones = dump_zones(dump, region)
        if zones:
            given["zones"] = zones
        notes.append(f"region {region} has no bundled catalog: pass --catalog-file with `az vm list-skus --location "
                     f"{region} --all --output json` output" + (f" (until then {', '.join(seen)} are synthesized"
                                                                 + (f" in zones {', '.join(zones)}, where the "
                                                                    "customer's nodes are" if zones else "") + ")"
                                                                 if seen else ""))
    from harness.scenario.catalogs import zones_where_catalog_has_none
    nodes_zones = [] if given.get("zones") else zones_where_catalog_has_none(given, out.resolve().parent,
                                                                             dump_zones(dump, region))
    if nodes_zones:                       # a catalog without zones where the customer's nodes have them
        given["zones"] = nodes_zones
    if facts.get("cluster"):
        given["cluster"] = facts["cluster"]
    read_at = release_of(given["profiles"])
    if dump.nodeclaims and not opts.provision_mode and (said := mode_assumed(found, read_at)):
        assumed.append(said)             # what the evidence leaves open at the customer's release
    gates, gate_notes = assumed_gates(objects, dump, read_at, at)
    if gates:
        given["featureGates"] = gates
    notes += gate_notes
    assumed += gate_notes
    manifests = work.manifests
    for name in missing_nodeclasses(dump):
        obj, version = default_nodeclass(name, given["profiles"])
        manifests.insert(next((i for i, m in enumerate(manifests) if m.get("kind") == "NodePool"), 0), obj)
        notes.append(f"AKSNodeClass {name} is referenced by a NodePool but not in the input: assumed the release's "
                     f"default (karpenter.azure.com/{version}, an empty spec its CRD defaults fill); add it "
                     f"(kubectl get aksnodeclass {name} -o yaml) if the customer's differs")
        assumed.append(notes[-1])
    expect = expectations(dump, notes)
    if not opts.replay:
        # the cluster as it is: its NodeClaims, Nodes and running pods exist before the first pass; the
        # expectations are what the dump shows of them, and of the rest (pending pods, events)
        entries, moved = existing_nodes(work)
        from harness.dump.times import infer_last_pod_events
        infer_last_pod_events(work.nodeclaims, work.pods + work.finished, entries, work.notes, work.times,
                              work.pod_events)
        if not work.nodes and not moment:   # where its pods ran: NodeClaims, spec.nodeName, controllers' status
            from harness.dump.placement import place_without_nodes   # (status is the dump's time, not --at's)
            entries = place_without_nodes(work, objects, entries, moved, expect, work.notes, strip_server_fields)
        _unbound(work, moved)
        known = set(notes)
        notes += [n for n in work.notes if n not in known]
        _hold_unexplained(work, entries, manifests, expect, notes, opts.complete)
        if entries or moment:
            if entries:
                given["existingNodes"] = entries
            manifests = [m for m in manifests if not (m.get("kind") == "Pod" and m["metadata"]["name"] in moved)]
            expect.pop("nodes", None)
            expect.pop("nodeCount", None)
            seeded = (dumpmoment.node_expectations(moment, entries, dump.nodeclaims, dump.nodes) if moment
                      else dumped_node_expectations(entries))
            if seeded:
                expect["nodes"] = seeded
            _pods_where(expect, entries)
            if moment:
                dumpmoment.pods_on_new_nodes(moment, expect, dump.pods, len(entries))
    log_notes: list[str] = []
    steps = _log_steps(log_clock, at, opts.log, log_notes) if log_clock else []
    if moment or opts.until:
        # one timeline: the arrivals after --at, the dump's check at its time, the log's last decision, --until
        start = parse_rfc3339(at) if at else parse_rfc3339(opts.until)
        after = moment.clock if moment else start
        marks = [(t, why) for t, why in ((log_clock["end"] if log_clock else None, f"the last decision in {opts.log}"),
                                         (parse_rfc3339(opts.until) if opts.until else None, "--until"))
                 if t is not None and t > after]
        log_notes = [n for n in log_notes if not n.startswith("steps:")]
        steps, step_notes = dumpmoment.steps(start, moment.arrivals if moment else [],
                                             (moment.clock, expect) if moment else None, marks)
        log_notes += step_notes
        if moment:
            expect = dumpmoment.start_expect(expect, manifests)
    notes += log_notes
    stateless = not set(expect) - {"nodePools"} and not given.get("existingNodes") and not steps
    if stateless:      # manifests only: nothing the customer saw to reproduce, so no `dump` label (its verdicts)
        said = ("the input held no state of the customer's cluster (no Node, NodeClaim, running pod or Event): the "
                "expectations say only that the NodePools are accepted, so a pass says nothing of what the customer "
                "saw; write it as expect (e.g. expect.pods.<name>: {pending: true})")
        notes.append(f"WARNING: {said}")
        assumed.insert(0, said)
    if assumed:
        given["assumed"] = assumed
    doc = {"apiVersion": API_VERSION, "kind": "Scenario",
           "metadata": {"name": opts.name, "labels": ["bug"] if stateless else ["bug", DUMP_LABEL]},
           "description": "Reproduction of: <link the issue>. The expectations are what the customer's cluster "
                          "showed: a pass means the run reproduced it, a failure names what changed (`harness run` "
                          f"says 'moved on from the dump'; drop the `{DUMP_LABEL}` label once the expectations are "
                          "yours)."
                          + (f" The customer's {release}." if release else "")
                          + (f" Replayed from {at}: the start is the dump as it stood then, and the step at "
                             f"the dump's time ({rfc3339(moment.clock)}) holds the expectations." if moment else ""),
           "given": given, "manifests": manifests, "expect": expect}
    if steps:
        doc["steps"] = steps
    # the scenario holds copies of what it keeps: the dump's objects (a GB at 5,000 nodes) go before its text
    del objects, dump, work, moment, story
    return _finish(doc, out, copies, notes, share)


def _finish(doc: dict, out: Path, copies: list[Path], notes: list[str], share: bool) -> tuple[Path, str, list[str]]:
    """The scenario's text from `doc`, validated as the loader reads it (a refused scenario is never
    written: the files copied for it are removed), with the catalog's disagreements as comments."""
    from harness.scenario.load import SCHEMA_URL_HINT, schema_path
    schema_rel = os.path.relpath(schema_path(), out.resolve().parent)
    # yaml.dump's text, written without its representer (a 1,000-node dump's scenario is ~4 MB of YAML)
    from harness.dump.writer import dump_with_lines
    head = f"{SCHEMA_URL_HINT}{schema_rel}\n"
    first = head.count("\n") + 1                   # the body's first line
    body, lines = dump_with_lines(doc, first)
    if lines is None and share:
        # yaml.dump writes what the writer does not, an object in two places as an anchor and its alias: the
        # scenario is made again of copies (a YAML dump's own aliases stay shared, as they are without `share`)
        raise _Shared
    text = head + body
    try:                                            # never write what validate rejects
        loaded = _validated(doc, text, out, lines, first)
    except SourceError as e:
        for c in copies:
            c.unlink(missing_ok=True)
        if Path(e.file).resolve() != out.resolve():
            raise
        # the refusal is of the scenario it would write, which is not on disk: say so, not a file to open
        raise SourceError(e.file, None, f"not written: its line {e.line} would be refused: {e.reason}"
                          if e.line else f"not written: {e.reason}") from None
    from harness.scenario.catalogamend import say
    text = say(text, [w for sc in loaded[:1] for w in sc.warnings], notes)
    return out, text, notes


def _unbound(work: Dump, moved: set[str]) -> None:
    """Notes on the running pods bound to a node no seeded entry is (a Node the input lacks, a NodeClaim not
    seeded): they start unbound, pending (a DaemonSet's pod of the input is its controller's to place)."""
    daemonsets = {m["metadata"]["name"] for m in work.manifests if m.get("kind") == "DaemonSet"}
    for pod in work.pods:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") if type(pod.get("spec")) is dict else {}
        node = spec.get("nodeName")
        if not node or meta.get("name") in moved or \
                ((pod.get("status") or {}).get("phase") or "Running") not in PLACED_PHASES:
            continue
        owner = _owner(pod) or ("", "")
        if owner[0] == "DaemonSet" and owner[1] in daemonsets:
            continue
        work.notes.append(ObjectNote(f"Pod {meta.get('name')} ran on {node}, which is not seeded (no Node or "
                                     "NodeClaim of the input seeds it): it starts pending", str(meta.get("name")),
                                     ("unbound",), "", "Pods", " ran on nodes that are not seeded (no Node or "
                                     "NodeClaim of the input seeds them): they start pending"))


def _hold_unexplained(work: Dump, entries: list[dict], manifests: list[dict], expect: dict, notes: list[str],
                      complete: bool) -> None:
    """NodeClaims busier than the input's pods say, held so by stand-in pods (harness/scenario/standins.py)."""
    from harness.scenario import standins
    finished: dict[str, list[dict]] = {}
    for pod in work.finished:
        node = (pod.get("spec") or {}).get("nodeName")
        if isinstance(node, str):
            finished.setdefault(node, []).append(pod)
    node_of = {str((nc.get("metadata") or {}).get("name")): str((nc.get("status") or {}).get("nodeName") or "")
               for nc in work.nodeclaims}
    found = standins.unexplained(entries, [m for m in work.manifests if m.get("kind") == "DaemonSet"], finished,
                                 node_of)
    if found:
        standins.hold(entries, found, manifests, expect, notes,
                      standins.missing_namespaces(work.pods + work.finished, work.manifests), complete)


def _validated(doc: dict, text: str, out: Path, lines: Mapping[tuple, int] | None, start_line: int) -> list:
    """The scenario `text` (written from `doc`) as the loader reads it. Checked on `doc` itself, which the
    text reads back as, at the `lines` the writer wrote each path on (the loader's own:
    tests/dump/test_writer.py): the same verdict and notices without parsing megabytes of YAML again.
    The text is read when the writer gave no lines (yaml.dump wrote it), or for an error's own wording."""
    from harness.scenario.load import load_scenarios_text, scenario_from_data
    try:
        sc = scenario_from_data(doc, out.resolve().parent / out.name, lines, start_line)
        if lines is not None or not any(n.kind in ("cluster", "synthesized") for n in sc.warnings):
            return [sc]
    except SourceError:
        pass
    return load_scenarios_text(text, out.name, out.resolve().parent)


def _log_scenario(opts: NewOptions, out: Path, story, dump: Dump, given: dict, region: str, notes: list[str],
                  release: str) -> tuple[dict, list[Path]]:
    """The scenario `harness new --log` writes where the log gives the nodes (harness/dump/logscenario.py
    build), with the input's NodePools, PDBs and events and the catalog the region has; and the files copied
    beside it."""
    from types import SimpleNamespace

    from harness.model.kube.kubetime import parse_rfc3339
    from harness.scenario.catalogs import available_catalogs, named_in_manifests, zones_where_catalog_has_none
    from harness.dump.logscenario import LOG_LABEL, assumed_lines, build
    from harness.scenario.load import API_VERSION
    try:
        at = parse_rfc3339(opts.at) if opts.at else None
    except ValueError:
        raise SourceError("--at", None, f"{opts.at!r} is not an RFC 3339 time (e.g. 2026-11-20T14:05:00Z)") from None
    manifests = list(dump.manifests)
    ls = build(story, manifests, at, given["profiles"])
    given["profiles"] = given["profiles"][:1] + [p for p in ls.profiles if p not in given["profiles"]] + \
        given["profiles"][1:]
    given["region"] = region
    given["startTime"] = rfc3339(ls.start)
    if ls.given.get("nodeResourceGroup"):
        given["cluster"] = {"nodeResourceGroup": ls.given["nodeResourceGroup"]}
    copies: list[Path] = []
    manifests += ls.manifests
    if opts.catalog_file:
        given["catalog"] = {"file": place_file(opts.catalog_file, out, opts.name, "catalog", copies, notes)}
        if opts.prices_file:
            given["catalog"]["prices"] = place_file(opts.prices_file, out, opts.name, "prices", copies, notes)
    elif region not in available_catalogs():
        sizes = sorted(set(ls.given["sizes"]) | {n for n, _ in named_in_manifests([SimpleNamespace(obj=m)
                                                                                   for m in manifests])})
        if not sizes:
            raise SourceError(story.path, None, f"region {region} has no bundled catalog and neither the log nor the "
                                                "NodePools name a VM size: pass --catalog-file with `az vm list-skus "
                                                f"--location {region} --all --output json` output")
        given["skus"] = sizes
        if ls.given["zones"]:
            given["zones"] = ls.given["zones"]
        notes.append(f"region {region} has no bundled catalog: {', '.join(sizes)} (the sizes the log and the NodePools "
                     "name) are synthesized from their names" + (f" in zones {', '.join(ls.given['zones'])}, where the "
                                                                  "log's nodes are" if ls.given["zones"] else "")
                     + "; pass --catalog-file for the real ones")
    elif (zones := zones_where_catalog_has_none(dict(given), out.resolve().parent, ls.given["zones"])):
        given["zones"] = zones
    if ls.given.get("loop"):
        given["loop"] = ls.given["loop"]
    if ls.given.get("restrict"):
        given["restrict"] = ls.given["restrict"]
    if ls.existing:
        given["existingNodes"] = ls.existing
    for name in missing_nodeclasses(Dump(manifests=manifests)):
        obj, version = default_nodeclass(name, given["profiles"])
        manifests.insert(next((i for i, m in enumerate(manifests) if m.get("kind") == "NodePool"), 0), obj)
        notes.append(f"assumed AKSNodeClass {name}: a NodePool references it, the input does not hold it: the "
                     f"release's default (karpenter.azure.com/{version}, an empty spec its CRD defaults fill); add it "
                     f"(kubectl get aksnodeclass {name} -o yaml) if the customer's differs")
    expect = {k: v for k, v in expectations(Dump(manifests=manifests, events=dump.events)).items() if k == "nodePools"}
    notes += ls.notes
    if (lines := assumed_lines([n for n in notes if isinstance(n, str)])):
        given["assumed"] = lines
    doc = {"apiVersion": API_VERSION, "kind": "Scenario",
           "metadata": {"name": opts.name, "labels": ["bug", DUMP_LABEL, LOG_LABEL]},
           "description": f"Reproduction of: <link the issue>, from the customer's Karpenter log {story.path}. Its last "
                          "step checks what the log shows at its end: a pass means the run reproduced it, a failure "
                          "names what the run did otherwise. `harness new` named what it assumed (a NodePool, pods "
                          f"and their requests, PodDisruptionBudgets); drop the `{DUMP_LABEL}` label once the "
                          "expectations are yours." + (f" The customer's {release}." if release else ""),
           "given": given, "manifests": manifests, "expect": expect, "steps": ls.steps}
    return doc, copies


def _log_story(log: str, events: list[tuple[dict, str]]):
    """The customer's log read whole, with the input's events (each with where it was read)
    (harness/dump/logstory.py)."""
    from harness.dump import logstory
    try:
        text = read_text(log, MAX_DUMP_BYTES)
    except SourceError as e:
        raise SourceError(log, None, f"cannot read the log: {e.reason}") from None
    return logstory.read(log, text, events)


def _log_steps(log_clock: dict, at: str | None, log: str, notes: list[str]) -> list[dict]:
    """What the customer's log says happened, as notes with offsets from the scenario's start, and one
    `advance` step to the log's last decision when that is after the start (harness/runner/karpenterlog.py clock)."""
    from harness.model.kube.kubetime import parse_rfc3339
    from harness.loop.history import offset_text
    from harness.model.values.durations import go_duration_text
    start = parse_rfc3339(at) if at else log_clock["start"]
    for name, when in log_clock["nodeClaims"].items():
        notes.append(f"log: NodeClaim {name}: " + ", ".join(f"{what} {offset_text(t - start)}"
                                                             for what, t in sorted(when.items(), key=lambda kv: kv[1])))
    end = log_clock["end"]
    if end is None or end <= start:
        return []
    step = {"advance": go_duration_text(end - start)}
    notes.append(f"steps: advance {step['advance']}, to the last decision in {log} ({rfc3339(end)})")
    return [step]


def write(out: Path, text: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


__all__ = ["DUMP_LABEL", "NewOptions", "new_scenario", "write", "read_objects", "split", "expectations", "strip_server_fields",
           "cluster_facts", "missing_nodeclasses", "existing_nodes", "region_sources", "default_nodeclass",
           "pick_region", "place_file"]
