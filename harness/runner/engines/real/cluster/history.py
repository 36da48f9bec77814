"""A dump's history on the real engine: what `given.existingNodes` says happened before the scenario's start
(createdAt, initializedAt, lastPodEventTime, deleting at a time, drifted, annotations), written so the live
controller reads it as the simulation's seeding does (harness/loop/seed.py `_history`,
`_dumped_phases`, `_settled_pods`). Times the API server stamps (creationTimestamp, deletionTimestamp) are
made with the run's clock at the dump's instant (`instants`); the NodeClaim's condition transitions,
lastPodEventTime and annotations are written once it is launched (`write`), before its NodePool's
disruption is restored (existing.py seed). Core compares them with its clock: sigs.k8s.io/karpenter v1.14.0
pkg/controllers/nodeclaim/disruption/consolidation.go Reconcile, pkg/controllers/nodeclaim/expiration.

Why it is built this way: docs/architecture/real-engine.md "A dump's history"."""
from __future__ import annotations

from dataclasses import dataclass

from harness.backends.base import ADMIN, retry_on_conflict
from harness.model.kube.kubetime import parse_rfc3339, rfc3339
from harness.loop.lifecycle.hashes import (
    NODECLASS_HASH,
    NODECLASS_HASH_VERSION,
    NODEPOOL_HASH,
    NODEPOOL_HASH_VERSION,
    restamps,
)

# the entry's fields that are history (the real engine needs a clock it can move for them: engine.py); the
# dated ones set the NodeClaim's status
DATED = ("createdAt", "initializedAt", "lastPodEventTime")
FIELDS = (*DATED, "drifted", "annotations")
# the hash a `drifted` entry without the dump's own annotation carries: it matches no spec (loop/seed.py),
# with the version the live controller stamped (none where it stamped none: the AKSNodeClass hash at provider
# v0.5-v0.6, which compares none)
PLACEHOLDER = {"NodeClassDrifted": (NODECLASS_HASH, "launched-from-an-older-aksnodeclass", NODECLASS_HASH_VERSION),
               "NodePoolDrifted": (NODEPOOL_HASH, "launched-from-an-older-nodepool", NODEPOOL_HASH_VERSION)}
# the hash that stays the live one when the dump calls the other kind drifted (or calls nothing drifted)
CURRENT = {"NodeClassDrifted": (NODEPOOL_HASH,), "NodePoolDrifted": (NODECLASS_HASH,)}


def names(given: dict) -> list[str]:
    """The history fields a scenario's given uses, named as a skip says them."""
    entries = given.get("existingNodes") or []
    out = (["given.startTime"] if given.get("startTime") else []) + \
        [f"existingNodes[].{k}" for k in FIELDS if any(k in e for e in entries)]
    return out + (["existingNodes[].deleting (a time)"] if any(isinstance(e.get("deleting"), str) for e in entries)
                  else [])


@dataclass(frozen=True)
class Instants:
    """When the run's clock must read what, for one entry: `created` while its objects are created (the
    API server's creationTimestamp), `deleted` while its Node is deleted (its deletionTimestamp, and the
    NodeClaim's, which core's node termination deletes at once: node/termination/controller.go finalize)."""
    created: float
    deleted: float


def instants(entry: dict, start: float) -> Instants:
    """createdAt, else the start; the `deleting` time, else the start (`deleting: true`: deleted at the start,
    as the simulation's seeding deletes it)."""
    created = parse_rfc3339(entry["createdAt"]) if entry.get("createdAt") else start
    deleted = parse_rfc3339(entry["deleting"]) if isinstance(entry.get("deleting"), str) else start
    return Instants(created, deleted)


def at_start(entry: dict, start: float) -> dict:
    """The entry as the run's history writes it when the run's clock reads the scenario's start (engine.py RealRun
    placed): what it does not date happened at the start, as the simulation's seeding has it
    (harness/loop/seed.py: created, and initialized, at its clock's start; a seeded pod started then) - so its
    conditions and its pods' startTime are the start's, not the seconds the seeding took after it."""
    at = rfc3339(start)
    pods = [p if (p.get("status") or {}).get("startTime") else {**p, "status": {**(p.get("status") or {}), "startTime": at}}
            for p in entry.get("pods") or []]
    return {**entry, "createdAt": entry.get("createdAt") or at, **({"pods": pods} if pods else {})}


def transitions(entry: dict) -> dict[str, str]:
    """The NodeClaim's condition transitions the dump dates (loop/seed.py _dumped_phases): Launched at
    createdAt (the provider launches within the create's reconcile), Registered and Initialized at
    initializedAt, else createdAt. Only times the dump gives."""
    out = {}
    if entry.get("createdAt"):
        out["Launched"] = rfc3339(parse_rfc3339(entry["createdAt"]))
    joined = entry.get("initializedAt") or entry.get("createdAt")
    if joined:
        out.update({t: rfc3339(parse_rfc3339(joined)) for t in ("Registered", "Initialized")})
    return out


def pod_event(entry: dict) -> str | None:
    """The NodeClaim's status.lastPodEventTime: the dump's, else none - the binding of the seeded pods is no
    pod event (loop/seed.py _settled_pods), so consolidateAfter counts from the Initialized transition."""
    return rfc3339(parse_rfc3339(entry["lastPodEventTime"])) if entry.get("lastPodEventTime") else None


def pod_starts(entry: dict) -> dict[tuple[str, str], str]:
    """(namespace, name) -> status.startTime of each of the entry's pods the dump dates: the kubelet stand-in
    reports it as the pod's start (kubelet.py run_pods), as the simulation counts from it."""
    out = {}
    for pod in entry.get("pods") or []:
        meta, started = pod.get("metadata") or {}, (pod.get("status") or {}).get("startTime")
        if started and meta.get("name"):
            out[(meta.get("namespace") or "default", meta["name"])] = rfc3339(parse_rfc3339(str(started)))
    return out


def annotations(entry: dict, live: dict[str, str], restamp: bool = False) -> dict[str, str]:
    """The NodeClaim's annotations: the live ones (the hashes core and the provider stamped at launch) with the
    dump's over them, as loop/seed.py _history writes them: a `drifted` entry without the dump's hash
    gets a placeholder of the live hash version (none where the release stamps no AKSNodeClass hash), and a hash
    of the kind the dump does not call drifted stays the live one (the dump's digits are another cluster's).
    `restamp` (hashes.py restamps: the NodePool hash controller would have re-stamped it, had the NodeClaim been
    there before the NodePool's first reconcile): the dump's NodePool hash version is the live one."""
    ann = {str(k): str(v) for k, v in (entry.get("annotations") or {}).items()}
    drifted = entry.get("drifted")
    if drifted in PLACEHOLDER:
        key, value, version_key = PLACEHOLDER[drifted]
        version = live.get(version_key)
        if version is not None:
            ann.setdefault(key, value)
            ann.setdefault(version_key, version)
    if restamp and NODEPOOL_HASH_VERSION in live:
        ann[NODEPOOL_HASH_VERSION] = live[NODEPOOL_HASH_VERSION]
    current = CURRENT.get(str(drifted), (NODEPOOL_HASH, NODECLASS_HASH))
    return {**live, **{k: v for k, v in ann.items() if k not in current}}


def restamped(entry: dict, nodepool: dict | None, profile) -> bool:
    """Whether the entry's NodePool hash version is one core's hash controller re-stamps (hashes.py restamps)
    for its NodePool as the scenario gives it."""
    return restamps((entry.get("annotations") or {}).get(NODEPOOL_HASH_VERSION), nodepool, profile)


def write(cluster, name: str, entry: dict, restamp: bool = False) -> None:
    """The entry's dated status and annotations on its launched NodeClaim `name` (read-modify-write with the
    resourceVersion: core's controllers write the same object). Core keeps a condition's transition while its
    status stays (operatorpkg ConditionSet.Set), and its podevents controller stamps lastPodEventTime only at
    a pod's bind, end or termination after this (podevents/controller.go)."""
    times = transitions(entry)
    if any(k in entry for k in DATED):
        def status() -> None:
            nc = cluster.get("NodeClaim", name)
            if nc is None:
                return
            st = nc.setdefault("status", {})
            for c in st.get("conditions") or []:
                if c.get("type") in times and c.get("status") == "True":
                    c["lastTransitionTime"] = times[c["type"]]
            if not str(nc.get("apiVersion") or "").endswith("/v1beta1"):   # core v0.36 has no lastPodEventTime
                event = pod_event(entry)
                if event:
                    st["lastPodEventTime"] = event
                else:
                    st.pop("lastPodEventTime", None)
            cluster.update_status(nc, ADMIN)
        retry_on_conflict(status)
    if entry.get("annotations") or entry.get("drifted"):
        def meta() -> None:
            nc = cluster.get("NodeClaim", name)
            if nc is None:
                return
            nc["metadata"]["annotations"] = annotations(entry, nc["metadata"].get("annotations") or {}, restamp)
            cluster.update(nc, ADMIN)
        retry_on_conflict(meta)


def differs(cluster, name: str, entry: dict) -> list[str]:
    """What of the entry's status history the stored NodeClaim no longer shows (a controller wrote it over
    from an older copy): the condition types and `lastPodEventTime`."""
    nc = cluster.get("NodeClaim", name)
    if nc is None:
        return []
    st = nc.get("status") or {}
    have = {c.get("type"): c.get("lastTransitionTime") for c in st.get("conditions") or [] if c.get("status") == "True"}
    out = [t for t, at in transitions(entry).items() if t in have and _t(have[t]) != _t(at)]
    if not str(nc.get("apiVersion") or "").endswith("/v1beta1") and any(k in entry for k in DATED):
        want = pod_event(entry)
        if _t(st.get("lastPodEventTime")) != _t(want):
            out.append("lastPodEventTime")
    return out


def _t(stamp: str | None) -> float | None:
    return parse_rfc3339(stamp) if stamp else None
