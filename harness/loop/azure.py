"""The Azure cloud provider of the simulated Karpenter: instance types from the SKU API, offering
choice, VM + NIC creation through the real Azure SDK against fakeazure, and error handling.

azure-provider.md §1-§2 (instance types, offerings), §2.5 (allocation strategy), §4 (labels),
§8 (create errors); fake-azure.md §2-§3 (VM and NIC bodies).
"""
from __future__ import annotations

import base64
import random
from dataclasses import dataclass, field

from azure.core.exceptions import HttpResponseError

from harness.loop.scheduling import offering_compatible
from harness.loop.unavailable import Classified, UnavailableOfferings, classify_and_mark
from harness.model import instancetypes as itmod
from harness.model.profile import Profile
from harness.model.requirements import Requirements
from harness.model.wellknown import CAPACITY_TYPE, INSTANCE_TYPE, NODEPOOL, PLACEMENT_SCOPE, ULTRA_SSD
from harness.model.writers import KubeletLabels, LabelFacts, kubelet_node_labels, vm_nodeclaim_labels

RG_DEFAULT = "MC_harness_cluster_southcentralus"


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


@dataclass
class LaunchFailure:
    kind: str                 # CreateError | InsufficientCapacity | Unhandled (NodeClassNotFound is a
                              # reason of kind InsufficientCapacity, azure-provider.md §8)
    reason: str
    message: str
    code: str = ""
    attempted: dict = field(default_factory=dict)


def version_at_least(version: str, major_minor: tuple[int, int]) -> bool:
    parts = [int(p) for p in version.lstrip("v").split(".")[:2] if p.isdigit()]
    return tuple(parts + [0] * (2 - len(parts))) >= major_minor


class AzureProvider:
    """What Karpenter-on-Azure's cloudprovider.Create does, driven through the Azure SDK."""

    def __init__(self, *, fake, compute, network, profile: Profile, cluster: "itmod.ClusterParams",
                 unavailable: UnavailableOfferings, rng: random.Random, subscription_id: str):
        self.fake, self.compute, self.network = fake, compute, network
        self.profile, self.cluster = profile, cluster
        self.unavailable, self.rng = unavailable, rng
        self.subscription_id = subscription_id
        self.rg = cluster.node_resource_group or RG_DEFAULT
        self._skus: list[dict] | None = None
        self._prices: dict | None = None
        self._quota: dict[str, dict] | None = None
        self._it_cache: dict = {}          # (nodeclass, cluster) -> (unavailable-offerings seq, InstanceTypeSet)

    def set_cluster(self, cluster: "itmod.ClusterParams") -> None:
        """New operator settings (a step's `cluster:`): the resource group and the instance types
        follow them."""
        self.cluster = cluster
        self.rg = cluster.node_resource_group or RG_DEFAULT
        self._it_cache.clear()

    # -- instance types (azure-provider.md §1.5: listed once, then cached) ---------------------
    def skus(self) -> list[dict]:
        if self._skus is None:
            pager = self.compute.resource_skus.list(filter=f"location eq '{self.cluster.region}'")
            self._skus = [s.as_dict() for s in pager if s.resource_type == "virtualMachines"]
        return self._skus

    def prices(self) -> dict | None:
        """The region's price table (the provider loads static prices once, azure-provider.md §2.4)."""
        if self._prices is None:
            self._prices = (self.fake.prices.get(self.cluster.region.lower()) or {}) if hasattr(self.fake, "prices") else {}
        return self._prices or None

    def refresh_quota(self) -> None:
        """Compute usages per VM family (azure-provider.md §2.2 Quota); fail open on errors."""
        try:
            usages = self.compute.usage.list(self.cluster.region)
            self._quota = {u.name.value: {"limit": u.limit, "current": u.current_value} for u in usages}
        except HttpResponseError:
            self._quota = {}

    def has_quota(self, sku: dict) -> bool:
        if self._quota is None:
            self.refresh_quota()
        entry = (self._quota or {}).get(sku.get("family") or "")
        if not entry or entry.get("limit") is None or entry.get("current") is None:
            return True
        vcpus = itmod._cap_int(itmod._caps(sku), "vCPUs") or 0     # as the model counts them
        return vcpus <= entry["limit"] - entry["current"]

    def instance_types(self, nodeclass: "itmod.NodeClassParams"):
        """Built once per node class and cluster settings, again when the unavailable-offerings
        cache changes (quota is read once, on the first build)."""
        key = (nodeclass, self.cluster)
        hit = self._it_cache.get(key)
        if hit is not None and hit[0] == self.unavailable.seq:
            return hit[1]
        its = itmod.build_instance_types(
            self.skus(), nodeclass, self.cluster, self.profile, prices=self.prices(),
            unavailable=self.unavailable.is_unavailable, has_quota=self.has_quota)
        # read the seq after the build: entries it found expired were dropped (seq bumped) and
        # the build already reflects that
        self._it_cache[key] = (self.unavailable.seq, its)
        return its

    # -- labels -------------------------------------------------------------------------------
    def label_facts(self, nodeclass: "itmod.NodeClassParams", arch: str) -> LabelFacts:
        c = self.cluster
        values = {
            "clusterLabel": itmod.normalize_cluster_label(self.rg),
            "kubeletIdentityClientID": c.kubelet_identity_client_id,
            "osSku": itmod.os_sku_from_image_family(nodeclass.image_family or ""),
            "imageFamily": nodeclass.image_family or "",
            "osSkuEffective": itmod.os_sku_effective(nodeclass.image_family or "", c.kubernetes_version,
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

    # -- create -------------------------------------------------------------------------------
    def choose(self, its: list, claim_reqs: Requirements):
        """Allocation strategy (azure-provider.md §2.5): cheapest available compatible offering;
        spot before on-demand and zonal before regional at equal price; seeded shuffle first."""
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
        return best[0] if best else None

    def create(self, nodeclaim: dict, claim_reqs: Requirements, nodeclass: "itmod.NodeClassParams | None",
               nodeclass_name: str) -> Launched | LaunchFailure:
        # azure-provider.md §8 "Other failure reasons": NodeClass not found and no compatible
        # instance type are InsufficientCapacity errors
        if nodeclass is None:
            return LaunchFailure("InsufficientCapacity", "NodeClassNotFound",
                                 f'resolving node class, AKSNodeClass.karpenter.azure.com "{nodeclass_name}" not found')
        names = claim_reqs.get(INSTANCE_TYPE)
        its = [it for it in self.instance_types(nodeclass).instance_types
               if names.has(it.name) and it.requirements.intersects_ok(claim_reqs)]
        pick = self.choose(its, claim_reqs)
        if pick is None:
            return LaunchFailure("InsufficientCapacity", "InsufficientCapacity",
                                 "all requested instance types were unavailable during launch")
        it, offering = pick
        ultra_req = claim_reqs.get(ULTRA_SSD)
        ultra = ultra_req.has("true") and not ultra_req.has("false")      # §2.3: explicit request only
        arch = it.requirements.get(itmod.ARCH).single_value() or "amd64"
        facts = self.label_facts(nodeclass, arch)
        chosen = {CAPACITY_TYPE: offering.capacity_type}
        if self.profile.provides("placementScope"):
            chosen[PLACEMENT_SCOPE] = "regional" if offering.zone in ("0", "") else "zonal"
        if self.profile.provides("ultraSSD"):
            chosen[ULTRA_SSD] = "true" if ultra else "false"
        kubelet = kubelet_node_labels(self.profile, facts, nodeclaim["metadata"].get("labels") or {},
                                      claim_reqs, it.requirements, chosen)
        vm_name = f"aks-{nodeclaim['metadata']['name']}"
        custom_data = self._bootstrap(kubelet.labels)
        attempted = {"size": it.name, "zone": offering.zone, "capacityType": offering.capacity_type}
        nic_id = f"/subscriptions/{self.subscription_id}/resourceGroups/{self.rg}/providers/Microsoft.Network/networkInterfaces/{vm_name}"
        tags = {"karpenter.azure.com_cluster": self.cluster.cluster_name,
                "karpenter.sh_nodepool": nodeclaim["metadata"]["labels"].get(NODEPOOL, ""),
                "compute.aks.billing": "linux"}
        try:
            self.network.network_interfaces.begin_create_or_update(self.rg, vm_name, {
                "location": self.cluster.region, "tags": tags,
                "properties": {"ipConfigurations": [{"name": vm_name, "properties": {
                    "primary": True, "privateIPAllocationMethod": "Dynamic",
                    "subnet": {"id": f"/subscriptions/{self.subscription_id}/resourceGroups/{self.rg}/providers/"
                                     f"Microsoft.Network/virtualNetworks/aks-vnet/subnets/{self.cluster.subnet_name or 'aks-subnet'}"}}}],
                    "enableAcceleratedNetworking": it.requirements.get(
                        "karpenter.azure.com/sku-networking-accelerated").has("true")}}).result()
        except HttpResponseError as e:
            return LaunchFailure("Unhandled", "CreateInstanceFailed", _error_text(e), _error_code(e), attempted)
        body = {
            "location": self.cluster.region,
            # "0" (and "" before #1615) is a regional offering: no zone (azure-provider.md §2.1)
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
        try:
            vm = self.compute.virtual_machines.begin_create_or_update(self.rg, vm_name, body).result()
        except HttpResponseError as e:
            self._cleanup(vm_name)
            zones = sorted({o.zone for o in it.offerings})
            c: Classified = classify_and_mark(_error_code(e), _error_text(e), cache=self.unavailable,
                                              instance_type=it, zone=offering.zone,
                                              capacity_type=offering.capacity_type, all_zones=zones,
                                              enabled=self.profile.provider.get("createErrorHandlers"))
            return LaunchFailure(c.error_kind, c.reason, c.message, _error_code(e), attempted)
        provider_id = "azure://" + _lower_rg(vm.id)
        labels = vm_nodeclaim_labels(self.profile, it.requirements, offering.zone, offering.capacity_type, ultra,
                                     nodeclaim["metadata"]["labels"].get(NODEPOOL, ""), claim_reqs)
        return Launched(vm_name, provider_id, it, offering.zone, offering.capacity_type, arch, kubelet, labels,
                        custom_data)

    def _bootstrap(self, labels: dict[str, str]) -> str:
        """Scriptless custom data carries KUBELET_NODE_LABELS (azure-provider.md §4.4)."""
        line = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        return base64.b64encode(f"KUBELET_NODE_LABELS={line}\n".encode()).decode()

    def _cleanup(self, vm_name: str) -> None:
        """Delete what a failed launch left behind (the NIC; the VM if ARM created it)."""
        for op in (lambda: self.compute.virtual_machines.begin_delete(self.rg, vm_name, force_deletion=True).result(),
                   lambda: self.network.network_interfaces.begin_delete(self.rg, vm_name).result()):
            try:
                op()
            except HttpResponseError:
                pass

    def delete(self, vm_name: str) -> None:
        self._cleanup(vm_name)


def parse_bootstrap(custom_data: str) -> dict[str, str]:
    """What the node's bootstrap reads back from custom data: the --node-labels map."""
    text = base64.b64decode(custom_data).decode()
    for line in text.splitlines():
        if line.startswith("KUBELET_NODE_LABELS="):
            pairs = line.split("=", 1)[1]
            return dict(p.split("=", 1) for p in pairs.split(",") if p)
    return {}


def _error_code(e: HttpResponseError) -> str:
    err = getattr(e, "error", None)
    return getattr(err, "code", None) or ""


def _error_text(e: HttpResponseError) -> str:
    err = getattr(e, "error", None)
    msg = getattr(err, "message", None) or str(e)
    return f"{_error_code(e)}: {msg}" if _error_code(e) else msg


def _lower_rg(vm_id: str) -> str:
    parts = vm_id.split("/")
    for i, p in enumerate(parts):
        if p.lower() == "resourcegroups" and i + 1 < len(parts):
            parts[i + 1] = parts[i + 1].lower()
    return "/".join(parts)
