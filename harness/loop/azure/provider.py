"""The Azure cloud provider of the simulated Karpenter: instance types from the SKU API, offering
choice, VM + NIC creation through the real Azure SDK against fakeazure, and error handling.

Upstream (github.com/Azure/karpenter-provider-azure v1.14.0): pkg/cloudprovider/cloudprovider.go
Create/Delete; pkg/providers/instancetype/instancetypes.go List (instance types, offerings; the
built types cached per node class, here in the provider's own InstanceTypeCache,
harness/model/azure/itcache.py); pkg/providers/instance/vminstance.go (VM + NIC create, delete, cleanup);
pkg/controllers/nodeclaim/garbagecollection (instance and NIC collectors). Notes:
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetype.go computeRequirements
(instance types, offerings), github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/allocationstrategy/allocation_strategy.go (allocation strategy),
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/labels/labels.go (labels),
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/offerings/resperrorhandlers.go (create
errors); https://learn.microsoft.com/rest/api/compute/virtual-machines,
https://learn.microsoft.com/rest/api/virtualnetwork/network-interfaces (VM and NIC bodies). The SDK side (retry
policy, error
text, custom data) is harness/loop/azure/sdk.py.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

from harness.loop.azure.sdk import (MAX_RETRIES, MAX_RETRY_DELAY, RETRY_DELAY, RETRY_STATUS, PollWhenAsked,
                                   bootstrap_custom_data,
                                   error_code, error_text, list_nic_names, list_usages, list_vm_names, list_vm_skus,
                                   lower_rg, retry_after)
from harness.loop.scheduling.scheduler import offering_compatible
from harness.loop.azure.aksapi import AKSMachines, provisioning_error, vm_name_of
from harness.loop.azure.machinebatch import (BATCH_HEADER, BatchAnswerError, batch_header, batch_key,
                                             per_machine_errors, shared_template)
from harness.loop.azure.machinetags import inplace_update_hash, machine_tags
from harness.loop.clock import parse_rfc3339
from harness.loop.azure.unavailable import Classified, UnavailableOfferings, classify_and_mark
from harness.model.azure.aksmachines import MachineNameError, machine_name
from harness.model.azure import instancetypes as itmod
from harness.model.upstream.factreads import MACHINE_NAME_LENGTH, ProviderReads
from harness.model.azure.itcache import InstanceTypeCache
from harness.model.azure.nodeimage import os_sku_effective, os_sku_from_image_family
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import Requirements
from harness.model.values.resources import fits, parse_resource_list
from harness.model.values.versions import version_at_least
from harness.model.labels.wellknown import (ACCELERATED, ARCH, CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, PLACEMENT_SCOPE,
                                     ULTRA_SSD,
                                     normalize_cluster_label)
from harness.model.labels.aksmachine import MachineLabels, is_machine_mode, machine_labels
from harness.model.labels.aksmachine import writer as aks_writer
from harness.model.labels.writers import (KUBELET_NODE_LABELS, KubeletLabels, LabelFacts, base_labels, kubelet_node_labels,
                                   vm_nodeclaim_labels)

RG_DEFAULT = "MC_harness_cluster_southcentralus"

# provider v1.14.0 pkg/controllers/nodeclaim/garbagecollection: instance GC every 2 min for VMs
# without a NodeClaim older than 5 min (instance_garbagecollection.go Reconcile); NIC GC every
# 5 min for NICs with neither a VM nor a NodeClaim of their name (nic_garbagecollection.go).
INSTANCE_GC_GRACE = 300.0
HEADER_BATCH_MODE = "aksmachineapiheaderbatch"     # pkg/consts/consts.go ProvisionModeAKSMachineAPIHeaderBatch
# the GETs a batched machine's promise waits with at most (machinecache.go PollUntilDone: every 5 s for 15 min)
BATCH_POLLS = 180
INSTANCE_GC_INTERVAL = 120.0
NIC_GC_INTERVAL = 300.0
# the table NewProvider falls back to for a region it has none for (provider v1.14.0
# pkg/providers/pricing/pricing.go defaultRegion)
COMPILED_PRICES_DEFAULT_REGION = "eastus"
# controller-runtime's default per-item backoff (5 ms doubling to 1000 s) between failed
# instance-type refreshes (provider v1.14.0 pkg/controllers/instancetype/controller.go Reconcile
# returns the error, so the singleton is requeued with that backoff).
REFRESH_BACKOFF_BASE, REFRESH_BACKOFF_MAX = 0.005, 1000.0


def _read_json(pipeline_response, _deserialized, _headers):
    response = pipeline_response.http_response
    response.read()                     # a streamed answer's body, loaded (and its connection released)
    return response.json()


def _read_only(pipeline_response, _deserialized, _headers) -> None:
    pipeline_response.http_response.read()


# A GET whose answer the provider reads a field of, or nothing of, asks the SDK for the response itself
# (`stream=True`, the generated operations' own keyword: azure-mgmt-compute 39.0.0 VirtualMachinesOperations.get)
# and reads its JSON with `cls=`: the same request through the same pipeline, without the SDK's
# ContentDecodePolicy parsing the body and the operation building the VirtualMachine model of every nested
# property (~40 % of a GET's CPU for a VM), as PollWhenAsked(raw=True) reads an LRO's result.
_AS_JSON = {"stream": True, "cls": _read_json}
_UNREAD = {"stream": True, "cls": _read_only}


def provisioning_state(resource) -> str:
    """`properties.provisioningState` of a resource's JSON, lower case ("" when absent)."""
    props = resource.get("properties") if isinstance(resource, dict) else None
    return str((props or {}).get("provisioningState") or "").lower()


@dataclass
class Launched:
    vm_name: str
    provider_id: str
    instance_type: object
    zone: str
    capacity_type: str
    arch: str
    kubelet: KubeletLabels
    nodeclaim_labels: dict[str, str]
    custom_data: str
    # the chosen offering's price and how many instance types had a compatible available offering to
    # choose from (the decision record's "why this instance type")
    price: float | None = None
    candidates: int = 0
    # the cheaper offerings the NodeClaim allowed that were unavailable (the unavailable-offerings cache, no
    # quota), as (instance type, zone, capacity type): why this offering and not a cheaper one
    cheaper_unavailable: tuple = ()
    # who puts `kubelet.labels` on the Node: the kubelet's --node-labels, or AKS on a node the Machine API
    # created (`machine` then holds what the provider sent: harness/model/labels/aksmachine.py)
    writer: str = KUBELET_NODE_LABELS
    machine: MachineLabels | None = None
    # an AKS machine's ARM ID (the NodeClaim's karpenter.azure.com/aks-machine-resource-id) and name, on the
    # Machine API path (create_machine)
    machine_id: str = ""
    machine_name: str = ""
    # its karpenter.azure.com/in-place-update-hash at Create (setAdditionalAnnotationsForNewNodeClaim; the Machine
    # API path only: harness/loop/azure/machinetags.py)
    inplace_hash: str = ""


@dataclass
class PendingMachine:
    """A machine create queued for its header batch (aksmachineapiheaderbatch): `finish`, once the launch round
    flushed the batch (AzureProvider.flush_batch), is what Create returns."""
    finish: Callable[[], "Launched | LaunchFailure"]


@dataclass
class LaunchFailure:
    kind: str                 # CreateError | InsufficientCapacity | Unhandled (NodeClassNotFound is a
                              # reason of kind InsufficientCapacity: provider v1.14.0
                              # pkg/cloudprovider/cloudprovider.go Create; github.com/Azure/karpenter-provider-azure
                              # v1.14.0 pkg/providers/instance/offerings/resperrorhandlers.go)
    reason: str
    message: str
    code: str = ""
    attempted: dict = field(default_factory=dict)
    # the VM create failed after the provider had returned the NodeClaim as created (provider.asyncProvisioning):
    # the provider deletes the NodeClaim itself, whatever the error
    asynchronous: bool = False
    # what the provider's error handler marked unavailable (harness/loop/azure/unavailable.py Classified), if any
    classified: object = None
    # no offering left: the offerings the NodeClaim allows that were unavailable, (instance type, zone, capacity type)
    unavailable: tuple = ()


def label_facts(c, rg: str, nodeclass: "itmod.NodeClassParams", arch: str) -> LabelFacts:
    """The facts the provider's base labels are computed from, for a cluster (`c`: ClusterParams, `rg` its node
    resource group) and an AKSNodeClass on an architecture: one rule for the simulation and fakeazure's AKS on the
    Machine API path (runner/engines/azureside.py machine_labeler)."""
    values = {
        "clusterLabel": normalize_cluster_label(rg),
        "kubeletIdentityClientID": c.kubelet_identity_client_id,
        "osSku": os_sku_from_image_family(nodeclass.image_family or ""),
        "imageFamily": nodeclass.image_family or "",
        "osSkuEffective": os_sku_effective(nodeclass.image_family or "", c.kubernetes_version,
                                                 nodeclass.fips_mode == "FIPS", nodeclass.trusted_launch),
        "subnetName": c.subnet_name,
        "vnetGUID": c.vnet_guid,
        "statelessCNI": "true" if version_at_least(c.kubernetes_version, (1, 34)) else "false",
        "localDNSState": "enabled" if nodeclass.local_dns else "disabled",
    }
    conditions = set()
    if nodeclass.fips_mode == "FIPS":
        conditions.add("fips")
    if c.network_plugin == "azure" and c.network_plugin_mode == "overlay":
        conditions.add("azureCNIOverlay")
    if c.network_dataplane == "cilium":
        conditions.add("ciliumDataplane")
    if nodeclass.artifact_streaming and arch != "arm64":
        conditions.add("artifactStreaming")
    if c.provision_mode == "aksscriptless":
        conditions.add("scriptless")
    return LabelFacts({k: v for k, v in values.items() if v is not None}, frozenset(conditions))


class AzureProvider:
    """What Karpenter-on-Azure's cloudprovider.Create does, driven through the Azure SDK."""

    def __init__(self, *, fake, compute, network, profile: Profile, cluster: "itmod.ClusterParams",
                 unavailable: UnavailableOfferings, rng: random.Random, subscription_id: str,
                 cache: InstanceTypeCache | None = None, pricing: str = "retail", aks: AKSMachines | None = None):
        """`aks`: the machines of the cluster's machines pool, where the Machine API provision modes create (the
        engines always give it; without it, as in a unit test's bare provider, creates take the VM path)."""
        self.fake, self.compute, self.network = fake, compute, network
        self.aks = aks
        self.machine_vms: dict[str, str] = {}     # VM name (lower) -> its AKS machine's name
        self.pricing = pricing
        self.profile, self.cluster = profile, cluster
        self.unavailable, self.rng = unavailable, rng
        self.subscription_id = subscription_id
        self.rg = cluster.node_resource_group or RG_DEFAULT
        self._skus: list[dict] | None = None
        self._prices: dict | None = None
        self._quota: dict[str, dict] | None = None
        # which provider facts the builds read where their other value answers otherwise (harness/why/deciding.py)
        self.fact_reads = ProviderReads(self.quota_preview)
        self._quota_seen: dict[str, dict] | None = None     # the fake's usages at the first quota_preview
        # what instance-type builds remember (static parts per SKU); the provider's own, so runs
        # never share it and it goes with the provider
        self.it_cache = cache if cache is not None else InstanceTypeCache()
        self._built: dict = {}             # (nodeclass, cluster) -> ((offerings seq, SKU seq), InstanceTypeSet)
        self.sku_seq = 0                  # bumped when the SKU list is (re)read
        self._skus_read_at = 0.0
        self._skus_changes: int | None = None    # the fake's FakeAzure.sku_changes when the list was read
        self._sku_failures = 0
        self._sku_retry_at = 0.0
        self._jitter = random.Random(f"retry-{subscription_id}")   # own stream: retries never shift offering choices
        self.clock = getattr(fake, "clock", None)
        self.on_event: Callable[..., None] | None = None            # the simulation's event recorder
        self.created_at: dict[str, float] = {}    # VM name -> when the harness created it
        self._last_nic_gc: float | None = None
        self._suspects: set[str] = set()   # names a failed cleanup may have left (VM and/or NIC)
        self._machine_suspects: set[str] = set()   # AKS machines a failed delete may have left
        self._batch: list[tuple[str, dict]] = []  # header batch mode: (machine, body) queued for flush_batch
        self._batch_answers: dict[str, object] = {}   # machine -> None, (code, message) or an error of its batch
        # names whose cleanup removed both the VM and its NIC: the finalizer's next Delete finds the VM gone,
        # and nothing of it is left for the garbage collectors
        self._cleaned: set[str] = set()
        self.leftovers: set[str] = set()   # suspects no NodeClaim owns whose VM or NIC the last round left

    def set_cluster(self, cluster: "itmod.ClusterParams") -> None:
        """New operator settings (a step's `cluster:`): the resource group and the instance types
        follow them."""
        self.cluster = cluster
        self.rg = cluster.node_resource_group or RG_DEFAULT
        self._built.clear()

    # -- Azure calls: the SDK's retries, then an event the scenario can assert -----------------
    def now(self) -> float:
        return self.clock.now() if self.clock is not None and hasattr(self.clock, "now") else (
            self.clock.time() if self.clock is not None else 0.0)

    def event(self, source: str, reason: str, message: str) -> None:
        """An error the provider logs (upstream logs these; the harness records them, through
        `on_event`, as events of kind `Log`, named for the logging controller, reason = upstream's
        log message)."""
        if self.on_event is not None:
            self.on_event("Log", source, reason, message)

    def call(self, operation: str, fn: Callable):
        """`fn()` under the SDK retry policy; the last error is raised after MAX_RETRIES. A retry is
        silent, as in the controller: provider v1.14.0 registers no azcore log listener, so the SDK's
        retries show only in the fake's request log (`expect.azure.requests`)."""
        attempt = 0
        while True:
            try:
                return fn()
            except HttpResponseError as e:
                status = getattr(e, "status_code", None)
                if status not in RETRY_STATUS or attempt >= MAX_RETRIES:
                    raise
                attempt += 1
                delay = retry_after(e)
                if delay is None:
                    delay = min((2 ** attempt - 1) * RETRY_DELAY * (0.8 + self._jitter.random() / 2), MAX_RETRY_DELAY)
                elif delay > MAX_RETRY_DELAY:
                    raise
                if self.clock is not None and hasattr(self.clock, "advance"):
                    self.clock.advance(delay)

    # -- instance types (provider v1.14.0 pkg/providers/instancetype/instancetypes.go List:
    # listed once, then cached) ----------------------------------------
    def start(self) -> str | None:
        """The operator's start: the first SKU list (provider v1.14.0 pkg/operator/operator.go NewOperator,
        `lo.Must0(instanceTypeProvider.UpdateInstanceTypes(ctx))`). When it fails after the SDK's retries
        the controller panics and exits, as it does when no SKU passes UpdateInstanceTypes' filters
        ("no instance types found"; harness/model/azure/staticpart.py read_sku): the panic's text, else None.
        (Checked against v1.14.0; earlier releases are assumed to start the same way.)"""
        from harness.model.azure.staticpart import read_sku
        try:
            region = self.cluster.region
            self._skus_changes = getattr(self.fake, "sku_changes", None)
            self._skus = self.call("skus.list", lambda: list_vm_skus(self.compute, region))
            self.sku_seq += 1
            self._skus_read_at = self.now()
        except HttpResponseError as e:
            return f"panic: fetching SKUs using skewer, {error_text(e)}"
        sw = self.it_cache.switches(self.profile)
        canonical = self.it_cache.canonical
        if not any(not isinstance(read_sku(canonical(sku), self.cluster, sw), str) for sku in self._skus):
            return "panic: no instance types found"
        return None

    def skus(self) -> list[dict]:
        """The region's VM SKUs, read again once `provider.skuRefresh` seconds passed since the last read
        (provider v1.14.0 pkg/controllers/instancetype/controller.go InstanceTypesRefreshInterval = 12h;
        before v1.10, v1.7.2 pkg/providers/instancetype/instancetypes.go getInstanceTypes caches the list
        for InstanceTypesCacheTTL = 23h): a size Azure took away since (a `restrict` step) is gone then.
        A failed read (after the SDK's retries) is logged and the last good list kept, or none yet
        (upstream List: "no instance types found"), and read again after the controller's backoff
        (provider v1.14.0 pkg/providers/instancetype/instancetypes.go UpdateInstanceTypes;
        pkg/controllers/instancetype/controller.go Reconcile; before v1.10 List itself fails until a read
        succeeds, harness simplification)."""
        refresh = self.profile.provider.get("skuRefresh")
        due = self._skus is None or (refresh is not None and self.now() - self._skus_read_at >= float(refresh))
        if due and self.now() >= self._sku_retry_at:
            try:
                region = self.cluster.region
                self._skus_changes = getattr(self.fake, "sku_changes", None)
                self._skus = self.call("skus.list", lambda: list_vm_skus(self.compute, region))
                self.sku_seq += 1
                self._skus_read_at = self.now()
            except HttpResponseError as e:
                self._sku_failures += 1
                self._sku_retry_at = self.now() + min(REFRESH_BACKOFF_BASE * 2 ** self._sku_failures,
                                                      REFRESH_BACKOFF_MAX)
                self.event("instancetype", "updating instance types",
                           f"fetching SKUs using skewer, {error_text(e)}")
        return self._skus or []

    def next_sku_read(self) -> float | None:
        """When the SKU list is read again and reads something new (`provider.skuRefresh` after the last read):
        None when the release never reads it again, it has not read it yet, or the fake's catalog has not changed
        since (FakeAzure.sku_changes: a read that finds the same list changes nothing the loop reads)."""
        refresh = self.profile.provider.get("skuRefresh")
        if refresh is None or self._skus is None:
            return None
        changes = getattr(self.fake, "sku_changes", None)
        if changes is not None and changes == self._skus_changes:
            return None
        return max(self._skus_read_at + float(refresh), self._sku_retry_at)

    def prices(self) -> dict | None:
        """The region's price table (the provider loads static prices once: provider v1.14.0
        pkg/providers/pricing/pricing.go NewProvider). `pricing: compiled-in`
        (a non-public cloud, where NewProvider never polls because auth.IsPublic is false): the
        release's initialOnDemandPrices[region], or eastus's when the region has none (NewProvider's
        defaultRegion fallback), as both the on-demand and the spot table (`spotPrices: staticPricing`);
        a size it lacks gets MissingPrice 999 (Provider.OnDemandPrice / SpotPrice)."""
        if self._prices is None and self.pricing == "compiled-in":
            from harness.model.upstream.skutables import compiled_prices
            table = (compiled_prices(self.profile, self.cluster.region)
                     or compiled_prices(self.profile, COMPILED_PRICES_DEFAULT_REGION))
            self._prices = {name: {"on-demand": p, "spot": p} for name, p in table.items()}
        if self._prices is None:
            region = self.cluster.region.lower()
            if hasattr(self.fake, "region_prices"):
                self._prices = self.fake.region_prices(region)
            else:
                self._prices = (self.fake.prices.get(region) or {}) if hasattr(self.fake, "prices") else {}
        return self._prices or None

    def refresh_quota(self) -> None:
        """Compute usages per VM family (provider v1.14.0 pkg/controllers/quota/controller.go;
        github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
        createOfferings); fail open on errors."""
        try:
            self._quota = self.call("usages.list", lambda: list_usages(self.compute, self.cluster.region))
        except HttpResponseError as e:
            # provider v1.14.0 pkg/controllers/quota/controller.go Reconcile: logged, HasQuotaFor fails open
            self._quota = {}
            self.event("quota", "updating quota usages", error_text(e))

    def has_quota(self, sku: dict) -> bool:
        if self._quota is None:
            self.refresh_quota()
        entry = (self._quota or {}).get(sku.get("family") or "")
        if not entry or entry.get("limit") is None or entry.get("current") is None:
            return True
        vcpus = self.it_cache.vcpus(sku) or 0     # as the model counts them (skus.py vcpus_of)
        return vcpus <= entry["limit"] - entry["current"]

    def quota_preview(self, sku: dict) -> bool | None:
        """has_quota's answer as the first quota read would give it, seen in the fake without that read (a
        release that does not gate on quota never reads it; the request is not the run's to make): None when
        the fake cannot be seen so, or holds fault rules the read could meet."""
        if self._quota_seen is None:
            usages = getattr(self.fake, "usages", None)
            rules = getattr(getattr(self.fake, "faults", None), "rules", None)
            self._quota_seen = {"": {}} if usages is None or rules is None or rules else {
                u["name"]["value"]: {"limit": u.get("limit"), "current": u.get("currentValue")}
                for u in usages(self.cluster.region)}
        if "" in self._quota_seen:
            return None
        entry = self._quota_seen.get(sku.get("family") or "")
        if not entry or entry.get("limit") is None or entry.get("current") is None:
            return True
        return (self.it_cache.vcpus(sku) or 0) <= entry["limit"] - entry["current"]

    def instance_types(self, nodeclass: "itmod.NodeClassParams"):
        """Built once per node class and cluster settings, again when the unavailable-offerings
        cache changes (quota is read once, on the first build)."""
        key = (nodeclass, self.cluster)
        skus = self.skus()
        if self.unavailable.entries:
            self.unavailable.expire()          # time passed: expired offerings are available again
        hit = self._built.get(key)
        if hit is not None and hit[0] == (self.unavailable.seq, self.sku_seq):
            return hit[1]
        # nothing marked unavailable: no offering is (and the offerings may be kept ones, InstanceTypeCache.offered)
        its = itmod.build_instance_types(
            skus, nodeclass, self.cluster, self.profile, prices=self.prices(),
            unavailable=self.unavailable.is_unavailable if self.unavailable.entries else None,
            has_quota=self.has_quota, cache=self.it_cache, reads=self.fact_reads)
        # read the seq after the build: entries it found expired were dropped (seq bumped) and
        # the build already reflects that
        self._built[key] = ((self.unavailable.seq, self.sku_seq), its)
        return its

    # -- labels -------------------------------------------------------------------------------
    def label_facts(self, nodeclass: "itmod.NodeClassParams", arch: str) -> LabelFacts:
        """This provider's cluster's label facts (label_facts)."""
        return label_facts(self.cluster, self.rg, nodeclass, arch)

    # -- create -------------------------------------------------------------------------------
    def choose(self, its: list, claim_reqs: Requirements):
        """Allocation strategy (karpenter-provider-azure v1.14.0
        pkg/providers/allocationstrategy/allocation_strategy.go Allocate): cheapest
        available compatible offering;
        spot before on-demand and zonal before regional at equal price; seeded shuffle first."""
        best = self.ranked(its, claim_reqs)
        return best[0] if best else None

    def ranked(self, its: list, claim_reqs: Requirements) -> list:
        """Each instance type with a compatible available offering as (type, its best offering), best first
        (choose's order)."""
        wk = self.profile.well_known_labels
        best = []
        for it in its:
            offers = [o for o in it.offerings if offering_compatible(o, claim_reqs, wk)]
            if not offers:
                continue
            self.rng.shuffle(offers)
            offers.sort(key=lambda o: (o.price, o.capacity_type != "spot", o.zone == "0"))
            best.append((it, offers[0]))
        best.sort(key=lambda p: (p[1].price, p[1].capacity_type != "spot", p[1].zone == "0", p[0].name))
        return best

    def create(self, nodeclaim: dict, claim_reqs: Requirements, nodeclass: "itmod.NodeClassParams | None",
               nodeclass_name: str, decorate=None, nodeclass_tags: dict | None = None) -> Launched | LaunchFailure | PendingMachine:
        """`decorate`: the NodeClaim's NodePool's NodeOverlay store, which Create applies to the types it picks
        from with the NodeOverlay gate on (provider v1.7.2+ pkg/cloudprovider/cloudprovider.go
        resolveInstanceTypes: instanceTypeStore.ApplyAll). `nodeclass_tags`: the AKSNodeClass's spec.tags, which
        an AKS machine carries (the VM path does not send them: not simulated)."""
        # NodeClass not found and no compatible instance type are InsufficientCapacity errors
        # (provider v1.14.0 pkg/cloudprovider/cloudprovider.go Create; github.com/Azure/karpenter-provider-azure
        # v1.14.0 pkg/providers/instance/offerings/resperrorhandlers.go)
        if nodeclass is None:
            return LaunchFailure("InsufficientCapacity", "NodeClassNotFound",
                                 f'resolving node class, AKSNodeClass.karpenter.azure.com "{nodeclass_name}" not found')
        names = claim_reqs.get(INSTANCE_TYPE)
        # resolveInstanceTypes: only a type whose allocatable holds the NodeClaim's requests (resources.Fits;
        # github.com/Azure/karpenter-provider-azure v1.14.0 pkg/cloudprovider/cloudprovider.go, every release)
        requests = parse_resource_list(((nodeclaim.get("spec") or {}).get("resources") or {}).get("requests"))
        built = self.instance_types(nodeclass)
        known = (decorate(built) if decorate is not None else built).instance_types
        its = [it for it in known
               if names.has(it.name) and it.requirements.intersects_ok(claim_reqs) and fits(requests, it.allocatable())]
        ranked = self.ranked(its, claim_reqs)
        pick, candidates = (ranked[0] if ranked else None), len(ranked)
        if pick is None:
            return LaunchFailure("InsufficientCapacity", "InsufficientCapacity",
                                 "all requested instance types were unavailable during launch",
                                 unavailable=self.unavailable_offerings(known, claim_reqs))
        it, offering = pick
        ultra_req = claim_reqs.get(ULTRA_SSD)
        # explicit request only (karpenter-provider-azure v1.14.0 pkg/providers/instance/vminstance.go
        # resolveUltraSSDRequested; github.com/Azure/karpenter-provider-azure v1.14.0
        # pkg/providers/instancetype/instancetypes.go ultraSSDOptions)
        ultra = ultra_req.has("true") and not ultra_req.has("false")
        arch = it.requirements.get(ARCH).single_value() or "amd64"
        facts = self.label_facts(nodeclass, arch)
        chosen = {CAPACITY_TYPE: offering.capacity_type}
        if self.profile.provides("placementScope"):
            chosen[PLACEMENT_SCOPE] = "regional" if offering.zone in ("0", "") else "zonal"
        if self.profile.provides("ultraSSD"):
            chosen[ULTRA_SSD] = "true" if ultra else "false"
        machine = None
        if is_machine_mode(self.cluster.provision_mode):
            # the Machine API path (provider v1.14.0 pkg/providers/instance/aksmachineinstancehelpers.go
            # configureLabelsAndMode): AKS, not the provider's --node-labels, writes the Node's labels; the machine
            # is created through the machines API (create_machine)
            machine = machine_labels(self.profile, nodeclaim["metadata"].get("labels") or {}, claim_reqs,
                                     it.requirements, offering.capacity_type, offering.zone, ultra,
                                     base_labels(self.profile, facts))
            kubelet = KubeletLabels(machine.on_node, dict(machine.stripped),
                                    {k: "aks" for k in machine.aks_own} | {k: "nodeLabels" for k in machine.sent})
        else:
            kubelet = kubelet_node_labels(self.profile, facts, nodeclaim["metadata"].get("labels") or {},
                                          claim_reqs, it.requirements, chosen)
        custom_data = bootstrap_custom_data(kubelet.labels)
        attempted = {"size": it.name, "zone": offering.zone, "capacityType": offering.capacity_type}
        if machine is not None and self.aks is not None:
            return self.create_machine(nodeclaim, claim_reqs, known, it, offering, ultra, machine, kubelet,
                                       custom_data, attempted, arch, candidates, nodeclass_tags)
        vm_name = self.resource_name(nodeclaim["metadata"]["name"])
        nic_id = f"/subscriptions/{self.subscription_id}/resourceGroups/{self.rg}/providers/Microsoft.Network/networkInterfaces/{vm_name}"
        tags = {"karpenter.azure.com_cluster": self.cluster.cluster_name,
                "karpenter.sh_nodepool": nodeclaim["metadata"]["labels"].get(NODEPOOL, ""),
                "compute.aks.billing": "linux"}
        nic_body = {
            "location": self.cluster.region, "tags": tags,
            "properties": {"ipConfigurations": [{"name": vm_name, "properties": {
                "primary": True, "privateIPAllocationMethod": "Dynamic",
                "subnet": {"id": f"/subscriptions/{self.subscription_id}/resourceGroups/{self.rg}/providers/"
                                 f"Microsoft.Network/virtualNetworks/aks-vnet/subnets/{self.cluster.subnet_name or 'aks-subnet'}"}}}],
                "enableAcceleratedNetworking": it.requirements.get(ACCELERATED).has("true")}}
        # provider v1.14.0 pkg/providers/instance/vminstance.go beginLaunchInstance: NIC, then VM.
        # A synchronous failure of either is cleaned up at once with mustDeleteNic (BeginCreate ->
        # cleanupAzureResources); an asynchronous one through the promise's Cleanup (Delete).
        try:
            self._put_and_read("nic", vm_name, lambda: self.network.network_interfaces.begin_create_or_update(
                self.rg, vm_name, nic_body, polling=PollWhenAsked(raw=True)),
                lambda: self.network.network_interfaces.get(self.rg, vm_name, **_AS_JSON))
        except HttpResponseError as e:
            self._cleanup(vm_name, must_delete_nic=True)
            return LaunchFailure("Unhandled", "CreateInstanceFailed", error_text(e), error_code(e), attempted)
        body = {
            "location": self.cluster.region,
            # "0" (and "" before #1615) is a regional offering: no zone (provider v1.14.0
            # pkg/utils/zones/zones.go MakeARMZonesFromAKSLabelZone; github.com/Azure/karpenter-provider-azure v1.14.0
            # pkg/providers/instancetype/instancetypes.go instanceTypeZones)
            "zones": [] if offering.zone in ("0", "") else [offering.zone.rsplit("-", 1)[-1]],
            "tags": tags,
            "properties": {
                "hardwareProfile": {"vmSize": it.name},
                "storageProfile": {"osDisk": {"name": vm_name, "diskSizeGB": nodeclass.os_disk_size_gb,
                                              "createOption": "FromImage", "deleteOption": "Delete"}},
                "osProfile": {"computerName": vm_name, "adminUsername": "azureuser", "customData": custom_data},
                "networkProfile": {"networkInterfaces": [{"id": nic_id, "properties": {"primary": True, "deleteOption": "Delete"}}]},
                "priority": "Spot" if offering.capacity_type == "spot" else "Regular",
            },
        }
        if offering.capacity_type == "spot":
            body["properties"].update(evictionPolicy="Delete", billingProfile={"maxPrice": -1})
        if ultra:
            body["properties"]["additionalCapabilities"] = {"ultraSSDEnabled": True}
        if nodeclass.encryption_at_host is not None:
            # provider v1.14.0 pkg/providers/instance/vminstance.go setVMPropertiesSecurityProfile: sent
            # whenever spec.security.encryptionAtHost is set (true or false)
            body["properties"]["securityProfile"] = {"encryptionAtHost": nodeclass.encryption_at_host}
        # createVirtualMachine: a VM that already exists (an earlier attempt's) is taken as created
        try:
            existing = self.call("vm.get", lambda: self.compute.virtual_machines.get(self.rg, vm_name, **_AS_JSON))
        except ResourceNotFoundError:
            existing = None
        except HttpResponseError as e:
            self._cleanup(vm_name, must_delete_nic=True)
            return LaunchFailure("Unhandled", "CreateInstanceFailed", f'getting VM "{vm_name}": {error_text(e)}',
                                 error_code(e), attempted)
        if existing is not None and provisioning_state(existing) == "failed":
            # (harness assumption) the harness retries a failed claim under its own name, which
            # upstream does not (the failed NodeClaim is deleted): a Failed VM of an earlier attempt
            # is deleted, not taken as created
            self.delete(vm_name)
            return LaunchFailure("Unhandled", "CreateInstanceFailed",
                                 f'VM "{vm_name}" of an earlier attempt is in provisioningState Failed', "", attempted)
        vm = existing
        if vm is None:
            try:
                poller = self.call("vm.create", lambda: self.compute.virtual_machines.begin_create_or_update(
                    self.rg, vm_name, body, polling=PollWhenAsked(raw=True)))
            except HttpResponseError as e:
                self._cleanup(vm_name, must_delete_nic=True)          # sync failure
                return self._create_failed(e, it, offering, attempted)
            self.created_at.setdefault(vm_name, self.now())
            try:
                vm = self._finish_lro("vm", vm_name, poller,
                                      lambda: self.compute.virtual_machines.get(self.rg, vm_name, **_AS_JSON))
            except HttpResponseError as e:
                # async failure: the promise's Wait error -> Cleanup -> Delete (cloudprovider.go
                # handleInstancePromiseWaitError; vminstance.go VirtualMachinePromise.Cleanup). From v1.4 Create
                # has returned by then and the goroutine deletes the NodeClaim too (provider v1.14.0
                # pkg/cloudprovider/cloudprovider.go handleInstancePromise, metric reason async_provisioning);
                # before, Create waited and returned the error to core (v0.7.5 pkg/providers/instance/instance.go
                # createVirtualMachine): retried, or deleted as insufficient capacity
                self.delete(vm_name)
                failure = self._create_failed(e, it, offering, attempted)
                failure.asynchronous = bool(self.profile.provider.get("asyncProvisioning"))
                return failure
        self._suspects.discard(vm_name.lower())
        provider_id = "azure://" + lower_rg(vm["id"])       # the VM's JSON (the LRO's result or a GET's)
        labels = vm_nodeclaim_labels(self.profile, it.requirements, offering.zone, offering.capacity_type, ultra,
                                     nodeclaim["metadata"]["labels"].get(NODEPOOL, ""), claim_reqs)
        cheaper = self.unavailable_offerings(known, claim_reqs, below=offering.price)
        return Launched(vm_name, provider_id, it, offering.zone, offering.capacity_type, arch, kubelet, labels,
                        custom_data, offering.price, candidates, cheaper,
                        writer=aks_writer() if machine is not None else KUBELET_NODE_LABELS, machine=machine)

    # -- the AKS Machine API path (provider v1.14.0 pkg/providers/instance/aksmachineinstance.go) -------------
    def create_machine(self, nodeclaim: dict, claim_reqs: Requirements, known: list, it, offering, ultra: bool,
                       machine: MachineLabels, kubelet: KubeletLabels, custom_data: str, attempted: dict, arch: str,
                       candidates: int, nodeclass_tags: dict | None = None) -> Launched | LaunchFailure | PendingMachine:
        """BeginCreate in an AKS Machine API mode (beginCreateMachine, beginCreateMachineNonBatch): the machine's
        name from the NodeClaim's, an existing machine of that name reused, else its PUT, a GET once after it, and
        the operation waited for. AKS makes the VM (aks-<pool>-<machine>-<8 digits>-vm) and its NIC; the NodeClaim
        carries the VM as its provider ID and the machine's ID as karpenter.azure.com/aks-machine-resource-id.
        What refuses the create goes through the Machine API's handlers (_machine_refused, _machine_failed). In
        aksmachineapiheaderbatch a new machine's PUT waits for the round's batch: a PendingMachine."""
        am = self.profile.provider.get("aksMachine") or {}
        claim = nodeclaim["metadata"]["name"]
        self.fact_reads.note(MACHINE_NAME_LENGTH)
        try:
            name = machine_name(claim, int(am.get("nameMaxLength") or 0))
        except MachineNameError as e:
            return LaunchFailure("Unhandled", "CreateInstanceFailed",
                                 f'failed to generate AKS machine name from NodeClaim name "{claim}": {e}', "",
                                 attempted)
        try:
            existing = self.call("machine.get", lambda: self.aks.get(name))
        except ResourceNotFoundError:
            existing = None
        except HttpResponseError as e:
            existing = None          # not fatal: logged, and the create goes on (beginCreateMachine)
            self.event("instance", "failed to check for existing AKS machine", f"{name}: {error_text(e)}")

        def launched(got: dict) -> Launched:
            vm_name = vm_name_of(got)
            self.machine_vms[vm_name.lower()] = name
            self.created_at.setdefault(vm_name, self.now())
            provider_id = "azure://" + lower_rg(str(got["properties"]["resourceId"]))
            labels = vm_nodeclaim_labels(self.profile, it.requirements, offering.zone, offering.capacity_type, ultra,
                                         nodeclaim["metadata"]["labels"].get(NODEPOOL, ""), claim_reqs)
            cheaper = self.unavailable_offerings(known, claim_reqs, below=offering.price)
            return Launched(vm_name, provider_id, it, offering.zone, offering.capacity_type, arch, kubelet, labels,
                            custom_data, offering.price, candidates, cheaper, writer=aks_writer(), machine=machine,
                            machine_id=str(got.get("id") or ""), machine_name=name,
                            inplace_hash=inplace_update_hash(self.cluster.cluster_name, nodeclass_tags,
                                                             nodeclaim["metadata"]["labels"].get(NODEPOOL)))

        if existing is not None:
            # reuseExistingMachine: the machine of an earlier attempt is this NodeClaim's; a Failed one is
            # handled as its provisioning error, then deleted (BeginCreate's cleanup)
            if provisioning_state(existing) == "failed":
                failure = self._machine_failed(existing, name, "reusing existing AKS machine", it, offering,
                                               attempted)
                self._delete_machine(name, after_failed_create=True)
                return failure
            got = existing
        else:
            body = self._machine_body(nodeclaim, it, offering, ultra, machine, nodeclass_tags)
            if self.batching():
                # beginCreateMachineBatch: queued for this round's batch PUT (flush_batch), finished after it
                self._batch.append((name, body))
                return PendingMachine(lambda: self._after_batch(name, it, offering, attempted, launched))
            try:
                poller = self.call("machine.create", lambda: self.aks.begin_create_or_update(name, body))
            except HttpResponseError as e:
                failure = self._machine_refused(error_code(e), error_text(e), name, it, offering, attempted)
                self._delete_machine(name, after_failed_create=True)
                return failure
            got = self._get_once(name, it, offering, attempted)
            if isinstance(got, LaunchFailure):
                return got
            try:
                poller.result()
            except HttpResponseError as e:
                # the promise's Wait: the machine's provisioning error, read with a GET; then Cleanup (Delete)
                try:
                    failed = self.call("machine.get", lambda: self.aks.get(name))
                except HttpResponseError:
                    failed = {}
                if provisioning_error(failed) is not None:
                    failure = self._machine_failed(failed, name, "LRO", it, offering, attempted)
                else:
                    failure = LaunchFailure("Unhandled", "CreateInstanceFailed", f'failed to create AKS machine '
                                            f'"{name}" during LRO, AKS API returned error: {error_text(e)}',
                                            error_code(e), attempted)
                self.delete_machine(name)
                failure.asynchronous = bool(self.profile.provider.get("asyncProvisioning"))
                return failure
        return launched(got)

    def batching(self) -> bool:
        """PROVISION_MODE aksmachineapiheaderbatch: machine creates go through the header batch (flush_batch)."""
        return self.aks is not None and self.cluster.provision_mode == HEADER_BATCH_MODE

    def flush_batch(self) -> None:
        """The header batches of the creates queued since the last flush (the launch round's: the batcher's 1 s
        idle timer fires after them): grouped by batch_key, up to provider.aksMachine.headerBatchMax each, one PUT
        per batch at its first machine's path, the shared template as its body and the BatchPutMachine header
        naming every machine (executor.go executeBatch); each machine's answer kept for _after_batch."""
        queued, self._batch = self._batch, []
        groups: dict[str, list[tuple[str, dict]]] = {}
        for name, body in queued:
            groups.setdefault(batch_key(body), []).append((name, body))
        size = int((self.profile.provider.get("aksMachine") or {}).get("headerBatchMax") or 0) or len(queued) or 1
        for entries in groups.values():
            for i in range(0, len(entries), size):
                self._put_batch(entries[i:i + size])

    def _put_batch(self, entries: list[tuple[str, dict]]) -> None:
        names = [n for n, _ in entries]
        headers = {BATCH_HEADER: batch_header(entries)}
        try:
            self.call("machine.create", lambda: self.aks.begin_create_or_update(
                names[0], shared_template(entries[0][1]), headers=headers))
            self._batch_answers.update({n: None for n in names})
        except HttpResponseError as e:
            try:
                body = e.response.json() if e.response is not None else {}
                self._batch_answers.update(per_machine_errors(body if isinstance(body, dict) else {}, names))
            except (ValueError, BatchAnswerError) as bad:
                # distributeOperationalError: every machine of the batch fails with it
                self._batch_answers.update({n: f"failed to extract per-machine errors: {bad}" for n in names})

    def _after_batch(self, name: str, it, offering, attempted: dict, launched: Callable) -> "Launched | LaunchFailure":
        """beginCreateMachineBatch once its batch answered: the machine's own error through the begin-create
        handlers, or an error of the whole batch unhandled (BeginCreate then deletes the machine); else the GET once,
        and the promise's wait: GETs until the machine leaves Creating (machinecache PollUntilDone), its
        provisioning error handled as the LRO's."""
        answer = self._batch_answers.pop(name, "no answer from the batch")
        if answer is not None:
            if isinstance(answer, str):
                failure = LaunchFailure("Unhandled", "CreateInstanceFailed",
                                        f'failed to begin create AKS machine "{name}", unhandled error: {answer}', "",
                                        attempted)
            else:
                failure = self._machine_refused(answer[0], f"{answer[0]}: {answer[1]}", name, it, offering, attempted)
            self._delete_machine(name, after_failed_create=True)
            return failure
        got = self._get_once(name, it, offering, attempted)
        if isinstance(got, LaunchFailure):
            return got
        for _ in range(BATCH_POLLS):
            if provisioning_state(got) != "creating":
                break
            try:
                got = self.call("machine.get", lambda: self.aks.get(name))
            except HttpResponseError:
                continue
        if provisioning_state(got) == "failed" or provisioning_error(got) is not None:
            failure = self._machine_failed(got, name, "LRO (GET poller)", it, offering, attempted)
            self.delete_machine(name)
            failure.asynchronous = bool(self.profile.provider.get("asyncProvisioning"))
            return failure
        return launched(got)

    def _get_once(self, name: str, it, offering, attempted: dict) -> "dict | LaunchFailure":
        """getCreatedMachineAndHandleEarlyProvisioningError: the machine read once after its PUT; a failed read,
        or a machine already Failed, fails the create (and BeginCreate deletes the machine)."""
        try:
            got = self.call("machine.get", lambda: self.aks.get(name))
        except HttpResponseError as e:
            self._delete_machine(name, after_failed_create=True)
            return LaunchFailure("Unhandled", "CreateInstanceFailed", f'failed to get AKS machine "{name}" once '
                                 f'after begin creation: {error_text(e)}', error_code(e), attempted)
        if provisioning_state(got) == "failed":
            failure = self._machine_failed(got, name, "get once after begin creation", it, offering, attempted)
            self._delete_machine(name, after_failed_create=True)
            return failure
        return got

    def _machine_body(self, nodeclaim: dict, it, offering, ultra: bool, machine: MachineLabels,
                      nodeclass_tags: dict | None) -> dict:
        """buildAKSMachineTemplate, of the fields the fake and a scenario's request checks read: size, zone,
        priority, mode, the sanitized nodeLabels, every taint as a node initialization taint (configureTaints), the
        Kubernetes version (OrchestratorVersion), the tags (ConfigureAKSMachineTags: harness/loop/azure/machinetags.py).
        (harness simplification: the
        node image version, OS SKU, kubelet and Linux OS configuration are not sent; the fake defaults them.)"""
        spec = nodeclaim.get("spec") or {}
        taints = []
        for t in (spec.get("taints") or []) + (spec.get("startupTaints") or []):
            text = f"{t['key']}={t['value']}:{t['effect']}" if t.get("value") else f"{t['key']}:{t['effect']}"
            if text not in taints:
                taints.append(text)
        tags = machine_tags(self.cluster.cluster_name, nodeclass_tags,
                            nodeclaim["metadata"]["labels"].get(NODEPOOL), nodeclaim["metadata"]["name"])
        kube: dict = {"nodeLabels": dict(machine.sent), "nodeInitializationTaints": taints, "nodeTaints": [],
                      "orchestratorVersion": self.cluster.kubernetes_version}
        return {"zones": [] if offering.zone in ("0", "") else [offering.zone.rsplit("-", 1)[-1]],
                "properties": {"hardware": {"vmSize": it.name, "ultraSsdEnabled": ultra},
                               "operatingSystem": {"osType": "Linux"},
                               "kubernetes": kube,
                               "mode": "System" if machine.mode == "system" else "User",
                               "priority": "Spot" if offering.capacity_type == "spot" else "Regular",
                               "tags": tags}}

    def _machine_refused(self, code: str, text: str, name: str, it, offering, attempted: dict) -> LaunchFailure:
        """The PUT refused, or the machine's error in a refused batch (beginCreateMachineNonBatch and
        beginCreateMachineBatch -> handleMachineBeginCreateError; `text`: "code: message"): the release's begin-create
        handlers (release-probes.yaml provider.aksMachine.beginCreateErrorHandlers, from v1.12.0; none before, when
        the error is returned as it is) mark offerings unavailable; what Create returns is a CreateError with the
        handler's reason where the release makes one (provider.aksMachine.beginCreateErrorKind, v1.14.0), else
        a plain error (cloudprovider.go toCreateError: reason CreateInstanceFailed, the whole text)."""
        am = self.profile.provider.get("aksMachine") or {}
        handlers = list(am.get("beginCreateErrorHandlers") or ())
        if not handlers:
            return LaunchFailure("Unhandled", "CreateInstanceFailed",
                                 f'failed to begin create AKS machine "{name}": {text}', code, attempted)
        c = classify_and_mark(code, text, cache=self.unavailable, instance_type=it, zone=offering.zone,
                              capacity_type=offering.capacity_type, all_zones=sorted({o.zone for o in it.offerings}),
                              enabled=handlers, path="machineBeginCreate")
        if not c.handler:
            return LaunchFailure("Unhandled", "CreateInstanceFailed",
                                 f'failed to begin create AKS machine "{name}", unhandled error: {text}', code,
                                 attempted, classified=c)
        if am.get("beginCreateErrorKind") == "CreateError":
            return LaunchFailure(c.error_kind, c.reason, c.message, code, attempted, classified=c)
        return LaunchFailure("Unhandled", "CreateInstanceFailed",
                             f'failed to begin create AKS machine "{name}", handled error: {c.message}', code,
                             attempted, classified=c)

    def _machine_failed(self, machine: dict, name: str, phase: str, it, offering, attempted: dict) -> LaunchFailure:
        """handleMachineProvisioningError: the VM's error (the provisioning error's first detail, else the error)
        through the VM path's handlers (offerings/errordetailhandlers.go holds the same table)."""
        err = provisioning_error(machine) or {}
        inner = (err.get("details") or [None])[0] or err
        code, message = str(inner.get("code") or ""), str(inner.get("message") or "")
        c = classify_and_mark(code, f"{code}: {message}", cache=self.unavailable, instance_type=it,
                              zone=offering.zone, capacity_type=offering.capacity_type,
                              all_zones=sorted({o.zone for o in it.offerings}),
                              enabled=self.profile.provider.get("createErrorHandlers"))
        if c.handler:
            return LaunchFailure(c.error_kind, c.reason, c.message, code, attempted, classified=c)
        return LaunchFailure("Unhandled", "CreateInstanceFailed", f'failed to create AKS machine "{name}" during '
                             f"{phase}, unhandled provisioning error: code={code}, message={message}", code, attempted,
                             classified=c)

    def _delete_machine(self, name: str, after_failed_create: bool = False) -> str | None:
        """deleteMachine: POST deleteMachines for the one machine and wait; the error's text, or None. After a failed
        create a refusal other than not-found is logged (BeginCreate)."""
        try:
            self.call("machine.delete", lambda: self.aks.begin_delete([name])).result()
            self._machine_suspects.discard(name)
            return None
        except HttpResponseError as e:
            self._machine_suspects.add(name)
            if after_failed_create and getattr(e, "status_code", None) != 404 and error_code(e) != "NotFound":
                self.event("instance", "failed to delete AKS machine after failed creation",
                           f"{name}: {error_text(e)}")
            return error_text(e)

    def delete_machine(self, name: str) -> None:
        """DefaultAKSMachineProvider.Delete: GET the machine first; gone or being deleted means nothing to do, else
        deleteMachine. A failed delete is logged (the finalizer calls Delete again)."""
        try:
            got = self.call("machine.get", lambda: self.aks.get(name))
        except ResourceNotFoundError:
            return
        except HttpResponseError as e:
            self.event("cloudprovider", "failed to delete instance", f"{name}: {error_text(e)}")
            return
        if provisioning_state(got) == "deleting":
            return
        err = self._delete_machine(name)
        if err is not None:
            self.event("cloudprovider", "failed to delete instance", f"{name}: {err}")

    def update_machine_tags(self, name: str, tags: dict[str, str]) -> bool:
        """The in-place update of an AKS machine (inplaceupdate processAKSMachineInstance): GET the machine, and
        when its tags are not `tags` (patchAKSMachineTags), PUT it back with them, If-Match its eTag. True when the
        tags are current (updated or already so); a failed call is logged and False (the controller retries)."""
        try:
            got = self.call("machine.get", lambda: self.aks.get(name))
            props = got.get("properties") or {}
            if dict(props.get("tags") or {}) == tags:
                return True
            body = {**got, "properties": {**props, "tags": dict(tags)}}
            self.call("machine.update", lambda: self.aks.update(name, body, props.get("eTag")))
            return True
        except HttpResponseError as e:
            self.event("nodeclaim.inplaceupdate", "failed to apply update to AKS machine", f"{name}: {error_text(e)}")
            return False

    def machine_drift_action(self, name: str) -> str | None:
        """The machine's status.driftAction as isMachineDrifted reads it (a GET: aksMachineInstanceProvider.Get;
        harness simplification: v1.12+ reads it through the machine cache, WithCache, the harness always GETs), ""
        when AKS set none, None when the read failed (the check's error: no drift this time)."""
        try:
            got = self.call("machine.get", lambda: self.aks.get(name))
        except HttpResponseError:
            return None
        return str((((got.get("properties") or {}).get("status") or {}).get("driftAction")) or "")

    def unavailable_offerings(self, known: list, claim_reqs: Requirements, below: float | None = None) -> tuple:
        """The offerings a NodeClaim allows that are unavailable (cheaper than `below`), as (instance type, zone,
        capacity type): of every type it names, whatever its availability (an instance type's zone and
        capacity-type requirements list only its available offerings, so create's own list leaves out a type
        with none)."""
        names, wk = claim_reqs.get(INSTANCE_TYPE), self.profile.well_known_labels
        return tuple((it.name, o.zone, o.capacity_type) for it in known if names.has(it.name) for o in it.offerings
                     if not o.available and (below is None or o.price < below)
                     and claim_reqs.is_compatible(o.requirements, wk))

    def _create_failed(self, e: HttpResponseError, it, offering, attempted: dict) -> LaunchFailure:
        zones = sorted({o.zone for o in it.offerings})
        c: Classified = classify_and_mark(error_code(e), error_text(e), cache=self.unavailable,
                                          instance_type=it, zone=offering.zone,
                                          capacity_type=offering.capacity_type, all_zones=zones,
                                          enabled=self.profile.provider.get("createErrorHandlers"))
        return LaunchFailure(c.error_kind, c.reason, c.message, error_code(e), attempted, classified=c)

    def _put_and_read(self, kind: str, name: str, put: Callable, get: Callable):
        return self._finish_lro(kind, name, self.call(f"{kind}.create", put), get)

    def _finish_lro(self, kind: str, name: str, poller, get: Callable):
        """The LRO's result. The SDK retries each poll and the final GET; the harness's client
        does not (fakeazure.clients, retry_total=0), so a transient error there is answered by
        reading the resource again under the retry policy."""
        try:
            return poller.result()
        except HttpResponseError as e:
            if getattr(e, "status_code", None) not in RETRY_STATUS:
                raise
            res = self.call(f"{kind}.get", get)
            if provisioning_state(res) == "failed":
                raise HttpResponseError(message=f"{kind} {name} provisioning failed") from None
            return res

    # -- delete and cleanup (provider v1.14.0 pkg/providers/instance/vminstance.go) ------------
    def resource_name(self, nodeclaim_name: str) -> str:
        """The VM and NIC name of a NodeClaim (GenerateResourceName)."""
        return f"aks-{nodeclaim_name}"

    def _cleanup(self, vm_name: str, must_delete_nic: bool) -> bool:
        """cleanupAzureResources: the VM if it exists (force delete; its NIC and disk go with it),
        then the NIC if it exists. Errors are logged; what survives is left to the garbage
        collectors. True when both are gone."""
        vm_err = None
        try:
            self.call("vm.get", lambda: self.compute.virtual_machines.get(self.rg, vm_name, **_UNREAD))
            self.call("vm.delete", lambda: self.compute.virtual_machines.begin_delete(
                self.rg, vm_name, force_deletion=True, polling=PollWhenAsked())).result()
        except ResourceNotFoundError:
            pass
        except HttpResponseError as e:
            vm_err = error_text(e)
            self.event("instance", "virtualMachine.Delete failed", f"{vm_name}: {vm_err}")
        nic_err = self._delete_nic(vm_name)
        # provider v1.14.0 pkg/providers/instance/vminstance.go cleanupAzureResources: with mustDeleteNic
        # (BeginCreate's sync-failure path) the NIC error is not logged there but joined with the VM's and
        # logged by the caller as "failed to cleanup resources for node claim" (vminstance.go:238);
        # otherwise it is logged as "networkinterface.Delete failed"
        if nic_err is not None and not must_delete_nic:
            self.event("instance", "networkinterface.Delete failed", f"{vm_name}: {nic_err}")
        if must_delete_nic and (vm_err or nic_err):
            self.event("instance", "failed to cleanup resources for node claim",
                       "\n".join(x for x in (vm_err, nic_err) if x))
        ok = vm_err is None and nic_err is None
        if not ok:
            self._suspects.add(vm_name.lower())
        else:
            self._cleaned.add(vm_name.lower())
        return ok

    def _delete_nic(self, nic_name: str) -> str | None:
        """deleteNicIfExists (pkg/providers/instance/azureresourcemanagerutils.go): the error's text, or
        None when the NIC is gone; the callers log it as upstream does."""
        try:
            self.call("nic.get", lambda: self.network.network_interfaces.get(self.rg, nic_name, **_UNREAD))
            self.call("nic.delete", lambda: self.network.network_interfaces.begin_delete(
                self.rg, nic_name, polling=PollWhenAsked())).result()
            return None
        except ResourceNotFoundError:
            return None
        except HttpResponseError as e:
            return error_text(e)

    def delete(self, vm_name: str) -> None:
        """DefaultVMProvider.Delete: GET the VM first; gone means nothing to do (its NIC, if any,
        is left to the NIC garbage collector), being deleted means wait, else cleanup without
        mustDeleteNic. A failed GET is logged and the VM left to the instance garbage collector.
        The VM of an AKS machine goes with its machine (cloudprovider.go Delete: the NodeClaim's machine)."""
        machine = self.machine_vms.get(vm_name.lower())
        if machine is not None and self.aks is not None:
            self.delete_machine(machine)
            return
        try:
            vm = self.call("vm.get", lambda: self.compute.virtual_machines.get(self.rg, vm_name, **_AS_JSON))
        except ResourceNotFoundError:
            # gone: the termination finalizer's second Delete after this provider's own cleanup (core
            # v1.14.0 pkg/controllers/nodeclaim/lifecycle/controller.go finalize calls Delete until it returns
            # NodeClaimNotFound),
            # or a VM that vanished otherwise (an eviction, a delete outside Karpenter), whose NIC may be
            # left behind for the garbage collectors
            if vm_name.lower() not in self._cleaned:
                self._suspects.add(vm_name.lower())
            return
        except HttpResponseError as e:
            self._suspects.add(vm_name.lower())
            self.event("cloudprovider", "failed to delete instance", f"{vm_name}: {error_text(e)}")
            return
        if provisioning_state(vm) == "deleting":
            return
        self._cleanup(vm_name, must_delete_nic=False)

    def list_vm_names(self) -> set[str] | None:
        """Lower-case names of the resource group's VMs, or None when the list failed (the
        caller skips this garbage-collection round, as upstream's Reconcile returns the error)."""
        try:
            return self.call("vm.list", lambda: list_vm_names(self.compute, self.rg))
        except HttpResponseError as e:
            self.event("instance.garbagecollection", "listing VMs", error_text(e))
            return None

    def list_machine_names(self) -> set[str] | None:
        """Lower-case names of the machines pool's AKS machines, or None when the list failed (the caller skips
        this garbage-collection round)."""
        try:
            return {str(m.get("name") or "").lower() for m in self.call("machine.list", lambda: self.aks.list())}
        except HttpResponseError as e:
            self.event("garbagecollection", "listing cloudprovider instances", error_text(e))
            return None

    def collect_garbage(self, owned: set[str], eventually: bool = False) -> None:
        """The provider's two garbage collectors, for what failed cleanups left: VMs with no
        NodeClaim older than INSTANCE_GC_GRACE, and NICs with neither a VM nor a NodeClaim of their
        name (every NIC_GC_INTERVAL). `eventually` runs both as if their time had come (the
        harness's steady state stands for 'later'). Nothing runs until a cleanup left something.
        Afterwards `leftovers` holds what a later round still has to remove."""
        machines_left = self._collect_machines(owned, eventually)
        if not self._suspects:
            self.leftovers = machines_left
            return
        now = self.now()
        owned = {n.lower() for n in owned}
        vms = self.list_vm_names()
        if vms is None:
            return
        for name in sorted(vms - owned):
            if eventually or now - self.created_at.get(name, now) > INSTANCE_GC_GRACE:
                self.delete(name)
        if eventually or self._last_nic_gc is None or now - self._last_nic_gc >= NIC_GC_INTERVAL:
            self._last_nic_gc = now
            try:
                nics = self.call("nic.list", lambda: list_nic_names(self.network, self.rg))
            except HttpResponseError as e:
                self.event("networkinterface.garbagecollection", "listing NICs", error_text(e))
                return
            live = self.list_vm_names()
            live = vms if live is None else live
            for name in sorted(nics):
                if name.lower() in live or name.lower() in owned:
                    continue
                err = self._delete_nic(name)
                if err is None:
                    self.event("networkinterface.garbagecollection", "garbage collected NIC", name)
                else:       # provider v1.14.0 nic_garbagecollection.go Reconcile: Error(err, "")
                    self.event("networkinterface.garbagecollection", "", err)
            # a suspect stays one while its VM or NIC exists (owned ones may be orphaned later)
            try:
                nics = self.call("nic.list", lambda: list_nic_names(self.network, self.rg))
            except HttpResponseError:
                return
            left = {n.lower() for n in nics} | (self.list_vm_names() or live)
            self._suspects &= left
            self.leftovers = (self._suspects - owned) | machines_left

    def _collect_machines(self, owned: set[str], eventually: bool) -> set[str]:
        """The instance garbage collector's AKS machines, for what a failed machine delete left (cloudprovider.go
        List lists the pool's machines beside the VMs; instance_garbagecollection.go Reconcile): a machine whose
        VM (its provider ID) no NodeClaim owns, not being deleted, created more than INSTANCE_GC_GRACE ago
        (status.creationTimestamp; `eventually`: whatever its age) is deleted (cloudprovider.go Delete). The
        machines such a round still leaves, by name."""
        if not self._machine_suspects or self.aks is None:
            return set()
        try:
            machines = self.call("machine.list", lambda: self.aks.list())
        except HttpResponseError as e:
            self.event("instance.garbagecollection", "listing cloudprovider instances", error_text(e))
            return set(self._machine_suspects)
        now, owned = self.now(), {n.lower() for n in owned}
        left = set()
        for m in machines:
            name = str(m.get("name") or "")
            if vm_name_of(m).lower() in owned or provisioning_state(m) == "deleting":
                continue
            created = (((m.get("properties") or {}).get("status") or {}).get("creationTimestamp"))
            if eventually or (created and now - parse_rfc3339(created) > INSTANCE_GC_GRACE):
                self.delete_machine(name)
                if name not in self._machine_suspects:
                    continue           # deleted
            left.add(name)
        self._machine_suspects &= left
        return left


def request_log(fake) -> list[dict]:
    """Every request the fake served, oldest first: method, path, status, the fake's operation name
    (`vm.create`, ...) and the JSON body of a write
    (what `expect.azure.requests` reads; both engines serve the same fake)."""
    details = getattr(fake, "request_details", None) or []
    out = []
    for i, r in enumerate(getattr(fake, "requests", [])):
        entry = r._asdict()
        detail = details[i] if i < len(details) else {}
        entry["operation"] = detail.get("operation")
        entry["body"] = detail.get("body")
        out.append(entry)
    return out
