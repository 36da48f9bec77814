"""Customer dumps made on a real API server: `kubectl get -o yaml`-shaped `kind: List` files of clusters in
the states support tickets show (a node draining behind a PDB, a drifted NodeClass, an expiring node, a
dump without Node objects, a missing AKSNodeClass, a region without a catalog, a Job and a CronJob).

Each case runs on the `local` backend (kube-apiserver and etcd, with kube-controller-manager's Deployment,
ReplicaSet, Job, CronJob, disruption and service-account controllers): its objects are created through the
API as Karpenter, the kubelet and kube-scheduler would write them (NodeClaim and Node status, pod bindings,
the disrupted taint and the finalizer-held deletion), so uids, resourceVersions, managedFields, defaults,
creation and deletion timestamps are the server's own; then every object is listed and written as a List,
the way `kubectl get ... -o yaml --show-managed-fields` prints it (kubectl leaves managedFields out by default). No Karpenter controller runs: the state is set, not reached.

    python3 tools/make_dumps.py [--out tests/dump/dumps/real] [CASE ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.backends.kinds import KINDS  # noqa: E402
from harness.backends.local import LocalBackend  # noqa: E402

KCM_CONTROLLERS = ("deployment-controller", "replicaset-controller", "job-controller", "cronjob-controller",
                   "disruption-controller", "serviceaccount-controller", "serviceaccount-token-controller",
                   "garbage-collector-controller")
# what `kubectl get` lists for a ticket, in its order; a case leaves some out (what the customer did not send)
DUMP_KINDS = ("NodePool", "AKSNodeClass", "NodeClaim", "Node", "Deployment", "Job", "CronJob", "Pod",
              "PodDisruptionBudget", "Event")
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
HEADER = ("# Made by tools/make_dumps.py on a real kube-apiserver (local backend): {what}\n"
          "# `kubectl get {kinds} -o yaml`\n")


def now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class Case:
    """One ticket's cluster, built through the API."""

    def __init__(self, cluster, region: str = "eastus"):
        self.c = cluster
        self.region = region

    # -- Karpenter's objects ----------------------------------------------------------------------
    def nodeclass(self, name: str = "web", **spec) -> None:
        self.c.create({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                       "metadata": {"name": name}, "spec": {"imageFamily": "Ubuntu2204", **spec}})

    def nodepool(self, name: str = "web", disruption: dict | None = None, expire: str = "720h",
                 sizes: tuple[str, ...] = ("Standard_D4s_v5",)) -> None:
        self.c.create({"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name},
                       "spec": {"disruption": disruption or {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                                                             "consolidateAfter": "0s", "budgets": [{"nodes": "10%"}]},
                                "template": {"spec": {
                                    "expireAfter": expire,
                                    "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "web"},
                                    "requirements": [
                                        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
                                        {"key": "node.kubernetes.io/instance-type", "operator": "In",
                                         "values": list(sizes)}]}}}})

    def node(self, claim: str, zone: int = 1, size: str = "Standard_D4s_v5", pool: str = "web",
             annotations: dict | None = None, drifted: str | None = None, node: bool = True) -> str:
        """A launched, registered, initialized NodeClaim and (node=True) its Node, as Karpenter and the
        kubelet leave them; the Node's name is the NodeClaim's `aks-` name."""
        name = f"aks-{claim}"
        labels = {"karpenter.sh/nodepool": pool, "karpenter.sh/capacity-type": "on-demand",
                  "node.kubernetes.io/instance-type": size, "kubernetes.io/arch": "amd64",
                  "kubernetes.io/os": "linux", "topology.kubernetes.io/region": self.region,
                  "topology.kubernetes.io/zone": f"{self.region}-{zone}", "karpenter.azure.com/sku-name": size}
        provider_id = (f"azure:///subscriptions/{SUBSCRIPTION}/resourceGroups/mc_rg_shop_{self.region}/providers/"
                       f"Microsoft.Compute/virtualMachines/{name}")
        nc = self.c.create({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                            "metadata": {"name": claim, "labels": labels, "finalizers": ["karpenter.sh/termination"],
                                         "annotations": annotations or {}},
                            "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "web"},
                                     "expireAfter": "720h",
                                     "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                                       "values": [size]}]}})
        t = now()
        conds = [{"type": k, "status": "True", "reason": k, "message": "", "lastTransitionTime": t}
                 for k in ("Launched", "Registered", "Initialized", "Ready")]
        if drifted:
            conds.append({"type": "Drifted", "status": "True", "reason": drifted, "message": "",
                          "lastTransitionTime": t})
        cap = {"cpu": "4", "memory": "16374584Ki", "pods": "110", "ephemeral-storage": "128G"}
        nc["status"] = {"nodeName": name, "providerID": provider_id, "imageID": "", "conditions": conds,
                        "capacity": cap, "allocatable": {"cpu": "3860m", "memory": "12880184Ki", "pods": "110"}}
        self.c.update_status(nc)
        if node:
            n = self.c.create({"apiVersion": "v1", "kind": "Node",
                               "metadata": {"name": name, "finalizers": ["karpenter.sh/termination"],
                                            "labels": {**labels, "kubernetes.io/hostname": name,
                                                       "karpenter.sh/registered": "true",
                                                       "karpenter.sh/initialized": "true",
                                                       "kubernetes.azure.com/cluster": f"mc_rg_shop_{self.region}"},
                                            "annotations": annotations or {}},
                               "spec": {"providerID": provider_id}})
            n["status"] = {"capacity": cap, "allocatable": {"cpu": "3860m", "memory": "12880184Ki", "pods": "110"},
                           "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                           "message": "kubelet is posting ready status", "lastHeartbeatTime": t,
                                           "lastTransitionTime": t}],
                           "nodeInfo": {"kubeletVersion": "v1.33.3", "architecture": "amd64", "operatingSystem": "linux",
                                        "bootID": "", "containerRuntimeVersion": "containerd://1.7.27",
                                        "kernelVersion": "5.15.0", "kubeProxyVersion": "", "machineID": "",
                                        "osImage": "Ubuntu 22.04.5 LTS", "systemUUID": ""}}
            self.c.update_status(n)
        return name

    # -- workloads --------------------------------------------------------------------------------
    def deployment(self, name: str, replicas: int, cpu: str = "1", annotations: dict | None = None) -> None:
        self.c.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
                       "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                                "template": {"metadata": {"labels": {"app": name}, "annotations": annotations or {}},
                                             "spec": {"containers": [{"name": name, "image": "nginx:1.27",
                                                                      "resources": {"requests": {"cpu": cpu,
                                                                                                 "memory": "1Gi"}}}]}}}})

    def pod(self, name: str, cpu: str = "1", annotations: dict | None = None) -> None:
        self.c.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                      "annotations": annotations or {}},
                       "spec": {"containers": [{"name": name, "image": "busybox:1.36",
                                                "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}]}})

    def pods_of(self, prefix: str, want: int, timeout: float = 30.0) -> list[dict]:
        """The pods whose name starts with `prefix` once `want` exist (a controller makes them)."""
        deadline = time.monotonic() + timeout
        while True:
            pods = sorted((p for p in self.c.list("Pod", "default") if p["metadata"]["name"].startswith(prefix)),
                          key=lambda p: p["metadata"]["name"])
            if len(pods) >= want or time.monotonic() > deadline:
                return pods
            time.sleep(0.1)

    def run_on(self, pods: list[dict], node: str) -> None:
        """kube-scheduler's binding, then the kubelet's Running status."""
        for p in pods:
            self.c.bind(p, node)
            p = self.c.get("Pod", p["metadata"]["name"], "default")
            t = now()
            p["status"] = {"phase": "Running", "startTime": t, "hostIP": "10.224.0.4", "podIP": "10.244.1.7",
                           "conditions": [{"type": k, "status": "True", "lastProbeTime": None, "lastTransitionTime": t}
                                          for k in ("PodScheduled", "Initialized", "ContainersReady", "Ready")]}
            self.c.update_status(p)

    def unschedulable(self, name: str, message: str) -> None:
        """A pod no node fits: kube-scheduler's condition, and Karpenter's FailedScheduling event."""
        p = self.c.get("Pod", name, "default")
        t = now()
        p["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                             "reason": "Unschedulable", "lastProbeTime": None,
                                                             "lastTransitionTime": t}]}
        self.c.update_status(p)
        self.c.create({"apiVersion": "v1", "kind": "Event",
                       "metadata": {"name": f"{name}.karpenter", "namespace": "default"},
                       "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": name, "namespace": "default",
                                          "uid": p["metadata"]["uid"]},
                       "reason": "FailedScheduling", "message": message, "type": "Warning",
                       "source": {"component": "karpenter"}, "firstTimestamp": t, "lastTimestamp": t, "count": 1})

    def delete_node(self, node: str, claim: str) -> None:
        """Karpenter's termination as it stands while a drain waits: the disrupted taint, then the
        NodeClaim and Node deleted and held by their finalizer (a few seconds after their creation, so the
        dump's deletionTimestamp is its own time)."""
        time.sleep(3)
        n = self.c.get("Node", node)
        n["spec"]["taints"] = (n["spec"].get("taints") or []) + [{"key": "karpenter.sh/disrupted",
                                                                   "effect": "NoSchedule"}]
        self.c.update(n)
        self.c.delete("NodeClaim", claim)
        self.c.delete("Node", node)


# -- the cases ------------------------------------------------------------------------------------------
def drain_behind_pdb(k: Case) -> None:
    k.nodeclass()
    k.nodepool()
    node = k.node("web-a8f2k")
    k.deployment("api", 2)
    k.c.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "api", "namespace": "default"},
                "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "api"}}}})
    k.run_on(k.pods_of("api-", 2), node)
    k.delete_node(node, "web-a8f2k")


def drifted_nodeclass(k: Case) -> None:
    k.nodeclass()
    k.nodepool(disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h",
                           "budgets": [{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "10%"}]})
    node = k.node("web-d7r1f", annotations={"karpenter.azure.com/aksnodeclass-hash": "7261398123455519287",
                                            "karpenter.azure.com/aksnodeclass-hash-version": "v3"},
                  drifted="NodeClassDrift")
    k.pod("batch-runner")
    k.run_on(k.pods_of("batch-runner", 1), node)


def expiring_node(k: Case) -> None:
    k.nodeclass()
    k.nodepool(expire="10m", disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h",
                                         "budgets": [{"nodes": "10%"}]})
    node = k.node("web-e3x9p")
    k.pod("worker")
    k.run_on(k.pods_of("worker", 1), node)


def nodeclaims_without_nodes(k: Case) -> None:
    k.nodeclass()
    k.nodepool(disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "1h",
                           "budgets": [{"nodes": "10%"}]})
    k.c.update({**(np := k.c.get("NodePool", "web")), "spec": {**np["spec"], "limits": {"cpu": "8"}}})
    first, second = k.node("web-q2w3e", zone=1), k.node("web-r5t6y", zone=2)
    for name in ("ingest", "transform", "report"):
        k.pod(name, cpu="3")
    k.run_on(k.pods_of("ingest", 1), first)
    k.run_on(k.pods_of("transform", 1), second)
    k.unschedulable("report", "Failed to schedule pod, all available instance types exceed limits for nodepool "
                              "(NodePool=web)")


def missing_nodeclass(k: Case) -> None:
    k.nodeclass()
    k.nodepool()
    node = k.node("web-m4n5b")
    k.deployment("shop", 1)
    k.run_on(k.pods_of("shop-", 1), node)


def region_without_catalog(k: Case) -> None:
    k.nodeclass()
    k.nodepool()
    node = k.node("web-s6w7c", zone=3)
    k.pod("api")
    k.run_on(k.pods_of("api", 1), node)


def job_and_cronjob(k: Case) -> None:
    k.nodeclass()
    k.nodepool(disruption={"consolidationPolicy": "WhenEmpty", "consolidateAfter": "5m",
                           "budgets": [{"nodes": "10%"}]})
    node = k.node("web-j8b2t")
    spec = {"restartPolicy": "Never", "containers": [{"name": "work", "image": "busybox:1.36",
                                                      "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}]}
    k.c.create({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "reindex", "namespace": "default",
                             "annotations": {"harness.karpenter.azure.com/run-duration": "20m"}},
                "spec": {"completions": 1, "template": {"spec": spec}}})
    k.c.create({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
                "spec": {"schedule": "0 2 * * *", "concurrencyPolicy": "Forbid",
                         "jobTemplate": {"metadata": {"annotations": {"harness.karpenter.azure.com/run-duration": "1h"}},
                                         "spec": {"template": {"spec": spec}}}}})
    k.run_on(k.pods_of("reindex-", 1), node)


# name -> (build, region, the kinds the customer sent, what the file shows)
CASES = {
    "drain-behind-pdb": (drain_behind_pdb, "eastus", DUMP_KINDS,
                         "node aks-web-a8f2k is deleting (finalizer-held) while the PDB of `api` allows no "
                         "eviction"),
    "drifted-nodeclass": (drifted_nodeclass, "eastus", DUMP_KINDS,
                          "NodeClaim web-d7r1f is Drifted (NodeClassDrift, an older aksnodeclass-hash); the "
                          "Drifted budget is 0"),
    "expiring-node": (expiring_node, "eastus", DUMP_KINDS,
                      "the NodePool's expireAfter is 10m: node aks-web-e3x9p expires 10 minutes after its "
                      "creationTimestamp"),
    "nodeclaims-without-nodes": (nodeclaims_without_nodes, "eastus", tuple(k for k in DUMP_KINDS if k != "Node"),
                                 "two NodeClaims and their pods, no Node objects; `report` pending at the "
                                 "NodePool's cpu limit"),
    "missing-nodeclass": (missing_nodeclass, "eastus", tuple(k for k in DUMP_KINDS if k != "AKSNodeClass"),
                          "the NodePool's AKSNodeClass `web` was not sent"),
    "region-without-catalog": (region_without_catalog, "swedencentral", DUMP_KINDS,
                               "swedencentral (no bundled catalog), node in zone 3"),
    "job-and-cronjob": (job_and_cronjob, "eastus", DUMP_KINDS,
                        "Job `reindex` (its pod, made by the Job controller, runs on aks-web-j8b2t) and "
                        "CronJob `nightly`"),
}


def dump(cluster, kinds: tuple[str, ...]) -> dict:
    """Every object of `kinds` as `kubectl get -o yaml` prints them: a v1 List whose items carry their
    apiVersion and kind (a list answer leaves them out)."""
    items = []
    for kind in kinds:
        k = KINDS[kind]
        objs = cluster.list(kind, "default" if k.namespaced else None)
        for o in sorted(objs, key=lambda o: o["metadata"]["name"]):
            items.append({"apiVersion": k.api_version, "kind": kind,
                          **{key: v for key, v in o.items() if key not in ("apiVersion", "kind")}})
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "dump" / "dumps" / "real"))
    ap.add_argument("cases", nargs="*", metavar="CASE", help=", ".join(CASES))
    args = ap.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    backend = LocalBackend(controller_manager=True, kcm_controllers=KCM_CONTROLLERS, profile="upstream")
    with backend.start() as cluster:
        cluster.install_profile("upstream")
        for name in args.cases or list(CASES):
            build, region, kinds, what = CASES[name]
            cluster.reset()
            build(Case(cluster, region))
            time.sleep(1.0)          # the disruption controller's PDB status, the Job's status
            text = HEADER.format(what=what, kinds=",".join(KINDS[k].plural for k in kinds)) + \
                yaml.safe_dump(dump(cluster, kinds), sort_keys=False)
            (out / f"{name}.yaml").write_text(text)
            print(f"wrote {out / f'{name}.yaml'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
