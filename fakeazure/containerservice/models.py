"""AKS agent pools and the machines in them (Microsoft.ContainerService managedClusters/{c}/agentPools/{p}
[/machines/{m}]), as the provider's AKS Machine API provision modes use them, and the VM AKS makes for each
machine in the cluster's node resource group.

Shapes follow the provider's fakes (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/fake/aksmachinesapi.go
setDefaultMachineValues, MkMachineID; aksagentpoolsapi.go): a machine's ``properties.resourceId`` is its VM,
named ``aks-<pool>-<machine>-<8 digits>-vm`` (pkg/providers/instance/aksmachineinstanceutils.go
GetAKSMachineNameFromVMName), ``status.creationTimestamp``, an ``eTag``, ``priority`` defaulted to Regular.
The VM is made through the compute model as a VM PUT would be (its SKU, zone, Spot and quota checks, the
scenario's fault rules on ``vm.create``), so the rest of fakeazure (VM get/list, resource graph, quota,
Spot eviction) serves it; what refuses it becomes the machine's ``status.provisioningError``
(exceptions.provisioning_error).

The VM carries the bootstrap AKS gives its kubelet (``osProfile.customData``, kept here: the stored VM drops
customData as Azure does): ``KUBELET_NODE_LABELS`` = the machine's ``kubernetes.nodeLabels`` plus the labels AKS
writes itself (:func:`aks_labels`: the pool's labeler, which the harness gives its rule), ``KUBELET_FLAGS`` with
``--register-with-taints`` = its ``nodeInitializationTaints`` and ``nodeTaints``, ``--max-pods`` when the machine
sets it; the real engine's kubelet stand-in reads it as it reads an aksscriptless VM's. docs/fakeazure.md "AKS machines and agent pools".
"""
from __future__ import annotations

import base64
import hashlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..arm import ARMError, clone_json, iso, resource_id
from ..compute.models import vm_resource_id

if TYPE_CHECKING:  # pragma: no cover
    from ..compute.models import ComputeModel, VirtualMachine

MACHINE_TYPE = "Microsoft.ContainerService/managedClusters/agentPools/machines"
POOL_TYPE = "Microsoft.ContainerService/managedClusters/agentPools"
# the first line of a bootstrap AKS made (the real engine's kubelet stand-in tells it from the provider's own)
BOOTSTRAP_MARK = "# fakeazure: node bootstrap made by AKS"


def cluster_digits(rg: str, cluster: str) -> str:
    """The 8 digits AKS puts in a cluster's VM names (``aks-<pool>-<machine>-########-vm``): derived from the
    cluster's identity here (harness assumption: AKS's own derivation is not public)."""
    return str(int(hashlib.sha256(f"{rg.lower()}/{cluster.lower()}".encode()).hexdigest(), 16) % 10 ** 8).zfill(8)


def pool_id(sub: str, rg: str, cluster: str, pool: str) -> str:
    return (resource_id(sub, rg, "Microsoft.ContainerService", "managedClusters", cluster)
            + f"/agentPools/{pool}")


def machine_id(sub: str, rg: str, cluster: str, pool: str, name: str) -> str:
    """pkg/fake/aksmachinesapi.go MkMachineID."""
    return pool_id(sub, rg, cluster, pool) + f"/machines/{name}"


def aks_labels(pool: "AgentPool", props: dict, sku: dict | None = None) -> dict[str, str]:
    """The labels AKS itself writes on a machine's node, beside the machine's ``nodeLabels`` (which the provider
    sanitized of them: pkg/providers/instance/aksmachineinstancehelpers.go configureLabelsAndMode): what the pool's
    ``labeler`` says for the machine's properties and SKU (the harness gives its rule there), else the pool's
    ``node_labels`` and the machine's mode (``kubernetes.azure.com/mode``: user or system)."""
    if pool.labeler is not None:
        return {str(k): str(v) for k, v in pool.labeler(props, sku).items()}
    return {**pool.node_labels, "kubernetes.azure.com/mode": str(props.get("mode") or "User").lower()}


def bootstrap_script(labels: dict[str, str], taints: list[str], max_pods: int | None) -> str:
    """base64 of the two lines the kubelet starts from (``KUBELET_FLAGS``, ``KUBELET_NODE_LABELS``), in the
    aksscriptless script's spelling (provider v1.14.0 pkg/providers/imagefamily/bootstrap/cse_cmd.sh.gtpl)."""
    flags = ["--cloud-provider=external"]
    if taints:
        flags.append("--register-with-taints=" + ",".join(taints))
    if max_pods:
        flags.append(f"--max-pods={int(max_pods)}")
    text = "\n".join([BOOTSTRAP_MARK,
                      f'KUBELET_FLAGS="{" ".join(shlex.quote(f) for f in flags)}"',
                      f'KUBELET_NODE_LABELS="{",".join(f"{k}={v}" for k, v in sorted(labels.items()))}"', ""])
    return base64.b64encode(text.encode()).decode()


@dataclass
class AgentPool:
    rg: str
    cluster: str
    name: str
    node_resource_group: str
    location: str
    mode: str = "Machines"                     # the pool's properties.mode (hack/deploy/add-aks-machines-pool.sh)
    node_labels: dict[str, str] = field(default_factory=dict)
    subnet_id: str | None = None               # the subnet of a machine that names none (the cluster's)
    # (machine properties, its SKU or None) -> the labels AKS writes on its node (aks_labels); None: node_labels
    labeler: Callable[[dict, dict | None], dict] | None = None

    def view(self, sub: str) -> dict:
        return {"id": pool_id(sub, self.rg, self.cluster, self.name), "name": self.name, "type": POOL_TYPE,
                "properties": {"mode": self.mode, "provisioningState": "Succeeded",
                               "nodeResourceGroup": self.node_resource_group}}


@dataclass
class Machine:
    pool: AgentPool
    name: str
    zones: list[str]
    props: dict                  # the machine's properties as sent, with AKS's defaults
    vm_name: str
    created: float
    etag: str
    provisioning_state: str = "Creating"
    error: dict | None = None    # status.provisioningError
    operation: str | None = None
    # status.driftAction / driftReason: what AKS wants done to the machine (armcontainerservice DriftAction:
    # Synced, Recreate); None while AKS has said nothing (the provider's fake sets neither)
    drift_action: str | None = None
    drift_reason: str | None = None
    # created by a BatchPutMachine PUT: the reply names the first machine's operation only, so each machine's GET
    # stands for a status poll of its own (the provider waits with GETs: machinecache PollUntilDone)
    batched: bool = False

    def view(self, sub: str) -> dict:
        props = clone_json(self.props)
        props["provisioningState"] = self.provisioning_state
        props["eTag"] = self.etag
        props["resourceId"] = vm_resource_id(sub, self.pool.node_resource_group, self.vm_name)
        status = dict(props.get("status") or {})
        status["creationTimestamp"] = iso(self.created)
        if self.error is not None:
            status["provisioningError"] = self.error
        if self.drift_action is not None:
            status["driftAction"] = self.drift_action
            if self.drift_reason:
                status["driftReason"] = self.drift_reason
        props["status"] = status
        out: dict[str, Any] = {"id": machine_id(sub, self.pool.rg, self.pool.cluster, self.pool.name, self.name),
                               "name": self.name, "type": MACHINE_TYPE, "properties": props}
        if self.zones:
            out["zones"] = list(self.zones)
        return out


class ContainerServiceModel:
    """Agent pools and machines; a machine's VM lives in the compute model."""

    def __init__(self, rng, clock, compute: "ComputeModel"):
        self.rng, self.clock, self.compute = rng, clock, compute
        self.pools: dict[tuple[str, str, str], AgentPool] = {}
        self.machines: dict[tuple[str, str, str, str], Machine] = {}
        self.bootstraps: dict[str, dict] = {}    # VM name (lower) -> the VM body AKS sent, customData kept
        self.etags = 0
        compute.on_evicted.append(self._vm_evicted)

    def _vm_evicted(self, vm: "VirtualMachine") -> None:
        """A Spot eviction (policy Delete) takes the machine with its VM. (harness assumption: AKS's handling of an
        evicted machine is not public; the provider's e2e Spot suite, run in the Machine API modes too - v1.14.0
        .github/workflows/e2e-matrix.yaml, test/suites/spot - expects the evicted node's NodeClaim to go, which core's
        garbage collector does once the machine is no longer listed.)"""
        for key, m in list(self.machines.items()):
            if m.vm_name.lower() == vm.name.lower() and m.pool.node_resource_group.lower() == vm.rg.lower():
                self.machines.pop(key, None)
                self.bootstraps.pop(m.vm_name.lower(), None)

    def clear(self) -> None:
        self.machines.clear()
        self.bootstraps.clear()

    def add_pool(self, pool: AgentPool) -> AgentPool:
        self.pools[(pool.rg.lower(), pool.cluster.lower(), pool.name.lower())] = pool
        return pool

    def pool(self, rg: str, cluster: str, name: str) -> AgentPool | None:
        return self.pools.get((rg.lower(), cluster.lower(), name.lower()))

    def get(self, pool: AgentPool, name: str) -> Machine | None:
        return self.machines.get((pool.rg.lower(), pool.cluster.lower(), pool.name.lower(), name.lower()))

    def list(self, pool: AgentPool) -> list[Machine]:
        key = (pool.rg.lower(), pool.cluster.lower(), pool.name.lower())
        return [m for k, m in self.machines.items() if k[:3] == key]

    def next_etag(self) -> str:
        self.etags += 1
        return f'"etag-{self.etags}"'

    def new_machine(self, pool: AgentPool, name: str, zones: list[str], props: dict) -> Machine:
        """A machine with AKS's defaults (pkg/fake/aksmachinesapi.go setDefaultMachineValues), not yet stored."""
        props = clone_json(props)
        props.pop("provisioningState", None)
        props.pop("status", None)
        props.setdefault("priority", "Regular")
        # the provider always sends one; its fake's default otherwise (pkg/fake/aksmachinesapi.go)
        props.setdefault("nodeImageVersion", "AKSUbuntu-2204gen2containerd-2023.11.15")
        vm_name = f"aks-{pool.name}-{name}-{cluster_digits(pool.rg, pool.cluster)}-vm".lower()
        return Machine(pool, name, list(zones), props, vm_name, self.clock.time(), self.next_etag())

    def store(self, m: Machine) -> None:
        self.machines[(m.pool.rg.lower(), m.pool.cluster.lower(), m.pool.name.lower(), m.name.lower())] = m

    def vm_body(self, m: Machine, image_id: str | None, sku: dict | None = None) -> dict:
        """The VM PUT AKS makes for a machine (of SKU `sku`): its size, zone, priority, tags and the kubelet's
        bootstrap."""
        props, spot = m.props, str(m.props.get("priority") or "Regular").lower() == "spot"
        kube = props.get("kubernetes") or {}
        taints = [str(t) for t in (kube.get("nodeInitializationTaints") or []) + (kube.get("nodeTaints") or [])]
        labels = {**{str(k): str(v) for k, v in (kube.get("nodeLabels") or {}).items()}, **aks_labels(m.pool, props, sku)}
        vm_props: dict[str, Any] = {
            "hardwareProfile": {"vmSize": (props.get("hardware") or {}).get("vmSize")},
            "priority": "Spot" if spot else "Regular",
            "osProfile": {"computerName": m.vm_name, "adminUsername": "azureuser",
                          "customData": bootstrap_script(labels, taints, kube.get("maxPods"))},
            "storageProfile": {"osDisk": {"name": f"{m.vm_name}_osdisk", "createOption": "FromImage",
                                          "deleteOption": "Delete"}},
        }
        if image_id:
            vm_props["storageProfile"]["imageReference"] = {"id": image_id}
        if spot:
            vm_props["evictionPolicy"] = "Delete"
            vm_props["billingProfile"] = {"maxPrice": -1}
        return {"location": m.pool.location, "zones": list(m.zones), "tags": dict(props.get("tags") or {}),
                "properties": vm_props}

    def make_vm(self, sub: str, m: Machine, body: dict, sku: dict) -> "VirtualMachine":
        """The machine's NIC (``<vm>-nic``, untagged: the AKS machine API puts no tags on NICs, provider v1.14.0
        aksmachineinstancehelpers.go buildAKSMachineTemplate; the name is a harness assumption) in the machine's
        subnet or the pool's, deleted with the VM, then the VM."""
        rg = m.pool.node_resource_group
        subnet = (m.props.get("network") or {}).get("vnetSubnetID") or m.pool.subnet_id or resource_id(
            sub, rg, "Microsoft.Network", "virtualNetworks", "aks-vnet") + "/subnets/aks-subnet"
        nic, _ = self.compute.network.create_or_update(sub, rg, f"{m.vm_name}-nic", {
            "location": m.pool.location, "properties": {"ipConfigurations": [{"name": "ipconfig1", "properties": {
                "primary": True, "privateIPAllocationMethod": "Dynamic", "subnet": {"id": subnet}}}]}})
        body["properties"]["networkProfile"] = {"networkInterfaces": [
            {"id": nic.id(sub), "properties": {"primary": True, "deleteOption": "Delete"}}]}
        vm = self.compute.create(sub, rg, m.vm_name, body, self.compute.parse_put(body), sku, [nic.id(sub)])
        self.bootstraps[m.vm_name.lower()] = body
        return vm

    def vm_of(self, m: Machine) -> "VirtualMachine | None":
        return self.compute.get(m.pool.node_resource_group, m.vm_name)

    def remove(self, m: Machine) -> None:
        vm = self.vm_of(m)
        if vm is not None:
            self.compute.remove(vm)
        self.machines.pop((m.pool.rg.lower(), m.pool.cluster.lower(), m.pool.name.lower(), m.name.lower()), None)

    def fail(self, m: Machine, err: ARMError) -> None:
        """The machine's create failed on its VM: the VM goes, the machine stays Failed with the error."""
        from .exceptions import provisioning_error
        vm = self.vm_of(m)
        if vm is not None:
            self.compute.remove(vm)
            self.bootstraps.pop(m.vm_name.lower(), None)
        m.provisioning_state = "Failed"
        m.error = provisioning_error(err.code, err.message)
