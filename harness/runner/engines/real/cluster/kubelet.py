"""The kubelet and cloud-node-controller stand-ins for the real engine, fed from the bootstrap data
the real controller put on the VM.

In aksscriptless mode the provider sends `osProfile.customData` = base64 of a provisioning script
(provider v1.14.0 pkg/providers/imagefamily/bootstrap/aksbootstrap.go `AKS.Script`, template
cse_cmd.sh.gtpl) with `KUBELET_FLAGS="--k=v ..."` (incl. `--register-with-taints`, `--max-pods`,
`--kube-reserved`, `--eviction-hard`) and `KUBELET_NODE_LABELS="k=v,..."`. The stand-in decodes
exactly those two lines and registers the Node as `system:node:<computerName>` (Node authorizer and
NodeRestriction judge it), then plays the cloud node controller (providerID, instance type, zone,
region; lifts the uninitialized taint), reports Ready and renews the node Lease.
"""
from __future__ import annotations

import base64
import json
import re
import shlex
import threading
import time
from dataclasses import dataclass, field

from harness.loop.azure import machine
from harness.loop.azure.machine import MachineFacts, machine_facts
from harness.model.labels.writers import KUBELET_NODE_LABELS
from harness.model.values.resources import parse_resource
from harness.runner.engines.real.cluster.runclock import CLOCK

CSI_ZONE = "topology.disk.csi.azure.com/zone"
INITIALIZED_LABEL = "karpenter.sh/initialized"
UNINITIALIZED = {"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"}
_VAR = re.compile(r'^(KUBELET_FLAGS|KUBELET_NODE_LABELS)="(.*)"\s*$', re.M)


class BootstrapError(ValueError):
    pass


@dataclass
class Bootstrap:
    """What the kubelet would start with."""
    node_labels: dict[str, str]
    flags: dict[str, str]
    raw_labels: str = ""
    aks_made: bool = False          # AKS wrote it (fakeazure/containerservice/models.py BOOTSTRAP_MARK)
    # who the label table names as the writer of node_labels: the kubelet's --node-labels, or, on the AKS Machine
    # API path, AKS (harness/model/labels/aksmachine.py writer, as the simulation names it)
    labels_writer: str = KUBELET_NODE_LABELS

    @property
    def taints(self) -> list[dict]:
        """--register-with-taints: `key=value:Effect` or `key:Effect`, comma separated."""
        out = []
        for item in filter(None, self.flags.get("--register-with-taints", "").split(",")):
            kv, _, effect = item.rpartition(":")
            key, _, value = kv.partition("=")
            t = {"key": key, "effect": effect}
            if value:
                t["value"] = value
            out.append(t)
        return out

    @property
    def max_pods(self) -> int:
        return int(self.flags.get("--max-pods", "110"))

    def reserved(self) -> dict[str, int]:
        """--kube-reserved + --system-reserved + the memory/nodefs hard-eviction thresholds that are
        quantities (what the kubelet subtracts from capacity for allocatable)."""
        out: dict[str, int] = {}
        for flag in ("--kube-reserved", "--system-reserved"):
            for item in filter(None, self.flags.get(flag, "").split(",")):
                k, _, v = item.partition("=")
                out[k] = out.get(k, 0) + parse_resource(k, v)
        for item in filter(None, self.flags.get("--eviction-hard", "").split(",")):
            m = re.fullmatch(r"memory\.available<(\S+)", item)
            if m and not m.group(1).endswith("%"):
                out["memory"] = out.get("memory", 0) + parse_resource("memory", m.group(1))
        return out


def decode_custom_data(custom_data: str) -> Bootstrap:
    try:
        text = base64.b64decode(custom_data).decode("utf-8", "replace")
    except (ValueError, TypeError) as e:
        raise BootstrapError(f"customData is not base64: {e}") from None
    found = dict(_VAR.findall(text))
    if "KUBELET_NODE_LABELS" not in found:
        raise BootstrapError("customData has no KUBELET_NODE_LABELS line (not an aksscriptless bootstrap script)")
    labels = dict(p.split("=", 1) for p in found["KUBELET_NODE_LABELS"].split(",") if "=" in p)
    flags = {}
    for tok in shlex.split(found.get("KUBELET_FLAGS", "")):
        k, _, v = tok.partition("=")
        flags[k] = v
    from fakeazure.containerservice.models import BOOTSTRAP_MARK
    return Bootstrap(labels, flags, found["KUBELET_NODE_LABELS"], aks_made=text.startswith(BOOTSTRAP_MARK))


def with_aks_defaults(boot: Bootstrap, facts: MachineFacts, settings: dict) -> Bootstrap:
    """A bootstrap AKS made (fakeazure/containerservice: the AKS Machine API and node bootstrapping modes) with
    the flags AKS fills in where the machine or profile left them: --max-pods by the network plugin and
    --kube-reserved, --eviction-hard as the provider computes them for its own aksscriptless bootstrap
    (harness/model/azure/overhead.py: the provider mirrors AKS's formula there; harness assumption that AKS's own
    bootstrap reserves the same). A bootstrap of the provider's own is returned as it is."""
    from harness.model.azure.overhead import EVICTION_MEMORY_AVAILABLE, MIB, kube_reserved, max_pods
    if not boot.aks_made:
        return boot
    flags = dict(boot.flags)
    if "--max-pods" not in flags:
        flags["--max-pods"] = str(max_pods(None, str(settings.get("networkPlugin") or ""),
                                           str(settings.get("networkPluginMode") or "")))
    if "--kube-reserved" not in flags:
        r = kube_reserved(facts.vcpus, facts.memory_mib / 1024)
        flags["--kube-reserved"] = f"cpu={r['cpu']}m,memory={r['memory'] // MIB}Mi"
        flags.setdefault("--eviction-hard", f"memory.available<{EVICTION_MEMORY_AVAILABLE // MIB}Mi")
    return Bootstrap(boot.node_labels, flags, boot.raw_labels, aks_made=True, labels_writer=boot.labels_writer)


def bootstrap_of(vm_put: dict) -> Bootstrap:
    custom = ((vm_put.get("properties") or {}).get("osProfile") or {}).get("customData")
    if not custom:
        raise BootstrapError("the VM PUT body has no osProfile.customData")
    return decode_custom_data(custom)


def node_status(facts: MachineFacts, boot: Bootstrap, extended: dict[str, int] | None = None) -> dict:
    """The Node's capacity and allocatable (harness/loop/azure/machine.py), reserving what the bootstrap's
    flags reserve."""
    return machine.node_status(facts, boot.max_pods, boot.reserved(), extended)


@dataclass
class KubeletRecord:
    """One stand-in kubelet's story, for the RunResult (labels it tried, refusals)."""
    vm_name: str
    node_name: str
    bootstrap: Bootstrap
    refused: str | None = None                 # the kubelet exited (bad --node-labels)
    denied: str | None = None                  # NodeRestriction refused the registration
    registered: bool = False
    self_labels: dict[str, str] = field(default_factory=dict)
    ccm_labels: dict[str, str] = field(default_factory=dict)
    startup_lifted: bool = False
    registered_seen: float = 0.0
    csi_labels: dict[str, str] = field(default_factory=dict)
    csi_denied: str | None = None
    size: str = ""                             # the VM's size (its SKU: what a device plugin counts)
    devices_registered: bool = False           # the extended resources a device plugin reports are on the Node


def _microtime() -> str:
    import datetime as dt
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _time() -> str:
    # a condition's transition and a pod's startTime are on the run's clock (runclock.py): core compares
    # them with its own (a node's repair toleration, a pod's do-not-disrupt duration); a Lease's renewTime
    # (_microtime) stays on the wall clock, which kube-controller-manager's node lifecycle reads
    return CLOCK.stamp()


LEASE_NAMESPACE = "kube-node-lease"
LEASE_SECONDS = 40
# the Lease renew interval: a kubelet's is 10 s (node-lease-renew-interval-fraction 0.25 x 40 s); the stand-in
# renews more often so that the fast timing's 15 s --node-monitor-grace-period (controller-timing.yaml) has margin.
# The renewals run on a thread of their own (Kubelets.start_heartbeats), as each kubelet is a process of its own:
# on the harness's poll loop they stopped while the harness did a long piece of work (seeding a 100-node dump's
# history writes every NodeClaim's status, ~30 s on a loaded machine) and every Node went NotReady, which
# core counts against the disruption budget (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/disruption/helpers.go
# BuildDisruptionBudgetMapping)
RENEW_SECONDS = 2.0
# a kubelet's own: its Lease's 40 s duration times its renew fraction 0.25 (k8s.io/kubernetes v1.33.13 to
# v1.36.3 pkg/kubelet/kubelet.go nodeLeaseRenewIntervalFraction, pkg/kubelet/apis/config/v1beta1/defaults.go
# NodeLeaseDurationSeconds), for a run whose kube-controller-manager keeps its own grace (scale.py)
KUBELET_RENEW_SECONDS = 10.0
# renewals in flight at once: one after the other, 100 Leases took 12 s a round at load 25 on 2 cores (the poll
# loop holds the GIL between each request's steps), near the 15 s grace; eight at a time, 219 Leases took 1.2-3.1 s
# while a 1,000-node dump was seeded at load 8 (docs/benchmarks/real-engine.md)
RENEW_WORKERS = 16
DAEMONSET_GRACE = 2.0        # seconds the DaemonSet controller gets to create a new node's pods
# An existing node in flight was launched before the scenario began, so it comes up before any node Karpenter
# launches for the scenario: once Karpenter launches one, the held ones are released and the new VMs' kubelets
# wait this long, in which kube-scheduler (it binds within milliseconds of a Node turning Ready) places the pods
# Karpenter planned onto the in-flight node there, as it would have minutes earlier on Azure
IN_FLIGHT_LEAD = 2.0


class Kubelets:
    """Every stand-in kubelet of a run: one per VM the controller created, started once the fake
    holds the VM, registered from that VM's bootstrap data."""

    def __init__(self, cluster, fake, tap, profile, settings: dict, boot: float = 0.0, renew: float | None = None):
        """`boot`: seconds a VM's kubelet takes to register once the VM's create succeeded
        (given.loop.nodeBoot; the simulation counts them on its clock); `renew`: seconds between two
        renewals of a Lease (None: RENEW_SECONDS)."""
        self.renew_seconds = renew
        self.cluster, self.fake, self.tap, self.profile = cluster, fake, tap, profile
        self.reads = cluster         # what its polls read: the run's watch cache (engine.py), else the cluster
        self.boot_seconds = boot
        self._up_since: dict[str, float] = {}               # VM name -> when its create was first seen done
        self.rg = settings["nodeResourceGroup"]
        self.settings = settings            # the cluster's (azureside.cluster_settings): with_aks_defaults reads it
        self.region = settings["region"]
        self.records: dict[str, KubeletRecord] = {}        # VM name -> record
        self._pending_ccm: set[str] = set()
        self._released: set[str] = set()                    # kind: VMs whose kubelet was stopped
        self._last_renew = 0.0
        self._skus = {s["name"].lower(): s for s in fake.skus()}
        self.held: set[str] = set()         # VMs whose kubelet does not boot yet (in-flight existing nodes)
        self.not_ready: set[str] = set()    # VMs whose kubelet registers but reports NotReady (until released)
        self.never_ready: set[str] = set()  # of those, VMs never released (their Node carries the not-ready taint)
        # VMs of seeded existing nodes, initialized long ago in the state a scenario starts from: their Node
        # registers with karpenter.sh/initialized already, so no disruption pass sees it uninitialized (that
        # pass's DisruptionBlocked "Node isn't initialized" would hide the node's next DisruptionBlocked for
        # 2 minutes: core v1.14.0 pkg/events/recorder.go dedupes by reason and node uid, whatever the message)
        self.initialized: set[str] = set()
        # VM name -> the capacity and allocatable a seeded entry says its kubelet reports (an extended resource
        # the kubelet zeroed, for one): they replace the machine's, and no device plugin reports those later
        self.reports: dict[str, dict[str, dict]] = {}
        self.unmanaged: set[str] = set()    # seeded Nodes Karpenter does not manage: their kubelets heartbeat too
        # (namespace, name) -> a seeded pod's status.startTime as the dump gives it: it ran since then (a
        # duration-valued do-not-disrupt counts from it; loop/seed.py _settled_pods)
        self.started: dict[tuple[str, str], str] = {}
        self.seeding = False                # given.existingNodes are being launched: a new VM is one of theirs
        self._lead_until = 0.0              # new VMs' kubelets wait until then (IN_FLIGHT_LEAD) ...
        self._ahead: set[str] = set()       # ... while these released ones boot
        self._claims: list[dict] | None = None      # the NodeClaims as this step read them (nodeclaims())
        self._beats: threading.Thread | None = None   # the Lease renewals (start_heartbeats) ...
        self._pool = None                               # ... RENEW_WORKERS at a time
        self._held_nodes: set[str] = set()              # Nodes whose kubelet reports NotReady (not_ready)
        self.silent: set[str] = set()       # Nodes whose kubelet stopped: no Lease renewed (a seeded Ready Unknown)
        self._stop = threading.Event()

    # -- the loop's one entry point ---------------------------------------------------------------
    def step(self) -> bool:
        progress = False
        self._claims = None
        puts = {n: p for n, p in {**self.tap.vm_puts(), **self.tap.machine_vm_puts()}.items()
                if n not in self.records and n.lower() not in self.held and self._running(n) and self._booted(n)}
        if puts and not self.seeding and self.release_held():
            self._lead_until = time.monotonic() + IN_FLIGHT_LEAD
            return True
        if time.monotonic() < self._lead_until:
            puts = {n: p for n, p in puts.items() if n.lower() in self._ahead}
        for name, put in puts.items():
            self._boot(name, put.body)
            progress = True
        for name in sorted(self._pending_ccm):
            progress |= self._cloud_node_controller(name)
        progress |= self._startup_agents()
        progress |= self._device_plugins_late()
        progress |= self._release_deleted()
        return progress

    def start_heartbeats(self) -> None:
        """Renew every live stand-in's Lease every `renew` seconds (RENEW_SECONDS) on a thread of their own,
        whatever the harness's poll loop is doing, until close(). On kind the real kubelets renew their own."""
        if self._beats is not None or hasattr(self.cluster, "kubelets"):
            return
        from concurrent.futures import ThreadPoolExecutor
        self._pool = ThreadPoolExecutor(RENEW_WORKERS, thread_name_prefix="kubelet-lease")
        self._beats = threading.Thread(target=self._heartbeats, name="kubelet-leases", daemon=True)
        self._beats.start()

    def _heartbeats(self) -> None:
        while not self._stop.wait(max(0.0, (self.renew_seconds or RENEW_SECONDS)
                                      - (time.monotonic() - self._last_renew))):
            self._last_renew = time.monotonic()
            try:
                self._renew()
            except Exception:   # noqa: BLE001 - a request failing as the cluster resets: the next round retries
                pass

    def release_held(self) -> bool:
        """Let the held in-flight existing nodes' kubelets boot and the NotReady ones report Ready; True when
        any was held. A held Node deleted meanwhile (an in-flight node Karpenter terminates) stays gone."""
        from harness.backends.base import ADMIN, APIRejected
        released = bool(self.held or self.not_ready - self.never_ready)
        self._ahead |= self.held
        self.held.clear()
        for vm in sorted(self.not_ready - self.never_ready):
            rec = next((r for name, r in self.records.items() if name.lower() == vm), None)
            if rec is not None and rec.registered:
                ready = {"type": "Ready", "status": "True", "reason": "KubeletReady",
                         "message": "kubelet is posting ready status"}
                try:
                    self.cluster.client(ADMIN).patch("Node", rec.node_name, {"status": {"conditions": [ready]}},
                                                     sub="status")
                except APIRejected as e:
                    if e.status != 404:
                        raise
        self.not_ready &= self.never_ready
        return released

    def forget(self, vm_name: str) -> None:
        """A VM deleted and to be created again under its name (a seeded node launched anew): its next
        create boots a kubelet of its own."""
        for name in [n for n in self.records if n.lower() == vm_name.lower()]:
            del self.records[name]
            self._pending_ccm.discard(name)
            self._up_since.pop(name, None)

    def _booted(self, vm_name: str) -> bool:
        """The VM's kubelet has booted: `boot_seconds` since its create was first seen done."""
        if not self.boot_seconds or self.seeding:       # seeded existing nodes register at once, as in the simulation
            return True
        since = self._up_since.setdefault(vm_name, time.monotonic())
        return time.monotonic() - since >= self.boot_seconds

    def _running(self, vm_name: str) -> bool:
        """The VM exists and its create succeeded (a failed create never boots a kubelet)."""
        vm = self.fake.get_vm(self.rg, vm_name)
        return vm is not None and (vm.get("properties") or {}).get("provisioningState") == "Succeeded"

    # -- kubelet ------------------------------------------------------------------------------------
    def _boot(self, vm_name: str, body: dict) -> None:
        from harness.backends.base import APIRejected, Identity
        from harness.model.labels.policy import kubelet_flag_error
        from harness.model.labels.aksmachine import is_machine_mode
        from harness.model.labels.aksmachine import writer as aks_writer
        from harness.model.labels.writers import kubelet_self_labels
        size = ((body.get("properties") or {}).get("hardwareProfile") or {}).get("vmSize", "")
        facts = machine_facts(body, self._skus.get(size.lower()))
        try:
            from harness.runner.engines.real.controller.settings import engine_data
            boot = with_aks_defaults(bootstrap_of(body), facts, {**engine_data()["cluster_defaults"], **self.settings})
            if boot.aks_made and is_machine_mode(str(self.settings.get("provisionMode") or "")):
                boot.labels_writer = aks_writer()       # AKS writes a machine's Node (aksmachine.py)
        except BootstrapError as e:
            self.records[vm_name] = KubeletRecord(vm_name, facts.hostname or vm_name, Bootstrap({}, {}), refused=str(e))
            return
        rec = KubeletRecord(vm_name, facts.hostname or vm_name.lower(), boot, size=size)
        self.records[vm_name] = rec
        real_kubelets = hasattr(self.cluster, "kubelets")      # kind: a real kubelet boots for the VM
        # the kubelet validates its own flags first and exits on a bad --node-labels
        # (k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags;
        # k8s.io/kubernetes v1.36.3 cmd/kubelet/app/options/options.go ValidateKubeletFlags)
        rec.refused = None if real_kubelets else kubelet_flag_error(boot.node_labels, self.profile)
        if rec.refused:
            return
        rec.self_labels = kubelet_self_labels(rec.node_name, facts.arch)
        taints = list(boot.taints)
        if boot.flags.get("--cloud-provider") == "external":
            # an external cloud provider: the kubelet registers with the uninitialized taint
            # (k8s.io/cloud-provider api.TaintExternalCloudProvider)
            taints.append(dict(UNINITIALIZED))
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": rec.node_name, "labels": {**rec.self_labels, **boot.node_labels}},
                "spec": {"taints": taints}}
        if vm_name.lower() in self.initialized:
            node["metadata"]["labels"][INITIALIZED_LABEL] = "true"
        if real_kubelets:
            self._boot_real(vm_name, size, rec, node, facts)
            return
        ready = vm_name.lower() not in self.not_ready
        # the kubelet registers its Node with its status, Ready condition included (k8s.io/kubernetes v1.36.3
        # pkg/kubelet/kubelet_node_status.go initialNode calls setNodeStatus): a Node created without
        # conditions loses the not-ready taint TaintNodesByCondition gave it (the node lifecycle controller
        # maps no condition to no taint: pkg/controller/nodelifecycle doNoScheduleTaintingPass), and
        # kube-scheduler could bind to a held NotReady Node until its status came
        node["status"] = {**self._reported(vm_name, node_status(facts, boot, self._device_plugins(vm_name, size))),
                          "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                          "reason": "KubeletReady" if ready else "KubeletNotReady",
                                          "message": "kubelet is posting ready status" if ready else "held by the harness",
                                          "lastHeartbeatTime": _time(), "lastTransitionTime": _time()}],
                          "nodeInfo": {"architecture": facts.arch, "operatingSystem": "linux",
                                       "kubeletVersion": self.cluster.server_version,
                                       "containerRuntimeVersion": "containerd://harness"}}
        try:
            created = self.cluster.create(node, Identity.node(rec.node_name))
        except APIRejected as e:
            rec.denied = e.message
            return
        rec.registered = True
        self._lease(rec.node_name, create=True, uid=((created or {}).get("metadata") or {}).get("uid"))
        self.start_heartbeats()
        self._pending_ccm.add(vm_name)

    def _reported(self, vm_name: str, status: dict) -> dict:
        """The machine's capacity and allocatable with what a seeded entry says its kubelet reports instead
        (given.existingNodes[].capacity / allocatable, as the simulation's seeding applies them)."""
        from harness.model.values.resources import format_resource_list, parse_resource_list
        over = self.reports.get(vm_name.lower()) or {}
        for key in ("capacity", "allocatable"):
            if over.get(key):
                status = {**status, key: {**(status.get(key) or {}), **format_resource_list(parse_resource_list(over[key]))}}
        return status

    def _boot_real(self, vm_name: str, size: str, rec, node: dict, facts) -> None:
        """kind: a warm worker's real kubelet starts with the controller's --node-labels and taints,
        reports the machine of the VM's size and posts its own Ready and Lease
        (harness/backends/kind/cluster.py register_kubelet); its own exit message is the refusal."""
        from harness.backends.base import APIRejected
        node["status"] = node_status(facts, rec.bootstrap, self._device_plugins(vm_name, size))
        flags = dict(rec.bootstrap.node_labels)
        if INITIALIZED_LABEL in node["metadata"]["labels"]:
            # a seeded node initialized long ago registers with the label already, as the stand-in's
            # (above): the real kubelet writes it from its flags
            flags[INITIALIZED_LABEL] = node["metadata"]["labels"][INITIALIZED_LABEL]
        try:
            rec.refused = self.cluster.register_kubelet(node, flags, self.profile, self._provider_id(vm_name) or "")
        except APIRejected as e:
            rec.denied = e.message
            return
        if rec.refused:
            return
        rec.registered = True
        self._pending_ccm.add(vm_name)

    def _release_deleted(self) -> bool:
        """kind: a VM the controller deleted takes its kubelet and worker with it."""
        if not hasattr(self.cluster, "release_vm"):
            return False
        gone = [r for n, r in self.records.items() if r.registered and n not in self._released
                and self.fake.get_vm(self.rg, n) is None]
        for rec in gone:
            self.cluster.release_vm(rec.node_name)
            self._released.add(rec.vm_name)
        return bool(gone)

    def _device_plugins(self, vm_name: str, size: str) -> dict[str, int]:
        """Extended resources a device plugin registers (e.g. the NVIDIA plugin's nvidia.com/gpu):
        the resource names the controller expects on this NodeClaim, counted from the machine's
        SKU (its GPUs capability)."""
        nc = next((n for n in self.nodeclaims()
                   if ((n.get("status") or {}).get("providerID") or "").lower().endswith(f"/{vm_name.lower()}")), None)
        names = [k for k in ((nc or {}).get("status") or {}).get("capacity") or {} if "/" in k]
        gpus = self._gpus(size)
        return {n: gpus for n in names if gpus}

    def _device_plugins_late(self) -> bool:
        """A device plugin registers its resource with the kubelet, which reports it in the Node's
        status, once the plugin runs (https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/):
        a stand-in that booted before Karpenter wrote the NodeClaim's capacity (the VM's create is
        accepted first, core v1.14.0 nodeclaim/lifecycle/launch.go writes the capacity after the
        cloud provider's Create returns) reports the GPUs once the capacity names them."""
        from harness.backends.base import APIRejected, Identity
        progress = False
        for rec in self.records.values():
            if not rec.registered or rec.devices_registered or rec.refused or hasattr(self.cluster, "kubelets"):
                continue
            extended = self._device_plugins(rec.vm_name, rec.size)
            node = self.cluster.get("Node", rec.node_name) if extended else None
            if node is None:
                if not self._gpus(rec.size):
                    rec.devices_registered = True          # nothing a device plugin would report
                continue
            have = (node.get("status") or {}).get("capacity") or {}
            rec.devices_registered = True
            missing = {k: str(v) for k, v in extended.items() if k not in have}
            if not missing:
                continue
            try:
                self.cluster.client(Identity.node(rec.node_name)).patch(
                    "Node", rec.node_name, {"status": {"capacity": missing, "allocatable": missing}}, sub="status")
                progress = True
            except APIRejected as e:
                if e.status != 404:
                    raise
        return progress

    def _gpus(self, size: str) -> int:
        from fakeazure.catalog import capability
        sku = self._skus.get(size.lower())
        return int(capability(sku, "GPUs", "0") or 0) if sku else 0

    def _lease(self, node_name: str, create: bool = False, uid: str | None = None) -> None:
        """Create or renew the Node's Lease. Owned by its Node, as the kubelet's lease controller sets it
        (k8s.io/component-helpers v0.36.3 apimachinery/lease/controller.go newLeasePostProcessFunc,
        kubelet's SetNodeOwnerFunc): core v0.36-v1.0 deletes every kube-node-lease Lease without an owner
        (sigs.k8s.io/karpenter v1.0.6 pkg/controllers/leasegarbagecollection/controller.go), and the node
        lifecycle controller then marks the Node NotReady. A Lease deleted anyway is made again. `uid`: the
        Node's, when the caller has it."""
        from harness.backends.base import APIRejected, Identity
        client = self.cluster.client(Identity.node(node_name))
        path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases"
        spec = {"holderIdentity": node_name, "leaseDurationSeconds": LEASE_SECONDS, "renewTime": _microtime()}
        try:
            if not create:
                client.request("PATCH", f"{path}/{node_name}", {"spec": spec},
                               content_type="application/merge-patch+json")
                return
        except APIRejected as e:
            if e.status != 404:
                return
        if uid is None:
            node = self.reads.get("Node", node_name)
            if node is None:
                return      # the Node is gone (deleted by Karpenter): nothing to renew
            uid = node["metadata"].get("uid")
        owners = [{"apiVersion": "v1", "kind": "Node", "name": node_name, "uid": uid}] if uid else []
        try:
            client.request("POST", path, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                          "metadata": {"name": node_name, "namespace": LEASE_NAMESPACE,
                                                       **({"ownerReferences": owners} if owners else {})},
                                          "spec": spec})
        except APIRejected:
            pass        # made meanwhile, or the Node went

    def run_pods(self, pods: list[dict]) -> None:
        """The kubelet runs what is bound to its Node: a pod on a live stand-in's Node gets the status
        a kubelet posts once its containers run (phase Running, Ready), so PodDisruptionBudgets count
        it healthy (kube-controller-manager's disruption controller counts Ready pods:
        k8s.io/kubernetes v1.36.3 pkg/controller/disruption/disruption.go countHealthyPods). On kind the
        real kubelets do this themselves."""
        from harness.backends.base import APIRejected, Identity
        if hasattr(self.cluster, "kubelets"):
            return
        live = self._live_nodes()
        for p in pods:
            node = (p.get("spec") or {}).get("nodeName")
            if (node not in live or p["metadata"].get("deletionTimestamp")
                    or (p.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed")):
                continue
            now = self.started.get((p["metadata"].get("namespace") or "default", p["metadata"]["name"])) or _time()
            conds = [{"type": t, "status": "True", "lastTransitionTime": now}
                     for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
            containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True, "started": True,
                           "restartCount": 0, "state": {"running": {"startedAt": now}}}
                          for c in (p.get("spec") or {}).get("containers") or []]
            status = {"phase": "Running", "conditions": conds, "startTime": now, "containerStatuses": containers}
            try:
                self.cluster.client(Identity.node(node)).patch("Pod", p["metadata"]["name"], {"status": status},
                                                               p["metadata"].get("namespace"), sub="status")
            except APIRejected:
                pass        # deleted meanwhile, or its Node went away: the next poll sees it

    def _live_nodes(self) -> set[str]:
        """The Nodes of the stand-ins that registered and whose VM is still there."""
        vms = self.fake.vm_names(self.rg)
        return {rec.node_name for rec in self.records.values() if rec.registered and rec.refused is None
                and rec.denied is None and rec.vm_name.lower() in vms}

    def finish_jobs(self, pods: list[dict], jobs: list[dict]) -> bool:
        """A Job's pod whose run-duration has passed on the run's clock exits 0: its kubelet posts phase
        Succeeded (jobruns.completed_status), and kube-controller-manager's Job controller counts it and
        starts the next. On kind the real kubelets run the pods (which never exit: their Jobs' run-duration
        is not theirs to read)."""
        from harness.backends.base import APIRejected, Identity
        from harness.runner.engines.real.cluster import jobruns
        if hasattr(self.cluster, "kubelets"):
            return False
        by_name = {(j["metadata"].get("namespace"), j["metadata"]["name"]): j for j in jobs}
        live = self._live_nodes()
        now, progress = CLOCK.now(), False
        for p in pods:
            if (p.get("spec") or {}).get("nodeName") not in live:
                continue
            name = jobruns.job_of(p)
            job = by_name.get((p["metadata"].get("namespace"), name)) if name else None
            done = jobruns.completes_at(p, job)
            if done is None or done > now:
                continue
            node = p["spec"]["nodeName"]
            try:
                self.cluster.client(Identity.node(node)).patch(
                    "Pod", p["metadata"]["name"], {"status": jobruns.completed_status(p, done, _time())},
                    p["metadata"].get("namespace"), sub="status")
                progress = True
            except APIRejected:
                pass        # deleted meanwhile, or its Node went away: the next poll sees it
        return progress

    def heartbeat(self, node_name: str) -> None:
        """A seeded Node Karpenter does not manage has a kubelet too: its Lease, renewed with the stand-ins'.
        Without one kube-controller-manager's node lifecycle controller marks it Unknown (unreachable) once
        node-monitor-grace-period passes, or at once when it still holds the probe time of an earlier
        scenario's Node of the same name (pkg/controller/nodelifecycle tryUpdateNodeHealth keeps its saved
        probe time while neither the Lease nor the Ready heartbeat changed)."""
        self._lease(node_name, create=True)
        self.unmanaged.add(node_name)
        self.start_heartbeats()

    def _renew(self) -> None:
        """Every live kubelet's heartbeat; a VM gone from the fake (evicted, deleted) took its kubelet
        with it, so its Lease ages and the node lifecycle controller marks the Node not ready. Runs on
        the heartbeat thread: it reads copies of what the poll loop changes."""
        held = set(self.not_ready)
        self._held_nodes = {rec.node_name for rec in list(self.records.values()) if rec.vm_name.lower() in held}
        vms = self.fake.vm_names(self.rg)
        silent = set(self.silent)
        beating = [rec.node_name for rec in list(self.records.values())
                   if rec.registered and rec.vm_name.lower() in vms and rec.node_name not in silent]
        beating += sorted(list(self.unmanaged))
        if self._pool is None:
            for name in beating:
                self._beat(name)
        else:
            list(self._pool.map(self._beat, beating))

    def _beat(self, node_name: str) -> None:
        """One kubelet's heartbeat: its Lease, and its Ready condition posted again when the node lifecycle
        controller set it Unknown (the Lease was late): a kubelet's status sync posts what it sees every
        10 s (k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet_node_status.go syncNodeStatus), so a late
        renewal is not a dead node."""
        from harness.backends.base import APIRejected, Identity
        # not queued behind the harness's own Node writes (the poll loop's, the seeding's): a kubelet renews
        # whatever else writes its Node
        node = getattr(self.reads, "peek", self.reads.get)("Node", node_name)
        if node is None:
            return
        self._lease(node_name)
        ready = next((c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)
        # only the node lifecycle controller's Unknown: a held kubelet reports NotReady itself (release_held), and
        # a seeded Node Karpenter does not manage keeps the status its entry gave it
        if (ready is None or ready.get("status") != "Unknown" or node_name in self._held_nodes
                or node_name in self.unmanaged):
            return
        now = _time()
        cond = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status",
                "lastHeartbeatTime": now, "lastTransitionTime": now}
        try:
            self.cluster.client(Identity.node(node_name)).patch("Node", node_name, {"status": {"conditions": [cond]}},
                                                                sub="status")
        except APIRejected:
            pass        # the Node went meanwhile

    # -- cloud node controller ------------------------------------------------------------------------
    def _cloud_node_controller(self, vm_name: str) -> bool:
        """Azure's cloud-node-manager (k8s.io/cloud-provider controllers/node): providerID, instance
        type, zone and region labels, and the uninitialized taint lifted. The providerID is the one
        the controller recorded on the NodeClaim (the same VM id
        its lowercased resource group)."""
        from harness.backends.base import CLOUD_NODE_MANAGER, APIRejected, retry_on_conflict
        from harness.model.labels.writers import cloud_node_controller_labels
        rec = self.records[vm_name]
        provider_id = self._provider_id(vm_name)
        node = self.cluster.get("Node", rec.node_name)
        if node is None:
            self._pending_ccm.discard(vm_name)
            return False
        if provider_id is None:
            return False
        vm = self.fake.get_vm(self.rg, vm_name) or {}
        zones = vm.get("zones") or []
        zone = f"{self.region.lower()}-{zones[0]}" if zones else "0"
        size = ((vm.get("properties") or {}).get("hardwareProfile") or {}).get("vmSize", "")
        rec.ccm_labels = cloud_node_controller_labels(size, zone, self.region.lower())

        def write():
            node = self.cluster.get("Node", rec.node_name)
            node["metadata"]["labels"].update(rec.ccm_labels)
            node["spec"]["providerID"] = provider_id
            node["spec"]["taints"] = [t for t in node["spec"].get("taints") or [] if t["key"] != UNINITIALIZED["key"]]
            return self.cluster.update(node, CLOUD_NODE_MANAGER)
        try:
            retry_on_conflict(write)
        except APIRejected as e:
            if e.status == 404:
                self._pending_ccm.discard(vm_name)
                return False
            raise
        self._pending_ccm.discard(vm_name)
        self._csi_topology(rec, zones)
        return True

    def _csi_topology(self, rec: KubeletRecord, zones: list[str]) -> None:
        """The Azure Disk CSI node plugin registers and the kubelet publishes its topology key on the
        Node: the VM's zone, "" for a regional VM (the key topology.disk.csi.azure.com/zone, which
        karpenter-provider-azure v1.14.0 pkg/utils/zones/normalization.go maps to the zone label;
        kubernetes/kubernetes#109154, kubernetes-sigs/karpenter#2458; the simulation's `_csi_topology` does the same)."""
        from harness.backends.base import APIRejected, Identity
        value = f"{self.region.lower()}-{zones[0]}" if zones else ""

        try:
            # a merge patch of the one label: a full update carrying a taint list that another
            # controller just changed would be refused by NodeRestriction ("not allowed to modify taints")
            self.cluster.client(Identity.node(rec.node_name)).patch("Node", rec.node_name,
                                                                    {"metadata": {"labels": {CSI_ZONE: value}}})
            rec.csi_labels = {CSI_ZONE: value}
        except APIRejected as e:
            if e.status != 404:
                rec.csi_denied = e.message

    # -- the agents that own startup taints -----------------------------------------------------------
    def _startup_agents(self) -> bool:
        """A NodeClaim's startupTaints belong to an agent on the node (e.g. Cilium's
        node.cilium.io/agent-not-ready) that lifts them once it runs; Karpenter waits for that before
        Initialized (core v1.14.0 pkg/controllers/nodeclaim/lifecycle/initialization.go
        StartupTaintsRemoved). The stand-in lifts them once Karpenter has registered the Node, as the
        simulation does."""
        from harness.backends.base import APIRejected, Identity, retry_on_conflict
        progress = False
        claims = {(nc.get("status") or {}).get("nodeName"): nc for nc in self.nodeclaims()}
        for rec in self.records.values():
            nc = claims.get(rec.node_name)
            startup = {(t["key"], t.get("effect")) for t in ((nc or {}).get("spec") or {}).get("startupTaints") or []}
            if not startup or rec.startup_lifted:
                continue
            node = self.cluster.get("Node", rec.node_name)
            if node is None or (node["metadata"].get("labels") or {}).get("karpenter.sh/registered") != "true":
                continue
            # the agent is itself a DaemonSet pod (Cilium's agent lifts node.cilium.io/agent-not-ready):
            # it runs, and lifts the taint, only once the node's DaemonSet pods are placed
            rec.registered_seen = rec.registered_seen or time.monotonic()
            if time.monotonic() - rec.registered_seen < DAEMONSET_GRACE or self._daemon_pods_pending(rec.node_name):
                continue

            def write():
                cur = self.cluster.get("Node", rec.node_name)
                cur["spec"]["taints"] = [t for t in cur["spec"].get("taints") or []
                                         if (t["key"], t.get("effect")) not in startup]
                return self.cluster.update(cur, Identity("controller", "startup-taint-agent"))
            try:
                retry_on_conflict(write)
            except APIRejected as e:
                if e.status != 404:
                    raise
            rec.startup_lifted = progress = True
        return progress

    def _daemon_pods_pending(self, node_name: str) -> bool:
        """A DaemonSet pod created for this node (the DaemonSet controller pins it with a
        matchFields metadata.name term) that is not bound yet."""
        for p in self.reads.list("Pod"):
            if not any(r.get("kind") == "DaemonSet" for r in p["metadata"].get("ownerReferences") or []):
                continue
            if (p.get("spec") or {}).get("nodeName"):
                continue
            if node_name in json.dumps((p.get("spec") or {}).get("affinity") or {}):
                return True
        return False

    def nodeclaims(self) -> list[dict]:
        """The NodeClaims, read once a step (a launch of 20 boots 20 kubelets in one step)."""
        if self._claims is None:
            self._claims = self.reads.list("NodeClaim")
        return self._claims

    def _provider_id(self, vm_name: str) -> str | None:
        for nc in self.nodeclaims():
            pid = (nc.get("status") or {}).get("providerID") or ""
            if pid.lower().endswith(f"/virtualmachines/{vm_name.lower()}"):
                return pid
        return None

    def close(self) -> None:
        """Stop the heartbeats and drop the leases this run created (Nodes are cleared by the cluster's
        reset)."""
        self._stop.set()
        if self._beats is not None:
            self._beats.join(timeout=RENEW_SECONDS + 30.0)
            self._pool.shutdown(wait=False, cancel_futures=True)
        for rec in list(self.records.values()):
            if rec.registered:
                try:
                    self.cluster.admin.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}"
                                                         f"/leases/{rec.node_name}", ok_missing=True)
                except Exception:   # noqa: BLE001 - best effort
                    pass
