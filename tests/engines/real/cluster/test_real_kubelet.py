"""The kubelet stand-in reads what the real controller put in customData (aksscriptless bootstrap
script: provider v1.14.0 pkg/providers/imagefamily/bootstrap/cse_cmd.sh.gtpl)."""
import base64

import pytest

from harness.loop.azure.machine import MachineFacts
from harness.runner.engines.real.cluster.kubelet import BootstrapError, bootstrap_of, decode_custom_data, node_status


def _script(labels: str, flags: str) -> str:
    text = ("#!/bin/bash\nTHP_ENABLED=\"\"\n"
            f'KUBELET_FLAGS="{flags}"\nKUBELET_NODE_LABELS="{labels}"\nKUBE_CA_CRT="x"\n')
    return base64.b64encode(text.encode()).decode()


FLAGS = ("--max-pods=250 --register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule "
         "--kube-reserved=cpu=100m,memory=1843Mi --eviction-hard=memory.available<750Mi,nodefs.available<10% "
         "--cloud-provider=external")


def test_labels_flags_and_taints_come_from_the_script():
    boot = decode_custom_data(_script("karpenter.sh/nodepool=default,env=prod,kubernetes.azure.com/mode=user", FLAGS))
    assert boot.node_labels == {"karpenter.sh/nodepool": "default", "env": "prod", "kubernetes.azure.com/mode": "user"}
    assert boot.max_pods == 250
    assert boot.taints == [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
                           {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert boot.flags["--cloud-provider"] == "external"


def test_allocatable_subtracts_kube_reserved_and_hard_eviction():
    boot = decode_custom_data(_script("a=b", FLAGS))
    st = node_status(MachineFacts("aks-x", "amd64", 2, 8192, 128), boot)
    assert st["capacity"] == {"cpu": "2", "memory": "8Gi", "pods": "250", "ephemeral-storage": "128Gi"}
    assert st["allocatable"]["cpu"] == "1900m"
    assert st["allocatable"]["memory"] == f"{8192 - 1843 - 750}Mi"


def test_not_a_bootstrap_script_is_an_error():
    with pytest.raises(BootstrapError, match="KUBELET_NODE_LABELS"):
        decode_custom_data(base64.b64encode(b"#cloud-config\n").decode())
    with pytest.raises(BootstrapError, match="no osProfile.customData"):
        bootstrap_of({"properties": {"osProfile": {}}})


class _KindLike:
    """A cluster with real kubelets (the kind backend's protocol): records what the stand-in asks."""
    kubelets = object()

    def __init__(self, refusal=None):
        self.refusal, self.booted, self.released = refusal, [], []

    def register_kubelet(self, node, node_labels, profile, provider_id):
        self.booted.append((node, node_labels, provider_id))
        return self.refusal

    def release_vm(self, name):
        self.released.append(name)

    def list(self, kind, namespace=None):
        return [{"status": {"providerID": "azure:///subscriptions/s/resourceGroups/rg/providers/"
                                          "Microsoft.Compute/virtualMachines/aks-x"}}] if kind == "NodeClaim" else []


class _Fake:
    def __init__(self):
        self.vms = {"aks-x": {"properties": {"provisioningState": "Succeeded"}}}

    def skus(self):
        return []

    def get_vm(self, rg, name):
        return self.vms.get(name)

    def vm_names(self, rg):
        return {name.lower() for name in self.vms}


def _kind_kubelets(refusal=None):
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster, fake = _KindLike(refusal), _Fake()
    return Kubelets(cluster, fake, None, None, {"nodeResourceGroup": "rg", "region": "eastus"}), cluster, fake


def test_on_kind_the_controllers_vm_boots_a_real_kubelet():
    kl, cluster, fake = _kind_kubelets()
    body = {"properties": {"osProfile": {"computerName": "aks-x", "customData": _script("env=prod", FLAGS)}}}
    kl._boot("aks-x", body)
    node, labels, pid = cluster.booted[0]
    assert labels == {"env": "prod"} and pid.endswith("/virtualMachines/aks-x")
    assert node["metadata"]["name"] == "aks-x" and node["metadata"]["labels"]["env"] == "prod"
    assert {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true",
            "effect": "NoSchedule"} in node["spec"]["taints"]
    assert node["status"]["capacity"]["pods"] == "250"          # what the real kubelet is to report
    assert kl.records["aks-x"].registered
    # the controller deleted the VM: its kubelet goes, once
    del fake.vms["aks-x"]
    assert kl._release_deleted() and not kl._release_deleted()
    assert cluster.released == ["aks-x"]


def test_on_kind_the_real_kubelets_exit_message_is_the_refusal():
    kl, cluster, _ = _kind_kubelets(refusal="failed to validate kubelet flags: unknown 'kubernetes.io' ...")
    body = {"properties": {"osProfile": {"computerName": "aks-x",
                                         "customData": _script("kubernetes.io/foo=bar", FLAGS)}}}
    kl._boot("aks-x", body)
    rec = kl.records["aks-x"]
    assert rec.refused.startswith("failed to validate kubelet flags") and not rec.registered


class _StandInCluster:
    """A cluster the stand-in kubelets register on (no real kubelets): what they create and patch."""
    server_version = "v1.36.3"

    def __init__(self):
        self.created, self.patched = [], []

    def create(self, node, ident):
        self.created.append(node)

    def get(self, kind, name, namespace=None):
        return next((n for n in self.created if kind == "Node" and n["metadata"]["name"] == name), None)

    def list(self, kind, namespace=None):
        return []

    def client(self, ident):
        cluster = self

        class _Client:
            def patch(self, kind, name, body, namespace=None, sub=None):
                cluster.patched.append((kind, name, sub))

            def request(self, *a, **kw):
                return None
        return _Client()


@pytest.mark.parametrize("held", [False, True])
def test_the_kubelet_registers_its_node_with_its_ready_condition(held):
    """A Node created without conditions would lose its not-ready taint to the node lifecycle controller
    before a NotReady status came (kubelet.py _boot)."""
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster = _StandInCluster()
    kl = Kubelets(cluster, _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    if held:
        kl.not_ready.add("aks-x")
    kl._boot("aks-x", {"properties": {"osProfile": {"computerName": "aks-x", "customData": _script("env=prod", FLAGS)}}})
    (node,) = cluster.created
    (ready,) = [c for c in node["status"]["conditions"] if c["type"] == "Ready"]
    assert ready["status"] == ("False" if held else "True")
    assert node["status"]["capacity"]["pods"] == "250"
    assert not [p for p in cluster.patched if p[0] == "Node"]      # no status write after the create


class _GpuFake(_Fake):
    def skus(self):
        return [{"name": "Standard_NC4as_T4_v3", "capabilities": [{"name": "GPUs", "value": "1"}]}]


class _GpuCluster(_StandInCluster):
    """The stand-in's cluster while Karpenter has not yet written the NodeClaim's capacity."""
    PID = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-x"

    def __init__(self):
        super().__init__()
        self.capacity = {}

    def list(self, kind, namespace=None):
        return [{"status": {"providerID": self.PID, "capacity": self.capacity}}] if kind == "NodeClaim" else []

    def get(self, kind, name, namespace=None):
        return self.created[0] if kind == "Node" and self.created else None


def test_a_gpu_the_nodeclaim_names_after_the_node_booted_is_reported_by_its_device_plugin_late():
    """The VM's create is accepted before Karpenter writes the NodeClaim's capacity: a stand-in that
    booted in between reports the GPUs once the capacity names them (kubelet.py _device_plugins_late)."""
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster = _GpuCluster()
    kl = Kubelets(cluster, _GpuFake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    body = {"properties": {"hardwareProfile": {"vmSize": "Standard_NC4as_T4_v3"},
                           "osProfile": {"computerName": "aks-x", "customData": _script("env=prod", FLAGS)}}}
    kl._boot("aks-x", body)
    assert "nvidia.com/gpu" not in cluster.created[0]["status"]["capacity"]
    assert not kl._device_plugins_late()              # the NodeClaim names no extended resource yet
    cluster.capacity = {"cpu": "4", "nvidia.com/gpu": "1"}
    kl._claims = None
    assert kl._device_plugins_late()
    assert cluster.patched == [("Node", "aks-x", "status")]
    kl._claims = None
    assert not kl._device_plugins_late()              # once


def test_a_seeded_entrys_reported_resources_replace_the_machines_and_no_device_plugin_overrides_them():
    """given.existingNodes[].capacity / allocatable: what the entry's kubelet reports (a GPU it zeroed), as the
    simulation's seeding applies it; the device plugin stand-in does not report that resource later."""
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster = _GpuCluster()
    cluster.capacity = {"cpu": "4", "nvidia.com/gpu": "1"}
    kl = Kubelets(cluster, _GpuFake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    kl.reports["aks-x"] = {"capacity": {"nvidia.com/gpu": "0"}, "allocatable": {"nvidia.com/gpu": "0"}}
    body = {"properties": {"hardwareProfile": {"vmSize": "Standard_NC4as_T4_v3"},
                           "osProfile": {"computerName": "aks-x", "customData": _script("env=prod", FLAGS)}}}
    kl._boot("aks-x", body)
    status = cluster.created[0]["status"]
    assert status["capacity"]["nvidia.com/gpu"] == "0" and status["allocatable"]["nvidia.com/gpu"] == "0"
    assert not kl._device_plugins_late()


def test_a_vms_kubelet_boots_node_boot_seconds_after_its_create_succeeded(monkeypatch):
    """given.loop.nodeBoot: the stand-in waits that long from the poll that first saw the VM created, as
    the simulation waits on its clock; the harness's own seeded existing nodes register at once."""
    from harness.runner.engines.real.cluster import kubelet
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    now = [100.0]
    monkeypatch.setattr(kubelet.time, "monotonic", lambda: now[0])
    kl = Kubelets(object(), _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"}, boot=15.0)
    assert not kl._booted("vm0")
    now[0] += 14.9
    assert not kl._booted("vm0")
    now[0] += 0.1
    assert kl._booted("vm0")
    kl.seeding = True
    assert kl._booted("vm1")
    assert Kubelets(object(), _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})._booted("vm2")


class _LeaseCluster:
    """Records the Lease requests a node identity makes; `leases`: the ones that exist."""

    def __init__(self):
        self.leases, self.requests = set(), []
        self.nodes = {"aks-x": {"metadata": {"name": "aks-x", "uid": "u-1"}}}

    def client(self, identity):
        return self

    def get(self, kind, name, namespace=None):
        return self.nodes.get(name) if kind == "Node" else None

    def request(self, method, path, body=None, **_):
        from harness.backends.base import APIRejected
        self.requests.append((method, body))
        name = path.rsplit("/", 1)[-1]
        if method == "PATCH" and name not in self.leases:
            raise APIRejected(404, "NotFound", f'leases.coordination.k8s.io "{name}" not found')
        if method == "POST":
            self.leases.add(body["metadata"]["name"])


def test_the_lease_is_owned_by_its_node_and_made_again_when_deleted():
    """core v0.36-v1.0 deletes kube-node-lease Leases without an owner (leasegarbagecollection): the
    stand-in's Lease names its Node as the kubelet's does, and a renewal that finds it gone makes it again."""
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster = _LeaseCluster()
    kl = Kubelets(cluster, _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    kl._lease("aks-x", create=True)
    method, body = cluster.requests[-1]
    assert method == "POST" and body["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "aks-x", "uid": "u-1"}]
    cluster.leases.clear()                      # Karpenter's lease garbage collection, or anyone
    kl._lease("aks-x")
    assert [m for m, _ in cluster.requests[-2:]] == ["PATCH", "POST"]
    del cluster.nodes["aks-x"]
    cluster.leases.clear()
    kl._lease("aks-x")
    assert cluster.requests[-1][0] == "PATCH"   # the Node is gone: nothing to renew



def test_the_leases_are_renewed_while_the_poll_loop_does_not_step(monkeypatch):
    """Each kubelet is a process of its own: its Lease is renewed whatever the harness is doing (a dump's
    seeding writes every NodeClaim's history between two polls), until the run closes the stand-ins."""
    import threading
    from harness.runner.engines.real.cluster import kubelet
    from harness.runner.engines.real.cluster.kubelet import KubeletRecord, Kubelets
    monkeypatch.setattr(kubelet, "RENEW_SECONDS", 0.01)
    cluster, renewed = _LeaseCluster(), threading.Event()
    cluster.leases.add("aks-x")
    request = cluster.request

    def counted(method, path, body=None, **kw):
        request(method, path, body, **kw)
        if method == "PATCH" and sum(m == "PATCH" for m, _ in cluster.requests) >= 3:
            renewed.set()
    cluster.request = counted
    kl = Kubelets(cluster, _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    kl.records["aks-x"] = KubeletRecord("aks-x", "aks-x", kubelet.Bootstrap({}, {}), registered=True)
    kl.start_heartbeats()
    assert renewed.wait(30)                     # three renewals, no step() called
    kl.close()
    assert not kl._beats.is_alive()



@pytest.mark.parametrize("held", [False, True])
def test_a_node_marked_unknown_while_its_kubelet_lives_reports_ready_again(held):
    """A late renewal is not a dead node: the node lifecycle controller set Ready Unknown, and the kubelet's
    next status sync posts Ready again; a kubelet the harness holds NotReady leaves it."""
    from harness.runner.engines.real.cluster.kubelet import KubeletRecord, Kubelets, Bootstrap
    cluster, patched = _LeaseCluster(), []
    cluster.leases.add("aks-x")
    cluster.nodes["aks-x"]["status"] = {"conditions": [{"type": "Ready", "status": "Unknown",
                                                        "reason": "NodeStatusUnknown"}]}
    cluster.patch = lambda kind, name, body, namespace=None, sub=None: patched.append((kind, name, body, sub))
    kl = Kubelets(cluster, _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    kl.records["aks-x"] = KubeletRecord("aks-x", "aks-x", Bootstrap({}, {}), registered=True)
    if held:
        kl.not_ready.add("aks-x")
    kl._renew()
    assert cluster.requests[-1][0] == "PATCH"           # the Lease
    if held:
        assert patched == []
    else:
        ((kind, name, body, sub),) = patched
        assert (kind, name, sub) == ("Node", "aks-x", "status")
        assert body["status"]["conditions"][0]["status"] == "True"


def _job_pod(phase="Running", started="2026-01-01T00:00:00Z"):
    return {"metadata": {"name": "reindex-abc", "namespace": "default",
                         "ownerReferences": [{"kind": "Job", "name": "reindex", "controller": True}]},
            "spec": {"nodeName": "aks-x", "containers": [{"name": "work", "image": "busybox"}]},
            "status": {"phase": phase, "startTime": started}}


@pytest.mark.parametrize("offset,done", [(599.0, False), (600.0, True)])
def test_a_jobs_pod_succeeds_once_its_run_duration_passed_on_the_run_clock(monkeypatch, offset, done):
    """jobs.py's meaning on the real engine: a pod completes run-duration after its startTime; its kubelet
    posts phase Succeeded with each container terminated, exit code 0 (then the real Job controller counts it)."""
    from harness.loop.clock import EPOCH
    from harness.runner.engines.real.cluster import kubelet as kmod
    from harness.runner.engines.real.cluster.kubelet import Kubelets
    cluster = _StandInCluster()
    kl = Kubelets(cluster, _Fake(), None, None, {"nodeResourceGroup": "rg", "region": "eastus"})
    kl._boot("aks-x", {"properties": {"osProfile": {"computerName": "aks-x", "customData": _script("env=prod", FLAGS)}}})
    patched = []
    cluster.client = lambda ident: type("C", (), {"patch": lambda self, kind, name, body, namespace=None, sub=None:
                                                  patched.append((kind, name, sub, body))})()
    monkeypatch.setattr(kmod.CLOCK, "now", lambda: EPOCH + offset)
    job = {"metadata": {"name": "reindex", "namespace": "default",
                        "annotations": {"harness.karpenter.azure.com/run-duration": "10m"}}}
    patched.clear()
    assert kl.finish_jobs([_job_pod()], [job]) is done
    if not done:
        assert patched == []
        return
    ((kind, name, sub, body),) = patched
    assert (kind, name, sub) == ("Pod", "reindex-abc", "status")
    status = body["status"]
    assert status["phase"] == "Succeeded"
    (c,) = status["containerStatuses"]
    assert c["state"]["terminated"] == {"exitCode": 0, "reason": "Completed", "startedAt": "2026-01-01T00:00:00Z",
                                        "finishedAt": "2026-01-01T00:10:00Z"}
    # a pod with no run-duration runs until the scenario ends; a finished one is left alone
    patched.clear()
    assert not kl.finish_jobs([_job_pod()], [{"metadata": {"name": "reindex", "namespace": "default"}}])
    assert not kl.finish_jobs([_job_pod(phase="Succeeded")], [job]) and patched == []


def test_a_bootstrap_aks_made_gets_the_flags_aks_fills_in():
    """A machine's VM (fakeazure/containerservice) sets no --kube-reserved and, without the machine's maxPods, no
    --max-pods: the stand-in reserves as the provider's own bootstrap does and takes the network plugin's pods."""
    from fakeazure.containerservice.models import bootstrap_script
    from harness.runner.engines.real.cluster.kubelet import with_aks_defaults
    boot = decode_custom_data(bootstrap_script({"team": "a"}, ["karpenter.sh/unregistered:NoExecute"], None))
    assert boot.aks_made and "--kube-reserved" not in boot.flags
    facts = MachineFacts("aks-testmpool-m-12345678-vm", "amd64", 2, 8 * 1024, 128)
    full = with_aks_defaults(boot, facts, {"networkPlugin": "azure", "networkPluginMode": "overlay"})
    assert full.max_pods == 250 and full.flags["--kube-reserved"] == "cpu=100m,memory=1843Mi"
    assert full.flags["--eviction-hard"] == "memory.available<750Mi" and full.node_labels == {"team": "a"}
    own = decode_custom_data(_script("env=prod", FLAGS))
    assert not own.aks_made and with_aks_defaults(own, facts, {}) is own
