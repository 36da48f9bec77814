"""The kind backend (harness/backends/kind/): the pure parts (kubeadm and kubelet configuration, taint
and label flags, managedFields, the node image's inputs, the runc wrapper), and - when Docker, the
wrapper runtime and the node image are there - real kubelets booting for VMs, refusing labels, and
NodeRestriction judging node credentials. Nothing may be left behind."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from harness.backends.base import APIRejected, Identity
from harness.backends.kind import cluster as kc
from harness.backends.kind import kubeadm as ka
from harness.backends.kind import pods as kp
from harness.backends.kind import writers as kw
from harness.backends.kind import image as img
from harness.backends.kind import nodes, reaper, rootfs
from harness.backends.procs import pid_alive
from harness.model.upstream.profile import load_profile

UP = load_profile("upstream")
WRAPPER = Path(img.__file__).with_name("runc-nosysresource")


# -- pure parts ----------------------------------------------------------------------------------------
def test_kubeadm_config_keeps_node_restriction_defaults_and_cgroup_v1():
    docs = list(yaml.safe_load_all(ka.kubeadm_config("c1", "v1.36.3", "172.18.0.2", "abcdef.0123456789abcdef")))
    init, cluster, kubelet, proxy = docs
    assert init["bootstrapTokens"][0]["token"] == "abcdef.0123456789abcdef"
    assert init["nodeRegistration"]["name"] == "c1-control-plane"
    assert "127.0.0.1" in cluster["apiServer"]["certSANs"]
    # kubeadm's own defaults (Node,RBAC + NodeRestriction) are not overridden
    assert "extraArgs" not in cluster["apiServer"]
    assert kubelet["failCgroupV1"] is False and kubelet["cgroupDriver"] == "systemd"
    assert proxy["mode"] == "iptables" and proxy["conntrack"] == {"maxPerCore": 0}


def test_kubeadm_config_mounts_a_scheduler_config_only_when_asked():
    cluster = list(yaml.safe_load_all(ka.kubeadm_config("c1", "v1.36.3", "172.18.0.2", "a.b")))[1]
    assert "scheduler" not in cluster
    cluster = list(yaml.safe_load_all(ka.kubeadm_config("c1", "v1.36.3", "172.18.0.2", "a.b", scheduler_config=True)))[1]
    assert cluster["scheduler"]["extraArgs"] == [{"name": "config", "value": ka.SCHEDULER_CONFIG}]
    assert cluster["scheduler"]["extraVolumes"][0]["hostPath"] == ka.SCHEDULER_CONFIG


def test_bootstrap_kubeconfig_carries_the_token_and_ca():
    doc = yaml.safe_load(ka.bootstrap_kubeconfig("https://10.0.0.2:6443", "PEM", "a.b"))
    assert doc["users"][0]["user"] == {"token": "a.b"}
    assert doc["clusters"][0]["cluster"]["server"] == "https://10.0.0.2:6443"


def test_kubelet_flags_from_a_vm():
    flags = nodes.kubelet_flags("aks-a-1", "172.18.0.3", {"example.com/x": "1", "k/y": ""},
                                ["karpenter.sh/unregistered:NoExecute"], "azure:///vm/aks-a-1")
    assert flags == ["--hostname-override=aks-a-1", "--node-ip=172.18.0.3", "--provider-id=azure:///vm/aks-a-1",
                     "--node-labels=example.com/x=1,k/y=", "--register-with-taints=karpenter.sh/unregistered:NoExecute"]


def test_taint_flag_syntax():
    assert kc._taint_flag({"key": "a", "effect": "NoExecute"}) == "a:NoExecute"
    assert kc._taint_flag({"key": "a", "value": "true", "effect": "NoSchedule"}) == "a=true:NoSchedule"


def test_label_writers_from_managed_fields():
    node = {"metadata": {"managedFields": [
        {"manager": "kubelet", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/os": {}}}}},
        {"manager": "harness-controller-karpenter", "fieldsV1": {"f:metadata": {"f:labels": {"f:karpenter.sh/x": {}}}}},
        {"manager": "kubelet", "fieldsV1": {"f:status": {}}}]}}
    assert kc.KindCluster.label_writers(node) == {"kubernetes.io/os": "kubelet",
                                                  "karpenter.sh/x": "harness-controller-karpenter"}


def test_machine_from_the_vms_capacity():
    node = {"status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "30"},
                       "allocatable": {"cpu": "3860m", "memory": "12Gi", "pods": "30"}}}
    m = kp.machine_for(node, cpus_available=8)
    assert (m.cpus, m.memory_kib, m.max_pods) == (4, 16 * 1024 * 1024, 30)
    assert m.kube_reserved == {"cpu": "140m", "memory": str(4 * 1024 ** 3 - 750 * 1024 ** 2)}
    assert m.eviction_hard == {"memory.available": f"{750 * 1024}Ki"} and m.status_sync == {}
    # a VM bigger than the host: the kubelet sees the host's CPUs, its status sync is slowed for the stand-in
    big = kp.machine_for(node, cpus_available=2)
    assert big.cpus == 2 and big.status_sync == kp.SLOW_STATUS_SYNC
    assert kp.machine_for({"status": {}}, 2) is None


def test_machine_kubelet_config_keeps_the_clusters_settings():
    m = nodes.Machine(2, 1024, 58, {"cpu": "100m", "memory": "1Gi"}, {"memory.available": "768000Ki"},
                      dict(kp.SLOW_STATUS_SYNC))
    cfg = yaml.safe_load(m.kubelet_config(yaml.safe_dump({"cgroupDriver": "systemd",
                                                          "evictionHard": {"nodefs.available": "0%"}})))
    assert cfg["cgroupDriver"] == "systemd" and cfg["maxPods"] == 58
    assert cfg["evictionHard"] == {"nodefs.available": "0%", "memory.available": "768000Ki"}
    assert cfg["kubeReserved"] == {"cpu": "100m", "memory": "1Gi"}
    assert cfg["nodeStatusUpdateFrequency"] == "10m0s"


def test_field_managers_name_each_writer():
    from harness.backends.base import ADMIN, CLOUD_NODE_MANAGER, KARPENTER, Identity
    assert kw.field_manager(KARPENTER) == "karpenter"
    assert kw.field_manager(CLOUD_NODE_MANAGER) == "cloud-node-manager"
    assert kw.field_manager(Identity.node("aks-1")) == "harness-csi-node"
    assert kw.field_manager(ADMIN) == "harness-admin"
    assert kw.writer_of("karpenter", "karpenter.sh/registered", {}) == "karpenter-core"
    assert kw.writer_of("cloud-node-manager", "topology.kubernetes.io/zone", {}) == "cloud-node-controller"
    # the kubelet's one manager writes its own labels and its --node-labels
    assert kw.writer_of("kubelet", "kubernetes.io/os", {"example.com/a": "b"}) == "kubelet"
    assert kw.writer_of("kubelet", "example.com/a", {"example.com/a": "b"}) == "kubelet-node-labels"
    assert len({m.field_manager for m in kw.managers()}) == len(kw.managers())


def test_unscheduled_message_is_the_pod_scheduled_condition():
    pod = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                      "message": "0/2 nodes are available: 2 Insufficient cpu."}]}}
    assert kp.unscheduled_message(pod) == "0/2 nodes are available: 2 Insufficient cpu."
    assert kp.unscheduled_message({"status": {}}) == ""


def _result_with(pods: dict, nodes_: list):
    from harness.loop.result import NodeResult, PodResult, RunResult
    r = RunResult("s", "upstream", "kind", 1)
    for key, node in pods.items():
        ns, name = key.split("/")
        r.pods[key] = PodResult(name, ns, node=node, state="scheduled" if node else "pending")
    for i, n in enumerate(nodes_):
        nr = NodeResult(n, i, "c", "p", "Standard_D2s_v5", "1", "on-demand", n)
        nr.pods = [k for k, v in pods.items() if v == n]
        r.nodes.append(nr)
    return r


class _FakeAdmin:
    def __init__(self, objs):
        self.objs = objs

    def get(self, kind, name, namespace=None):
        return self.objs.get((kind, name))


def _reading(objs: dict, real_scheduler: bool) -> kc.KindCluster:
    """A KindCluster that only reads back (no containers): `objs` {(kind, name): object} as its API."""
    class Reading(kc.KindCluster):
        admin = _FakeAdmin(objs)
    cluster = Reading.__new__(Reading)
    cluster.real_scheduler = real_scheduler
    return cluster


def test_read_back_puts_the_real_bindings_into_the_result():
    pending = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "message": "0/2 nodes"}]}}
    cluster = _reading({("Pod", "a"): {"spec": {"nodeName": "n2"}},       # loop: n1
                        ("Pod", "b"): {"spec": {}, **pending},              # loop: n1
                        ("Pod", "c"): {"spec": {"nodeName": "n1"}},         # loop: pending
                        ("Pod", "d"): {"spec": {"nodeName": "n1"}}}, True)  # agrees
    r = _result_with({"default/a": "n1", "default/b": "n1", "default/c": None, "default/d": "n1"}, ["n1", "n2"])
    findings = {f.path: f for f in cluster.read_back(r)}
    assert set(findings) == {"pods[default/a].node", "pods[default/b].node", "pods[default/c].node"}
    assert not findings["pods[default/a].node"].blocking                # another node: a notice
    assert findings["pods[default/b].node"].blocking and "0/2 nodes" in findings["pods[default/b].node"].detail
    assert findings["pods[default/c].node"].blocking
    assert (r.pods["default/a"].node, r.pods["default/b"].node, r.pods["default/c"].node) == ("n2", None, "n1")
    assert r.pods["default/b"].state == "pending" and r.pods["default/c"].state == "scheduled"
    assert sorted(r.nodes[0].pods) == ["default/c", "default/d"] and r.nodes[1].pods == ["default/a"]


def test_read_back_names_label_owners_from_managed_fields():
    from harness.loop.result import LabelWrite
    real = {"metadata": {"name": "n1", "labels": {"example.com/a": "b", "karpenter.sh/registered": "true"},
                         "managedFields": [
        {"manager": "kubelet", "fieldsV1": {"f:metadata": {"f:labels": {"f:example.com/a": {}}}}},
        {"manager": "harness-admin", "fieldsV1": {"f:metadata": {"f:labels": {"f:karpenter.sh/registered": {}}}}}]}}
    cluster = _reading({("Node", "n1"): real}, False)
    r = _result_with({}, ["n1"])
    nr = r.nodes[0]
    nr.labels = dict(real["metadata"]["labels"])
    nr.kubelet_node_labels = {"example.com/a": "b"}
    nr.provenance = {"example.com/a": [LabelWrite("kubelet-node-labels", "b"), LabelWrite("karpenter-core", "b")],
                     "karpenter.sh/registered": [LabelWrite("karpenter-core", "true")]}
    findings = cluster.read_back(r)
    assert nr.field_owners == {"example.com/a": "kubelet-node-labels", "karpenter.sh/registered": "admin"}
    # karpenter-core rewrote the kubelet's value (no takeover): fine; an owner the loop never records is not
    assert [f.path for f in findings] == ["nodes[0].labels[karpenter.sh/registered].writer"]
    assert findings[0].blocking and findings[0].real == "admin"


def test_current_writers_are_the_writers_of_the_value_on_the_node():
    from harness.loop.result import LabelWrite, NodeResult
    nr = NodeResult("n", 0, "c", "p", "t", "1", "on-demand", "n", labels={"k": "2"})
    nr.provenance = {"k": [LabelWrite("a", "1"), LabelWrite("b", "2"), LabelWrite("x", "3", accepted=False),
                           LabelWrite("c", "2")]}
    assert nr.current_writers("k") == ["b", "c"]
    assert nr.current_writers("missing") == []


def test_writer_expectation_on_kind_reads_managed_fields():
    from harness.loop.result import LabelWrite, NodeResult
    from harness.scenario.expect.match import Checker
    nr = NodeResult("n", 0, "c", "p", "t", "1", "on-demand", "n", labels={"k": "v"})
    nr.provenance = {"k": [LabelWrite("kubelet-node-labels", "v"), LabelWrite("karpenter-core", "v")]}
    r = _result_with({}, [])
    r.nodes.append(nr)

    def fails(want, owners):
        nr.field_owners = owners
        c = Checker(r, None, "expect", "upstream")
        c.label("expect.nodes[0].labels[k]", nr, "k", want)
        return c.out
    assert fails({"writer": "karpenter-core"}, {"k": "kubelet-node-labels"}) == []     # same value, no takeover
    bad = fails({"writer": "karpenter-core"}, {"k": "cloud-node-controller"})
    assert bad and "managedFields owner: cloud-node-controller" in bad[0].detail


def test_daemonset_pods_are_pinned_to_their_node():
    from harness.loop.lifecycle.initialization import pin_to_node as _pin_to_node
    spec = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}}}
    pinned = _pin_to_node(spec, "aks-1")
    assert pinned["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["aks-1"]}]}]}


def test_image_component_names():
    assert img.image_component("registry.k8s.io/kube-apiserver:v1.36.3") == "kube-apiserver"
    assert img.image_component("registry.k8s.io/coredns/coredns:v1.14.2") == "coredns"
    assert img.image_component("registry.k8s.io/etcd:3.6.8-0") == "etcd"


def test_containerd_config_edits(tmp_path):
    files = tmp_path / "files"
    (files / "etc/containerd").mkdir(parents=True)
    (files / "etc/systemd/system").mkdir(parents=True)
    (files / "etc/containerd/config.toml").write_text(
        'version = 2\n\n[proxy_plugins]\n# x\n[proxy_plugins."fuse-overlayfs"]\n  type = "snapshot"\n\n'
        '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]\n  base_runtime_spec = "/x.json"\n'
        '[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "old/pause:1"\n  restrict_oom_score_adj = false\n')
    (files / "etc/systemd/system/containerd.service").write_text("[Service]\nOOMScoreAdjust=-999\n")
    img._edit_kind_files(files, "registry.k8s.io/pause:3.10.2")
    cfg = (files / "etc/containerd/config.toml").read_text()
    assert "proxy_plugins" not in cfg and "base_runtime_spec" not in cfg
    assert 'sandbox_image = "registry.k8s.io/pause:3.10.2"' in cfg and "restrict_oom_score_adj = true" in cfg
    assert "#OOMScoreAdjust=-999" in (files / "etc/systemd/system/containerd.service").read_text()


def test_rootfs_key_depends_on_the_package_list(monkeypatch):
    k = rootfs.key()
    monkeypatch.setattr(rootfs, "PACKAGES", rootfs.PACKAGES + ("curl",))
    assert rootfs.key() != k


def test_mirror_from_deb822_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_DEBIAN_MIRROR", raising=False)
    monkeypatch.setenv("HARNESS_DEBIAN_MIRROR", "http://mirror.example/debian")
    assert rootfs.mirror() == "http://mirror.example/debian"


def _run_wrapper(tmp_path: Path, args: list[str]) -> list[str]:
    fake = tmp_path / "runc"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'argv'}\n")
    fake.chmod(0o755)
    env = {**os.environ, "HARNESS_REAL_RUNC": str(fake)}
    subprocess.run([sys.executable, str(WRAPPER), *args], check=True, env=env)
    return (tmp_path / "argv").read_text().split()


def test_runc_wrapper_strips_cap_sys_resource_from_a_bundle(tmp_path):
    caps = ["CAP_CHOWN", "CAP_SYS_RESOURCE"]
    (tmp_path / "config.json").write_text(json.dumps({"process": {"capabilities": {
        "bounding": caps, "effective": caps, "permitted": caps}}}))
    argv = _run_wrapper(tmp_path, ["--root", "/r", "create", "--bundle", str(tmp_path), "cid"])
    assert argv == ["--root", "/r", "create", "--bundle", str(tmp_path), "cid"]       # arguments unchanged
    doc = json.loads((tmp_path / "config.json").read_text())
    assert all(v == ["CAP_CHOWN"] for v in doc["process"]["capabilities"].values())


def test_runc_wrapper_exec_process_file_and_untouched_config(tmp_path):
    proc = tmp_path / "process.json"
    proc.write_text(json.dumps({"capabilities": {"bounding": ["CAP_SYS_RESOURCE"]}}))
    _run_wrapper(tmp_path, ["exec", "--process", str(proc), "cid"])
    assert json.loads(proc.read_text())["capabilities"]["bounding"] == []
    plain = {"process": {"capabilities": {"bounding": ["CAP_CHOWN"]}}}
    (tmp_path / "config.json").write_text(json.dumps(plain))
    before = (tmp_path / "config.json").stat().st_mtime_ns
    _run_wrapper(tmp_path, ["run", "-b", str(tmp_path), "cid"])
    assert (tmp_path / "config.json").stat().st_mtime_ns == before      # rewritten only when changed


def test_kind_backend_is_registered():
    from harness.backends.registry import BACKEND_NAMES, get_backend
    assert "kind" in BACKEND_NAMES
    assert get_backend("kind", profile=None).name == "kind"


# -- a real kind cluster (skipped without Docker, the runtime or the node image) -------------------------
def _node(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}},
        "spec": {"taints": [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]},
        "status": {"capacity": {"cpu": "4", "memory": "16Gi", "pods": "30"},
                   "allocatable": {"cpu": "3800m", "memory": "14Gi", "pods": "30"}}}


@pytest.fixture(scope="module")
def kind_cluster():
    from harness.backends.registry import get_backend
    backend = get_backend("kind", profile=None)
    ok, why = backend.available()
    if not ok:
        pytest.skip(f"kind backend unavailable: {why}")
    cluster = backend.start()
    try:
        yield cluster
    finally:
        name = cluster.name
        cluster.close()
        _assert_nothing_left(name)


def _assert_nothing_left(name: str) -> None:
    import docker
    client = docker.from_env()
    try:
        mine = {"label": f"{nodes.OWNER_LABEL}={os.getpid()}"}
        assert client.containers.list(all=True, filters=mine) == []
        assert client.volumes.list(filters=mine) == []
        assert [n for n in client.networks.list() if n.name == name] == []
    finally:
        client.close()


def test_a_vm_boots_as_a_real_node(kind_cluster):
    node = _node("aks-kind-00001")
    flags = {"example.com/team": "a", "node.kubernetes.io/instance-type": "Standard_D4s_v5"}
    node["metadata"]["labels"].update(flags)
    assert kind_cluster.register_kubelet(node, flags, UP, "azure:///vm/aks-kind-00001") is None
    real = kind_cluster.wait_ready("aks-kind-00001")
    assert real["spec"]["providerID"] == "azure:///vm/aks-kind-00001"
    assert {"key": "karpenter.sh/unregistered", "effect": "NoExecute"} in real["spec"]["taints"]
    writers = kind_cluster.label_writers(real)
    assert writers["example.com/team"] == "kubelet" and writers["kubernetes.io/hostname"] == "kubelet"
    # the loop's view: the VM's capacity, not the Docker host's
    assert kind_cluster.get("Node", "aks-kind-00001")["status"]["allocatable"]["cpu"] == "3800m"
    # the real Node: memory, pods and allocatable as the kubelet computed them from the VM's machine;
    # CPU beyond the host's count from the node-status stand-in
    from harness.model.values.resources import parse_resource_list
    status = kind_cluster.admin.get("Node", "aks-kind-00001")["status"]
    cap, alloc = parse_resource_list(status["capacity"]), parse_resource_list(status["allocatable"])
    assert (cap["memory"], alloc["memory"]) == (16 << 30, 14 << 30)
    assert (cap["pods"], alloc["pods"]) == (30, 30)
    assert (cap["cpu"], alloc["cpu"]) == (4000, 3800)
    # NodeRestriction judges the node's own credentials: a restricted label is refused ...
    as_node = Identity.node("aks-kind-00001")
    mine = kind_cluster.get("Node", "aks-kind-00001")
    mine["metadata"]["labels"]["node-restriction.kubernetes.io/team"] = "a"
    with pytest.raises(APIRejected) as e:
        kind_cluster.update(mine, as_node)
    assert "is not allowed to modify labels: node-restriction.kubernetes.io/team" in e.value.message
    # ... and deleting the Node stops its kubelet and removes its worker
    kind_cluster.delete("Node", "aks-kind-00001")
    assert "aks-kind-00001" not in kind_cluster.kubelets.booted()
    assert kind_cluster.admin.get("Node", "aks-kind-00001") is None


def test_the_real_kube_scheduler_binds_pods(kind_cluster):
    from harness.backends.base import KARPENTER
    assert kind_cluster.real_scheduler and "kube-scheduler" in kind_cluster.capabilities
    node = _node("aks-kind-00003")
    assert kind_cluster.register_kubelet(node, {}, UP, "azure:///vm/aks-kind-00003") is None
    kind_cluster.wait_ready("aks-kind-00003")
    real = kind_cluster.get("Node", "aks-kind-00003")
    real["metadata"]["labels"]["karpenter.sh/registered"] = "true"
    real["spec"]["taints"] = []
    kind_cluster.update(real, KARPENTER)
    assert kind_cluster.label_writers(kind_cluster.admin.get("Node", "aks-kind-00003"))["karpenter.sh/registered"] \
        == "karpenter"
    # 3 CPUs fit the VM (3800m allocatable), not the 2-CPU host: the real scheduler sees the VM's CPU
    fits = kind_cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fits", "namespace": "default"},
                                "spec": {"containers": [{"name": "c", "image": "x",
                                                         "resources": {"requests": {"cpu": "3"}}}]}})
    assert fits["spec"].get("nodeName") is None                       # created unbound
    bound = kind_cluster.bind(fits, "aks-kind-00003")
    assert bound["spec"]["nodeName"] == "aks-kind-00003"
    kind_cluster.bind_timeout = 5.0
    big = kind_cluster.create({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
                               "spec": {"containers": [{"name": "c", "image": "x",
                                                        "resources": {"requests": {"cpu": "64"}}}]}})
    kind_cluster.bind(big, "aks-kind-00003")
    assert kind_cluster.placements[0] == kp.Placement("default/fits", "aks-kind-00003", "aks-kind-00003")
    last = kind_cluster.placements[-1]
    assert last.pod == "default/big" and last.real_node is None and "Insufficient cpu" in last.message
    kind_cluster.reset()
    assert kind_cluster.placements == [] and kind_cluster.kubelets.booted() == []


def test_kube_proxy_and_coredns_run_in_the_cluster(kind_cluster):
    """kubeadm's addons from the locally built images: kube-proxy on every node (a DaemonSet),
    CoreDNS on the control plane, Ready because kube-proxy programs the kubernetes Service VIP."""
    if not {"kube-proxy", "coredns"} <= kind_cluster.capabilities:
        pytest.skip("node image without the kube-proxy and CoreDNS images")
    node = _node("aks-kind-00004")
    assert kind_cluster.register_kubelet(node, {}, UP, "azure:///vm/aks-kind-00004") is None
    kind_cluster.wait_ready("aks-kind-00004")

    def running(labels: str) -> list[dict]:
        pods = kind_cluster.admin.request("GET", "/api/v1/namespaces/kube-system/pods",
                                          params={"labelSelector": labels})["items"]
        return [p for p in pods if any(c["type"] == "Ready" and c["status"] == "True"
                                       for c in (p.get("status") or {}).get("conditions") or [])]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        proxies = {p["spec"].get("nodeName") for p in running("k8s-app=kube-proxy")}
        if "aks-kind-00004" in proxies and running("k8s-app=kube-dns"):
            break
        time.sleep(1)
    assert "aks-kind-00004" in proxies, proxies
    dns = running("k8s-app=kube-dns")
    assert dns and {p["spec"]["nodeName"] for p in dns} <= kind_cluster.baseline_nodes
    boot = next(b for b in kind_cluster.boots if b.vm_name == "aks-kind-00004")
    assert "KUBE-SERVICES" in boot.worker.exec(["iptables-legacy-save", "-t", "nat"])     # kube-proxy image: legacy
    # the addons are infrastructure: not part of a scenario's pods, and reset() leaves them
    assert not [p for p in kind_cluster.list("Pod") if p["metadata"]["namespace"] == "kube-system"]
    kind_cluster.reset()
    assert kind_cluster.admin.get("DaemonSet", "kube-proxy", "kube-system") is not None


def test_refused_node_labels_stop_the_real_kubelet(kind_cluster):
    flags = {"kubernetes.io/foo": "bar", "example.com/team": "a"}
    node = _node("aks-kind-00002")
    node["metadata"]["labels"].update(flags)
    refusal = kind_cluster.register_kubelet(node, flags, UP, "azure:///vm/aks-kind-00002")
    assert refusal.startswith("failed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels "
                              "specified with --node-labels: [kubernetes.io/foo]")
    assert kind_cluster.admin.get("Node", "aks-kind-00002") is None
    kind_cluster.reset()
    assert kind_cluster.kubelets.booted() == []


def test_the_control_plane_node_is_not_part_of_a_scenario(kind_cluster):
    assert kind_cluster.baseline_nodes
    assert not {n["metadata"]["name"] for n in kind_cluster.list("Node")} & kind_cluster.baseline_nodes


def test_the_watcher_removes_what_a_killed_owner_left():
    """A process killed without closing its cluster (SIGKILL): its watcher sweeps its labelled resources."""
    from harness.backends.container import docker_status
    from harness.backends.kind import reaper
    ok, why = docker_status()
    if not ok:
        pytest.skip(why)
    import docker
    client = docker.from_env()
    owner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    name = f"harness-kind-reaper-test-{owner.pid}"
    try:
        client.networks.create(name, labels={nodes.LABEL: "network", nodes.OWNER_LABEL: str(owner.pid)})
        watcher = reaper.start(owner.pid)
        owner.kill()
        owner.wait()
        deadline = time.monotonic() + 120          # generous: the machine may be loaded
        while client.networks.list(names=[name]) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert client.networks.list(names=[name]) == [], f"watcher {watcher} alive: {pid_alive(watcher)}"
        while pid_alive(watcher) and time.monotonic() < deadline:      # it exits once done
            time.sleep(0.1)
        assert not pid_alive(watcher)
    finally:
        for n in client.networks.list(names=[name]):
            n.remove()
        client.close()


def test_pods_run_the_pause_image():
    pod = {"kind": "Pod", "spec": {"initContainers": [{"name": "i", "image": "busybox", "command": ["sh"]}],
                                   "containers": [{"name": "a", "image": "nginx", "args": ["-g"]}]}}
    out = kp.pause_pod(pod, "registry.k8s.io/pause:3.10.2")
    assert [c["image"] for c in out["spec"]["initContainers"] + out["spec"]["containers"]] == \
        ["registry.k8s.io/pause:3.10.2"] * 2
    assert all(c["imagePullPolicy"] == "Never" and "command" not in c and "args" not in c
               for c in out["spec"]["containers"] + out["spec"]["initContainers"])
    assert pod["spec"]["containers"][0]["image"] == "nginx"          # the loop's copy is untouched


def test_addon_phases_without_an_image_are_skipped():
    made = {"registry.k8s.io/pause:3.10.2": "pause", "registry.k8s.io/kube-apiserver:v1.36.3": "kube-apiserver"}
    assert img.skipped_phases(made) == ["addon/coredns", "addon/kube-proxy"]
    # CoreDNS cannot become Ready without kube-proxy (the kubernetes Service VIP)
    assert img.skipped_phases({**made, "registry.k8s.io/coredns/coredns:v1.14.2": "coredns"}) == \
        ["addon/coredns", "addon/kube-proxy"]
    assert img.skipped_phases({**made, "r/coredns/coredns:v1": "coredns", "r/kube-proxy:v1": "kube-proxy"}) == []


def test_kubelet_journal_verdicts():
    pool = nodes.WorkerPool.__new__(nodes.WorkerPool)          # parsing only: no containers
    refused = ('E1122 12:00:00.1 1 run.go:72] "command failed" err=<\n'
               "\tfailed to validate kubelet flags: unknown 'kubernetes.io' or 'k8s.io' labels specified with "
               "--node-labels: [kubernetes.io/foo]\n >\n")
    assert pool.kubelet_exit(None, refused) == ("failed to validate kubelet flags: unknown 'kubernetes.io' or "
                                                "'k8s.io' labels specified with --node-labels: [kubernetes.io/foo]")
    assert pool.kubelet_exit(None, "I1122 started\n") is None
    denied = ('E1122 kubelet_node_status.go:114] "Unable to register node with API server, error getting existing '
              'node" err="nodes \\"aks-x\\" not found" node="aks-x"\n')
    assert pool.registration_refusal(None, denied) == 'nodes "aks-x" not found'
    assert pool.registration_refusal(None, refused) is None


def test_thaw_unfreezes_frozen_cgroups_below_the_container(tmp_path):
    class FakeContainer:
        attrs = {"State": {"Pid": 42}}

        def reload(self):
            pass
    (tmp_path / "proc/42").mkdir(parents=True)
    (tmp_path / "proc/42/cgroup").write_text("7:memory:/docker/abc\n6:freezer:/docker/abc\n")
    pod = tmp_path / "freezer/docker/abc/kubepods.slice/pod.slice"
    pod.mkdir(parents=True)
    (pod.parent.parent / "freezer.state").write_text("THAWED\n")
    (pod / "freezer.state").write_text("FROZEN\n")
    assert nodes.thaw(FakeContainer(), tmp_path / "freezer", tmp_path / "proc") == 1
    assert (pod / "freezer.state").read_text() == "THAWED"


def test_node_runtime_choice(monkeypatch):
    class Client:
        def __init__(self, runtimes):
            self.runtimes = runtimes

        def info(self):
            return {"Runtimes": self.runtimes}
    assert nodes.node_runtime(Client({"runc": {}, nodes.RUNTIME: {}})) == nodes.RUNTIME
    monkeypatch.setattr(nodes, "has_cap_sys_resource", lambda: True)
    assert nodes.node_runtime(Client({"runc": {}})) == ""
    monkeypatch.setattr(nodes, "has_cap_sys_resource", lambda: False)
    with pytest.raises(ValueError, match="docker-up.sh"):
        nodes.node_runtime(Client({"runc": {}}))


def test_a_worker_that_fails_to_warm_is_replaced_once(monkeypatch):
    made = []

    class Flaky:
        def __init__(self, client, image, name, *a, **kw):
            made.append(name)
            self.name, self.removed = name, False
            if len(made) == 1:
                raise RuntimeError("node container exited")

        def wait_systemd(self, timeout):
            pass

        def ensure_cri(self):
            pass

        def put(self, *a, **kw):
            pass

        def exec(self, *a, **kw):
            return ""

        def remove(self):
            self.removed = True
    monkeypatch.setattr(nodes, "NodeContainer", Flaky)
    pool = nodes.WorkerPool.__new__(nodes.WorkerPool)
    pool.client, pool.image, pool.network, pool.cluster_name, pool.labels = None, "img", "net", "c", {}
    pool.runtime, pool.start_timeout, pool.control_plane = "", 1.0, None
    pool.join = nodes.JoinFiles("ca", "kubeconfig", "config")
    pool._warm, pool._errors, pool._seq, pool._closed = [], [], 0, False
    pool._lock = __import__("threading").Condition()
    pool._warm_one()
    assert made == ["c-worker1", "c-worker2"] and [n.name for n in pool._warm] == ["c-worker2"] and not pool._errors
    made.clear()
    monkeypatch.setattr(pool, "WARM_ATTEMPTS", 1)
    pool._warm_one()
    assert len(pool._errors) == 1 and len(pool._warm) == 1            # no second try: boot() hears of it


def test_the_sweep_tolerates_containers_removed_meanwhile():
    seen = {}

    class Coll:
        def list(self, **kw):
            seen.setdefault("containers", kw)
            return []
    client = type("C", (), {"containers": Coll(), "volumes": Coll(), "networks": Coll()})()
    assert reaper.sweep_stale(client) == 0
    assert seen["containers"]["ignore_removed"] is True
