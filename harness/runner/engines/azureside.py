"""The scenario's Azure side, the same for both engines: the fakeazure state its `given` describes
(region, SKUs, prices, quota, faults) and the cluster settings over the harness's defaults."""
from __future__ import annotations

from harness.loop.clock import SimClock
from harness.scenario.catalogs import scenario_catalog
from harness.scenario.load import Scenario

DEFAULT_CLUSTER = {
    "nodeResourceGroup": "MC_harness-rg_harness-cluster_{region}",
    "clusterName": "harness-cluster",
    "kubeletIdentityClientID": "11111111-2222-3333-4444-555555555555",
    "vnetGUID": "a1b2c3d4-0000-4000-8000-00000000abcd",
    "subnetName": "aks-subnet",
}


def cluster_settings(scenario: Scenario) -> dict:
    """given.cluster over the harness defaults, in the scenario's own (camelCase) vocabulary; the harness's
    provision mode option where the scenario names none (harness/model/upstream/provisionmodes.py)."""
    from harness.model.labels.aksmachine import cluster_settings as implied
    from harness.model.upstream.provisionmodes import mode_for
    merged = {k: (v.format(region=scenario.region) if isinstance(v, str) else v) for k, v in DEFAULT_CLUSTER.items()}
    merged.update(scenario.given.get("cluster") or {})
    if mode_for(merged):
        merged["provisionMode"] = mode_for(merged)
        # what the mode requires of the controller's options (aksmachine.py cluster_settings)
        merged.update({k: v for k, v in implied(merged["provisionMode"]).items() if k not in merged})
    merged["region"] = scenario.region
    return merged


def fake_azure(scenario: Scenario, clock: SimClock):
    """fakeazure state for the scenario's `given`: region, SKUs (catalog names or inline
    objects), prices, quota and faults."""
    import fakeazure
    given = scenario.given
    resolved = scenario_catalog(scenario)          # catalog subset or whole, plus synthesized SKUs
    prices = resolved.prices
    wanted = given.get("skus")
    if wanted:
        by_name = {s["name"]: s for s in resolved.skus}
        skus = [by_name[w] if isinstance(w, str) else w for w in wanted if not isinstance(w, str) or w in by_name]
        skus += [by_name[n] for n in resolved.existing if n not in wanted]
    else:
        skus = list(resolved.skus)
    # FakeAzure.add_skus stores normalized copies (fakeazure.catalog.normalize_sku): no copy here
    fake = fakeazure.FakeAzure(region=scenario.region, seed=scenario.seed, skus=skus, clock=clock)
    for region, table in prices.items():
        fake.set_prices(region, table)
    overrides = {}
    for name, price in (given.get("prices") or {}).items():
        overrides[name] = dict(price) if isinstance(price, dict) else {"on-demand": price, "spot": price}
    if overrides:
        fake.set_prices(scenario.region, overrides)
    for family, q in (given.get("quota") or {}).items():
        limit, current = (q, 0) if isinstance(q, int) else (q.get("limit"), q.get("current", 0))
        if family == "cores":
            fake.set_regional_quota(limit)
        elif family == "lowPriorityCores":
            fake.set_low_priority_quota(limit)
        else:
            fake.set_usage(family, limit, current)
    for f in given.get("faults") or []:
        fake.add_fault(f)
    return fake


def machines_pool(cfg: dict):
    """The agent pool the AKS Machine API modes create machines in, for cluster settings `cfg` (cluster_settings):
    the controller's cluster resource group (ARM_RESOURCE_GROUP) and machines pool (AKS_MACHINES_POOL_NAME) of
    harness/data/real-engine.yaml, the scenario's cluster name: one pool for both engines."""
    from harness.loop.azure.aksapi import MachinesPool
    from harness.runner.engines.real.controller.settings import engine_data
    data = engine_data()
    return MachinesPool(data["environment"]["ARM_RESOURCE_GROUP"], cfg["clusterName"], data["machines_pool"])


def add_machines_pool(fake, cfg: dict, profile, cluster=None) -> None:
    """The machines pool (machines_pool) in the fake, in Machines mode, with the cluster's subnet; what AKS writes
    on each machine's node is the one rule of harness/model/labels/aksmachine.py aks_writes (machine_labeler)."""
    from harness.runner.engines.real.controller import settings
    where = machines_pool(cfg)
    fake.add_agent_pool(where.resource_group, where.cluster, where.pool, cfg["nodeResourceGroup"],
                        labeler=machine_labeler(cfg, profile, cluster),
                        subnet_id=settings.subnet_id(fake.subscription_id, cfg["nodeResourceGroup"],
                                                     cfg.get("subnetName") or "aks-subnet"))


def machine_vm_name(cfg: dict, profile, nodeclaim_name: str) -> str:
    """The VM AKS makes for the machine of NodeClaim `nodeclaim_name` in the run's machines pool (lowercase):
    the machine named as the release names it (harness/model/azure/aksmachines.py machine_name), its VM as
    fakeazure names it (aks-<pool>-<machine>-<8 digits>-vm, containerservice/models.py)."""
    from fakeazure.containerservice.models import cluster_digits
    from harness.model.azure.aksmachines import machine_name
    where = machines_pool(cfg)
    name = machine_name(nodeclaim_name, int((profile.provider.get("aksMachine") or {}).get("nameMaxLength") or 0))
    return f"aks-{where.pool}-{name}-{cluster_digits(where.resource_group, where.cluster)}-vm".lower()


# the machine tag naming its NodeClaim (provider v1.14.0 pkg/providers/launchtemplate/tags.go
# KarpenterAKSMachineNodeClaimTagKey, set by aksmachineinstancehelpers.go ConfigureAKSMachineTags)
NODECLAIM_TAG = "karpenter.azure.com_aksmachine_nodeclaim"


def machine_labeler(cfg: dict, profile, cluster=None):
    """(machine properties, SKU) -> the labels AKS writes on the machine's node, for cluster settings `cfg`:
    aksmachine.aks_writes of the provider's base labels for the cluster and the AKSNodeClass of the NodeClaim the
    machine is tagged with (read from `cluster`; the default AKSNodeClass when none is found), on the SKU's
    architecture and Kubernetes version, and the machine's priority and mode: what the simulation's Node gets from
    the same rule."""
    import dataclasses

    from fakeazure.catalog import capability
    from harness.loop.azure.provider import label_facts
    from harness.model.azure.params import ClusterParams, NodeClassParams
    from harness.model.labels.aksmachine import aks_writes
    from harness.model.labels.writers import base_labels
    from harness.runner.engines.real.controller.settings import engine_data
    params = ClusterParams.from_dict({**engine_data()["cluster_defaults"], **cfg})

    def labeler(props: dict, sku: dict | None) -> dict[str, str]:
        nodeclass = None
        claim = (props.get("tags") or {}).get(NODECLAIM_TAG)
        if cluster is not None and claim:
            got = cluster.get("NodeClaim", str(claim))
            ref = (((got or {}).get("spec") or {}).get("nodeClassRef") or {}).get("name")
            nodeclass = cluster.get("AKSNodeClass", ref) if ref else None
        arch = "arm64" if sku is not None and capability(sku, "CpuArchitectureType") == "Arm64" else "amd64"
        # the Kubernetes version the provider sends (buildAKSMachineTemplate OrchestratorVersion: the one it read
        # from the API server), else the cluster settings'
        version = ((props.get("kubernetes") or {}).get("orchestratorVersion") or "").lstrip("v")
        at = dataclasses.replace(params, kubernetes_version=version) if version else params
        facts = label_facts(at, cfg["nodeResourceGroup"], NodeClassParams.from_manifest(nodeclass), arch)
        mode = "system" if str(props.get("mode") or "").lower() == "system" else "user"
        # the machine's priority as a capacity type (provider v1.14.0 aksmachineinstanceutils.go
        # AKSScaleSetPriorityToKarpCapacityType)
        capacity = "spot" if str(props.get("priority") or "").lower() == "spot" else "on-demand"
        return aks_writes(base_labels(profile, facts), mode, capacity)
    return labeler
