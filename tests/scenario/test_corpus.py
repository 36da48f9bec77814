"""Real manifests from public repositories (tests/corpus, each file's source in tests/corpus/SOURCES.yaml), each
wrapped in a scenario as a new user would: a NodePool file with an AKSNodeClass of the name it refers to, an
AKSNodeClass file with a NodePool referring to it (both with one small pod to provision for), a workload file
with the library's default NodePool and AKSNodeClass (scenarios/manifests/default-nodepool.yaml); a file's
`with` (its kustomization's namespace or PriorityClass, a workshop step's NodePool) is applied before it. Each
is loaded (the loader's checks, `harness validate`'s API-server check: harness/scenario/admitcheck.py) and run on
the embedded engine at `upstream` and at the file's `release`, if any. The provider's own examples and test
pools are not copied here (the repo keeps no files of its upstream): they are read from its Go module in the Go
module cache (github.com/Azure/karpenter-provider-azure v1.14.0, which the controller build downloads) and run at
upstream and at v1.14.0, skipped, saying so, where the module is absent.

Nothing is refused but what kube-apiserver itself refuses (REFUSED_AT_ADMISSION, REFUSED_AT_LOAD), and every
warning a run prints is a documented, deliberate limit (LIMITS, each with the docs page that names it). A file
refused only for a kind the harness does not take yet is a strict xfail naming the kind (PENDING): the rest of
it must already load and run clean, and the mark goes once the kind is taken."""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.backends.embedded import EmbeddedBackend
from harness.model.crd import apiversions
from harness.model.azure.params import ClusterParams
from harness.model.upstream.profile import load_profile
from harness.model.upstream.releases import resolve
from harness.scenario import admitcheck
from harness.runner.engines import get_engine
from harness.runner.engines.base import execute
from harness.report.console import unsettled
from harness.scenario.load import load_scenarios_text
from harness.scenario.yamlsource import SourceError
from tests.model.upstream.test_releases import _go_module_dir

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
SOURCES: list[dict] = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text())["files"]
LICENSES = {"Apache-2.0", "MIT", "MIT-0"}
DEFAULT_POOL = "../../scenarios/manifests/default-nodepool.yaml"      # relative to CORPUS

# The provider's own examples are not copied (the repo keeps no files of its upstream): they are read from the
# provider's Go module in the module cache (the controller build downloads it) and run at upstream and at its tag.
PROVIDER = ("github.com/Azure/karpenter-provider-azure", "v1.14.0")
PROVIDER_NAME = f"karpenter-provider-azure@{PROVIDER[1]}"
PROVIDER_DIR = _go_module_dir(*PROVIDER)
PROVIDER_FILES = [f"examples/{f}.yaml" for f in (
    "v1/general-purpose", "v1/perftest", "v1/system-surge", "v1beta1/general-purpose", "v1beta1/multi-arch",
    "v1beta1/system-surge", "workloads/device-plugin", "workloads/inflate", "workloads/samples-mnist")] + [
    f"test/pkg/environment/azure/default_{f}.yaml" for f in ("aksnodeclass", "nodepool")]


@dataclass(frozen=True)
class Limit:
    """A warning the harness prints on purpose: its text, and the docs page (and words on it) that name it."""
    pattern: str
    doc: str
    says: str


LIMITS = [
    Limit(r"^(\d+ )?[A-Z]\w+ .*: accepted, not applied: ", "docs/limits.md",
          "are accepted, not applied, and named once per kind"),
    Limit(r"^\w+ [a-z0-9.-]+: \S+ is no field of a \w+ \(Kubernetes v[\d.]+\): the API server drops it ",
          "docs/limits.md", "A field the API server itself drops is said in its words instead"),
    Limit(r"^\w+ [a-z0-9.-]+: \S+ is not in (core's \w+|the provider's AKSNodeClass) schema \(profile .*\): "
          r"the API server prunes it", "docs/limits.md", "a release's NodePool, NodeClaim or AKSNodeClass schema prunes"),
    Limit(r"^NodePool [a-z0-9.-]+: spec\.replicas needs core's StaticCapacity feature gate, off here ",
          "docs/reference/envelope.md", "Fields core reads only with one of its feature gates on"),
    Limit(r"^(Job|CronJob) [a-z0-9.-]+: how long its pods run is in no API object", "docs/limits.md",
          "How long a Job's pods run is in no API object"),
    Limit(r"^NodePool [a-z0-9.-]+: its nodeClassRef names \S+, not karpenter\.azure\.com/AKSNodeClass: ",
          "docs/reproduce.md", "Karpenter-on-Azure does not manage this"),
    Limit(r"^ReplicationController [a-z0-9.-]+: run as a ReplicaSet of the same pods: ", "docs/limits.md",
          "A v1 ReplicationController is run as a ReplicaSet"),
    Limit(r"^Standard_\w+ is synthesized from its name \(", "docs/reproduce.md", "is synthesized from its name"),
    Limit(r"^\S+ is in no catalog and is not a VM size name, so no instance type carries it$", "docs/reproduce.md",
          "is in no catalog and is not a VM size name"),
]

# What kube-apiserver itself refuses, at admission (the release's CRDs): file -> profile -> the message for each
# NodePool of the file (`{name}`: the NodePool's). The runs expect it (nodePools.<name>.rejected), so each
# run checks the harness's admission says exactly this; `harness validate` must say it too.
NOT_SERVED = 'no matches for kind "NodePool" in version "karpenter.sh/v1beta1"'
REFUSED_AT_ADMISSION: dict[str, dict[str, str]] = {
    # karpenter.sh/v1beta1 NodePools: served by v0.5-v0.7 only (the repo kept the examples after v1.0)
    **{f"{PROVIDER_NAME}/examples/v1beta1/{f}": {"upstream": NOT_SERVED, PROVIDER[1]: NOT_SERVED}
       for f in ("general-purpose.yaml", "multi-arch.yaml", "system-surge.yaml")},
    # users' karpenter.sh/v1beta1 NodePools (NAP before v1.0)
    **{f: {"upstream": NOT_SERVED} for f in (
        "aks-labs/docs/security/assets/files/nodepool.yaml", "aks-automatic-store-demo/workspaces/nap-nodepool.yaml",
        "aks-event-driven-replicate-from-aws/deployment/infra/default-pool.yaml",
        "aks-event-driven-replicate-from-aws/default-nodepool.yaml",
        "aks-event-driven-replicate-from-aws/deployment/infra/app-pool.yaml",
        "aks-event-driven-replicate-from-aws/deployment/infra/appnodepool.yaml")},
    # every sku-family value commented out leaves `values:` empty
    "upskilling-kubernetes/09-Karpenter/export/default-nodepool.yaml": {
        "upstream": 'NodePool.karpenter.sh "{name}" is invalid: spec.template.spec.requirements: Invalid value: "array": '
                    "no such key: values evaluating rule: requirements with operator 'In' must have a value defined"},
    # a group with its version
    "karpenter-provider-aws/examples/v1/windows-custom-userdata.nodepool.yaml": {
        "upstream": 'NodePool.karpenter.sh "{name}" is invalid: spec.template.spec.nodeClassRef.group: Invalid value: '
                    "\"karpenter.k8s.aws/v1\": spec.template.spec.nodeClassRef.group in body should match '^[^/]*$'"},
}

# What kube-apiserver itself refuses and the loader refuses first, in its own words: file -> (the loader's
# message, kube-apiserver's)
REFUSED_AT_LOAD: dict[str, tuple[str, str]] = {
    # `kubectl get -o yaml` output edited by hand: the name moved out of metadata
    "upskilling-kubernetes/09-Karpenter/export/default-aksnodeclass.yaml": (
        "AKSNodeClass metadata.name must be a lowercase DNS-1123 name, got None",
        "metadata.name: Required value: name or generateName is required"),
    # policy/v1beta1 PodDisruptionBudgets are served up to Kubernetes 1.24
    "kubernetes-examples/_archived/cockroachdb/cockroachdb-statefulset.yaml": (
        "PodDisruptionBudget needs apiVersion policy/v1, got 'policy/v1beta1'",
        'no matches for kind "PodDisruptionBudget" in version "policy/v1beta1"'),
    # a karpenter.sh/v1beta1 NodePool with `requirements:` empty and no nodeClassRef (kube-apiserver at v0.7.5;
    # upstream serves no karpenter.sh/v1beta1)
    "kaito/examples/kaito-karpenter-noodepool.yaml": (
        "NodePool spec.template.spec.nodeClassRef.name is required",
        ('NodePool.karpenter.sh "kaito-nodepool" is invalid: [spec.template.spec.nodeClassRef: Required value, '
         'spec.template.spec.requirements: Invalid value: "null": spec.template.spec.requirements in body must be of '
         'type array: "null", <nil>: Invalid value: null: some validation rules were not checked because the object '
         'was invalid; correct the existing errors to complete validation]')),
    # extensions/v1beta1 DaemonSets are served up to Kubernetes 1.15
    "kubernetes-examples/_archived/newrelic-infrastructure/newrelic-infra-daemonset.yaml": (
        "DaemonSet needs apiVersion apps/v1, got 'extensions/v1beta1'",
        'no matches for kind "DaemonSet" in version "extensions/v1beta1"'),
}

# Kinds the API server serves that the loader does not take yet ("unsupported kind")
NOT_TAKEN: tuple[str, ...] = ()
# file -> the NOT_TAKEN kinds (its own or its `with` files') it is refused for
PENDING: dict[str, tuple[str, ...]] = {}


class PendingKind(Exception):
    """The file is refused only for a kind in NOT_TAKEN."""


# -- wrapping ---------------------------------------------------------------------------------------------------
def _key(entry: dict) -> str:
    """The entry's name in the tables: its corpus file, or `karpenter-provider-azure@TAG/PATH`."""
    return entry.get("name", entry["file"])


def _root(entry: dict) -> Path:
    """The folder its `file` and `with` are relative to: the corpus, or the provider's Go module."""
    return entry.get("root", CORPUS)


def _documents(path: Path) -> list[dict]:
    """The objects of a YAML file (a List's items in its place)."""
    out = []
    for d in yaml.load_all(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
        if isinstance(d, dict):
            out += d.get("items") or [] if d.get("kind") == "List" else [d]
    return out


def _objects(entry: dict) -> list[dict]:
    """The objects of the entry's `with` files, then its own."""
    return [o for f in [*entry.get("with", []), entry["file"]] for o in _documents(_root(entry) / f)]


def profiles_of(entry: dict) -> list[str]:
    """upstream, and the entry's release (a provider's own example: its tag; a user's karpenter.sh/v1beta1 file: a
    release serving it). A tag the harness has no profile for is answered, with a warning, by the nearest release
    (harness.model.upstream.releases.resolve)."""
    return ["upstream"] + ([entry["release"]] if entry.get("release") else [])


def _nodepools(objs: list[dict]) -> list[dict]:
    return [o for o in objs if o.get("kind") == "NodePool"]


def _ref_name(nodepool: dict) -> str:
    return str(((((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {})
               .get("name") or "default")


def scenario_text(entry: dict, manifests: list | None = None) -> str:
    """The scenario a new user writes around the entry's file (JSON, which is YAML). `manifests`: objects to
    write inline instead of referencing the files (the rest of a file refused for a PENDING kind)."""
    objs = _objects(entry)
    profiles = profiles_of(entry)
    oldest = load_profile(resolve(profiles[-1]).profile)     # (the release, if any): each added object is served by it
    kinds = {o.get("kind") for o in objs}
    added: list[dict] = []
    if "NodePool" in kinds and "AKSNodeClass" not in kinds:
        version = apiversions.storage(oldest, "AKSNodeClass")
        added += [{"apiVersion": f"karpenter.azure.com/{version}", "kind": "AKSNodeClass", "metadata": {"name": n},
                   "spec": {"imageFamily": "Ubuntu2204"}} for n in sorted({_ref_name(np) for np in _nodepools(objs)})]
    if "AKSNodeClass" in kinds and "NodePool" not in kinds:
        version = apiversions.storage(oldest, "NodePool")
        for nc in (o for o in objs if o.get("kind") == "AKSNodeClass"):
            name = str((nc.get("metadata") or {}).get("name") or "default")
            ref = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": name} if version == "v1" else {"name": name}
            added.append({"apiVersion": f"karpenter.sh/{version}", "kind": "NodePool", "metadata": {"name": f"corpus-{name}"},
                          "spec": {"template": {"spec": {"nodeClassRef": ref, "requirements": [
                              {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}}}})
    files = [{"file": f} for f in [*entry.get("with", []), entry["file"]]] if manifests is None else manifests
    if kinds & {"NodePool", "AKSNodeClass"}:           # something to provision for, on any of its pools
        added.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "corpus-probe"}, "spec": {
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}})
        written = files + added
    elif _root(entry) == CORPUS:
        written = [{"file": DEFAULT_POOL}] + files
    else:                                               # outside the corpus' tree: the library's pool written inline
        written = _documents(CORPUS / DEFAULT_POOL) + files
    expect_by_profile = {}
    for profile, message in REFUSED_AT_ADMISSION.get(_key(entry), {}).items():
        expect_by_profile[profile] = {"nodePools": {
            np["metadata"]["name"]: {"rejected": {"stage": "admission", "message": message.format(name=np["metadata"]["name"])}}
            for np in _nodepools(objs)}}
    return json.dumps({"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario",
                       "metadata": {"name": ("corpus-" + re.sub(r"[^a-z0-9]+", "-", _key(entry).lower()))[:200].strip("-")},
                       "given": {"profiles": profiles}, "manifests": written, "expect": {},
                       "expectByProfile": expect_by_profile}, indent=1)


# -- running ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _load(text: str, root: Path = CORPUS):
    (sc,) = load_scenarios_text(text, "corpus.scenario.yaml", root)
    return sc


def _run_clean(entry: dict, cluster, sc) -> None:
    """Run the loaded scenario at each profile: nothing refused but the tables' refusals, every warning a LIMIT."""
    assert admitcheck.unexpected_refusals(sc) == []
    for profile, message in REFUSED_AT_ADMISSION.get(_key(entry), {}).items():   # validate says it too
        for m in sc.manifests:
            if m.obj.get("kind") == "NodePool":
                name = m.obj["metadata"]["name"]
                assert admitcheck.refusal(m.obj, load_profile(profile), ClusterParams().kubernetes_version) \
                    == message.format(name=name)
    said = [n.message for n in sc.warnings]
    engine = get_engine("simulated")
    for profile in sc.profiles:
        o = execute(engine, sc, profile, cluster)
        assert o.error is None, o.error
        assert not o.mismatches, [f"{m.path}: {m.detail}" for m in o.mismatches]
        said += o.final.core_notices + [u for u in [unsettled(o)] if u]
    unexplained = [w for w in dict.fromkeys(said) if not any(re.search(lim.pattern, w) for lim in LIMITS)]
    assert unexplained == [], "warnings that name no documented limit (LIMITS)"


def _refused_for(err: SourceError, kinds: tuple[str, ...]) -> bool:
    return any(f"unsupported kind {k!r}" in err.reason for k in kinds)


def _case(entry: dict):
    kinds = PENDING.get(entry["file"])
    if kinds is None:
        return pytest.param(entry, id=entry["file"])
    reason = "refused for a kind the API server serves and the harness does not take yet: " + ", ".join(kinds)
    return pytest.param(entry, id=entry["file"], marks=pytest.mark.xfail(reason=reason, strict=True, raises=PendingKind))


def _wrap_and_run(entry: dict, cluster) -> None:
    try:
        sc = _load(scenario_text(entry), _root(entry))
    except SourceError as err:
        if _key(entry) in REFUSED_AT_LOAD:
            assert err.reason == REFUSED_AT_LOAD[_key(entry)][0]
            return
        kinds = PENDING.get(_key(entry))
        assert kinds and _refused_for(err, kinds), err.render()
        # the rest of the file (and its `with` files) already loads and runs clean
        rest = [copy.deepcopy(o) for o in _objects(entry) if o.get("kind") not in kinds]
        _run_clean(entry, cluster, _load(scenario_text(entry, rest), _root(entry)))
        raise PendingKind(err.render()) from None
    assert _key(entry) not in REFUSED_AT_LOAD, "loaded: drop it from REFUSED_AT_LOAD"
    _run_clean(entry, cluster, sc)


@pytest.mark.parametrize("entry", [_case(e) for e in SOURCES])
def test_a_file_as_a_new_user_wraps_it(entry, cluster):
    _wrap_and_run(entry, cluster)


@pytest.mark.skipif(PROVIDER_DIR is None, reason=f"{PROVIDER[0]} {PROVIDER[1]} is not in the Go module cache "
                    f"(`go mod download {PROVIDER[0]}@{PROVIDER[1]}`): its own examples are read from there")
@pytest.mark.parametrize("path", PROVIDER_FILES)
def test_a_provider_example_as_a_new_user_wraps_it(path, cluster):
    """The provider's own examples and test pools at its tag, read from the Go module, run at upstream and there."""
    _wrap_and_run({"file": path, "root": PROVIDER_DIR, "name": f"{PROVIDER_NAME}/{path}", "release": PROVIDER[1]},
                  cluster)


# -- the corpus itself ------------------------------------------------------------------------------------------
def _blob(data: bytes) -> str:
    """Git's object id of a file's bytes (`git rev-parse COMMIT:PATH` upstream gives the same)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def test_every_file_is_kept_unchanged_with_its_source():
    listed = [e["file"] for e in SOURCES]
    on_disk = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*")
                     if p.is_file() and p.suffix in (".yaml", ".yml") and p.name != "SOURCES.yaml")
    assert sorted(listed) == on_disk and len(set(listed)) == len(listed)
    notice = (CORPUS / "NOTICE.md").read_text()
    for e in SOURCES:
        assert re.fullmatch(r"github\.com/[\w.-]+/[\w.-]+", e["repository"]) and e["path"], e
        assert re.fullmatch(r"[0-9a-f]{40}", e["commit"]) and e["license"] in LICENSES, e
        assert e["repository"] in notice, f"{e['repository']}: its notice is not in tests/corpus/NOTICE.md"
        data = (CORPUS / e["file"]).read_bytes()
        if "part" in e:            # a part of the upstream file (the NodePools of an EKS example): its lines
            lines = re.fullmatch(r"lines 1-(\d+): .+", e["part"])
            assert lines and data.count(b"\n") == int(lines.group(1)), e
        else:
            assert _blob(data) == e["blob"], f"{e['file']} differs from {e['repository']} {e['commit']}:{e['path']}"
        assert all(w in listed for w in e.get("with", [])), e


def test_the_corpus_is_what_the_issue_asks():
    kinds = [{o.get("kind") for o in _objects({"file": e["file"]})} for e in SOURCES]
    assert len(SOURCES) >= 100
    assert sum(1 for k in kinds if "NodePool" in k) >= 50
    assert sum(1 for e in SOURCES for o in _objects({"file": e["file"]}) if o.get("kind") == "AKSNodeClass") >= 13
    assert sum(1 for k in kinds if k & {"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod",
                                        "ReplicaSet", "ReplicationController"}) >= 45


def test_the_tables_name_corpus_files():
    listed = {e["file"] for e in SOURCES} | {f"{PROVIDER_NAME}/{f}" for f in PROVIDER_FILES}
    assert set(REFUSED_AT_ADMISSION) | set(REFUSED_AT_LOAD) | set(PENDING) <= listed
    assert all(k in NOT_TAKEN for kinds in PENDING.values() for k in kinds)


@pytest.mark.parametrize("limit", LIMITS, ids=lambda lim: lim.says)
def test_each_limit_is_documented_where_it_says(limit):
    assert limit.says in (ROOT / limit.doc).read_text(), f"{limit.doc} does not say {limit.says!r}"
