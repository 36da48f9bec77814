"""A small loop to drive controllers one at a time: a Simulation over the embedded API server and a
fakeazure with a few SKUs, built as harness/runner/engines/simulated.py builds it, with no step run yet.
Shared by the tests/loop/test_<controller>.py files."""
from __future__ import annotations

import copy
from contextlib import contextmanager
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = list(yaml.safe_load_all((ROOT / "scenarios/manifests/default-nodepool.yaml").read_text()))

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: unit}
given:
  profiles: [upstream]
  skus: [Standard_D2s_v3, Standard_D4s_v3]
manifests: []
expect: {}
"""
# the same, creating through the AKS Machine API (harness/loop/azure/aksapi.py)
MACHINE_API = SCENARIO.replace("given:\n", "given:\n  cluster: {provisionMode: aksmachineapi}\n")


def nodepool(name="default", **spec) -> dict:
    np = copy.deepcopy(DEFAULT[1])
    np["metadata"]["name"] = name
    np["spec"]["template"]["spec"].update(spec)
    return np


def nodeclass(name="default") -> dict:
    nc = copy.deepcopy(DEFAULT[0])
    nc["metadata"]["name"] = name
    return nc


def pod(name, cpu="100m", **spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": cpu}}}], **spec}}


def deployment(name, replicas=2, cpu="100m", labels=None) -> dict:
    tmpl = pod(name, cpu)
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "default"},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": labels or {"app": name}},
                                                        "spec": tmpl["spec"]}}}


@contextmanager
def simulation(cluster, manifests=(), profile="upstream", seed=1, min_values_policy="Strict", scenario=SCENARIO):
    """A Simulation with `manifests` applied and NodePools validated, inside the fake's SDK mock (`scenario`: the
    document whose `given` it runs under)."""
    import fakeazure
    from fakeazure.clients import compute_client, containerservice_client, network_client
    from harness.loop.azure.aksapi import AKSMachines
    from harness.model.labels.aksmachine import is_machine_mode
    from harness.loop.clock import SimClock
    from harness.loop.simulation import SimConfig, Simulation
    from harness.model.azure import instancetypes as itmod
    from harness.model.upstream.profile import load_profile
    from harness.runner.engines.azureside import add_machines_pool, cluster_settings, fake_azure, machines_pool
    from harness.scenario.load import load_scenarios_text

    sc = load_scenarios_text(scenario, "unit.scenario.yaml", ROOT / "scenarios")[0]
    cluster.reset()
    prof = load_profile(profile)
    cluster.install_profile(prof)
    cfg = SimConfig(scenario="unit", profile=prof, backend=cluster.backend, seed=seed,
                    cluster=itmod.ClusterParams.from_dict(cluster_settings(sc)), min_values_policy=min_values_policy)
    if hasattr(cluster, "configure"):
        cluster.configure(kubernetes_version=cfg.cluster.kubernetes_version)
    clock = SimClock()
    fake = fake_azure(sc, clock)
    aks = None
    if is_machine_mode(cfg.cluster.provision_mode):
        settings = cluster_settings(sc)
        add_machines_pool(fake, settings, prof)
        aks = AKSMachines(containerservice_client(fake), machines_pool(settings))
    with fakeazure.mock_azure(fake):
        sim = Simulation(cfg, cluster, fake, compute_client(fake), network_client(fake), clock, aks=aks)
        sim.apply(list(manifests))
        sim.validate_nodepools()
        yield sim


def launched(sim, *pods):
    """Apply the default NodePool + pods, provision and launch: returns the (only) claim."""
    sim.apply([nodeclass(), nodepool(), *pods])
    sim.validate_nodepools()
    assert sim.provisioner.reconcile()
    assert sim.launch.reconcile()
    (claim,) = sim.claims
    return claim


def synthetic_world():
    """(profile, semantics, instance types) of the upstream profile over 60 seeded synthetic eastus SKUs: the
    scheduler's own tests and its fingerprint build Schedulers on them."""
    from fakeazure.catalog import synthetic_prices, synthetic_skus
    from harness.model.azure.instancetypes import ClusterParams, NodeClassParams, build_instance_types
    from harness.model.upstream.profile import load_profile
    from harness.model.labels.semantics import semantics_for
    profile = load_profile("upstream")
    sem = semantics_for(profile)
    skus = synthetic_skus(60, seed=42, region="eastus")
    its = build_instance_types(skus, NodeClassParams(image_family="Ubuntu2204"), ClusterParams(region="eastus"),
                               profile, prices=synthetic_prices(skus, seed=42))
    return profile, sem, list(its)
