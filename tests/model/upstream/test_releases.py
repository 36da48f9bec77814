"""Release profiles: the data `python -m harness.model.sync --provider-git DIR --releases all` derived from
each provider release (harness/data/releases), checked three ways:

  * self-consistency, always: the index, the generated profiles and the derived files agree with each other;
  * known differences between releases, always: each fact has the value the named upstream commit gave it,
    and the index attributes the change to that commit (expectations from the commits themselves, cited);
  * against the source, only when a provider git history is given (HARNESS_PROVIDER_GIT, optionally
    HARNESS_CORE_GIT and HARNESS_RELEASE_LINES=v1.6,v1.14): the committed files are what the sync derives.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest
import yaml

from harness.model.upstream import releases, releasesync, skutables
from harness.model.data import DATA_DIR
from harness.model.upstream.profile import ProfileError, load_profile, raw_profile

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
INDEX = yaml.safe_load((DATA_DIR / "releases" / "index.yaml").read_text())
PROFILES = INDEX["profiles"]


@functools.lru_cache(maxsize=None)
def facts(name: str) -> dict:
    return yaml.load((DATA_DIR / "releases" / name / "provider-facts.yaml").read_text(), Loader=_LOADER)


def get(d, dotted: str):
    for part in dotted.split("."):
        d = d.get(part, d.get(part + "!")) if isinstance(d, dict) else None
    return d


# == self-consistency ===============================================================================
def test_every_release_line_has_a_profile_and_upstream_is_the_newest():
    lines = {e["line"] for e in PROFILES.values()}
    assert lines == set(releasesync.LINES)
    assert INDEX["newest"] == list(PROFILES)[-1]
    assert raw_profile("upstream")["derived"] == f"releases/{INDEX['newest']}"
    assert releases.modeled("upstream")["release"] == INDEX["newest"]


def test_profiles_cover_consecutive_tags_of_one_line_and_are_named_by_the_newest():
    seen: set[str] = set()
    for name, e in PROFILES.items():
        covers = e["covers"]
        assert covers[-1] == name and covers == sorted(covers, key=releasesync.tag_key)
        assert {releasesync.line_of(t) for t in covers} == {e["line"]}
        assert not seen & set(covers)
        seen |= set(covers)
        patches = [releasesync.tag_key(t)[2] for t in covers]
        assert patches == list(range(patches[0], patches[0] + len(patches)))   # no gap inside a profile


@pytest.mark.parametrize("name", list(PROFILES))
def test_generated_profile_files_agree_with_the_index(name):
    body = yaml.safe_load((DATA_DIR / "profiles" / f"{name}.yaml").read_text())
    assert body == {"extends": "upstream", "derived": f"releases/{name}", "description": body["description"]}
    f = facts(name)
    assert f["release"]["provider"] == name and get(f, "provider.version") == name
    assert f["release"]["commit"].startswith(PROFILES[name]["commit"])
    for probe in releasesync.probes_spec():        # every behaviour probe has its answer in every release
        assert get(f, probe["fact"]) is not None or probe.get("else", 0) is None, probe["fact"]
    table = get(f, "provider.compiledPrices.table")
    assert table and (DATA_DIR / table).exists()
    p = load_profile(name)
    assert p.raw["derived"] == f"releases/{name}" and p.key_rules and p.well_known_labels


def test_a_patch_gets_its_own_profile_only_where_its_facts_differ():
    """Profiles of one line differ from the one before in at least one fact (index `changes`)."""
    prev = None
    for name, e in PROFILES.items():
        if prev is not None and PROFILES[prev]["line"] == e["line"]:
            assert e.get("changes"), f"{name} repeats {prev}"
        prev = name


def test_index_changes_name_facts_that_differ_and_cite_commits():
    names = list(PROFILES)
    for a, b in zip(names, names[1:]):
        for change in PROFILES[b].get("changes") or ():
            fact = change["fact"]
            if fact.startswith("tables."):
                continue
            assert get(facts(a), fact) != get(facts(b), fact), (b, fact)
            for c in change["commits"]:
                assert re.fullmatch(r"[0-9a-f]{12}", c["commit"]) and c["subject"]


def test_price_tables_parse():
    up = load_profile("upstream")
    eastus = skutables.compiled_prices(up, "eastus")
    assert eastus["Standard_D2s_v3"] > 0 and len(eastus) > 500
    assert skutables.compiled_prices(load_profile("v0.5.4"), "EastUS")["Standard_D2s_v3"] > 0
    assert skutables.compiled_prices(up, "nowhere") == {}


def test_known_sku_lists_by_release():
    assert skutables.known_skus("releases/v0.7.5") is None            # no list: every SKU is a candidate
    assert "Standard_D2s_v3" in skutables.known_skus("releases/v1.4.1")     # allAzureVMSkus in skus.go
    assert skutables.known_sku_families("releases/v1.4.1")["Standard_D2s_v3"] == ""
    assert skutables.known_sku_families("releases/v1.14.2")["Standard_D2s_v3"]


# == known differences between releases (each from the commit named) ==================================
# (profile, fact, value in the profile before, value in this profile, commit, what)
KNOWN = [
    ("v0.6.3", "provider.baseLabels", None, None, "5a8842b8", "azure-cni-overlay label (#697, backported as #714)"),
    ("v0.7.2", "provider.nvmeOnlyExcludedWithoutSIG", False, True, "ace0fc61", "exclude NVMe-only SKUs without SIG (#617)"),
    ("v0.7.4", "provider.baseLabels", None, None, "b199e517", "azure-cni-overlay label (#697)"),
    ("v0.7.4", "crdVersions.v1beta1.keyRules", None, None, "ea763056", "missing validation rules for v1beta1 (#677)"),
    ("v1.4.1", "crd.keyRules", None, None, "b1523d07", "topology.kubernetes.io/zone allowed in requirements (#805)"),
    ("v1.4.1", "apis.AKSNodeClass.served", ["v1alpha2"], ["v1alpha2", "v1beta1"], "ef9e8130", "AKSNodeClass v1beta1 (#875)"),
    ("v1.4.1", "apis.NodePool.served", ["v1", "v1beta1"], ["v1"], "c602c65b", "core v1.4.0 (#601)"),
    ("v1.4.1", "provider.createErrorHandlers", None, None, "2af8d9d9", "Overconstrained*/AllocationFailure handlers (#892)"),
    ("v1.4.1", "provider.zones.zonalRegions", None, None, "efe70c85", "static zonal-region list updated (#825)"),
    ("v1.4.1", "provider.requirements.skuAccelerator", True, False, "d4c04ae5", "sku-accelerator dropped"),
    ("v1.4.1", "core.nodeClassLabel", False, True, "c602c65b", "core v1.4.0: NodeClassLabelKey on templates (#601)"),
    ("v1.5.1", "provider.requirements.booleanValues", "trueOnly", "both", "8bf92a46", "both boolean values (#912)"),
    ("v1.5.5", "provider.requirements.ephemeralFormat", "float", "int", "30a2a7dc", "ephemeral OS disk placement (#940)"),
    ("v1.6.1", "core.minValuesPolicy", False, True, "06adbf13", "core v1.6.0: MIN_VALUES_POLICY (#1036)"),
    ("v1.6.2", "provider.zones.zonalRegions", None, None, "42e11b25", "zone provider replaces the static list (#1105)"),
    ("v1.6.4", "provider.gpuImageFamilies.ubuntu", ["Ubuntu2204"], ["Ubuntu", "Ubuntu2204", "Ubuntu2404"], "6957e32d",
     "GPU check for every Ubuntu family (#1147)"),
    ("v1.6.5", "provider.requirements.kubernetesAzureSkuCpuMemory", False, True, "2829d45a", "AKS sku-cpu/-memory (#1193)"),
    ("v1.6.6", "provider.requirements.skuSeries", False, True, "b14a4328", "sku-series (#1234)"),
    ("v1.6.6", "provider.requirements.cluster", False, True, "1758cc06", "kubernetes.azure.com/cluster requirement (#1273)"),
    ("v1.6.6", "provider.kubeletLabelFilter", "none", "drop", "b5660abd", "labels clean-up, kubelet filter (#1262)"),
    ("v1.6.7", "provider.requirements.mode", False, True, "fccc4d68", "kubernetes.azure.com/mode (#1271)"),
    ("v1.7.2", "provider.requirements.scaleSetPriority", False, True, "cff8ea1b", "scalesetpriority (#1284)"),
    ("v1.7.2", "provider.requirements.osSku", False, True, "6caba493", "os-sku (#1365)"),
    ("v1.10.2", "provider.requirements.fipsEnabled", False, True, "d8f2a0f4", "fips_enabled (#1438)"),
    ("v1.10.2", "core.labelResolution", "requirementsLabels", "toNodeClaim", "f032b2e9", "core v1.9 (#1414)"),
    ("v1.10.2", "core.boundSemantics", "exclusive", "inclusive", "f032b2e9", "core v1.9 (#1414)"),
    ("v1.10.2", "tables.supported-gpus.yaml", None, None, "91dd9908", "GPU table per size and OS (#1537)"),
    ("v1.12.0", "provider.zones.regionalValue", "", "0", "c7f7bd0d", 'regional zone "0" (#1615)'),
    ("v1.12.0", "provider.zones.regionalOfferingForZonalSKUs", False, True, "7118a93c", "regional offerings (#1659)"),
    ("v1.12.0", "provider.nvmeOnlyExcludedWithoutSIG", True, False, "8c4dea3b", "NVMe-only block removed (#1642)"),
    ("v1.12.0", "provider.requirements.priority", False, True, "4c2ab97a", "kubernetes.azure.com/priority (#1645)"),
    ("v1.12.2", "core.wellKnownValues", None, None, "753342c7", "Azure requirement values validated (#1680)"),
    ("v1.13.0", "crd.keyRules", None, None, "db3add74", "kubernetes.azure.com restricted (#1444)"),
    ("v1.13.1", "crd.keyRules", None, None, "05a49290", "3 kubernetes.azure.com labels allowed (#1754)"),
    ("v1.14.2", "provider.unknownSKUPolicy", "exclude", "price999", "5c2fa101", "unknown SKUs priced 999 (#1796)"),
    ("v1.14.2", "provider.offerings.quotaGatesOnDemand", False, True, "2a964162", "quota provider (#1784)"),
    ("v1.14.2", "core.normalizedLabelValues", {}, {"topology.kubernetes.io/zone": {"": "0"}}, "5b57ebc5",
     'CSI empty zone -> "0" (#1735)'),
    ("v1.14.2", "core.schedulingSimulationKeys", [], ["karpenter.sh/registered", "karpenter.sh/initialized"],
     "0c306841", "core v1.14.0 (#1783)"),
]


@pytest.mark.parametrize("name,fact,before,after,commit,what", KNOWN, ids=[f"{k[0]}:{k[1]}" for k in KNOWN])
def test_known_difference_and_its_commit(name, fact, before, after, commit, what):
    names = list(PROFILES)
    prev = names[names.index(name) - 1]
    if before is not None or after is not None:
        assert get(facts(prev), fact) == before and get(facts(name), fact) == after, what
    cited = [c["commit"] for ch in PROFILES[name]["changes"]
             if ch["fact"] == fact or fact.startswith(ch["fact"] + ".") for c in ch["commits"]]
    assert any(c.startswith(commit) for c in cited), f"{what}: {commit} not among {cited}"


def test_azurelinux_gpu_families_at_v162():
    """Provider v1.6.2 pkg/utils/supported-gpus.yaml marinerNvidiaEnabledSKUs: NCasT4_v3, NCsv3, NDv2, NDv3."""
    azl = sorted(k for k, (_, oses) in skutables.supported_gpus("releases/v1.6.2").items() if "azurelinux" in oses)
    assert azl == ["standard_nc12s_v3", "standard_nc16as_t4_v3", "standard_nc24rs_v3", "standard_nc24s_v3",
                   "standard_nc4as_t4_v3", "standard_nc64as_t4_v3", "standard_nc6s_v3", "standard_nc8as_t4_v3",
                   "standard_nd40rs_v2", "standard_nd40s_v3"]
    assert "azurelinux3" in skutables.supported_gpus("releases/v1.14.2")["standard_nc24ads_a100_v4"][1]


@pytest.mark.parametrize("name", list(PROFILES))
def test_every_served_version_has_its_spec_schema(name):
    """The admission schemas (nodePool, nodeClaim, aksNodeClass) hold the storage version's `spec` and one
    per other served version, as `apis` lists them (the CRDs of pkg/apis/crds)."""
    f = facts(name)
    for kind, key in (("NodePool", "nodePool"), ("NodeClaim", "nodeClaim"), ("AKSNodeClass", "aksNodeClass")):
        api = get(f, f"apis.{kind}")
        assert get(f, f"{key}.version") == api["storage"] and get(f, f"{key}.spec"), (kind, api)
        others = get(f, f"{key}.versions") or {}
        assert sorted(others) == sorted(v for v in api["served"] if v != api["storage"]), (kind, api)
        assert all(o.get("spec") for o in others.values())
    assert (get(f, "nodePool.scaleSpecReplicasPath") == ".spec.replicas") == \
        ("replicas" in get(f, "nodePool.spec")["properties"])       # core's static NodePools (v1.8+)


def test_v0x_serves_v1alpha2_aksnodeclass_only():
    f = facts("v0.7.5")
    assert get(f, "apis.AKSNodeClass") == {"group": "karpenter.azure.com", "served": ["v1alpha2"], "storage": "v1alpha2"}
    assert get(f, "aksNodeClass.version") == "v1alpha2" and get(f, "aksNodeClass.spec")
    assert get(facts("v1.4.1"), "aksNodeClass.versions.v1alpha2.spec")


# == which version answered ===========================================================================
def test_a_covered_tag_answers_exactly():
    r = releases.resolve("v1.14.0")
    assert r.exact and r.profile == INDEX["newest"] and r.notice is None
    assert releases.modeled(load_profile("v1.14.0"))["release"] == INDEX["newest"]


def test_a_missing_version_names_the_nearest_and_what_may_differ():
    r = releases.resolve("v1.8.1")
    assert not r.exact and r.profile == "v1.7.2" and r.between == ("v1.7.2", "v1.10.2")
    assert "no profile for provider v1.8.1; answering with v1.7.2" in r.notice
    assert "core.labelResolution: 'requirementsLabels' -> 'toNodeClaim'" in r.notice
    assert "f032b2e9 #1414" in r.notice
    m = releases.modeled(load_profile("v1.8.1"))
    assert m["answeredBy"] == "v1.7.2" and m["exact"] is False
    assert "NOT that release" in releases.modeled_text("v1.8.1")


def test_newer_and_older_than_any_release():
    assert "newer than every release" in releases.resolve("v9.0.0").notice
    assert "older than every release" in releases.resolve("v0.1.0").notice


def test_unknown_profile_lists_policies_and_the_version_range():
    with pytest.raises(ProfileError, match=r"unknown profile 'nope'; available: before-0006, design-0006, upstream; "
                                           r"or a provider version"):
        load_profile("nope")


def test_all_releases_expands_oldest_first():
    assert releases.expand(["upstream", releases.ALL_RELEASES]) == ["upstream"] + list(PROFILES)


def test_label_policies_name_their_basis():
    m = releases.modeled("before-0006")
    assert m["policy"] and m["release"] == "v1.6.5" and m["core"] == "v1.6.2"


# == against the source (only with a provider git history) ===========================================
@pytest.mark.skipif(not os.environ.get("HARNESS_PROVIDER_GIT"),
                    reason="HARNESS_PROVIDER_GIT (the provider's git history) not given")
def test_committed_release_data_is_what_the_sync_derives_from_the_tags():
    git_dir = releasesync.git_dir_of(os.environ["HARNESS_PROVIDER_GIT"])
    core_git = releasesync.git_dir_of(os.environ["HARNESS_CORE_GIT"]) if os.environ.get("HARNESS_CORE_GIT") else None
    lines = tuple(x.strip() for x in os.environ.get("HARNESS_RELEASE_LINES", "").split(",") if x.strip())
    tags = releasesync.release_tags(git_dir, lines or releasesync.LINES)
    files = releasesync.generate(git_dir, tags, core_git, DATA_DIR, attribute=not lines)
    differ = []
    for path, text in files.items():
        if lines and (path.name == releasesync.INDEX_FILE or path.name == "upstream.yaml"):
            continue    # a subset has no complete index
        if not path.exists() or path.read_text() != text:
            differ.append(str(Path(path).relative_to(DATA_DIR)))
    assert not differ, f"re-run the sync: {differ}"


# The v1.14 profile's compiled-in table is v1.14.0's: karpenter-provider-azure v1.14.0
# pkg/providers/pricing/zz_generated.pricing.go `initialOnDemandPrices["eastus"]` (generated at
# 2026-06-18T03:43:41Z) has Standard_D2s_v3 0.096000, Standard_D2as_v5 0.178000, Standard_D4as_v7 0.182000.
V1_14_0_EASTUS = {"Standard_D2s_v3": 0.096, "Standard_D2as_v5": 0.178, "Standard_D4as_v7": 0.182}


def test_v1_14_0_compiled_prices_are_the_go_source_numbers():
    assert "v1.14.0" in PROFILES["v1.14.2"]["covers"]
    assert get(facts("v1.14.2"), "provider.compiledPrices.generatedAt") == "2026-06-18T03:43:41Z"
    eastus = skutables.compiled_prices(load_profile("v1.14.2"), "eastus")
    assert {k: eastus[k] for k in V1_14_0_EASTUS} == V1_14_0_EASTUS


def _go_module_dir(module: str, version: str) -> Path | None:
    """A module in the Go module cache (`go mod download -json MODULE@VERSION`), if it is there."""
    root = Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod")
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)
    d = root / f"{escaped}@{version}"
    return d if d.is_dir() else None


@pytest.mark.skipif(_go_module_dir("github.com/Azure/karpenter-provider-azure", "v1.14.0") is None,
                    reason="karpenter-provider-azure v1.14.0 not in the Go module cache (go mod download)")
def test_v1_14_0_compiled_eastus_table_is_the_go_source():
    src = (_go_module_dir("github.com/Azure/karpenter-provider-azure", "v1.14.0")
           / "pkg/providers/pricing/zz_generated.pricing.go").read_text()
    block = re.search(r'initialOnDemandPrices\["eastus"\] = map\[string\]float64\{(.*?)\n\t\}', src, re.S).group(1)
    go = {m.group(1): float(m.group(2)) for m in re.finditer(r'"([^"]+)":\s*([0-9.]+)', block)}
    assert skutables.compiled_prices(load_profile("v1.14.2"), "eastus") == go


@pytest.mark.parametrize("name", list(PROFILES))
def test_image_family_tables_the_model_reads_are_the_releases(name):
    """The per-release image-family facts against what the model computes from them: where the release
    writes os-sku, harness.model.azure.nodeimage maps every family as its GetOSSKUFromImageFamily does; every
    family the GPU check reaches is one the release's CRD serves (provider.gpuImageFamilies)."""
    from harness.model.azure import nodeimage
    from harness.model.azure.switches import Switches
    f = facts(name)
    fams = get(f, "provider.imageFamilies") or {}
    if get(f, "provider.requirements.osSku"):
        assert fams["osSku"], name
        assert {k: nodeimage.os_sku_from_image_family(k) for k in fams["osSku"]} == fams["osSku"], name
    served = set(get(f, "aksNodeClass.spec")["properties"]["imageFamily"]["enum"])
    gpu = dict(Switches.of(load_profile(name)).gpu_image_family_os)
    assert set(gpu) <= served, (name, sorted(set(gpu) - served))
    assert [o for fam, o in gpu.items() if "ubuntu" in o] and gpu.get("AzureLinux") == ("azurelinux", "azurelinux3")
