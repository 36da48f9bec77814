"""Unit tests of the real-backend pieces that need no cluster: PKI, REST error mapping, binary
lookup, CRD rendering from the profiles, the backend registry."""
from __future__ import annotations

import dataclasses
import json
import os
import stat
from pathlib import Path

import pytest
import requests
from cryptography import x509
from cryptography.x509.oid import NameOID

from harness.backends.binaries import controlplane as binaries
from harness.backends import crds
from harness.backends.base import APIRejected
from harness.backends.kubeclient import cause_detail, path_for, rejection
from harness.backends.kinds import KINDS
from harness.backends.pki import CONTROLLERS_GROUP, PKI
from harness.backends.registry import get_backend
from harness.model.crd import rules as crdrules
from harness.model.upstream.profile import load_profile


# -- PKI (https://kubernetes.io/docs/setup/best-practices/certificates/,
# https://kubernetes.io/docs/reference/access-authn-authz/node/) ----
def _subject(pair) -> tuple[str, list[str]]:
    cert = x509.load_pem_x509_certificate(pair.cert.read_bytes())
    cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    orgs = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    return cn, orgs


def test_pki_identities(tmp_path):
    pki = PKI(tmp_path)
    assert _subject(pki.admin()) == ("admin", ["system:masters"])
    assert _subject(pki.node("n1")) == ("system:node:n1", ["system:nodes"])
    assert _subject(pki.controller("system:serviceaccount:kube-system:karpenter")) == (
        "system:serviceaccount:kube-system:karpenter", [CONTROLLERS_GROUP])
    assert _subject(pki.kube_scheduler()) == ("system:kube-scheduler", [])
    assert pki.node("n1") == pki.node("n1")          # minted once, reused
    assert stat.S_IMODE(os.stat(pki.node("n1").key).st_mode) == 0o600
    serving = x509.load_pem_x509_certificate(pki.serving.cert.read_bytes())
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "kubernetes.default.svc" in sans.get_values_for_type(x509.DNSName)
    assert {str(i) for i in sans.get_values_for_type(x509.IPAddress)} >= {"127.0.0.1", "10.0.0.1"}


def test_pki_reuses_an_existing_ca(tmp_path):
    first = PKI(tmp_path / "a")
    second = PKI(tmp_path / "b", ca=(first.ca.cert.read_bytes(), first.ca.key.read_bytes()), server_side=False)
    ca = x509.load_pem_x509_certificate(first.ca.cert.read_bytes())
    node = x509.load_pem_x509_certificate(second.node("x").cert.read_bytes())
    assert node.issuer == ca.subject
    node.verify_directly_issued_by(ca)


# -- REST error mapping -----------------------------------------------------------------------------
@pytest.mark.parametrize("raw,detail", [
    ('Invalid value: label domain "kubernetes.azure.com" is restricted',          # k8s 1.36 (map, no value)
     'label domain "kubernetes.azure.com" is restricted'),
    ('Invalid value: "object": label domain "kubernetes.io" is restricted',       # older servers
     'label domain "kubernetes.io" is restricted'),
    ('Invalid value: "kubernetes.azure.com/agentpool": label domain "kubernetes.azure.com" is restricted',
     'label domain "kubernetes.azure.com" is restricted'),
    ('Unsupported value: "Foo": supported values: "In", "NotIn"', 'supported values: "In", "NotIn"'),
    ("Required value", "Required value"),
    ("Forbidden: nope", "nope"),
])
def test_cause_detail(raw, detail):
    assert cause_detail(raw) == detail


def test_rejection_maps_status():
    r = requests.Response()
    r.status_code = 422
    r._content = json.dumps({
        "kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
        "message": 'NodePool.karpenter.sh "x" is invalid: spec.template.metadata.labels: Invalid value: m',
        "details": {"causes": [{"reason": "FieldValueInvalid", "message": "Invalid value: m",
                                "field": "spec.template.metadata.labels"}]}}).encode()
    e = rejection(r)
    assert isinstance(e, APIRejected)
    assert (e.status, e.reason) == (422, "Invalid")
    assert e.message.startswith('NodePool.karpenter.sh "x" is invalid')
    assert [(c.field, c.message) for c in e.causes] == [("spec.template.metadata.labels", "m")]


def test_rest_paths():
    assert path_for(KINDS["NodePool"], "a") == "/apis/karpenter.sh/v1/nodepools/a"
    assert path_for(KINDS["Pod"], "p", "ns", "binding") == "/api/v1/namespaces/ns/pods/p/binding"
    assert path_for(KINDS["AKSNodeClass"]) == "/apis/karpenter.azure.com/v1beta1/aksnodeclasses"
    assert path_for(KINDS["Node"], "n", sub="status") == "/api/v1/nodes/n/status"


# -- binaries ---------------------------------------------------------------------------------------
def test_env_override_must_exist(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBE_APISERVER_BIN", str(tmp_path / "nope"))
    with pytest.raises(binaries.BinariesError, match="KUBE_APISERVER_BIN"):
        binaries.find_binaries(validate=False)


def test_missing_binaries_message(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    for var in ("KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR", *binaries.ENV_OVERRIDES.values()):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(binaries.BinariesError, match="build-binaries.sh"):
        binaries.ensure_binaries(build=False)
    ok, why = get_backend("local").available()
    assert not ok and "missing control-plane binaries" in why


def test_kubebuilder_assets_honoured(monkeypatch, tmp_path):
    found = binaries.find_binaries(validate=False)
    if found.missing():
        pytest.skip("no cached binaries to link into a fake KUBEBUILDER_ASSETS dir")
    for name in ("kube-apiserver", "etcd"):
        (tmp_path / name).symlink_to(found[name])
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    bs = binaries.find_binaries()
    assert bs.sources["kube-apiserver"] == "KUBEBUILDER_ASSETS"
    assert bs.sources["etcd"] == "KUBEBUILDER_ASSETS"
    assert bs.versions["kube-apiserver"].startswith("v1.")


def test_warm_build_reuses_cache():
    if binaries.find_binaries(validate=False).missing(binaries.REQUIRED + binaries.OPTIONAL) or \
            not (binaries.cached_bin_dir() / "kwok-stages.yaml").exists():
        pytest.skip("binary cache not complete (cold build takes ~13 minutes)")
    before = {p.name: p.stat().st_mtime_ns for p in binaries.cached_bin_dir().iterdir() if p.is_file()}
    out, _ = binaries.build()
    assert out == binaries.cached_bin_dir()
    after = {p.name: p.stat().st_mtime_ns for p in out.iterdir() if p.is_file()}
    # reused: no binary was rebuilt (kwok's stage config is rewritten on every build)
    assert {k: v for k, v in after.items() if k in before and not k.endswith(".yaml")} == \
           {k: v for k, v in before.items() if not k.endswith(".yaml")}


# -- CRDs from the profiles (karpenter-provider-azure v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml,
# sigs.k8s.io/karpenter v1.14.0 pkg/apis/crds/karpenter.sh_nodepools.yaml) -------
def _crds_or_skip(profile: str) -> dict[str, dict]:
    try:
        return {c["metadata"]["name"]: c for c in crds.render_crds(profile)}
    except binaries.BinariesError as e:
        pytest.skip(f"upstream CRDs unavailable: {e}")


def _v(crd, name):
    return next(v for v in crd["spec"]["versions"] if v["name"] == name)


@pytest.mark.parametrize("profile", ["upstream", "before-0006", "design-0006"])
def test_render_crds_uses_profile_rules(profile):
    got = _crds_or_skip(profile)
    prof = load_profile(profile)
    np_schema = _v(got[crds.NODEPOOLS], "v1")["schema"]["openAPIV3Schema"]["properties"]["spec"]
    tmpl = np_schema["properties"]["template"]["properties"]
    labels = tmpl["metadata"]["properties"]["labels"]
    assert labels.get("x-kubernetes-validations", []) == [
        {"message": r.message, "rule": r.rule} for r in crdrules.label_map_rules(prof, crdrules.NODEPOOL_LABELS)]
    req = tmpl["spec"]["properties"]["requirements"]
    assert req["x-kubernetes-validations"] == [
        {"message": r.message, "rule": r.rule} for r in crdrules.requirement_list_rules(prof)]
    # the same operators, in the CRD's own order when the profile's set is the CRD's (the embedded judge
    # renders the same schema: crdrules.spec_schema)
    assert sorted(req["items"]["properties"]["operator"]["enum"]) == sorted(prof.crd["operators"])
    assert req["items"]["properties"]["operator"]["enum"] == crdrules.spec_schema(prof, "NodePool")[
        "properties"]["template"]["properties"]["spec"]["properties"]["requirements"]["items"]["properties"][
        "operator"]["enum"]
    assert req["items"]["properties"]["key"].get("x-kubernetes-validations", []) == [
        {"message": r.message, "rule": r.rule}
        for r in crdrules.requirement_key_rules(prof, crdrules.NODEPOOL_REQUIREMENTS)]
    nc_req = _v(got[crds.NODECLAIMS], "v1")["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "requirements"]
    assert nc_req["items"]["properties"]["key"].get("x-kubernetes-validations", []) == [
        {"message": r.message, "rule": r.rule}
        for r in crdrules.requirement_key_rules(prof, crdrules.NODECLAIM_REQUIREMENTS)]
    for c in got.values():
        assert "status" not in c and "resourceVersion" not in c["metadata"]


def test_aksnodeclass_crd_is_the_providers_own_under_upstream():
    """upstream installs provider v1.14.0's v1beta1 schema unchanged (defaults and CEL rules included)."""
    c = _crds_or_skip("upstream")[crds.AKSNODECLASSES]
    versions = {v["name"]: v for v in c["spec"]["versions"]}
    assert versions["v1beta1"]["served"] and versions["v1beta1"]["storage"]
    spec = versions["v1beta1"]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert spec["properties"]["imageFamily"]["default"] == "Ubuntu"
    assert any("FIPS" in r["message"] for r in spec["x-kubernetes-validations"])


def test_aksnodeclass_crd_is_open_without_a_profile_schema():
    """before-0006 carries no AKSNodeClass schema (its provider's CRD is not on the proxy): v1beta1's
    spec and status keep unknown fields and inject no defaults, as on embedded."""
    c = _crds_or_skip("before-0006")[crds.AKSNODECLASSES]
    versions = {v["name"]: v for v in c["spec"]["versions"]}
    assert versions["v1beta1"]["storage"]
    props = versions["v1beta1"]["schema"]["openAPIV3Schema"]["properties"]
    for part in ("spec", "status"):
        assert props[part]["x-kubernetes-preserve-unknown-fields"] is True
        assert "properties" not in props[part] and '"default":' not in json.dumps(props[part])


def test_render_is_cached_on_disk():
    _crds_or_skip("upstream")
    cached = list((binaries.cache_dir() / "crds").glob("upstream-*.json"))
    assert cached, "render_crds should leave its result in the harness cache"


def test_probe_expectations_cover_every_rule():
    prof = load_profile("upstream")
    (np_obj, np_exp), (nc_obj, nc_exp) = crds.probes(prof)
    assert {m for _, m in np_exp} == {r.message for r in prof.key_rules
                                     if crdrules.NODEPOOL_LABELS in r.targets or
                                     crdrules.NODEPOOL_REQUIREMENTS in r.targets}
    assert {m for _, m in nc_exp} == {r.message for r in prof.key_rules
                                     if crdrules.NODECLAIM_REQUIREMENTS in r.targets}


# -- registry ----------------------------------------------------------------------------------------
def test_registry():
    assert get_backend("local").name == "local"
    assert get_backend("container").name == "container"
    with pytest.raises(ValueError, match="unknown backend"):
        get_backend("nope")


def test_registry_embedded_is_lazy():
    try:
        b = get_backend("embedded")
    except ImportError as e:     # the lead's module may not exist yet
        pytest.skip(str(e))
    assert b.name == "embedded"


def test_docker_unreachable_reason(monkeypatch):
    from harness.backends.container import ContainerBackend
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    ok, why = ContainerBackend().available()
    assert not ok
    assert "docker-up.sh" in why and ("not reachable" in why or "not installed" in why)


def test_build_kind_without_docker_says_so_before_building(monkeypatch, capsys):
    """`python -m harness.backends build --kind` with no Docker daemon: one line saying Docker is not
    running and how the project starts it, exit 1, no docker-py traceback - and no binary is built."""
    from harness.backends import __main__ as cli
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setattr(binaries, "ensure_binaries", lambda *a, **k: pytest.fail("built binaries without Docker"))
    assert cli.main(["build", "--kind"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("build failed: Docker ") and "harness/backends/docker-up.sh" in err
    assert "Traceback" not in err


def test_the_node_image_build_needs_docker(monkeypatch):
    from harness.backends.container import DockerUnavailable
    from harness.backends.kind import image
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(DockerUnavailable, match="docker-up.sh"):
        image._client()


def test_scripts_are_executable():
    here = Path(binaries.__file__).parent
    for script in (here / "build-binaries.sh", here.parent / "docker-up.sh"):
        assert os.access(script, os.X_OK) or script.read_text().startswith("#!")


def test_ensure_binaries_runs_the_build_script_when_missing(monkeypatch, tmp_path):
    """ensure_binaries(build=True) runs build-binaries.sh (here a stand-in that writes stub binaries
    into the versioned cache dir) under a file lock, then validates what it produced."""
    if binaries.go_binary() is None:
        pytest.skip("no Go toolchain")
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    for var in ("KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR", *binaries.ENV_OVERRIDES.values()):
        monkeypatch.delenv(var, raising=False)
    out = binaries.cached_bin_dir()
    script = tmp_path / "fake-build.sh"
    script.write_text(f"""#!/usr/bin/env bash
set -e
mkdir -p "{out}"
for b in kube-apiserver kube-scheduler kube-controller-manager; do
  printf '#!/bin/sh\\necho Kubernetes {binaries.versions()["k8s"]}\\n' > "{out}/$b"; chmod +x "{out}/$b"; done
printf '#!/bin/sh\\necho etcd Version: 3.6.8\\n' > "{out}/etcd"; chmod +x "{out}/etcd"
echo "building..." >&2
echo "{out}"
""")
    monkeypatch.setattr(binaries, "BUILD_SCRIPT", script)
    bs = binaries.ensure_binaries(build=True)
    assert bs.paths["kube-apiserver"] == out / "kube-apiserver"
    assert bs.versions["kube-apiserver"] == binaries.versions()["k8s"]
    assert bs.versions["etcd"] == "v3.6.8"
    assert not bs.has("kwok")


def test_shared_cluster_is_one_per_process(monkeypatch):
    from harness.backends import registry

    started = []

    class FakeBackend:
        name = "fake"

        def __init__(self, **options):
            self.options = options

        def available(self):
            return (self.options.get("ok", True), "because")

        def start(self):
            started.append(self.options)
            return type("C", (), {"close": lambda self: None})()

    from harness.backends.lifetime import ClusterCache, Lifetime
    monkeypatch.setattr(registry, "get_backend", lambda name, **o: FakeBackend(**o))
    cache = ClusterCache(Lifetime())
    a = registry.shared_cluster("fake", cache=cache, profile="upstream")
    assert registry.shared_cluster("fake", cache=cache, profile="upstream") is a
    assert registry.shared_cluster("fake", cache=cache, profile="before-0006") is not a
    assert len(started) == 2
    with pytest.raises(RuntimeError, match="because"):
        registry.shared_cluster("fake", cache=cache, ok=False)
    cache.close()


def test_real_backend_scenarios_are_grouped_by_profile(monkeypatch):
    """Fewer CRD swaps on a real API server: local items ordered by profile in their own slots;
    embedded items and other tests keep their places."""
    from harness.runner import plugin

    class Item:
        def __init__(self, backend, profile, engine="simulated"):
            self.backend, self.profile, self.engine = backend, profile, engine

        def __repr__(self):
            return f"{self.profile[0]}-{self.backend[0]}"

    monkeypatch.setattr(plugin, "ScenarioItem", Item)
    items = ["test_x"] + [Item(b, p) for p in ("upstream", "before-0006", "upstream", "design-0006")
                          for b in ("embedded", "local")]
    plugin.group_by_profile(items)
    assert [str(i) if isinstance(i, str) else repr(i) for i in items] == [
        "test_x", "u-e", "b-l", "b-e", "d-l", "u-e", "u-l", "d-e", "u-l"]


def test_a_releases_own_nodeclass_crd_relabels_a_version_it_serves():
    """With a release's own CRDs installed (the real engine), an AKSNodeClass in v1alpha2 is written as
    v1beta1 when that CRD serves v1alpha2 (strategy None: the API server relabels), and left to be refused
    when it does not (provider v0.7.5 serves v1alpha2 only)."""
    from harness.backends.realcluster import RealCluster
    rc = object.__new__(RealCluster)
    rc.profile_obj = None
    rc.kinds = KINDS
    nc = {"apiVersion": "karpenter.azure.com/v1alpha2", "kind": "AKSNodeClass", "metadata": {"name": "default"}}
    rc.release_served = {"AKSNodeClass": ["v1alpha2", "v1beta1"]}
    assert rc._served_version(nc)["apiVersion"] == "karpenter.azure.com/v1beta1"
    assert rc._as_installed(nc)["apiVersion"] == "karpenter.azure.com/v1beta1"
    rc.release_served = {"AKSNodeClass": ["v1beta1"]}
    with pytest.raises(APIRejected, match='no matches for kind "AKSNodeClass" in version "karpenter.azure.com/v1alpha2"'):
        rc._served_version(nc)


def test_a_releases_own_crds_refuse_a_karpenter_version_they_do_not_serve():
    """provider v0.5.5 serves karpenter.sh/v1beta1 only: a v1 NodePool is refused as kubectl says it, a
    v1beta1 one goes to the API server as it is (the clients read and write v1beta1: release_kinds)."""
    from harness.backends.realcluster import RealCluster
    rc = object.__new__(RealCluster)
    rc.profile_obj = rc.conversion_profile = None
    rc.kinds = KINDS
    rc.release_served = {"NodePool": ["v1beta1"], "AKSNodeClass": ["v1alpha2"]}
    rc.kinds = {**KINDS, "NodePool": dataclasses.replace(KINDS["NodePool"], version="v1beta1")}   # release_kinds
    np = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"}}
    with pytest.raises(APIRejected, match='no matches for kind "NodePool" in version "karpenter.sh/v1"') as e:
        rc._served_version(np)
    assert e.value.status == 404
    old = {**np, "apiVersion": "karpenter.sh/v1beta1"}
    assert rc._served_version(old) is old
    assert rc._as_installed(old) is old          # an update (a step's NodePool) at the version it serves
    with pytest.raises(APIRejected, match='no matches for kind "NodePool" in version "karpenter.sh/v1"'):
        rc._as_installed(np)
    # provider v0.7.5 (core v1.0.6) serves both and stores v1: a v1beta1 NodePool is converted as its
    # conversion webhook (turned off) would, both on create and on update
    rc.release_served, rc.kinds = {"NodePool": ["v1", "v1beta1"]}, KINDS
    old["spec"] = {"disruption": {"consolidationPolicy": "WhenUnderutilized", "expireAfter": "720h"},
                   "template": {"spec": {"nodeClassRef": {"name": "default"}}}}
    for sent in (rc._served_version(old), rc._as_installed(old)):
        assert sent["apiVersion"] == "karpenter.sh/v1"
        assert sent["spec"]["template"]["spec"]["expireAfter"] == "720h"
        assert sent["spec"]["disruption"]["consolidationPolicy"] == "WhenEmptyOrUnderutilized"
    # ... judged first by the v1beta1 rules of the run's release, as the API server would before converting
    from harness.model.upstream.profile import load_profile
    rc.conversion_profile = load_profile("v0.7.5")
    old["spec"]["disruption"]["consolidateAfter"] = "30s"
    old["spec"]["template"]["spec"]["requirements"] = [{"key": "karpenter.sh/capacity-type", "operator": "In",
                                                        "values": ["on-demand"]}]
    with pytest.raises(APIRejected, match="consolidateAfter cannot be combined with consolidationPolicy=WhenUnderutilized"):
        rc._served_version(old)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    assert rc._served_version(pod) is pod


def test_a_releases_own_crds_move_a_kind_to_the_version_they_store():
    """provider v0.7.5's AKSNodeClass CRD serves v1alpha2 only: the clients read and write it there; a
    kind whose KINDS version is served stays."""
    from harness.backends.realcluster import release_kinds
    crd = lambda kind, *versions: {"spec": {"names": {"kind": kind}, "versions": [     # noqa: E731
        {"name": v, "served": True, "storage": i == len(versions) - 1} for i, v in enumerate(versions)]}}
    kinds = release_kinds([crd("AKSNodeClass", "v1alpha2"), crd("NodePool", "v1beta1", "v1")])
    assert kinds["AKSNodeClass"].api_version == "karpenter.azure.com/v1alpha2"
    # provider v0.5.5 / v0.6.3 (core v0.36.1): karpenter.sh/v1beta1 only
    old = release_kinds([crd("NodePool", "v1beta1"), crd("NodeClaim", "v1beta1")])
    assert (old["NodePool"].api_version, old["NodeClaim"].api_version) == ("karpenter.sh/v1beta1",) * 2
    assert kinds["NodePool"] is KINDS["NodePool"] and kinds["Pod"] is KINDS["Pod"]
    assert release_kinds([crd("AKSNodeClass", "v1alpha2", "v1beta1")])["AKSNodeClass"] is KINDS["AKSNodeClass"]
