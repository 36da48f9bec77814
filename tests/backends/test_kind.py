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
from harness.backends.kind import image as img
from harness.backends.kind import nodes, rootfs
from harness.backends.procs import pid_alive
from harness.model.profile import load_profile

UP = load_profile("upstream")
WRAPPER = Path(img.__file__).with_name("runc-nosysresource")


# -- pure parts ----------------------------------------------------------------------------------------
def test_kubeadm_config_keeps_node_restriction_defaults_and_cgroup_v1():
    docs = list(yaml.safe_load_all(kc.kubeadm_config("c1", "v1.36.3", "172.18.0.2", "abcdef.0123456789abcdef")))
    init, cluster, kubelet = docs
    assert init["bootstrapTokens"][0]["token"] == "abcdef.0123456789abcdef"
    assert init["nodeRegistration"]["name"] == "c1-control-plane"
    assert "127.0.0.1" in cluster["apiServer"]["certSANs"]
    # kubeadm's own defaults (Node,RBAC + NodeRestriction) are not overridden
    assert "extraArgs" not in cluster["apiServer"]
    assert kubelet["failCgroupV1"] is False and kubelet["cgroupDriver"] == "systemd"


def test_bootstrap_kubeconfig_carries_the_token_and_ca():
    doc = yaml.safe_load(kc.bootstrap_kubeconfig("https://10.0.0.2:6443", "PEM", "a.b"))
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
    out = kc.pause_pod(pod, "registry.k8s.io/pause:3.10.2")
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
