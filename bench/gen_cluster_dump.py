"""A seeded customer-sized cluster dump, shaped as `kubectl get ... -o yaml` prints it, for `harness new`.

    python bench/gen_cluster_dump.py --nodes 1000 [--pods 10000] [--shape mixed|ticket] [--seed 1] [--out F]
                                     [--format yaml|json]

What a support ticket from a production cluster sends (`kubectl get namespaces,nodepools,aksnodeclasses,
nodeclaims,nodes,deployments,replicasets,daemonsets,pods,poddisruptionbudgets -A -o yaml`): NodePools and
their AKSNodeClasses; one NodeClaim per Karpenter node, its Node (a few NodeClaims launched but not yet
registered, without one); Deployments with their ReplicaSets and pods, DaemonSets with one pod per node,
PDBs over some Deployments, a few pods pending. The objects carry what the API server adds (uid,
resourceVersion, managedFields, defaults, status), copied from the dumps tools/make_dumps.py made on a real
kube-apiserver (tests/dump/dumps/real/), so `harness new` strips and reads them as it would a customer's.

`--shape ticket` is issue 65's report: one NodePool of Standard_D4s_v5 with `consolidateAfter: 0s` and two
500m pods on every node. `--shape mixed` (the default): three NodePools (general D, memory E, compute F
series, three sizes each), pods of several sizes packed onto nodes 20-90% full, PDBs, two DaemonSets.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from datetime import datetime, timedelta, timezone

import yaml

SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
NODE_RG = "mc_rg_shop_{region}"
DUMP_TIME = datetime(2026, 11, 20, 12, 0, 0, tzinfo=timezone.utc)
# vCPU, memory GiB of the sizes a NodePool names; allocatable is what AKS's kube-reserved and eviction
# threshold leave (close enough: `harness new` does not read it, the catalog says a size's capacity)
SIZES = {"Standard_D2s_v5": (2, 8), "Standard_D4s_v5": (4, 16), "Standard_D8s_v5": (8, 32),
         "Standard_D16s_v5": (16, 64), "Standard_E4s_v5": (4, 32), "Standard_E8s_v5": (8, 64),
         "Standard_E16s_v5": (16, 128), "Standard_F4s_v2": (4, 8), "Standard_F8s_v2": (8, 16),
         "Standard_F16s_v2": (16, 32)}
POOLS = {"mixed": [("general", ("Standard_D4s_v5", "Standard_D8s_v5", "Standard_D16s_v5"), "0s", 0.6),
                   ("memory", ("Standard_E4s_v5", "Standard_E8s_v5", "Standard_E16s_v5"), "5m", 0.25),
                   ("compute", ("Standard_F4s_v2", "Standard_F8s_v2", "Standard_F16s_v2"), "30s", 0.15)],
         "ticket": [("default", ("Standard_D4s_v5",), "0s", 1.0)]}
# (cpu m, memory Mi) of an app pod; the ticket's pods are 500m
POD_SIZES = [(100, 128), (250, 256), (500, 512), (500, 1024), (1000, 2048), (2000, 4096)]
NAMESPACES = ("shop", "payments", "search", "batch")
DAEMONSETS = (("node-exporter", 50, 64), ("log-agent", 100, 200))
ALPHANUM = "bcdfghjklmnpqrstvwxz2456789"


class Gen:
    def __init__(self, seed: int, region: str):
        self.rng = random.Random(seed)
        self.region = region
        self.rv = 1000
        self.used: set[str] = set()

    def uid(self) -> str:
        h = "%032x" % self.rng.getrandbits(128)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice(ALPHANUM) for _ in range(n))

    def unique(self, prefix: str) -> str:
        """`prefix` and a random suffix no earlier name took (5,000 names of 27^5 collide more often than not;
        a draw is repeated only on a collision, so a dump without one is the same as before)."""
        while True:
            name = prefix + self.suffix()
            if name not in self.used:
                self.used.add(name)
                return name

    def meta(self, name: str, created: datetime, namespace: str | None = None, manager: str = "kubectl",
             **extra) -> dict:
        self.rv += 1
        m: dict = {"creationTimestamp": ts(created), "generation": 1}
        m.update(extra)
        m["managedFields"] = [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}},
                               "manager": manager, "operation": "Update", "time": ts(created)}]
        m["name"] = name
        if namespace:
            m["namespace"] = namespace
        m["resourceVersion"] = str(self.rv)
        m["uid"] = self.uid()
        return m


def ts(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def template_hash(name: str) -> str:
    return "".join(ALPHANUM[b % len(ALPHANUM)] for b in hashlib.sha256(name.encode()).digest()[:10])


def container(name: str, image: str, cpu: int, mem: int) -> dict:
    return {"image": image, "imagePullPolicy": "IfNotPresent", "name": name,
            "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}


def pod_spec(c: dict) -> dict:
    return {"containers": [c], "dnsPolicy": "ClusterFirst", "restartPolicy": "Always",
            "schedulerName": "default-scheduler", "securityContext": {}, "terminationGracePeriodSeconds": 30}


def nodepool(g: Gen, name: str, sizes: tuple[str, ...], after: str) -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
            "metadata": g.meta(name, DUMP_TIME - timedelta(days=30), manager="helm"),
            "spec": {"disruption": {"budgets": [{"nodes": "10%"}], "consolidateAfter": after,
                                    "consolidationPolicy": "WhenEmptyOrUnderutilized"},
                     "template": {"spec": {
                         "expireAfter": "720h",
                         "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": name},
                         "requirements": [
                             {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                             {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(sizes)}]}}},
            "status": {"conditions": [{"lastTransitionTime": ts(DUMP_TIME - timedelta(days=30)), "message": "",
                                       "observedGeneration": 1, "reason": "Ready", "status": "True",
                                       "type": "Ready"}]}}


def nodeclass(g: Gen, name: str) -> dict:
    return {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
            "metadata": g.meta(name, DUMP_TIME - timedelta(days=30), manager="helm"),
            "spec": {"imageFamily": "Ubuntu2204", "osDiskSizeGB": 128}}


def capacity(size: str) -> tuple[dict, dict]:
    cpu, gib = SIZES[size]
    cap = {"cpu": str(cpu), "ephemeral-storage": "128G", "memory": f"{gib * 1024 * 1024 - 402000}Ki", "pods": "110"}
    alloc = {"cpu": f"{cpu * 1000 - 140 - 20 * cpu}m", "memory": f"{int(gib * 1024 * 1024 * 0.78)}Ki", "pods": "110"}
    return cap, alloc


def node_pair(g: Gen, pool: str, size: str, zone: int, created: datetime, registered: bool) -> tuple[dict, dict | None]:
    claim = g.unique(f"{pool}-")
    name = f"aks-{claim}"
    labels = {"karpenter.azure.com/sku-name": size, "karpenter.sh/capacity-type": "on-demand",
              "karpenter.sh/nodepool": pool, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
              "node.kubernetes.io/instance-type": size, "topology.kubernetes.io/region": g.region,
              "topology.kubernetes.io/zone": f"{g.region}-{zone}"}
    provider_id = (f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/{NODE_RG.format(region=g.region)}/"
                   f"providers/Microsoft.Compute/virtualMachines/{name}")
    cap, alloc = capacity(size)
    t = ts(created)
    kinds = ("Launched", "Registered", "Initialized", "Ready") if registered else ("Launched",)
    nc = {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
          "metadata": g.meta(claim, created, manager="karpenter", finalizers=["karpenter.sh/termination"],
                             labels=labels,
                             ownerReferences=[{"apiVersion": "karpenter.sh/v1", "blockOwnerDeletion": True,
                                               "kind": "NodePool", "name": pool, "uid": g.uid()}]),
          "spec": {"expireAfter": "720h",
                   "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": pool},
                   "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [size]}],
                   "resources": {"requests": {"cpu": "150m", "memory": "264Mi", "pods": "3"}}},
          "status": {"allocatable": alloc, "capacity": cap,
                     "conditions": [{"lastTransitionTime": t, "message": "", "reason": k, "status": "True", "type": k}
                                    for k in kinds],
                     "imageID": "", "providerID": provider_id, **({"nodeName": name} if registered else {})}}
    if not registered:
        return nc, None
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": g.meta(name, created, manager="kubelet", finalizers=["karpenter.sh/termination"],
                               labels={**labels, "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
                                       "kubernetes.azure.com/cluster": NODE_RG.format(region=g.region),
                                       "kubernetes.io/hostname": name}),
            "spec": {"providerID": provider_id},
            "status": {"allocatable": alloc, "capacity": cap,
                       "conditions": [{"lastHeartbeatTime": ts(DUMP_TIME - timedelta(seconds=30)),
                                       "lastTransitionTime": t, "message": "kubelet is posting ready status",
                                       "reason": "KubeletReady", "status": "True", "type": "Ready"}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "containerd://1.7.27",
                                    "kernelVersion": "5.15.0-1079-azure", "kubeProxyVersion": "",
                                    "kubeletVersion": "v1.33.3", "machineID": "", "operatingSystem": "linux",
                                    "osImage": "Ubuntu 22.04.5 LTS", "systemUUID": ""}}}
    return nc, node


def pod(g: Gen, name: str, namespace: str, labels: dict, owner: tuple[str, str, str], c: dict,
        node: str | None, created: datetime, extra_spec: dict | None = None) -> dict:
    spec = {**pod_spec(c), "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
            "serviceAccount": "default", "serviceAccountName": "default",
            "tolerations": [{"effect": "NoExecute", "key": k, "operator": "Exists", "tolerationSeconds": 300}
                            for k in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")],
            **(extra_spec or {})}
    t = ts(created)
    if node:
        spec["nodeName"] = node
        status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": t, "status": "True", "type": k}
                                 for k in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                  "hostIP": "10.224.0.4", "phase": "Running", "podIP": "10.244.1.7", "podIPs": [{"ip": "10.244.1.7"}],
                  "qosClass": "Burstable", "startTime": t}
    else:
        status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": t, "message": "0/3 nodes are available",
                                  "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}],
                  "phase": "Pending", "qosClass": "Burstable"}
    kind, owner_name, owner_uid = owner
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": g.meta(name, created, namespace, manager="kube-controller-manager",
                               generateName=name[:name.rfind("-") + 1], labels=labels,
                               ownerReferences=[{"apiVersion": "apps/v1", "blockOwnerDeletion": True,
                                                 "controller": True, "kind": kind, "name": owner_name,
                                                 "uid": owner_uid}]),
            "spec": spec, "status": status}


def generate(nodes: int, pods: int | None, shape: str, seed: int, region: str, pending: float) -> dict:
    g = Gen(seed, region)
    items: list[dict] = []
    pools = POOLS[shape]
    for ns in NAMESPACES if shape == "mixed" else ():
        items.append({"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {**g.meta(ns, DUMP_TIME - timedelta(days=60)),
                                   "labels": {"kubernetes.io/metadata.name": ns}},
                      "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    for name, sizes, after, _ in pools:
        items.append(nodepool(g, name, sizes, after))
        items.append(nodeclass(g, name))
    # the nodes: each with its free cpu/memory (m, Mi) to pack pods into
    node_objs: list[tuple[dict, dict | None]] = []
    free: list[list] = []               # [node name, free cpu m, free mem Mi, target fill]
    for i in range(nodes):
        name, sizes, _, _ = pools[0] if len(pools) == 1 else \
            g.rng.choices(pools, weights=[w for *_, w in pools])[0]
        size = g.rng.choice(sizes)
        created = DUMP_TIME - timedelta(minutes=g.rng.randint(30, 60 * 24 * 14))
        registered = shape == "ticket" or g.rng.random() > 0.005
        nc, node = node_pair(g, name, size, 1 + i % 3, created, registered)
        node_objs.append((nc, node))
        if node is not None:
            cpu, gib = SIZES[size]
            if shape == "ticket":         # room for exactly the ticket's two 500m pods
                free.append([node["metadata"]["name"], 1000, 1024, created])
                continue
            fill = g.rng.uniform(0.2, 0.9)
            free.append([node["metadata"]["name"], int((cpu * 1000 - 140 - 20 * cpu) * fill) - 150,
                         int(gib * 1024 * 0.78 * fill) - 264, created])
    for nc, node in node_objs:
        items.append(nc)
    for nc, node in node_objs:
        if node is not None:
            items.append(node)
    # the workloads
    if shape == "ticket":
        target = pods if pods is not None else 2 * len(free)
        deployments = [("default", f"app-{i:04d}", (500, 512), 2) for i in range(max(1, target // 2))]
    else:
        target = pods if pods is not None else 10 * nodes
        deployments, left, i = [], target, 0
        while left > 0:
            replicas = min(left, g.rng.choice((1, 2, 3, 5, 8, 12, 20, 40)))
            ns = g.rng.choice(NAMESPACES)
            deployments.append((ns, f"{ns}-svc-{i:04d}", g.rng.choice(POD_SIZES), replicas))
            left -= replicas
            i += 1
    rs_items, pod_items, pdb_items = [], [], []
    cursor = 0
    for ns, name, (cpu, mem), replicas in deployments:
        created = DUMP_TIME - timedelta(days=g.rng.randint(1, 20))
        h = template_hash(name)
        labels = {"app": name}
        tmpl_c = container(name, f"acr.example.io/{name}:1.0", cpu, mem)
        dep_uid, rs_uid = g.uid(), g.uid()
        dep = {"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": g.meta(name, created, ns, annotations={"deployment.kubernetes.io/revision": "1"}),
               "spec": {"progressDeadlineSeconds": 600, "replicas": replicas, "revisionHistoryLimit": 10,
                        "selector": {"matchLabels": labels},
                        "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                                     "type": "RollingUpdate"},
                        "template": {"metadata": {"labels": labels}, "spec": pod_spec(tmpl_c)}},
               "status": {"availableReplicas": replicas, "observedGeneration": 1, "readyReplicas": replicas,
                          "replicas": replicas, "updatedReplicas": replicas}}
        dep["metadata"]["uid"] = dep_uid
        items.append(dep)
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": g.meta(f"{name}-{h}", created, ns,
                                 annotations={"deployment.kubernetes.io/desired-replicas": str(replicas),
                                              "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                                              "deployment.kubernetes.io/revision": "1"},
                                 labels={**labels, "pod-template-hash": h},
                                 ownerReferences=[{"apiVersion": "apps/v1", "blockOwnerDeletion": True,
                                                   "controller": True, "kind": "Deployment", "name": name,
                                                   "uid": dep_uid}]),
              "spec": {"replicas": replicas, "selector": {"matchLabels": {**labels, "pod-template-hash": h}},
                       "template": {"metadata": {"labels": {**labels, "pod-template-hash": h}},
                                    "spec": pod_spec(tmpl_c)}},
              "status": {"availableReplicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 1,
                         "readyReplicas": replicas, "replicas": replicas}}
        rs["metadata"]["uid"] = rs_uid
        rs_items.append(rs)
        for _ in range(replicas):
            where = None
            if g.rng.random() >= pending:
                # first fit from a rotating cursor: spreads a Deployment's replicas over nodes
                for step in range(len(free)):
                    slot = free[(cursor + step) % len(free)]
                    if slot[1] >= cpu and slot[2] >= mem:
                        slot[1] -= cpu
                        slot[2] -= mem
                        where = slot[0]
                        cursor = (cursor + step + 1) % len(free)
                        break
            pod_items.append(pod(g, g.unique(f"{name}-{h}-"), ns, {**labels, "pod-template-hash": h},
                                 ("ReplicaSet", f"{name}-{h}", rs_uid), container(name, tmpl_c["image"], cpu, mem),
                                 where, created))
        if shape == "mixed" and replicas >= 3 and g.rng.random() < 0.3:
            budget = {"maxUnavailable": 1} if g.rng.random() < 0.5 else {"minAvailable": "50%"}
            pdb_items.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                              "metadata": g.meta(name, created, ns),
                              "spec": {**budget, "selector": {"matchLabels": labels}},
                              "status": {"currentHealthy": replicas, "desiredHealthy": replicas - 1,
                                         "disruptionsAllowed": 1, "expectedPods": replicas, "observedGeneration": 1}})
    ds_pods = []
    for ds_name, cpu, mem in DAEMONSETS if shape == "mixed" else ():
        created = DUMP_TIME - timedelta(days=40)
        labels = {"app": ds_name}
        c = container(ds_name, f"mcr.microsoft.com/oss/{ds_name}:1.0", cpu, mem)
        ds_uid = g.uid()
        ready = sum(1 for _, n in node_objs if n is not None)
        ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
              "metadata": g.meta(ds_name, created, "kube-system", annotations={"deprecated.daemonset.template.generation": "1"}),
              "spec": {"revisionHistoryLimit": 10, "selector": {"matchLabels": labels},
                       "template": {"metadata": {"labels": labels},
                                    "spec": {**pod_spec(c), "tolerations": [{"operator": "Exists"}]}},
                       "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                                          "type": "RollingUpdate"}},
              "status": {"currentNumberScheduled": ready, "desiredNumberScheduled": ready, "numberAvailable": ready,
                         "numberMisscheduled": 0, "numberReady": ready, "observedGeneration": 1,
                         "updatedNumberScheduled": ready}}
        ds["metadata"]["uid"] = ds_uid
        items.append(ds)
        for _, node in node_objs:
            if node is None:
                continue
            nname = node["metadata"]["name"]
            affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [nname]}]}]}}}
            ds_pods.append(pod(g, g.unique(f"{ds_name}-"), "kube-system",
                               {**labels, "controller-revision-hash": template_hash(ds_name)[:10],
                                "pod-template-generation": "1"},
                               ("DaemonSet", ds_name, ds_uid), c, nname, created,
                               {"affinity": affinity, "tolerations": [{"operator": "Exists"}]}))
    items += rs_items + pod_items + ds_pods + pdb_items
    kinds = "namespaces,nodepools,aksnodeclasses,nodeclaims,nodes,deployments,replicasets,daemonsets,pods,pdb"
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items,
            "_header": f"# Made by bench/gen_cluster_dump.py (seeded, not a real cluster): {shape}, {nodes} nodes, "
                       f"{len(pod_items) + len(ds_pods)} pods\n# `kubectl get {kinds} -A -o yaml`\n"}


def write(doc: dict, out, fmt: str = "yaml") -> None:
    header = doc.pop("_header")
    if fmt == "json":
        # `kubectl get -o json`: four-space indent, keys in the same order as the YAML form (kubectl sorts
        # both), no comment (JSON has none); the same objects, so `harness new` makes the same scenario
        json.dump(doc, out, indent=4, ensure_ascii=False)
        out.write("\n")
        return
    out.write(header)
    yaml.dump(doc, out, Dumper=_KubectlDumper, sort_keys=False, default_flow_style=False, width=120)


class _KubectlDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """The C emitter when PyYAML has it (50,000 pods are ~1 GB of Python objects to print), with no anchors
    and aliases: the generator shares one object between pods, which PyYAML would print once and alias,
    where `kubectl get -o yaml` prints every object in full (and `harness new` refuses a 5,000-node dump
    whose aliases expand past its limit, harness/scenario/yamlsource.py MAX_ALIAS_NODES)."""

    def ignore_aliases(self, data) -> bool:
        return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100, help="Karpenter nodes (NodeClaims)")
    ap.add_argument("--pods", type=int, default=None,
                    help="app pods (default: 10 per node; --shape ticket: 2 per node), DaemonSet pods besides")
    ap.add_argument("--shape", choices=sorted(POOLS), default="mixed")
    ap.add_argument("--pending", type=float, default=None,
                    help="share of app pods left pending (default 0.005 mixed, 0 ticket)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--region", default="eastus")
    ap.add_argument("--out", default=None, help="file to write (default: stdout)")
    ap.add_argument("--format", choices=("yaml", "json"), default="yaml",
                    help="`kubectl get -o yaml` or `-o json` (the same objects)")
    args = ap.parse_args(argv)
    pending = args.pending if args.pending is not None else (0.005 if args.shape == "mixed" else 0.0)
    doc = generate(args.nodes, args.pods, args.shape, args.seed, args.region, pending)
    if args.out:
        with open(args.out, "w") as f:
            write(doc, f, args.format)
    else:
        write(doc, sys.stdout, args.format)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
