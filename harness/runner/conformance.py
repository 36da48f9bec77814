"""The conformance report: per scenario, the simulation's verdict next to the real controller's,
every observed field where the two runs differ, and the VM/NIC bodies each side sent to the fake.

Compared fields (per node, paired by launch order): instance type, zone, capacity type, Node labels,
the kubelet's --node-labels, taints; per pod: bound or pending; NodePools: accepted/ready/stage;
totals: nodes, launched NodeClaims, VMs and NICs, runaway. VM and NIC bodies are compared after
flattening to dotted paths, with each side's own VM/NIC names replaced by a placeholder and the
fields that differ by construction left out (ids, GUIDs, timestamps, provisioning state).
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import os
import re
from pathlib import Path

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.runner.engines.base import verdict

VOLATILE = re.compile(r"(^|\.)(id|vmId|timeCreated|provisioningState|instanceView|resourceGuid|etag|"
                      r"macAddress|privateIPAddress|computerName|customData|adminPassword|name)$")


def simulate(scenario, profile: str, kubernetes_version: str | None = None):
    """The simulated engine's outcome (embedded backend), with the VM/NIC bodies its fake stored.
    `kubernetes_version`: the real engine's API server version, given to the simulation unless the
    scenario sets its own (labels such as network-stateless-cni depend on it: provider v1.14.0
    pkg/providers/labels/labels.go)."""
    if kubernetes_version and not (scenario.given.get("cluster") or {}).get("kubernetesVersion"):
        given = copy.deepcopy(scenario.given)
        given.setdefault("cluster", {})["kubernetesVersion"] = kubernetes_version.lstrip("v")
        scenario = dataclasses.replace(scenario, given=given)
    cluster = EmbeddedBackend().start()
    try:
        return run(scenario, profile, cluster, record_bodies=True)
    finally:
        cluster.close()


def _flatten(obj, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _normalized(body: dict, names: list[str]) -> dict[str, object]:
    flat = {}
    for k, v in _flatten(body).items():
        if VOLATILE.search(k):
            continue
        if isinstance(v, str):
            for n in filter(None, names):
                v = re.sub(rf"(?<![\w-]){re.escape(n)}(?![\w-])", "<name>", v, flags=re.I)
            v = re.sub(r"/subscriptions/[0-9a-f-]+/resourceGroups/[^/]+", "/subscriptions/<sub>/resourceGroups/<rg>", v, flags=re.I)
        flat[k] = v
    return flat


def body_diff(sim: dict | None, real: dict | None, sim_names: list[str], real_names: list[str]) -> list[dict]:
    if sim is None or real is None:
        return [{"field": "(body)", "simulated": "present" if sim else None, "real": "present" if real else None}]
    a, b = _normalized(sim, sim_names), _normalized(real, real_names)
    return [{"field": k, "simulated": a.get(k), "real": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _node_view(n) -> dict:
    return {"instanceType": n.instance_type, "zone": n.zone, "capacityType": n.capacity_type,
            "labels": dict(n.labels), "kubeletNodeLabels": dict(n.kubelet_node_labels),
            "taints": sorted(f"{t['key']}={t.get('value', '')}:{t.get('effect')}" for t in n.taints),
            "kubeletRefused": n.kubelet_refused is not None}


def _summary(r) -> dict:
    return {"nodes": len(r.nodes), "nodeClaimsLaunched": sum(1 for c in r.nodeclaims if c.launched),
            "vms": len(r.azure.get("vms") or []), "nics": len(r.azure.get("nics") or []), "runaway": r.runaway,
            "pods": {k: (p.state if p.owner_kind != "Deployment" else f"{p.owner_name}:{p.state}")
                     for k, p in sorted(r.pods.items()) if p.owner_kind != "DaemonSet"},
            "nodePools": {k: {"accepted": not np.rejected or np.stage == "runtime", "ready": np.ready, "stage": np.stage}
                          for k, np in sorted(r.nodepools.items())}}


def _dict_diff(a, b, path: str, out: list[dict]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _dict_diff(a.get(k), b.get(k), f"{path}.{k}" if path else k, out)
    elif a != b:
        out.append({"field": path, "simulated": a, "real": b})


ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone", "topology.disk.csi.azure.com/zone")


def _noise(field: str, sim_node, real_node) -> str | None:
    """Why a differing node field is expected to differ between any two runs, or None. Names are
    random on both sides; an unpinned zone is a random pick among equal offerings (provider v1.14.0
    pkg/providers/instance/offerings: the launch samples the cheapest compatible offerings)."""
    if field.endswith("labels.kubernetes.io/hostname"):
        return "node names are random"
    zone_field = field.endswith(".zone") or any(field.endswith(f"labels.{k}") for k in ZONE_LABELS)
    if zone_field and sim_node is not None and real_node is not None:
        zone_req = next((r for r in real_node.nodeclaim_requirements if r.get("key") == "topology.kubernetes.io/zone"), None)
        pinned = zone_req is not None and zone_req.get("operator") == "In" and len(zone_req.get("values") or []) == 1
        if not pinned:
            return "zone not pinned by the NodeClaim: each engine picks among equal offerings"
    return None


def outcome_view(r) -> dict:
    """A run's outcome without what differs between any two runs (node names, zones no requirement
    pinned): what `harness bisect` compares between commits."""
    nodes = []
    for n in _paired(r):
        view = _node_view(n)
        view["labels"] = {k: v for k, v in view["labels"].items()
                          if _noise(f"labels.{k}", n, n) is None}
        if _noise(".zone", n, n):
            view.pop("zone")
            view["labels"] = {k: v for k, v in view["labels"].items() if k not in ZONE_LABELS}
        nodes.append(view)
    return {**_summary(r), "nodes": nodes}


def _paired(r) -> list:
    """Nodes in an order both engines share: by the workload pods they carry (pod names, or the
    owning Deployment's name, since replica names are random), then by the launch order."""
    def key(n):
        owners = sorted((r.pods[k].owner_name if r.pods[k].owner_kind == "Deployment" else r.pods[k].name)
                        for k in n.pods if k in r.pods and r.pods[k].owner_kind != "DaemonSet")
        return (owners, n.nodepool, n.index)
    return sorted(r.nodes, key=key)


def compare(sim, real) -> dict:
    """Everything the report says about one scenario x profile."""
    entry = {"scenario": sim.scenario.name, "file": os.path.relpath(sim.scenario.file), "profile": sim.profile,
             "simulated": verdict(sim), "real": verdict(real), "realSkipped": real.skipped,
             "realMismatches": [m.render() for m in real.mismatches],
             "notApplicable": [n.render() for n in real.not_applicable],
             "seconds": {"simulated": round(sim.seconds, 3), "real": round(real.seconds, 1)},
             "differences": [], "noise": [], "vmBodies": [], "nicBodies": []}
    if real.skipped:
        return entry
    diffs: list[dict] = []
    _dict_diff(_summary(sim.result), _summary(real.result), "", diffs)
    sim_nodes, real_nodes = _paired(sim.result), _paired(real.result)
    for i in range(max(len(sim_nodes), len(real_nodes))):
        a = _node_view(sim_nodes[i]) if i < len(sim_nodes) else None
        b = _node_view(real_nodes[i]) if i < len(real_nodes) else None
        if a is None or b is None:
            diffs.append({"field": f"nodes[{i}]", "simulated": a and a["instanceType"], "real": b and b["instanceType"]})
            continue
        node_diffs: list[dict] = []
        _dict_diff(a, b, f"nodes[{i}]", node_diffs)
        for d in node_diffs:
            why = _noise(d["field"], sim_nodes[i], real_nodes[i])
            if why:
                entry["noise"].append({**d, "why": why})
            else:
                diffs.append(d)
        # both sides as the fake stored them (the same normalization applies to both)
        sv, rv = sim_nodes[i].vm_name, real_nodes[i].vm_name
        entry["vmBodies"].append({"node": i, "differences": body_diff(
            sim.vm_bodies.get(sv), real.vm_bodies.get(rv), [sv], [rv])})
        snic = next((n for n in sim.nic_bodies if sv.lower() in n.lower()), None)
        rnic = next((n for n in real.nic_bodies if rv.lower() in n.lower()), None)
        entry["nicBodies"].append({"node": i, "differences": body_diff(
            sim.nic_bodies.get(snic), real.nic_bodies.get(rnic), [sv, snic or ""], [rv, rnic or ""])})
    entry["differences"] = diffs
    return entry


def write_report(pairs, out_dir: Path, seconds: float = 0.0) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = [compare(s, r) for s, r in pairs]
    ran = [e for e in entries if not e["realSkipped"]]
    agree = [e for e in ran if not e["differences"] and e["simulated"] == e["real"]]
    totals = {"runs": len(entries), "ranOnReal": len(ran), "skippedOnReal": len(entries) - len(ran),
              "agree": len(agree), "differ": len(ran) - len(agree),
              "realPass": sum(1 for e in ran if e["real"] == "pass"),
              "realFail": sum(1 for e in ran if e["real"] == "FAIL"), "seconds": round(seconds, 1),
              "generated": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    js = out_dir / "conformance.json"
    js.write_text(json.dumps({"totals": totals, "entries": entries}, indent=2, default=str))
    md = out_dir / "conformance.md"
    md.write_text(render_markdown(totals, entries))
    return md, js


def _cell(v) -> str:
    s = json.dumps(v, default=str) if not isinstance(v, str) else v
    return s.replace("|", "\\|")[:160]


def render_markdown(totals: dict, entries: list[dict]) -> str:
    lines = ["# Conformance: simulated loop vs the real Karpenter-on-Azure controller", "",
             f"{totals['runs']} run(s): {totals['ranOnReal']} on the real engine ({totals['skippedOnReal']} skipped), "
             f"{totals['agree']} agree, {totals['differ']} differ; real verdicts: {totals['realPass']} pass, "
             f"{totals['realFail']} fail. Generated {totals['generated']} in {totals['seconds']}s.", "",
             "Fields that differ by construction (random names, unpinned zones) are listed under `noise` in the JSON, not here.", "",
             "| scenario | profile | simulated | real | differing fields | real s |", "|---|---|---|---|---|---|"]
    for e in entries:
        real = e["real"] + (f" ({e['realSkipped']})" if e["realSkipped"] else "")
        lines.append(f"| {e['scenario']} | {e['profile']} | {e['simulated']} | {_cell(real)} | "
                     f"{len(e['differences'])} | {e['seconds']['real']} |")
    for e in entries:
        if not (e["differences"] or e["realMismatches"] or any(b["differences"] for b in e["vmBodies"] + e["nicBodies"])):
            continue
        lines += ["", f"## {e['scenario']} [{e['profile']}]", "", f"`{e['file']}`", ""]
        if e["realMismatches"]:
            lines += ["Real-engine expectation failures:", ""] + [f"- {m}" for m in e["realMismatches"]] + [""]
        if e["differences"]:
            lines += ["| field | simulated | real |", "|---|---|---|"]
            lines += [f"| {d['field']} | {_cell(d['simulated'])} | {_cell(d['real'])} |" for d in e["differences"]]
        for kind in ("vmBodies", "nicBodies"):
            for b in e[kind]:
                if b["differences"]:
                    lines += ["", f"{'VM' if kind == 'vmBodies' else 'NIC'} body of node {b['node']}:", "",
                              "| field | simulated | real |", "|---|---|---|"]
                    lines += [f"| {d['field']} | {_cell(d['simulated'])} | {_cell(d['real'])} |" for d in b["differences"]]
    return "\n".join(lines) + "\n"
