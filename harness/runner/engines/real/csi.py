"""The Azure Disk CSI driver's controller side, as the real engine's stand-in: dynamic provisioning of
a WaitForFirstConsumer claim once kube-scheduler has picked a Node.

kube-scheduler's VolumeBinding plugin (kubernetes v1.36.3 pkg/scheduler/framework/plugins/volumebinding
binder.go AssumePodVolumes / BindPodVolumes) annotates such a claim with
`volume.kubernetes.io/selected-node` in PreBind and waits for it to be bound before it binds the pod.
The driver's external-provisioner (kubernetes-csi/external-provisioner pkg/controller/controller.go,
sig-storage-lib-external-provisioner) answers: it creates the volume and a PersistentVolume named
`pvc-<claim uid>`, pre-bound to the claim (claimRef with its uid), with the StorageClass's reclaim policy
and node affinity for the selected Node's topology; kube-controller-manager's PV controller then binds
the claim. The simulation does the same in harness/loop/volumes.py `VolumeModel.provision_for` (the PV's
topology: `provisioned_topology`, shared). Only the scenario's `given.cluster.storageProvisioners` are
served (AKS's default CSI drivers unless it says; in-tree names count as their CSI driver), as a cluster
runs only the CSI controllers it installed: the simulation's kube-scheduler waits in PreBind for the others
(harness/loop/volumes.py `VolumeModel.unserved_provisioner`).
"""
from __future__ import annotations

from collections.abc import Iterable

from harness.backends.base import APIRejected
from harness.loop.volumes import IN_TREE_DRIVERS, provisioned_topology

SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def makes_claims(obj: dict) -> bool:
    """A manifest that puts claims in play: a PersistentVolumeClaim, or a pod (or a pod template) with an
    ephemeral volume, whose claim the ephemeral volume controller creates."""
    if obj.get("kind") == "PersistentVolumeClaim":
        return True
    spec = obj.get("spec") or {}
    spec = (spec.get("template") or {}).get("spec") or spec
    return any("ephemeral" in (v or {}) for v in spec.get("volumes") or [])


def provision(cluster, namespaces, served: Iterable[str]) -> list[str]:
    """Create the PV of every claim kube-scheduler selected a Node for, whose provisioner is `served` and
    that no volume serves yet; the names of the PVs created."""
    served = set(served)
    classes = {sc["metadata"]["name"]: sc for sc in cluster.list("StorageClass")}
    made = []
    for ns in sorted(namespaces):
        for pvc in cluster.list("PersistentVolumeClaim", ns):
            meta, spec = pvc["metadata"], pvc.get("spec") or {}
            node_name = (meta.get("annotations") or {}).get(SELECTED_NODE)
            sc = classes.get(str(spec.get("storageClassName") or ""))
            prov = str((sc or {}).get("provisioner") or "")
            driver = IN_TREE_DRIVERS.get(prov, prov)
            if not node_name or spec.get("volumeName") or sc is None or driver not in served:
                continue
            node = cluster.get("Node", node_name)
            if node is None:
                continue
            name = f"pvc-{meta['uid']}"
            exprs = provisioned_topology(sc, driver, node["metadata"].get("labels") or {})
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": name, "annotations": {PROVISIONED_BY: prov}},
                  "spec": {"capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")},
                           "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                           "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                           "storageClassName": sc["metadata"]["name"], "volumeMode": spec.get("volumeMode") or "Filesystem",
                           "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns,
                                        "name": meta["name"], "uid": meta["uid"]},
                           "csi": {"driver": driver, "volumeHandle": name},
                           **({"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}}
                              if exprs else {})}}
            try:
                cluster.create(pv)
            except APIRejected as e:
                if e.status != 409:        # already provisioned: the claim binds in a moment
                    raise
                continue
            made.append(name)
    return made
