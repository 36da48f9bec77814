"""The sync derives a profile's provider data from the provider's source (harness/model/sync.py)."""
from __future__ import annotations

import pytest
import yaml

from harness.model.upstream import derivation
from harness.model import sync
from harness.model.data import DATA_DIR
from harness.model.upstream.profile import load_profile

PINNED = "v1.14.0"


@pytest.fixture(scope="module")
def derived():
    try:
        src, origin, versions, modules = sync.load_source(PINNED, None)
    except sync.SyncError as e:
        pytest.skip(f"the provider module {PINNED} is not available: {e}")
    return sync.derive(src, origin, versions, modules)


def test_upstream_data_is_what_the_sync_derives_from_the_pinned_module(derived):
    """The module cache's v1.14.0 derives the facts and tables of the release profile that covers it (the
    newest, `upstream`'s data), less what names the tag."""
    from harness.model.upstream import releases
    r = releases.resolve(PINNED)
    assert r.exact
    committed = DATA_DIR / "releases" / r.profile

    def body(text: str) -> str:
        return "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    for name, text in derived.files.items():
        if name != sync.FACTS_FILE:
            assert body(text) == body((committed / name).read_text()), name
    got = yaml.safe_load((committed / sync.FACTS_FILE).read_text())
    for section in ("core", "crd", "aksNodeClass", "nodePool", "nodeClaim"):
        mine = {k.rstrip("!"): v for k, v in (got.get(section) or got.get(section + "!") or {}).items()}
        for key, value in derived.facts[section].items():
            if key != "version":
                assert mine[key] == value, f"{section}.{key}"


def test_upstream_profile_reads_the_derived_facts(derived):
    up = load_profile("upstream")
    from harness.model.upstream import releases
    assert PINNED in releases.modeled(up)["covers"]
    assert up.well_known_labels == frozenset(derived.facts["core"]["wellKnownLabels"])
    assert [r.message for r in up.key_rules] == [r["message"] for r in derived.facts["crd"]["keyRules"]]


def test_image_family_constants_match_the_provider(derived):
    from harness.model.azure import nodeimage as it
    fams = derived.facts["provider"]["imageFamilies"]
    assert set(fams["ubuntu"]) == it.UBUNTU_FAMILIES - {""}        # "" reads as the CRD default Ubuntu
    assert fams["azureLinux"] == it.AZURE_LINUX_FAMILY
    assert all(it.os_sku_from_image_family(f) == sku for f, sku in fams["osSku"].items())


def test_profile_name_writes_a_profile_extending_upstream(derived, tmp_path, monkeypatch, capsys):
    data = tmp_path / "harness" / "data"
    (data / "profiles").mkdir(parents=True)
    monkeypatch.setattr(sync, "load_source", lambda m, s: ("src", "checkout mine", {}, {}))
    monkeypatch.setattr(sync, "derive", lambda *a: derived)
    assert sync.main(["--provider-src", "x", "--profile-name", "mine", "--data-dir", str(data)]) == 0
    profile = yaml.safe_load((data / "profiles" / "mine.yaml").read_text())
    assert profile["extends"] == "upstream" and profile["derived"] == "derived/mine"
    assert sorted(p.name for p in (data / "derived" / "mine").iterdir()) == sorted(derived.files)
    assert "+++ b/harness/data/profiles/mine.yaml" in capsys.readouterr().out
    assert sync.main(["--provider-src", "x", "--profile-name", "mine", "--data-dir", str(data), "--check"]) == 0


def test_bad_provider_source_is_an_error_not_a_traceback(tmp_path, capsys):
    assert sync.main(["--provider-src", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"sync: {tmp_path}: not a provider checkout (no go.mod)\n"
    assert sync.main(["--provider-git", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"sync: {tmp_path}: not a git directory or checkout\n"


def test_a_single_source_needs_a_profile_name(derived, monkeypatch, capsys):
    monkeypatch.setattr(sync, "load_source", lambda m, s: ("src", "checkout mine", {}, {}))
    monkeypatch.setattr(sync, "derive", lambda *a: derived)
    assert sync.main(["--provider-src", "x"]) == 2
    assert "give --provider-git" in capsys.readouterr().err


@pytest.mark.parametrize("layout", ["per-os", "go-maps"])
def test_older_gpu_table_layouts(tmp_path, layout):
    """Before provider v1.10 supported-gpus.yaml listed sizes per OS and family; before that (v0.5.0-v0.5.4,
    v0.6.0, v0.7.0) pkg/utils/gpu.go held Go maps. Both read as (vendor, OS images)."""
    utils = tmp_path / "pkg" / "utils"
    utils.mkdir(parents=True)
    if layout == "per-os":
        (utils / "supported-gpus.yaml").write_text(
            "nvidiaEnabledSKUs:\n  StandardNCASv3_T4Family: [standard_nc4as_t4_v3]\n  A: [standard_nc6]\n"
            "marinerNvidiaEnabledSKUs:\n  StandardNCASv3_T4Family: [standard_nc4as_t4_v3]\n")
    else:
        (utils / "gpu.go").write_text(
            'package utils\nvar (\n\tNvidiaEnabledSKUs = map[string]bool{\n\t\t// T4\n\t\t"standard_nc4as_t4_v3": true,\n'
            '\t\t"standard_nc6": true,\n\t}\n\tMarinerNvidiaEnabledSKUs = map[string]bool{\n\t\t"standard_nc4as_t4_v3": true,\n\t}\n)\n')
    text = sync.supported_gpus_file(tmp_path, "here")
    assert "standard_nc4as_t4_v3: {vendor: nvidia, os: [ubuntu, azurelinux]}" in text
    assert "standard_nc6: {vendor: nvidia, os: [ubuntu]}" in text


@pytest.mark.parametrize("rule,parsed", [
    ('KEY != "agentpool"', {"forbidKey": "agentpool"}),
    ("KEY != 'agentpool'", {"forbidKey": "agentpool"}),
    ('KEY in ["a.io/x", "a.io/y", ] || !KEY.find("^([^/]+)").endsWith("a.io")',
     {"allowKeys": ["a.io/x", "a.io/y"], "domain": "a.io"}),
    ('KEY.find("^([^/]+)").endsWith("ok.a.io") || !KEY.find("^([^/]+)").endsWith("a.io")',
     {"allowDomainSuffixes": ["ok.a.io"], "domain": "a.io"}),
])
def test_key_rules_read_from_cel(rule, parsed):
    assert derivation._key_rule(rule, "crd") == parsed


def test_unrecognized_cel_is_an_error():
    with pytest.raises(sync.SyncError, match="unrecognized key rule clause"):
        derivation._key_rule('KEY.startsWith("x") || !KEY.find("^([^/]+)").endsWith("a.io")', "crd")


def test_go_string_constants_and_sets(tmp_path):
    pkg = tmp_path / "mod" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "a.go").write_text('package pkg\n\nconst Group = "x.io" // comment\n\nvar (\n'
                              '\tLabelA = Group + "/a"\n\tLabels = sets.New(\n\t\tLabelA, // a\n\t\t"lit/b",\n'
                              '\t\t// "commented/out",\n\t)\n)\n')
    resolver = sync.GoResolver({"example.com/mod": tmp_path / "mod"})
    p = resolver.package("example.com/mod/pkg")
    assert p.string("LabelA") == "x.io/a"
    assert p.call_args("Labels", "sets.New") == ["x.io/a", "lit/b"]
    with pytest.raises(sync.SyncError, match="not declared as sets.New"):
        p.call_args("LabelA", "sets.New")
