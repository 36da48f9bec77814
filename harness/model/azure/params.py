"""The inputs that shape instance types besides the SKUs: AKSNodeClass fields and operator options.

NodeClassParams stands for the provider's `instanceTypeParameters` (provider v1.14.0
pkg/providers/instancetype/instancetypes.go), ClusterParams for the operator options it reads
(pkg/operator/options), with defaults from the provider's tests (pkg/test/options.go;
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/suite_test.go).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


def _get(d: Mapping | None, *path, default=None):
    cur: Any = d
    for p in path:
        if not isinstance(cur, Mapping) or p not in cur:
            return default
        cur = cur[p]
    return cur


def _truthy(v) -> bool:
    if isinstance(v, str):
        return v.lower() in ("true", "enabled", "yes", "on")
    return bool(v)


@dataclass(frozen=True)
class NodeClassParams:
    """The AKSNodeClass fields that shape instance types (karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/instancetypes.go `instanceTypeParameters`, whose hash keys the provider's
    instance-type cache)."""

    image_family: str | None = None
    os_disk_size_gb: int = 128
    max_pods: int | None = None
    encryption_at_host: bool | None = None    # None: spec.security.encryptionAtHost unset (nothing sent)
    trusted_launch: bool = False
    # default when spec.gpu/mode is unset (karpenter-provider-azure v1.14.0 pkg/apis/v1beta1/aksnodeclass.go
    # AKSNodeClass.GetGPUMode; github.com/Azure/karpenter-provider-azure v1.14.0
    # pkg/providers/instancetype/instancetypes.go UpdateInstanceTypes)
    gpu_mode: str = "Driver"
    artifact_streaming: bool = False
    fips_mode: str | None = None             # "FIPS" | "Disabled" | None
    local_dns: bool = False

    @staticmethod
    def from_manifest(manifest: Mapping | None) -> "NodeClassParams":
        """From an AKSNodeClass manifest (or just its spec). Field shapes: spec.imageFamily,
        spec.osDiskSizeGB, spec.maxPods, spec.fipsMode, spec.security.encryptionAtHost,
        spec.localDNS.mode (Required/Preferred = enabled; Preferred is modeled as enabled),
        spec.gpu.mode, spec.security.trustedLaunch|enableTrustedLaunch / spec.trustedLaunch,
        spec.artifactStreaming.mode|enabled / spec.artifactStreaming (bool)."""
        m = manifest or {}
        spec = m.get("spec") if isinstance(m.get("spec"), Mapping) else m
        spec = spec or {}
        security = spec.get("security") or {}
        trusted = security.get("trustedLaunch", security.get("enableTrustedLaunch", spec.get("trustedLaunch")))
        if isinstance(trusted, Mapping):
            trusted = trusted.get("mode", trusted.get("enabled"))
        streaming = spec.get("artifactStreaming")
        if isinstance(streaming, Mapping):
            streaming = streaming.get("mode", streaming.get("enabled"))
        local_dns = _get(spec, "localDNS", "mode")
        gpu_mode = _get(spec, "gpu", "mode") or "Driver"
        osd = spec.get("osDiskSizeGB")
        mp = spec.get("maxPods")
        return NodeClassParams(
            image_family=spec.get("imageFamily"),
            os_disk_size_gb=int(osd) if osd is not None else 128,
            max_pods=int(mp) if mp is not None else None,
            encryption_at_host=(_truthy(security["encryptionAtHost"])
                                if security.get("encryptionAtHost") is not None else None),
            trusted_launch=_truthy(trusted) if trusted is not None else False,
            gpu_mode=str(gpu_mode),
            artifact_streaming=_truthy(streaming) if streaming is not None else False,
            fips_mode=spec.get("fipsMode"),
            local_dns=str(local_dns) in ("Required", "Preferred") if local_dns is not None else False,
        )

    @property
    def fips(self) -> bool:
        return self.fips_mode == "FIPS"


@dataclass(frozen=True)
class ClusterParams:
    """Operator options that shape instance types and labels; defaults as the provider's tests
    (karpenter-provider-azure v1.14.0 pkg/test/options.go Options; github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/instancetype/suite_test.go)."""

    region: str = "southcentralus"
    node_resource_group: str = "test-resourceGroup"
    network_plugin: str = "azure"
    network_plugin_mode: str = "overlay"
    network_policy: str = "cilium"
    network_dataplane: str = "cilium"
    kubernetes_version: str = "1.33.0"
    kubelet_identity_client_id: str = ""
    vnet_guid: str = ""
    subnet_name: str = ""
    vm_memory_overhead_percent: float = 0.075
    node_image_version: str | None = None     # modeled node-image-version (profiles with nodeImageVersion)
    use_sig: bool = False
    cluster_name: str = "harness-cluster"     # the karpenter.azure.com_cluster VM tag
    provision_mode: str = "aksscriptless"     # aksscriptless | bootstrappingclient (base label `mode` in before-0006)
    # a cluster fact, not an operator option: the volume provisioners running (AKS enables the Azure Disk and
    # Azure Files CSI drivers by default: https://learn.microsoft.com/azure/aks/csi-storage-drivers)
    storage_provisioners: tuple[str, ...] = ("disk.csi.azure.com", "file.csi.azure.com")

    _KEYS = {
        "region": "region", "location": "region",
        "nodeResourceGroup": "node_resource_group", "node_resource_group": "node_resource_group",
        "networkPlugin": "network_plugin", "network_plugin": "network_plugin",
        "networkPluginMode": "network_plugin_mode", "network_plugin_mode": "network_plugin_mode",
        "networkPolicy": "network_policy", "network_policy": "network_policy",
        "networkDataplane": "network_dataplane", "network_dataplane": "network_dataplane",
        "kubernetesVersion": "kubernetes_version", "kubernetes_version": "kubernetes_version",
        "kubeletIdentityClientID": "kubelet_identity_client_id", "kubeletIdentityClientId": "kubelet_identity_client_id",
        "kubelet_identity_client_id": "kubelet_identity_client_id",
        "vnetGUID": "vnet_guid", "vnetGuid": "vnet_guid", "vnet_guid": "vnet_guid",
        "subnetName": "subnet_name", "subnet_name": "subnet_name",
        "vmMemoryOverheadPercent": "vm_memory_overhead_percent",
        "vm_memory_overhead_percent": "vm_memory_overhead_percent",
        "nodeImageVersion": "node_image_version", "node_image_version": "node_image_version",
        "useSIG": "use_sig", "useSig": "use_sig", "use_sig": "use_sig",
        "clusterName": "cluster_name", "cluster_name": "cluster_name",
        "provisionMode": "provision_mode", "provision_mode": "provision_mode",
        "storageProvisioners": "storage_provisioners", "storage_provisioners": "storage_provisioners",
    }

    @staticmethod
    def from_dict(d: Mapping | None) -> "ClusterParams":
        """camelCase (nodeResourceGroup, networkPlugin, ...) or snake_case keys; unknown keys raise."""
        kwargs: dict[str, Any] = {}
        for k, v in (d or {}).items():
            attr = ClusterParams._KEYS.get(k)
            if attr is None:
                raise ValueError(f"unknown cluster setting {k!r}; known: {', '.join(sorted(set(ClusterParams._KEYS)))}")
            kwargs[attr] = v
        if "vm_memory_overhead_percent" in kwargs:
            kwargs["vm_memory_overhead_percent"] = float(kwargs["vm_memory_overhead_percent"])
        if "use_sig" in kwargs:
            kwargs["use_sig"] = _truthy(kwargs["use_sig"])
        if "storage_provisioners" in kwargs:
            kwargs["storage_provisioners"] = tuple(str(p) for p in kwargs["storage_provisioners"] or ())
        for key in ("kubernetes_version", "node_image_version"):
            if kwargs.get(key) is not None:
                kwargs[key] = str(kwargs[key])
        return ClusterParams(**kwargs)

    def zone_label(self, zone: str) -> str:
        """`<lowercase region>-<n>` (karpenter-provider-azure v1.14.0 pkg/utils/zones/zones.go
        MakeAKSLabelZoneFromARMZone; github.com/Azure/karpenter-provider-azure v1.14.0
        pkg/providers/instancetype/instancetypes.go instanceTypeZones)."""
        return f"{self.region.lower()}-{zone}"

