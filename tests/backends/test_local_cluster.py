"""The local backend against a real kube-apiserver: the provider's CRDs judge NodePools with the
profile's CEL rules, NodeRestriction judges the kubelet path, and nothing outlives the cluster."""
from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from backend_manifests import node, nodeclaim, nodepool, pod

from harness.backends.base import KARPENTER, SCHEDULER, APIRejected, Identity
from harness.backends.local import LocalBackend, StartError
from harness.backends.procs import pid_alive

REPO = Path(__file__).resolve().parents[2]


def rejected(fn, *a, **kw) -> APIRejected:
    with pytest.raises(APIRejected) as ei:
        fn(*a, **kw)
    return ei.value


# -- CEL rules from the profile (karpenter-provider-azure v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml;
# github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml) -----------------------
def test_restricted_nodepool_label_rejected_upstream(cluster):
    e = rejected(cluster.create, nodepool("np", {"kubernetes.azure.com/agentpool": "x"}), KARPENTER)
    assert (e.status, e.reason) == (422, "Invalid")
    assert 'label domain "kubernetes.azure.com" is restricted' in e.message
    # k8s 1.36 prints CEL failures on maps without the value (older servers: 'Invalid value: "object": ...').
    assert e.message == ('NodePool.karpenter.sh "np" is invalid: spec.template.metadata.labels: '
                         'Invalid value: label domain "kubernetes.azure.com" is restricted')
    assert [(c.field, c.message) for c in e.causes] == [
        ("spec.template.metadata.labels", 'label domain "kubernetes.azure.com" is restricted')]
    assert cluster.get("NodePool", "np") is None


def test_allowed_labels_accepted_upstream(cluster):
    out = cluster.create(nodepool("np", {"kubernetes.azure.com/mode": "user", "app.kubernetes.io/x": "y",
                                         "kubernetes.io/custom": "z"}), KARPENTER)
    assert out["metadata"]["labels"] if "labels" in out["metadata"] else True
    assert cluster.get("NodePool", "np")["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/x"] == "y"


def test_profile_switch_changes_what_the_api_server_rejects(cluster):
    cluster.install_profile("before-0006")
    try:
        e = rejected(cluster.create, nodepool("np", {"app.kubernetes.io/x": "y"}), KARPENTER)
        assert 'label domain "kubernetes.io" is restricted' in e.message
        assert ("spec.template.metadata.labels", 'label domain "kubernetes.io" is restricted') in \
            [(c.field, c.message) for c in e.causes]
    finally:
        cluster.install_profile("upstream")
    cluster.create(nodepool("np", {"app.kubernetes.io/x": "y"}), KARPENTER)   # accepted under upstream


def test_requirement_key_rules(cluster):
    e = rejected(cluster.create, nodepool("np", requirements=[
        {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]},
        {"key": "kubernetes.azure.com/agentpool", "operator": "In", "values": ["x"]}]), KARPENTER)
    assert [(c.field, c.message) for c in e.causes] == [
        ("spec.template.spec.requirements[1].key", 'label domain "kubernetes.azure.com" is restricted')]
    assert 'Invalid value: "kubernetes.azure.com/agentpool": label domain' in e.message


def test_requirement_list_rules_and_operator_enum(cluster):
    e = rejected(cluster.create, nodepool("np", requirements=[{"key": "a", "operator": "In", "values": []}]))
    assert "requirements with operator 'In' must have a value defined" in [c.message for c in e.causes]
    e = rejected(cluster.create, nodepool("np", requirements=[{"key": "a", "operator": "Gte", "values": ["x"]}]))
    assert any("must have a single positive integer value" in c.message for c in e.causes)
    cluster.install_profile("before-0006")        # its operator enum has no Gte/Lte
    try:
        e = rejected(cluster.create, nodepool("np", requirements=[{"key": "a", "operator": "Gte", "values": ["1"]}]))
        assert any(c.field.endswith("operator") and "supported values" in c.message for c in e.causes)
    finally:
        cluster.install_profile("upstream")


def test_nodeclaim_rules(cluster):
    # NodeClaims may carry karpenter.sh/nodepool (ToNodeClaim adds it), not kubernetes.io/hostname.
    cluster.create(nodeclaim("nc", [{"key": "karpenter.sh/nodepool", "operator": "In", "values": ["a"]}]), KARPENTER)
    e = rejected(cluster.create, nodeclaim("nc2", [{"key": "kubernetes.io/hostname", "operator": "Exists"}]),
                 KARPENTER)
    assert [(c.field, c.message) for c in e.causes] == [
        ("spec.requirements[0].key", 'label "kubernetes.io/hostname" is restricted')]
    nc = cluster.get("NodeClaim", "nc")
    nc["spec"]["requirements"] = []
    e = rejected(cluster.update, nc, KARPENTER)
    assert "spec is immutable" in e.message


def test_aksnodeclass_v1beta1_keeps_newer_fields(cluster):
    created = cluster.create({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                              "metadata": {"name": "default"},
                              "spec": {"imageFamily": "AzureLinux", "fipsMode": "FIPS", "osDiskSizeGB": 64}})
    assert created["apiVersion"] == "karpenter.azure.com/v1beta1"
    got = cluster.get("AKSNodeClass", "default")
    assert got["spec"] == {"imageFamily": "AzureLinux", "fipsMode": "FIPS", "osDiskSizeGB": 64}   # explicit values win over the CRD defaults
    cluster.create({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                    "metadata": {"name": "ubuntu"}, "spec": {"imageFamily": "Ubuntu"}})
    got["status"] = {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}], "images": []}
    assert cluster.update_status(got, KARPENTER)["status"]["conditions"][0]["type"] == "Ready"


# -- NodeRestriction and the Node authorizer (k8s.io/kubernetes v1.36.3
# plugin/pkg/admission/noderestriction/admission.go Plugin.admitNode,
# https://kubernetes.io/docs/reference/access-authn-authz/node/)
@pytest.mark.parametrize("label", ["node-restriction.kubernetes.io/x", "kubernetes.io/custom"])
def test_kubelet_may_not_set_restricted_labels(cluster, label):
    e = rejected(cluster.create, node("n1", {label: "v"}), Identity.node("n1"))
    assert (e.status, e.reason) == (403, "Forbidden")
    assert e.message == f'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: {label}'
    # The same label written by Karpenter's sync (a controller) is accepted.
    assert cluster.create(node("n1", {label: "v"}), KARPENTER)["metadata"]["labels"][label] == "v"


def test_kubelet_allowed_labels(cluster):
    labels = {"kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": "Standard_D2s_v3",
              "topology.kubernetes.io/zone": "westus2-1", "kubernetes.azure.com/agentpool": "x",
              "foo.node.kubernetes.io/y": "z", "example.com/team": "a"}
    assert cluster.create(node("n1", labels), Identity.node("n1"))["metadata"]["labels"] == labels


def test_node_may_not_modify_another_node(cluster):
    cluster.create(node("other"), KARPENTER)
    e = rejected(cluster.create, node("n2"), Identity.node("n1"))
    assert e.status == 403 and 'node "n1" is not allowed to modify node "n2"' in e.message
    other = cluster.get("Node", "other")
    other["metadata"]["labels"] = {"example.com/x": "y"}
    e = rejected(cluster.update, other, Identity.node("n1"))
    assert e.status == 403


def test_node_update_rules(cluster):
    me = Identity.node("n1")
    cluster.create(node("n1", {"example.com/a": "1"}, taints=[{"key": "k", "effect": "NoSchedule"}]), me)
    cur = cluster.get("Node", "n1")
    cur["metadata"]["labels"]["example.com/a"] = "2"
    cur = cluster.update(cur, me)                                           # own, unrestricted label: ok
    cur["metadata"]["labels"]["kubernetes.io/custom"] = "x"
    e = rejected(cluster.update, cur, me)
    # The real plugin's update message has no 'node "<n>"' subject (k8s.io/kubernetes v1.36.3
    # plugin/pkg/admission/noderestriction/admission.go Plugin.admitNode).
    assert e.message == 'nodes "n1" is forbidden: is not allowed to modify labels: kubernetes.io/custom'
    cur = cluster.get("Node", "n1")
    cur["spec"]["taints"] = []
    e = rejected(cluster.update, cur, me)
    assert e.message == 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints'
    cur["spec"]["taints"] = []
    assert "taints" not in cluster.update(cur, KARPENTER)["spec"]                # a controller may


def test_node_identity_has_no_rbac_and_controllers_are_not_masters(cluster):
    e = rejected(cluster.create, nodepool("np"), Identity.node("n1"))
    assert e.status == 403 and "system:node:n1" in e.message
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    who = cluster.client(KARPENTER).request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", review)
    info = who["status"]["userInfo"]
    assert info["username"] == KARPENTER.username
    assert "system:masters" not in info["groups"]
    who = cluster.client(Identity.node("n1")).request("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                                      review)
    assert who["status"]["userInfo"]["groups"][:1] == ["system:nodes"]


# -- API semantics the loop relies on -----------------------------------------------------------------
def test_bind_status_and_namespaces(cluster):
    cluster.create(node("n1"), KARPENTER)
    p = cluster.create(pod("p", namespace="scenario-a"))           # namespace created on first use
    bound = cluster.bind(p, "n1", SCHEDULER)
    assert bound["spec"]["nodeName"] == "n1"
    e = rejected(cluster.bind, p, "n1", SCHEDULER)
    assert e.status == 409
    np = cluster.create(nodepool("np"), KARPENTER)
    np["status"] = {"nodes": 1}
    assert cluster.update_status(np, KARPENTER)["status"]["nodes"] == 1
    assert cluster.get("NodePool", "np")["status"]["nodes"] == 1
    assert rejected(cluster.delete, "Node", "missing").status == 404


def _one_of_each_kind(cluster) -> None:
    """An object of every kind reset() clears, a finalizer on one, and a scenario namespace."""
    cluster.create(node("n1"), KARPENTER)
    np = nodepool("np")
    np["metadata"]["finalizers"] = ["karpenter.sh/termination"]
    cluster.create(np, KARPENTER)
    cluster.create(nodeclaim("nc"), KARPENTER)
    cluster.create({"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass",
                    "metadata": {"name": "default"}, "spec": {}})
    cluster.create({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "o"},
                    "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                               "values": ["Standard_D2s_v3"]}], "price": "0.01"}})
    cluster.create(pod("p1"))
    cluster.create(pod("p2", namespace="scenario-b"))
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}})
    cluster.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "scenario-b"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}})
    cluster.create({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "st", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}})
    job = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}
    cluster.create({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "default"},
                    "spec": job})
    cluster.create({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj", "namespace": "default"},
                    "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": job}}})
    cluster.create({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e", "namespace": "default"},
                    "involvedObject": {"kind": "Node", "name": "n1"}, "reason": "R", "message": "m"})
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
                    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                             "hostPath": {"path": "/tmp/pv"}}})
    cluster.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "pvc", "namespace": "default"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    cluster.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb", "namespace": "default"},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}})
    cluster.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "sc"},
                    "provisioner": "disk.csi.azure.com", "volumeBindingMode": "WaitForFirstConsumer"})
    cluster.create({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "rc"}, "handler": "runc"})
    cluster.create({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": template}})
    cluster.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                    "value": 1000})
    cluster.create({"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": "lr", "namespace": "default"},
                    "spec": {"limits": [{"type": "Container", "defaultRequest": {"cpu": "100m"}}]}})
    # last: without kube-controller-manager no quota status is written, and the quota admission refuses the
    # namespace's pods until it is
    cluster.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "default"},
                    "spec": {"hard": {"pods": "10"}}})


# what reset() leaves: the API server's own PriorityClasses, which it makes only at start
KEPT = {"PriorityClass": ["system-cluster-critical", "system-node-critical"]}


@pytest.mark.parametrize("path", ["storage", "api"])
def test_reset_removes_everything_a_scenario_created(cluster, path, monkeypatch):
    """Both ways of resetting (one etcd transaction; the API's deletes and a wait) leave no
    object of any harness kind and no scenario namespace behind."""
    from harness.backends.kinds import KINDS
    monkeypatch.setattr(cluster, "storage_reset", path == "storage")
    baseline = {n["metadata"]["name"] for n in cluster.list("Namespace")}
    _one_of_each_kind(cluster)
    assert all(cluster.list(k) for k in KINDS if k != "Namespace")     # the test covers every kind
    cluster.reset()
    for kind in KINDS:
        if kind != "Namespace":
            assert sorted(o["metadata"]["name"] for o in cluster.list(kind)) == KEPT.get(kind, []), kind
    assert cluster.get("Pod", "p1") is None
    assert {n["metadata"]["name"] for n in cluster.list("Namespace")} == baseline
    cluster.create(pod("p2", namespace="scenario-b"))                # the namespace can be reused at once
    cluster.create(nodepool("np"), KARPENTER)                        # and the names
    cluster.reset()
    assert cluster.list("Pod") == [] and cluster.list("NodePool") == []


def test_storage_prefixes_are_where_the_api_server_keeps_each_kind(cluster):
    """local.storage_prefix names the etcd keys of every kind the storage reset deletes."""
    from harness.backends.kinds import KINDS
    from harness.backends.local import ETCD_ROOT, storage_prefix
    _one_of_each_kind(cluster)
    keys = cluster._etcd_keys(ETCD_ROOT)
    for name, k in KINDS.items():
        assert any(key.startswith(storage_prefix(k)) for key in keys), (name, storage_prefix(k))
    assert f"{storage_prefix(KINDS['Pod'])}scenario-b/p2" in keys
    assert f"{storage_prefix(KINDS['Node'])}n1" in keys


def test_listens_on_loopback_only(local_cluster):
    for name, pid in local_cluster.pids.items():
        addrs = _listening(pid)
        assert addrs, name
        assert all(a.startswith("127.0.0.1:") for a in addrs), (name, addrs)


def test_per_call_latency(cluster, record_property):
    """Every call kind works repeatedly; the medians are recorded (JUnit property), not asserted."""
    cluster.create(node("n1"), KARPENTER)
    timings = {}
    for label, fn in {
        "get": lambda i: cluster.get("Node", "n1"),
        "create_pod": lambda i: cluster.create(pod(f"p{i}")),
        "create_nodepool": lambda i: cluster.create(nodepool(f"np{i}"), KARPENTER),
        "rejected_nodepool": lambda i: pytest.raises(APIRejected, cluster.create,
                                                     nodepool(f"bad{i}", {"agentpool": "x"}), KARPENTER),
    }.items():
        samples = []
        for i in range(30):
            t = time.perf_counter()
            fn(i)
            samples.append((time.perf_counter() - t) * 1000)
        timings[label] = round(statistics.median(samples), 2)
    record_property("latency_ms", timings)       # recorded in the JUnit XML; bench/ is for budgets
    print("median latency ms:", timings)


# -- lifecycle ------------------------------------------------------------------------------------------
def test_start_failure_names_the_component_and_cleans_up():
    backend = LocalBackend(profile=None, apiserver_args={"no-such-flag": "1"}, start_timeout=30)
    if not backend.available()[0]:
        pytest.skip(backend.available()[1])
    from harness.backends.lifetime import LIFETIME
    before = set(_children())
    with pytest.raises(StartError) as ei:
        backend.start()
    before.add(LIFETIME.watcher_pid())                  # the process's one watcher, if started just now
    msg = str(ei.value)
    assert msg.startswith("kube-apiserver died before it was ready")
    assert "no-such-flag" in msg                        # the last log lines are in the message
    time.sleep(0.2)
    assert set(_children()) <= before                   # etcd was stopped too


def test_close_stops_every_process_and_removes_the_workdir():
    """... and kube-scheduler takes its settings from a --config file (it would exit on one it refused)."""
    backend = LocalBackend(profile=None, scheduler=True, kwok=True, keep=False,
                           scheduler_config=(("podInitialBackoffSeconds", 1), ("podMaxBackoffSeconds", 1)))
    ok, why = backend.available()
    if not ok:
        pytest.skip(why)
    c = backend.start()
    pids, workdir = dict(c.pids), c.workdir
    assert set(pids) == {"etcd", "kube-apiserver", "kube-scheduler", "kwok"}
    assert all(pid_alive(p) for p in pids.values())
    args = Path(f"/proc/{pids['kube-scheduler']}/cmdline").read_bytes().decode().split("\0")
    config = next(a for a in args if a.startswith("--config=")).split("=", 1)[1]
    assert yaml.safe_load(Path(config).read_text())["podMaxBackoffSeconds"] == 1
    assert not any(a.startswith("--kubeconfig=") for a in args)     # the file names it
    c.close()
    assert not any(pid_alive(p) for p in pids.values())
    assert not workdir.exists()
    c.close()                                            # idempotent


def test_processes_die_with_a_killed_owner():
    """PR_SET_PDEATHSIG and the owner's watcher (harness/backends/lifetime.py): a SIGKILLed pytest
    worker leaves no etcd/kube-apiserver and no work dir behind, without waiting for a next start's
    sweep."""
    if not LocalBackend(profile=None).available()[0]:
        pytest.skip("binaries missing")
    code = ("import json,sys,time; from harness.backends.local import LocalBackend;"
            "c=LocalBackend(profile=None, keep=False).start();"
            "print(json.dumps({'pids': c.pids, 'workdir': str(c.workdir)}), flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        info = json.loads(proc.stdout.readline())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    deadline = time.monotonic() + 60          # a bound, not a timing: the machine may be loaded
    while (any(pid_alive(p) for p in info["pids"].values()) or Path(info["workdir"]).exists()) \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(pid_alive(p) for p in info["pids"].values())
    assert not Path(info["workdir"]).exists()


# -- helpers ------------------------------------------------------------------------------------------
def _listening(pid: int) -> list[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:                 # LISTEN
                host, port = f[1].split(":")
                if table == "tcp":
                    ip = ".".join(str(int(host[i:i + 2], 16)) for i in (6, 4, 2, 0))
                else:
                    ip = "::" if set(host) == {"0"} else host
                out.append(f"{ip}:{int(port, 16)}")
    return out


def _children() -> list[int]:
    me = str(os.getpid())
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me and pid_alive(int(d.name)):
                out.append(int(d.name))
    return out


def test_the_orphan_sweep_is_due_only_when_a_pod_maker_was_deleted(cluster):
    """reset() waits for kube-controller-manager's late replacement pods only when it deleted what
    makes pods (a ReplicaSet or DaemonSet): 1 s a scenario otherwise. The transaction's own answer says."""
    from harness.backends.local import POD_MAKERS, _deleted_any, _prefix_range
    ops = [{"request_delete_range": _prefix_range(p)} for p in POD_MAKERS]
    cluster._etcd_call("txn", {"success": ops})
    assert not _deleted_any(ops, cluster._etcd_call("txn", {"success": ops}), POD_MAKERS)
    cluster.create({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"a": "b"}},
                             "template": {"metadata": {"labels": {"a": "b"}},
                                          "spec": {"containers": [{"name": "c", "image": "pause"}]}}}})
    assert _deleted_any(ops, cluster._etcd_call("txn", {"success": ops}), POD_MAKERS)
    assert cluster.list("DaemonSet") == []
