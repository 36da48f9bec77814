"""Pod volumes as Karpenter core, kube-scheduler and the PV controller see them: PVC -> PV binding,
PersistentVolume node affinity, StorageClass allowedTopologies and volumeBindingMode.

Why it is built this way: docs/architecture/loop.md."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Iterable

from harness.loop.scheduling.pods import PodView
from harness.loop.scheduling.topology import HOSTNAME, match_expression
from harness.model.upstream.corebehaviour import CoreBehaviour
from harness.model.labels.requirements import IN, Requirement, Requirements
from harness.model.values.resources import value
from harness.model.labels.semantics import Semantics

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"        # k8s.io/component-helpers/storage/volume AnnBindCompleted
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"   # k8s.io/api core/v1 BetaStorageClassAnnotation
# k8s.io/kubernetes v1.36.3 pkg/volume/util/storageclass.go IsDefaultStorageClassAnnotation, its beta form
DEFAULT_CLASS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")
IMMEDIATE = "Immediate"
# the claim checks of Karpenter's Validate per core (core-behaviour.yaml unsupportedVolumePods)
NO_CLAIM_CHECKS, CLAIMS, CLAIMS_AND_VOLUMES = "none", "claims", "claimsAndVolumes"
# The topology key each CSI driver publishes on its Node (CSINode topologyKeys); the Azure Disk driver's
# (kubernetes-sigs/azuredisk-csi-driver pkg/azuredisk: topologyKey).
DRIVER_TOPOLOGY_KEYS = {"disk.csi.azure.com": "topology.disk.csi.azure.com/zone"}
# in-tree plugin -> CSI driver (k8s.io/csi-translation-lib, used by core's ResolveDriver)
IN_TREE_DRIVERS = {"kubernetes.io/azure-disk": "disk.csi.azure.com", "kubernetes.io/azure-file": "file.csi.azure.com"}
NO_PROVISIONER = "kubernetes.io/no-provisioner"           # k8s.io/kubernetes pkg/volume NotSupportedProvisioner
# the PV controller's event on a claim it leaves to an external provisioner (kubernetes v1.36.3
# pkg/controller/volume/persistentvolume/pv_controller.go provisionClaimOperationExternal)
EXTERNAL_PROVISIONING = ("Waiting for a volume to be created either by the external provisioner '{}' or manually by the "
                         "system administrator. If volume creation is delayed, please verify that the provisioner is "
                         "running and correctly registered.")

def class_driver(sc: dict | None) -> str:
    """The CSI driver that provisions a StorageClass's claims: its provisioner, an in-tree name as the CSI
    driver it migrated to (one place for the simulation's kube-scheduler and the real engine's stand-in)."""
    prov = str((sc or {}).get("provisioner") or "")
    return IN_TREE_DRIVERS.get(prov, prov)


# kube-scheduler VolumeBinding reasons (kubernetes v1.36.3 pkg/scheduler/framework/plugins/volumebinding/
# binder.go ErrReason*, volume_binding.go PreFilter)
NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"


@dataclass
class VolumeModel:
    """The PersistentVolumes, PersistentVolumeClaims and StorageClasses of a run."""

    pvs: dict[str, dict] = field(default_factory=dict)
    pvcs: dict[tuple[str, str], dict] = field(default_factory=dict)
    classes: dict[str, dict] = field(default_factory=dict)
    # claim -> the Node kube-scheduler's PreBind chose for it (the volume.kubernetes.io/selected-node
    # annotation; binder.go bindAPIUpdate); the external-provisioner removes it only when it runs
    selected: dict[tuple[str, str], str] = field(default_factory=dict)
    _provisioned: int = 0

    def add(self, obj: dict) -> None:
        kind, meta = obj.get("kind"), obj.get("metadata") or {}
        if kind == "PersistentVolume":
            self.pvs[meta["name"]] = obj
        elif kind == "PersistentVolumeClaim":
            self.pvcs[(meta.get("namespace") or "default", meta["name"])] = obj
        elif kind == "StorageClass":
            self.classes[meta["name"]] = obj
        self.bind_claims()

    def __bool__(self) -> bool:
        return bool(self.pvs or self.pvcs or self.classes)

    def default_class(self, pvc: dict) -> None:
        """DefaultStorageClass admission on a claim's create: a claim that names no class (no storageClassName
        field, and no beta annotation) gets the default class: one annotated is-default-class "true", the newest,
        a tie by name (k8s.io/kubernetes v1.36.3 plugin/pkg/admission/storage/storageclass/setdefault/admission.go,
        pkg/volume/util/storageclass.go GetDefaultClass; harness assumption: the classes were made in the same
        second, so the first by name)."""
        spec = pvc.setdefault("spec", {})
        if spec.get("storageClassName") is not None or \
                BETA_STORAGE_CLASS in ((pvc.get("metadata") or {}).get("annotations") or {}):
            return
        defaults = sorted(name for name, sc in self.classes.items()
                          if any(((sc.get("metadata") or {}).get("annotations") or {}).get(a) == "true"
                                 for a in DEFAULT_CLASS))
        if defaults:
            spec["storageClassName"] = defaults[0]

    def delete_claim(self, namespace: str, name: str) -> str | None:
        """A claim deleted: it leaves the model, and the volume bound to it goes when its class reclaims it
        (reclaimPolicy Delete, a dynamically provisioned volume's default: kubernetes v1.36.3
        pkg/controller/volume/persistentvolume/pv_controller.go reclaimVolume); the deleted volume's name."""
        pvc = self.pvcs.pop((namespace, name), None)
        self.selected.pop((namespace, name), None)
        vname = ((pvc or {}).get("spec") or {}).get("volumeName")
        pv = self.pvs.get(vname or "")
        if pv is None:
            return None
        pvspec = pv.get("spec") or {}
        reclaim = pvspec.get("persistentVolumeReclaimPolicy") or \
            (self.classes.get(str(pvspec.get("storageClassName") or "")) or {}).get("reclaimPolicy") or "Delete"
        if reclaim == "Delete":
            del self.pvs[vname]
            return vname
        pvspec.pop("claimRef", None)    # Retain: Released, never bound again without an admin
        return None

    # -- the PV controller --------------------------------------------------------------------
    def bind_claims(self) -> None:
        """Bind each claim to the PV it names, or to the PV whose claimRef names it (kubernetes v1.36.3
        pkg/controller/volume/persistentvolume/pv_controller.go syncClaim). A claim that names an unbound
        volume and is not yet marked bind-completed is bound only when the volume satisfies it
        (syncUnboundClaim, checkVolumeSatisfyClaim: `volume_mismatch`); otherwise it stays Pending, without
        the annotation. One marked bind-completed is bound whatever the volume (syncBoundClaim)."""
        by_ref = {((pv.get("spec") or {}).get("claimRef") or {}).get("name"): pv for pv in self.pvs.values()}
        for (ns, name), pvc in self.pvcs.items():
            spec = pvc.setdefault("spec", {})
            if not spec.get("volumeName"):
                pv = by_ref.get(name)
                ref = ((pv or {}).get("spec") or {}).get("claimRef") or {}
                if pv is None or (ref.get("namespace") or "default") != ns:
                    continue
                spec["volumeName"] = pv["metadata"]["name"]
            pv = self.pvs.get(spec["volumeName"])
            if pv is None:
                continue
            ref = (pv.get("spec") or {}).get("claimRef")
            if ref and (ref.get("name") != name or (ref.get("namespace") or "default") != ns):
                continue                                   # bound to another claim
            if not ref and BIND_COMPLETED not in ((pvc.get("metadata") or {}).get("annotations") or {}) \
                    and volume_mismatch(pv, pvc) is not None:
                continue                                   # VolumeMismatch event; the claim stays Pending
            pv.setdefault("spec", {})["claimRef"] = {"namespace": ns, "name": name}
            pvc.setdefault("metadata", {}).setdefault("annotations", {})[BIND_COMPLETED] = "yes"
            pvc["status"] = {"phase": "Bound"}

    # -- lookups ------------------------------------------------------------------------------
    @staticmethod
    def claim_name(pod: dict, volume: dict) -> str | None:
        """volumeutil.GetPersistentVolumeClaim: a PVC volume's claimName, or an ephemeral
        volume's generated `<pod>-<volume>` name."""
        if volume.get("persistentVolumeClaim"):
            return str(volume["persistentVolumeClaim"].get("claimName"))
        if volume.get("ephemeral"):
            return f"{pod['metadata']['name']}-{volume.get('name')}"
        return None

    def claim(self, pod: dict, volume: dict) -> tuple[str | None, dict | None]:
        name = self.claim_name(pod, volume)
        if name is None:
            return None, None
        ns = pod["metadata"].get("namespace") or "default"
        pvc = self.pvcs.get((ns, name))
        if pvc is None and volume.get("ephemeral"):
            # the ephemeral volume controller creates the claim from the pod's template
            tmpl = (volume["ephemeral"].get("volumeClaimTemplate") or {})
            pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": name, "namespace": ns, **copy.deepcopy(tmpl.get("metadata") or {})},
                   "spec": copy.deepcopy(tmpl.get("spec") or {})}
            pvc["metadata"]["name"], pvc["metadata"]["namespace"] = name, ns
            self.pvcs[(ns, name)] = pvc
        return name, pvc

    def driver(self, pvc: dict) -> str:
        """scheduling.ResolveDriver: the PV's CSI driver, else the StorageClass provisioner
        (in-tree names translated)."""
        pv = self.pvs.get((pvc.get("spec") or {}).get("volumeName") or "")
        if pv is not None and (pv.get("spec") or {}).get("csi"):
            return str(pv["spec"]["csi"].get("driver") or "")
        return class_driver(self.classes.get((pvc.get("spec") or {}).get("storageClassName") or ""))

    # -- Karpenter: Provisioner.Validate (ValidatePersistentVolumeClaims) ----------------------
    def validate(self, pod: dict, checks: str = CLAIMS_AND_VOLUMES) -> str | None:
        """Why Karpenter ignores the pod for its claims, or None. `checks` is the core's set
        (core-behaviour.yaml unsupportedVolumePods): NO_CLAIM_CHECKS, CLAIMS or CLAIMS_AND_VOLUMES."""
        ns = pod["metadata"].get("namespace") or "default"
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            name, pvc = self.claim(pod, vol)
            if name is None:
                continue
            if pvc is None:
                # read through controller-runtime's cache, whose NotFound names the Kind, not the resource
                # (sigs.k8s.io/controller-runtime pkg/cache/internal/cache_reader.go CacheReader.Get);
                # the real v1.14.0 controller words it so (conformance run 2026-11-23)
                return (f'getting persistent volume claim, PersistentVolumeClaim "{name}" not found '
                        f"(PersistentVolumeClaim={name})")
            if checks == NO_CLAIM_CHECKS:
                why = self._validate_existence(pvc, name)
                if why is not None:
                    return why
                continue
            meta, spec = pvc.get("metadata") or {}, pvc.get("spec") or {}
            obj = f"{ns}/{name}"
            if meta.get("deletionTimestamp"):
                return f"persistentvolumeclaim is being deleted (PersistentVolumeClaim={obj})"
            sc_name = str(spec.get("storageClassName") or "")
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return ("persistentvolumeclaim bound to non-existent persistentvolume "
                        f"(PersistentVolume={spec.get('volumeName', '')}, PersistentVolumeClaim={obj})")
            if spec.get("volumeName"):
                vname = spec["volumeName"]
                pv = self.pvs.get(vname)
                # a volume being deleted is refused from core v1.10.0 (#2851, volumetopology.go validateVolume)
                if pv is None or (checks == CLAIMS_AND_VOLUMES and (pv.get("metadata") or {}).get("deletionTimestamp")):
                    why = (f'PersistentVolume "{vname}" not found' if pv is None
                           else "persistentvolume is being deleted")
                    return (f"failed to validate pvc, {why} (PersistentVolume={vname}, "
                            f"PersistentVolumeClaim={obj}, StorageClass={sc_name})")
                if BIND_COMPLETED not in (meta.get("annotations") or {}):
                    return (f"pvc is considered unbound because it does not contain annotation (PersistentVolume="
                            f"{vname}, PersistentVolumeClaim={name}, annotation={BIND_COMPLETED})")
            else:
                if not sc_name:
                    return f"unbound pvc must define a storage class (PersistentVolumeClaim={obj}, StorageClass=)"
                sc = self.classes.get(sc_name)
                if sc is None:
                    return (f"failed to validate pvc, failed to get storage class, StorageClass.storage.k8s.io "
                            f'"{sc_name}" not found (PersistentVolumeClaim={obj}, StorageClass={sc_name})')
                if (sc.get("volumeBindingMode") or IMMEDIATE) == IMMEDIATE:
                    return ("failed to validate pvc, pvc with immediate volume binding mode must be bound "
                            f"(PersistentVolumeClaim={obj}, StorageClass={sc_name})")
        return None

    def _validate_existence(self, pvc: dict, name: str) -> str | None:
        """Core before v1.7.0 (sigs.k8s.io/karpenter v1.6.2 volumetopology.go ValidatePersistentVolumeClaims):
        only that the named volume, or an unbound claim's StorageClass, exists. A claim being deleted or
        Lost, one without the bind-completed annotation and an unbound claim of an Immediate class all pass:
        Karpenter plans a node that kube-scheduler then refuses the pod. Worded as v1.5.0-v1.6.x words it
        (serrors, the claim by name only); before v1.5.0 (#2136) the same checks were worded with fmt.Errorf,
        which this does not model."""
        spec = pvc.get("spec") or {}
        sc_name = str(spec.get("storageClassName") or "")
        if spec.get("volumeName"):
            vname = spec["volumeName"]
            if vname not in self.pvs:
                return (f'failed to validate pvc, PersistentVolume "{vname}" not found '
                        f"(PersistentVolume={vname}, PersistentVolumeClaim={name})")
            return None
        if not sc_name:
            return f"unbound pvc must define a storage class (PersistentVolumeClaim={name})"
        if sc_name not in self.classes:
            return (f'failed to validate storage class, StorageClass.storage.k8s.io "{sc_name}" not found '
                    f"(PersistentVolumeClaim={name}, StorageClass={sc_name})")
        return None

    # -- Karpenter: VolumeTopology.GetRequirements (Inject before core v1.9.0) ----------------------
    def plan(self, pod: PodView, sem: Semantics, core: CoreBehaviour) -> None:
        """Give a pod Karpenter is about to schedule its volume topology, as the core does: kept apart as
        alternatives (`volume_requirements`, read by the scheduler's tryVolumeAlternative), or before core
        v1.9.0 (core-behaviour.yaml volumeRequirementsApart) injected into its required node affinity
        (`volume_affinity`), where topology spread and relaxation see them too."""
        if core["volumeRequirementsApart"]:
            pod.inject_volume_affinity(())
            pod.volume_requirements = self.requirements(pod.obj, sem, core["volumeTopologyAlternatives"])
        else:
            pod.volume_requirements = None
            pod.inject_volume_affinity(tuple(e for terms in self._volume_terms(pod.obj, True) for e in terms[0]))

    def requirements(self, pod: dict, sem: Semantics, alternatives: bool = True) -> list[Requirements] | None:
        """The pod's volume topology alternatives; None when its volumes add no requirement. Without
        `alternatives` (core before v1.13.0, core-behaviour.yaml volumeTopologyAlternatives) each volume
        gives its first term only ("Terms are ORed, only use the first term": sigs.k8s.io/karpenter v1.12.0
        volumetopology.go getPersistentVolumeRequirements, getStorageClassRequirements), and every volume's
        expressions make one requirement set (GetRequirements, NewNodeSelectorRequirements): one alternative."""
        per_volume = [[_node_selector_requirements(t, sem) for t in terms]
                      for terms in self._volume_terms(pod, not alternatives)]
        if not alternatives:
            merged = Requirements()
            for alts in per_volume:
                merged.add(*alts[0].values())
            # a first term of only a local volume's hostname leaves nothing (v1.12.0 lo.Reject)
            return [merged] if merged else None
        out: list[Requirements | None] = [None]
        for alts in per_volume:
            out = _merge_alternatives(out, alts)
        if len(out) == 1 and out[0] is None:
            return None
        return [a for a in out if a is not None]

    def _volume_terms(self, pod: dict, first_only: bool) -> list[list[list[dict]]]:
        """Each claimed volume's non-empty list of topology terms, each a list of node-selector expressions."""
        out = []
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            _, pvc = self.claim(pod, vol)
            if pvc is None:
                continue
            terms = self._claim_terms(pvc, first_only)
            if terms:
                out.append(terms)
        return out

    def _claim_terms(self, pvc: dict, first_only: bool) -> list[list[dict]]:
        spec = pvc.get("spec") or {}
        if spec.get("volumeName"):
            pv = self.pvs.get(spec["volumeName"]) or {}
            pvspec = pv.get("spec") or {}
            terms = (((pvspec.get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms")) or []
            if first_only:
                terms = terms[:1]
            out = []
            for term in terms:
                exprs = list(term.get("matchExpressions") or [])
                if pvspec.get("local") is not None or pvspec.get("hostPath") is not None:
                    kept = [e for e in exprs if e.get("key") != HOSTNAME]
                    if exprs and not kept:
                        out.append([])             # a hostname-only term: unconstrained
                        continue
                    exprs = kept
                if exprs:
                    out.append(exprs)
            return out
        sc = self.classes.get(str(spec.get("storageClassName") or ""))
        out = []
        for term in ((sc or {}).get("allowedTopologies") or [])[:1 if first_only else None]:
            exprs = [{"key": e.get("key"), "operator": IN, "values": e.get("values") or []}
                     for e in term.get("matchLabelExpressions") or []]
            if exprs:
                out.append(exprs)
        return out

    # -- kube-scheduler: VolumeBinding filter ---------------------------------------------------
    def bind_error(self, pod: dict, labels: dict) -> str | None:
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            name, pvc = self.claim(pod, vol)
            if name is not None and pvc is None:
                # PreFilter: the claim must exist (volume_binding.go PreFilter, GetPodVolumeClaims)
                return f'persistentvolumeclaim "{name}" not found'
            if pvc is None:
                continue
            spec = pvc.get("spec") or {}
            if spec.get("volumeName"):
                if BIND_COMPLETED not in ((pvc.get("metadata") or {}).get("annotations") or {}):
                    # not fully bound: "Prebound PVCs are treated as unbound immediate binding"
                    # (binder.go GetPodVolumeClaims, isPVCFullyBound; volume_binding.go PreFilter)
                    return UNBOUND_IMMEDIATE
                if spec["volumeName"] not in self.pvs:
                    return PV_NOT_EXIST
                pv = self.pvs.get(spec["volumeName"]) or {}
                terms = ((((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {})
                         .get("nodeSelectorTerms")) or []
                # raw Node labels, no normalization; a malformed Gt/Lt (not exactly one value, or not an
                # int64) fails its term, as the term's parse error does in k8s.io/component-helpers
                # v0.36.3 scheduling/corev1/nodeaffinity LazyErrorNodeSelector.Match (via
                # storage/volume CheckNodeAffinity)
                if terms and not any(all(match_expression(labels, e) for e in t.get("matchExpressions") or [])
                                     for t in terms):
                    return NODE_CONFLICT
                continue
            sc = self.classes.get(str(spec.get("storageClassName") or "")) or {}
            if (sc.get("volumeBindingMode") or IMMEDIATE) == IMMEDIATE:
                return UNBOUND_IMMEDIATE
            chosen = self.selected.get(self._key(pod, pvc))
            if chosen is not None and chosen != labels.get(HOSTNAME):
                return BIND_CONFLICT        # binder.go FindPodVolumes: another Node was selected for it
            terms = sc.get("allowedTopologies") or []
            if terms and not any(all(labels.get(e.get("key")) in [str(v) for v in e.get("values") or []]
                                     for e in t.get("matchLabelExpressions") or []) for t in terms):
                return BIND_CONFLICT
        return None

    @staticmethod
    def _key(pod: dict, pvc: dict) -> tuple[str, str]:
        meta = pvc.get("metadata") or {}
        return meta.get("namespace") or pod["metadata"].get("namespace") or "default", str(meta.get("name"))

    def select_node(self, pod: dict, node_name: str) -> None:
        """PreBind's bindAPIUpdate: each unbound WaitForFirstConsumer claim of the pod names the chosen Node."""
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            _, pvc = self.claim(pod, vol)
            if pvc is not None and not (pvc.get("spec") or {}).get("volumeName"):
                self.selected.setdefault(self._key(pod, pvc), node_name)

    def reschedule(self, nodes: set[str], served: Iterable[str]) -> list[tuple[str, str]]:
        """The external-provisioner hands a claim whose selected Node is gone back to kube-scheduler (it
        removes the selected-node annotation: sig-storage-lib-external-provisioner controller.go
        provisionClaimOperation, NotFound -> rescheduleProvisioning); only a provisioner that runs does.
        Returns the claims released."""
        served = set(served)
        out = []
        for key, node in list(self.selected.items()):
            pvc = self.pvcs.get(key)
            if node in nodes or pvc is None:
                continue
            if class_driver(self.classes.get(str((pvc.get("spec") or {}).get("storageClassName") or ""))) in served:
                del self.selected[key]
                out.append(key)
        return out

    def unserved_provisioner(self, pod: dict, served: Iterable[str]) -> str | None:
        """The provisioner of the pod's first unbound WaitForFirstConsumer claim that the cluster does not
        run (`served`: CSI driver names). kube-scheduler's VolumeBinding filter passes such a Node (binder.go
        checkVolumeProvisions refuses only `kubernetes.io/no-provisioner` and an empty name; with no CSIDriver
        object there is no capacity check), then PreBind annotates the claim and waits up to its 600 s bind
        timeout for a volume nobody creates (BindPodVolumes), and the pod is tried again: it never binds, while
        the PV controller says it is waiting for that provisioner (pv_controller.go ExternalProvisioning)."""
        served = set(served)
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            _, pvc = self.claim(pod, vol)
            if pvc is None or (pvc.get("spec") or {}).get("volumeName"):
                continue
            sc = self.classes.get(str(pvc["spec"].get("storageClassName") or "")) or {}
            prov = str(sc.get("provisioner") or "")
            if (sc.get("volumeBindingMode") or IMMEDIATE) == IMMEDIATE or prov in ("", NO_PROVISIONER):
                continue
            if class_driver(sc) not in served:
                return prov
        return None

    def provision_for(self, pod: dict, labels: dict) -> list[str]:
        """After the pod binds: the CSI provisioner creates a PV for each unbound
        WaitForFirstConsumer claim, pinned to the Node's topology; returns the new PV names."""
        made = []
        for vol in (pod.get("spec") or {}).get("volumes") or []:
            name, pvc = self.claim(pod, vol)
            if pvc is None or (pvc.get("spec") or {}).get("volumeName"):
                continue
            sc = self.classes.get(str(pvc["spec"].get("storageClassName") or "")) or {}
            driver = self.driver(pvc)          # unbound: the StorageClass provisioner
            exprs = provisioned_topology(sc, driver, labels)
            self._provisioned += 1
            pv_name = f"pvc-{self._provisioned:04d}-{name}"[:63]
            pv = {"apiVersion": "v1", "kind": "PersistentVolume",
                  "metadata": {"name": pv_name, "annotations": {"pv.kubernetes.io/provisioned-by": driver}},
                  "spec": {"storageClassName": pvc["spec"].get("storageClassName"),
                           "claimRef": {"namespace": pvc["metadata"].get("namespace") or "default", "name": name},
                           **({"csi": {"driver": driver, "volumeHandle": pv_name}} if driver else {}),
                           **({"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}}
                              if exprs else {})}}
            self.pvs[pv_name] = pv
            pvc["spec"]["volumeName"] = pv_name
            made.append(pv_name)
        if made:
            self.bind_claims()
        return made


def volume_mismatch(pv: dict, pvc: dict) -> str | None:
    """Why the PV controller will not bind claim `pvc` to the unbound volume `pv` it names, or None (kubernetes
    v1.36.3 pkg/controller/volume/persistentvolume/pv_controller.go checkVolumeSatisfyClaim, its messages;
    classes by k8s.io/component-helpers storage/volume GetPersistentVolumeClass / GetPersistentVolumeClaimClass,
    beta annotation first; VolumeAttributesClass as with the feature gate on, its default since v1.34)."""
    pvmeta, pvspec = pv.get("metadata") or {}, pv.get("spec") or {}
    cmeta, cspec = pvc.get("metadata") or {}, pvc.get("spec") or {}
    if pvmeta.get("deletionTimestamp"):
        return f'the volume is marked for deletion "{pvmeta.get("name")}"'
    requested = ((cspec.get("resources") or {}).get("requests") or {}).get("storage", 0)
    if value((pvspec.get("capacity") or {}).get("storage", 0)) < value(requested):
        return "requested PV is too small"
    pv_class = (pvmeta.get("annotations") or {}).get(BETA_STORAGE_CLASS, pvspec.get("storageClassName") or "")
    claim_class = (cmeta.get("annotations") or {}).get(BETA_STORAGE_CLASS, cspec.get("storageClassName") or "")
    if pv_class != claim_class:
        return "storageClassName does not match"
    if (pvspec.get("volumeAttributesClassName") or "") != (cspec.get("volumeAttributesClassName") or ""):
        return "volumeAttributesClassName does not match"
    if (cspec.get("volumeMode") or "Filesystem") != (pvspec.get("volumeMode") or "Filesystem"):
        return "incompatible volumeMode"
    if not set(cspec.get("accessModes") or []) <= set(pvspec.get("accessModes") or []):
        return "incompatible accessMode"
    return None


def provisioned_topology(sc: dict, driver: str, node_labels: dict) -> list[dict]:
    """The node-affinity expressions of a PV the CSI provisioner creates for a claim of StorageClass
    `sc` on a Node with `node_labels`: the Node's value for each `allowedTopologies` key, else for
    the driver's topology key (harness assumption, module docstring). Shared by the simulation and
    the real engine's provisioner stand-in (harness/runner/engines/real/cluster/csi.py)."""
    keys = sorted({e.get("key") for t in sc.get("allowedTopologies") or [] for e in t.get("matchLabelExpressions") or []})
    if not keys and driver in DRIVER_TOPOLOGY_KEYS:
        keys = [DRIVER_TOPOLOGY_KEYS[driver]]
    return [{"key": k, "operator": IN, "values": [node_labels[k]]} for k in keys if k in node_labels]


def _node_selector_requirements(exprs: Iterable[dict], sem: Semantics) -> Requirements:
    """scheduling.NewNodeSelectorRequirements (keys and values normalized)."""
    return Requirements(Requirement.new(str(e.get("key")), str(e.get("operator")), [str(v) for v in e.get("values") or []],
                                        sem) for e in exprs)


def _merge_alternatives(existing: list, incoming: list[Requirements]) -> list:
    """mergeVolumeRequirementAlternatives: the compatible branches of the cross product, or all of
    them when none is compatible."""
    def merge(a, b):
        out = Requirements()
        if a is not None:
            out.add(*a.values())
        out.add(*b.values())
        return out
    compatible = [merge(a, b) for a in existing for b in incoming if a is None or a.intersects_ok(b)]
    return compatible or [merge(a, b) for a in existing for b in incoming]
