"""The container backend: the same control plane in Docker (testcontainers), image built locally
from the cached static binaries. Skipped with the reason when Docker or the binaries are missing."""
from __future__ import annotations

import pytest
from backend_manifests import node, nodepool

from harness.backends.base import KARPENTER, APIRejected, Identity
from harness.backends.container import LABEL, ContainerBackend


def test_container_cluster_judges_like_the_local_one(container_cluster):
    c = container_cluster
    assert c.backend == "container" and "docker" in c.capabilities
    with pytest.raises(APIRejected) as ei:
        c.create(nodepool("np", {"kubernetes.azure.com/agentpool": "x"}), KARPENTER)
    assert ei.value.message == ('NodePool.karpenter.sh "np" is invalid: spec.template.metadata.labels: '
                                'Invalid value: label domain "kubernetes.azure.com" is restricted')
    with pytest.raises(APIRejected) as ei:
        c.create(node("n1", {"node-restriction.kubernetes.io/x": "y"}), Identity.node("n1"))
    assert ei.value.message == ('nodes "n1" is forbidden: node "n1" is not allowed to set the following '
                                'labels: node-restriction.kubernetes.io/x')
    c.create(node("n1", {"node-restriction.kubernetes.io/x": "y"}), KARPENTER)
    c.reset()
    assert c.list("Node") == []


def test_only_host_loopback_ports_are_published(container_cluster):
    import docker
    client = docker.from_env()
    for cid in container_cluster.container_ids().values():
        ports = client.api.inspect_container(cid)["HostConfig"]["PortBindings"] or {}
        for bindings in ports.values():
            assert all(b["HostIp"] == "127.0.0.1" for b in bindings), ports


def test_close_removes_the_containers():
    backend = ContainerBackend(profile=None, keep=False)
    ok, why = backend.available()
    if not ok:
        pytest.skip(why)
    import docker
    c = backend.start()
    ids = set(c.container_ids().values())
    assert len(ids) == 2
    workdir = c.workdir
    c.close()
    left = {x.id for x in docker.from_env().containers.list(all=True, filters={"label": LABEL})}
    assert not ids & left
    assert not workdir.exists()


def test_k3s_flavor_skips_with_a_reason_without_registry():
    backend = ContainerBackend(flavor="k3s")
    ok, why = backend.available()
    if ok:
        pytest.skip("a k3s image is available here; the k3s path is exercised elsewhere")
    assert why   # e.g. "image rancher/k3s:... is not present locally and cannot be pulled ..." or no Docker
