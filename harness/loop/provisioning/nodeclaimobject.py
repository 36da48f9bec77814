"""The NodeClaim object Karpenter writes: for a NodeClaim a Solve planned (NodeClaimTemplate.ToNodeClaim),
and for a `given.existingNodes` entry, the NodeClaim a past round made for the pods it runs. Both engines
create a seeded NodeClaim from `seeded_nodeclaim`, so the two seedings cannot drift apart.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go
(NewNodeClaimTemplate, ToNodeClaim) and nodeclaim.go (FinalizeScheduling, addDaemonRequests: requests are
the pods' plus the DaemonSets' overhead).
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from harness.loop.lifecycle.hashes import nodepool_hash_annotations, template_lifetime
from harness.loop.scheduling.nodeclaim import min_daemon_overhead, offering_compatible
from harness.loop.scheduling.nodeclaimtemplate import Template
from harness.loop.scheduling.pods import PodView, seeded_claim_requests
from harness.loop.scheduling.topology import HOSTNAME
from harness.model.crd import apiversions
from harness.model.upstream.corebehaviour import CoreBehaviour
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import IN, Requirement, Requirements
from harness.model.values.resources import add, format_resource_list, parse_resource_list
from harness.model.labels.semantics import Semantics
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE, ZONE
from harness.model.labels.writers import resolved_requirement_labels

MIN_VALUES_RELAXED = "karpenter.sh/nodeclaim-min-values-relaxed"   # core v1.14.0 pkg/apis/v1/labels.go


class SeedError(ValueError):
    """An existing node the run cannot create (unknown NodePool or instance type, a launch that fails):
    `field` is the scenario path it is about (`given.existingNodes[0].instanceType`), so the runner finds
    the line without reading the message; str() is `field: reason`, as the user reads it."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason

    def __reduce__(self):                    # crosses a process boundary whole (xdist, the dump's pool)
        return SeedError, (self.field, self.reason)


def refused_because(np) -> str:
    """Why a seeded node's NodePool is not there to seed from: the API server refused it (a field the release's
    CRD lacks, such as core v1.14.0's Balanced policy at an older release), in its words; '' otherwise."""
    if np is None or not np.rejected:
        return ""
    return f": the API server refused it at {np.stage}: {np.message}"


def template_for(nodepool: dict, instance_types: list, profile: Profile, sem: Semantics, core: CoreBehaviour,
                 daemon_pods: list[PodView]) -> Template:
    """The NodePool's NodeClaimTemplate with the DaemonSet pods that count on its nodes, judged as the
    release's core judges them (core-behaviour.yaml daemonSetInstanceTypeRequirements, daemonSetCompatibility)."""
    t = Template.from_nodepool(nodepool, instance_types, profile, sem)
    t.daemon_pods = daemon_pods
    t.daemons_per_instance_type = lambda: core["daemonSetInstanceTypeRequirements"]     # read where it decides
    t.daemons_relaxed = core["daemonSetCompatibility"] == "relaxed"
    return t


def to_nodeclaim(template: Template, requirements: Requirements, instance_types: list, requests: dict[str, int],
                 profile: Profile, sem: Semantics, core: CoreBehaviour, rng: random.Random,
                 name: str | Callable[[], str], static: bool = False) -> tuple[dict, Requirements]:
    """ToNodeClaim: the object and its requirements (without hostname and the scheduling simulation keys),
    the instance types' names as a requirement, and, from core v1.9.0, the capacity types their
    compatible offerings have. `name`: the NodeClaim's, or what generates one (drawn after the labels, as
    the run's random stream always had it). `static`: a static NodePool's NodeClaim (IsStaticNodeClaim),
    which gets neither: the provider's Create chooses among every type the template allows."""
    nodepool = template.nodepool
    reqs = requirements.without(HOSTNAME, *profile.scheduling_simulation_keys)
    wk = profile.well_known_labels
    if not static:
        # Scheduler._truncate already kept the 600 cheapest, 60 before core v1.7.0 (sigs.k8s.io/karpenter v1.14.0
        # pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go MaxInstanceTypes; nodeclaim.go CanAdd)
        reqs.add(Requirement(INSTANCE_TYPE, False, frozenset(it.name for it in instance_types),
                             min_values=reqs.get(INSTANCE_TYPE).min_values if INSTANCE_TYPE in reqs else None))
        cts = sorted({o.capacity_type for it in instance_types for o in it.offerings
                      if offering_compatible(o, reqs, wk)})
        if cts and core["capacityTypeFromOfferings"]:       # core v1.9.0 (#2642); before, the template's
            reqs.add(Requirement.new(CAPACITY_TYPE, IN, cts, sem))
    labels = dict(template.labels)
    if profile.label_resolution == "toNodeClaim":
        labels.update(resolved_requirement_labels(profile, reqs, rng))
    name = name if isinstance(name, str) else name()
    spec_t = nodepool["spec"]["template"]["spec"]
    annotations = nodepool_hash_annotations(nodepool, profile)
    if profile.min_values_policy and not static:
        # every new NodeClaim says whether BestEffort lowered a minValues of its template (core v1.6.0+,
        # sigs.k8s.io/karpenter v1.14.0 scheduling/scheduler.go addToNewNodeClaim; harness assumption:
        # judged on the claim's final requirements, core on its first pod's)
        relaxed = any(r.min_values is not None and k in reqs and reqs[k].min_values is not None
                      and reqs[k].min_values < r.min_values for k, r in template.requirements.items())
        annotations[MIN_VALUES_RELAXED] = "true" if relaxed else "false"
    obj = {
        # in the version the release's core writes (v1beta1 at core v0.36: the only one its CRDs serve)
        "apiVersion": apiversions.written_api_version(profile, "NodeClaim"), "kind": "NodeClaim",
        "metadata": {"name": name, "labels": labels,
                     # NodePool.Hash and its version (core nodeclaimtemplate.go NewNodeClaimTemplate)
                     "annotations": annotations,
                     "ownerReferences": [{"apiVersion": apiversions.written_api_version(profile, "NodePool"),
                                          "kind": "NodePool",
                                          "name": template.name, "uid": nodepool["metadata"].get("uid", ""),
                                          "blockOwnerDeletion": True}]},
        "spec": {"requirements": reqs.node_selector_requirements(),
                 # the pods' sum plus what the Solve's FinalizeScheduling added for its DaemonSets
                 # (core v1.14.0 scheduling/nodeclaim.go addDaemonRequests; nodeclaim.min_daemon_overhead)
                 "resources": {"requests": format_resource_list(requests)},
                 "nodeClassRef": apiversions.nodeclaim_nodeclass_ref(nodepool, profile),
                 **({"taints": spec_t["taints"]} if spec_t.get("taints") else {}),
                 **({"startupTaints": spec_t["startupTaints"]} if spec_t.get("startupTaints") else {}),
                 **template_lifetime(nodepool, profile)},    # expireAfter, terminationGracePeriod (ToNodeClaim)
    }
    kubelet = apiversions.nodeclaim_kubelet(nodepool, profile)
    if kubelet is not None:
        obj["spec"]["kubelet"] = kubelet
    return obj, reqs


@dataclass
class SeededClaim:
    """A seeded entry's NodeClaim before it is written: the object, its requirements, its instance
    type and the requests it asks for (the pods' and, where the entry does not give them, the overhead)."""
    obj: dict
    requirements: Requirements
    instance_type: object                     # harness.model.azure.instancetypes.InstanceType
    requests: dict[str, int]


def seeded_nodeclaim(entry: dict, where: str, template: Template, profile: Profile, sem: Semantics,
                     core: CoreBehaviour, rng: random.Random, name: str | Callable[[], str]) -> SeededClaim:
    """The NodeClaim a managed `given.existingNodes` entry stands for, as the provisioner made it for the
    pods that run there: the template's, pinned to the entry's instance type (and zone and capacity
    type where it names them; the provider picks the rest as for any launch), asking for the entry's
    `requests` when it gives them (a dump's NodeClaim's own) or else for its pods' requests plus the
    overhead of the DaemonSets that run on its type (a Solve that planned it alone: FinalizeScheduling),
    held to the type's allocatable (pods.seeded_claim_requests says why). Initialization waits to see each
    requested resource registered (core v1.14.0 nodeclaim/lifecycle/initialization.go
    RequestedResourcesRegistered). Raises SeedError naming the entry's field."""
    it = _instance_type(template.instance_types, entry, where)
    reqs = template.requirements.copy()
    reqs.add(Requirement.new(INSTANCE_TYPE, IN, [it.name], sem))
    offerings = [o for o in it.offerings if offering_compatible(o, reqs, profile.well_known_labels) and
                 (not entry.get("zone") or o.zone == str(entry["zone"])) and
                 (not entry.get("capacityType") or o.capacity_type == entry["capacityType"])]
    if not offerings:
        have = sorted({f"{o.zone or '(regional)'} {o.capacity_type}" for o in it.offerings
                       if offering_compatible(o, reqs, profile.well_known_labels)})
        raise SeedError(where, f"{it.name} has no available offering in zone {entry.get('zone')!r} "
                        f"with capacity type {entry.get('capacityType')!r}" + _static_zonality(profile, entry)
                        + f" (it has: {', '.join(have) or 'none'})")
    if entry.get("zone"):
        reqs.add(Requirement.new(ZONE, IN, [str(entry["zone"])], sem))
    if entry.get("capacityType"):
        reqs.add(Requirement.new(CAPACITY_TYPE, IN, [entry["capacityType"]], sem))
    allocatable = it.allocatable()
    if entry.get("requests"):
        requests = parse_resource_list(entry["requests"])
    else:
        daemons = min_daemon_overhead(template.daemon_overhead_groups(profile.well_known_labels, sem), [it])
        wanted = add(seeded_claim_requests(entry.get("pods") or [], allocatable), daemons)
        requests = {k: min(v, allocatable[k]) for k, v in wanted.items() if k in allocatable}
    obj, reqs = to_nodeclaim(template, reqs, [it], requests, profile, sem, core, rng, name)
    return SeededClaim(obj, reqs, it, requests)


def _static_zonality(profile: Profile, entry: dict) -> str:
    """Why a release offers no zone the catalog has: before provider v1.6.2 a static list of zonal regions
    decided zonality (release probe provider.zones.zonalRegions), and a region off it has none."""
    listed = profile.provider_setting("zones", "zonalRegions")
    region = str(entry.get("zone") or "").rsplit("-", 1)[0].lower()
    if not isinstance(listed, list) or not region or region in {str(r).lower() for r in listed}:
        return ""
    return (f": this release decides zonality from a static list of zonal regions without {region} "
            "(provider.zones.zonalRegions), so it offers no zone there")


def _instance_type(instance_types: list, entry: dict, where: str):
    name = entry.get("instanceType")
    if not name:
        raise SeedError(f"{where}.instanceType", "a node of a NodePool needs its instance type")
    it = next((x for x in instance_types if x.name == name), None)
    if it is None:
        raise SeedError(f"{where}.instanceType", f"{name!r} is not an instance type of the NodePool's AKSNodeClass "
                        "(given.skus, or dropped by the provider)")
    return it
