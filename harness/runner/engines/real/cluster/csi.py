"""The Azure Disk CSI driver's controller side, as the real engine's stand-in: dynamic provisioning of
a WaitForFirstConsumer claim once kube-scheduler has picked a Node.

kube-scheduler's VolumeBinding plugin (kubernetes v1.36.3 pkg/scheduler/framework/plugins/volumebinding
binder.go AssumePodVolumes / BindPodVolumes) annotates such a claim with
`volume.kubernetes.io/selected-node` in PreBind and waits for it to be bound before it binds the pod.
The driver's external-provisioner (kubernetes-csi/external-provisioner pkg/controller/controller.go,
sig-storage-lib-external-provisioner) answers: it creates the volume and a PersistentVolume named
`pvc-<claim uid>`, pre-bound to the claim (claimRef with its uid), with the StorageClass's reclaim policy
and node affinity for the selected Node's topology; kube-controller-manager's PV controller then binds
the claim. The simulation does the same in harness/loop/scheduling/volumes.py `VolumeModel.provision_for` (the PV's
topology: `provisioned_topology`, shared). Only the scenario's `given.cluster.storageProvisioners` are
served (AKS's default CSI drivers unless it says; in-tree names count as their CSI driver), as a cluster
runs only the CSI controllers it installed: the simulation's kube-scheduler waits in PreBind for the others
(harness/loop/scheduling/volumes.py `VolumeModel.unserved_provisioner`).
"""
from __future__ import annotations

from collections.abc import Iterable

from harness.backends.base import ADMIN, APIRejected
from harness.loop.scheduling.volumes import class_driver, provisioned_topology

SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"


def makes_claims(obj: dict) -> bool:
    """A manifest that puts claims in play: a PersistentVolumeClaim, a StatefulSet with volumeClaimTemplates
    (its controller creates a claim per ordinal), or a pod (or a pod template) with an ephemeral volume, whose
    claim the ephemeral volume controller creates."""
    if obj.get("kind") == "PersistentVolumeClaim":
        return True
    spec = obj.get("spec") or {}
    if obj.get("kind") == "StatefulSet" and spec.get("volumeClaimTemplates"):
        return True
    spec = (spec.get("template") or {}).get("spec") or spec
    return any("ephemeral" in (v or {}) for v in spec.get("volumes") or [])


def claim_key(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "default", str(meta.get("name"))


def ephemeral_claims(manifests: list[dict]) -> dict[tuple[str, str], str]:
    """(namespace, claim name) -> pod name for each claim the ephemeral volume controller makes for a manifest
    Pod's ephemeral volume (`<pod>-<volume>`, kubernetes v1.36.3 pkg/controller/volume/ephemeral). A manifest
    claim of that name stands for the controller's (core's tests create it in the controller's place)."""
    out = {}
    for m in manifests:
        if m.get("kind") != "Pod":
            continue
        ns, pod = claim_key(m)
        for v in (m.get("spec") or {}).get("volumes") or []:
            if "ephemeral" in (v or {}):
                out[(ns, f"{pod}-{v.get('name')}")] = pod
    return out


def own_ephemeral_claims(cluster, owners: dict[tuple[str, str], str], manifests: list[dict]) -> None:
    """Make each manifest claim that stands for a pod's ephemeral one (`ephemeral_claims`) controlled by
    its Pod, as the ephemeral volume controller creates it: kube-scheduler uses a pod's ephemeral claim only
    then ("PVC ... was not created for pod ... (pod is not owner)": k8s.io/component-helpers
    storage/ephemeral VolumeIsForPod), and the controller itself only complains about a claim it finds
    (kubernetes v1.36.3 pkg/controller/volume/ephemeral handleVolume) until the owner is there. A merge
    patch of the metadata: the PV controller writes the claim concurrently."""
    for m in manifests:
        if m.get("kind") != "PersistentVolumeClaim" or claim_key(m) not in owners:
            continue
        ns, name = claim_key(m)
        pod = cluster.get("Pod", owners[(ns, name)], ns)
        if pod is None or cluster.get("PersistentVolumeClaim", name, ns) is None:
            continue
        cluster.client(ADMIN).patch("PersistentVolumeClaim", name, {"metadata": {"ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}]}}, namespace=ns)


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
            prov, driver = str((sc or {}).get("provisioner") or ""), class_driver(sc)
            if not node_name or spec.get("volumeName") or sc is None or driver not in served:
                continue
            node = cluster.get("Node", node_name)
            if node is None:
                # the selected Node is gone (e.g. Karpenter deleted it while kube-scheduler waited): the
                # provisioner hands the claim back to kube-scheduler (sig-storage-lib-external-provisioner
                # controller.go provisionClaimOperation: NotFound -> ProvisioningReschedule, rescheduleProvisioning)
                del meta["annotations"][SELECTED_NODE]
                try:
                    cluster.update(pvc)
                except APIRejected as e:
                    if e.status not in (404, 409):   # gone, or changed meanwhile: the next poll looks again
                        raise
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
