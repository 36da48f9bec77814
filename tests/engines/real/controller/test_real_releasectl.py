"""Which controller answers a release profile on the real engine (releasectl.py), and how a release's
tree is built: its pinned core, its timing, its cache entry (harness/backends/binaries/controller.py)."""
from pathlib import Path

import pytest

from harness.backends.binaries import controller
from harness.runner.engines.real.controller.releasectl import Choice, choose, newest_patches, served_versions, tree_skip

TAGS = frozenset({"v0.5.5", "v0.7.5", "v1.6.1", "v1.6.8", "v1.14.0"})
V168 = {"release": "v1.6.8", "covers": ["v1.6.8"]}
V164 = {"release": "v1.6.4", "covers": ["v1.6.3", "v1.6.4"]}
UPSTREAM = {"release": "v1.14.2", "covers": ["v1.14.0", "v1.14.1", "v1.14.2"]}
GIT = Path("/history")


def test_a_release_profile_runs_the_tag_of_its_name_else_the_release_it_models():
    assert choose("v1.6.8", V168, "v1.14.0", GIT, TAGS) == Choice(ref="v1.6.8")
    assert choose("v1.6.1", {"release": "v1.6.1", "covers": ["v1.6.1"]}, "v1.14.0", GIT, TAGS) == Choice(ref="v1.6.1")
    assert choose("v1.6.4", V164, "v1.14.0", GIT, TAGS | {"v1.6.4"}) == Choice(ref="v1.6.4")


def test_the_default_controller_answers_what_it_covers_a_policy_and_an_explicit_ref():
    assert choose("upstream", UPSTREAM, "v1.14.0", GIT, TAGS) == Choice()
    assert choose("before-0006", {"policy": "x", "release": "v1.14.2", "covers": ["v1.14.2"]}, "v1.14.0", GIT, TAGS) == Choice()
    assert choose("v1.6.8", V168, "v1.14.0", GIT, TAGS, explicit_ref="v1.6.2") == Choice()


def test_without_the_history_or_the_tag_the_skip_says_how():
    why = choose("v1.6.8", V168, "v1.14.0", None, frozenset()).skip
    assert "--provider-git DIR" in why and "HARNESS_PROVIDER_GIT" in why and "v1.6.8" in why
    assert "no tag v1.6.4" in choose("v1.6.4", V164, "v1.14.0", GIT, TAGS).skip


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
spec:
  versions:
    - name: v1
      served: {v1}
    - name: v1beta1
      served: true
"""


NODECLASS = """spec:
  versions:
    - name: v1alpha2
      served: true
    - name: v1beta1
      served: {v1beta1}
"""


def test_a_tree_whose_crds_serve_no_version_the_client_speaks_is_skipped_by_reason(tmp_path):
    assert served_versions(CRD.format(v1="true")) == ["v1", "v1beta1"]
    crds = tmp_path / "pkg" / "apis" / "crds"
    crds.mkdir(parents=True)
    (crds / "karpenter.sh_nodepools.yaml").write_text(CRD.format(v1="false"))
    (crds / "karpenter.azure.com_aksnodeclasses.yaml").write_text(NODECLASS.format(v1beta1="true"))
    assert tree_skip("v0.5.5", tmp_path) is None     # read and written at v1beta1 (realcluster.release_kinds)
    (crds / "karpenter.sh_nodepools.yaml").write_text(CRD.format(v1="false").replace("v1beta1", "v1alpha9"))
    assert "NodePool CRD serves karpenter.sh/v1alpha9 only" in tree_skip("v0.0.9", tmp_path)
    assert "reads and writes karpenter.sh/v1 or karpenter.sh/v1beta1" in tree_skip("v0.0.9", tmp_path)
    (crds / "karpenter.sh_nodepools.yaml").write_text(CRD.format(v1="true"))
    assert tree_skip("v1.4.1", tmp_path) is None
    (crds / "karpenter.azure.com_aksnodeclasses.yaml").write_text(NODECLASS.format(v1beta1="false"))
    assert tree_skip("v0.7.5", tmp_path) is None       # written at v1alpha2 (realcluster.release_kinds)
    assert "has no pkg/apis/crds" in tree_skip("v0.0.1", tmp_path / "nothing")


def test_the_pinned_core_is_the_replace_when_there_is_one(tmp_path, monkeypatch):
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    (tmp_path / "go.mod").write_text("module m\n\nrequire (\n\tsigs.k8s.io/karpenter v1.12.0\n)\n")
    assert controller.pinned_core(tmp_path) == ("sigs.k8s.io/karpenter", "v1.12.0")
    (tmp_path / "go.mod").write_text("module m\n\nrequire (\n\tsigs.k8s.io/karpenter v1.12.0\n)\n\nreplace "
                                     "sigs.k8s.io/karpenter => github.com/kubernetes-sigs/karpenter v1.12.1-0.2026\n")
    assert controller.pinned_core(tmp_path) == ("github.com/kubernetes-sigs/karpenter", "v1.12.1-0.2026")
    monkeypatch.setenv(controller.ENV_CORE, "v1.13.0")
    assert controller.pinned_core(tmp_path) == ("sigs.k8s.io/karpenter", "v1.13.0")


def test_an_older_core_falls_back_to_the_upstream_timing_with_a_notice(tmp_path, monkeypatch):
    monkeypatch.delenv(controller.ENV_TIMING, raising=False)
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    (tmp_path / "go.mod").write_text("module m\nrequire sigs.k8s.io/karpenter v1.6.2\n")
    core = tmp_path / "core"
    monkeypatch.setattr(controller, "go_module_dir", lambda module, version: core)
    for p in controller.timing_patches("fast"):
        if "find" in p:
            f = core / p["file"]
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text((f.read_text() if f.exists() else "") + p["find"] + "\n")
    assert controller.timing_for(tmp_path) == ("fast", "")
    first = next(p for p in controller.timing_patches("fast") if "find" in p)
    (core / first["file"]).write_text("")
    tm, notice = controller.timing_for(tmp_path)
    assert tm == "upstream" and "core v1.6.2 has no line for" in notice and first["file"] in notice
    monkeypatch.setenv(controller.ENV_TIMING, "fast")          # asked for: never replaced
    assert controller.timing_for(tmp_path) == ("fast", "")


def test_a_core_before_the_fast_timing_s_oldest_is_built_as_released(tmp_path, monkeypatch):
    """controller-timing.yaml fast-oldest-core: provider v0.6.3's core v0.36.1 has no singleton source for
    the trigger to sit beside, so it runs upstream, said before any core source is read."""
    monkeypatch.delenv(controller.ENV_TIMING, raising=False)
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    (tmp_path / "go.mod").write_text("module m\nrequire sigs.k8s.io/karpenter v0.36.1\n")
    monkeypatch.setattr(controller, "go_module_dir", lambda module, version: pytest.fail("no core is read"))
    tm, notice = controller.timing_for(tmp_path)
    assert tm == "upstream" and "core v0.36.1 predates the fast timing's edits (written for core v1.0.0" in notice


def test_a_release_tree_is_cached_per_commit_and_timing(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    tree = tmp_path / "provider-src" / ("a" * 40)
    tree.mkdir(parents=True)
    assert controller.cache_entry(tree, "upstream") == tmp_path / "controller" / f"git-{'a' * 40}"
    fast = controller.cache_entry(tree, "fast").name
    assert fast == f"git-{'a' * 40}+fast-{controller.timing_hash('fast')}"
    out = controller.cache_entry(tree, "upstream")
    out.mkdir(parents=True)
    (out / "controller").write_text("#!/bin/sh\n")
    (out / "controller").chmod(0o755)
    (out / "VERSION").write_text("v1.6.8\n")
    monkeypatch.delenv(controller.ENV_BIN, raising=False)
    found = controller.find_controller(tree, "upstream")
    assert found.version == "v1.6.8" and found.timing == "upstream" and found.source == f"git:{'a' * 40}"
    assert found.crds_dir == tree / "pkg" / "apis" / "crds"
    assert controller.find_controller(tree, "fast") is None


def test_the_history_is_taken_from_either_variable(monkeypatch):
    monkeypatch.delenv(controller.ENV_GIT, raising=False)
    monkeypatch.delenv(controller.ENV_HISTORY, raising=False)
    assert controller.provider_git() is None
    monkeypatch.setenv(controller.ENV_HISTORY, "/ci/provider-git")
    assert controller.provider_git() == Path("/ci/provider-git")
    monkeypatch.setenv(controller.ENV_GIT, "/mine")
    assert controller.provider_git() == Path("/mine")


@pytest.mark.parametrize("ref", ["v1.6.8"])
def test_the_provider_history_exports_a_release_tree(ref, tmp_path, monkeypatch):
    """With the provider's history at hand (HARNESS_PROVIDER_GIT): the exported tree is the tag's."""
    import os
    git = os.environ.get(controller.ENV_HISTORY)
    if not git:
        pytest.skip("HARNESS_PROVIDER_GIT (the provider's git history) not given")
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    tree, described = controller.provider_tree(Path(git), ref)
    assert described == ref and tree_skip(ref, tree) is None
    assert controller.pinned_core(tree) == ("sigs.k8s.io/karpenter", "v1.6.2")


def test_the_newest_patch_of_every_line_oldest_first():
    from harness.runner.engines.real.controller.releasectl import newest_patches
    tags = ["v0.4.0", "v0.5.0", "v0.5.5", "v0.5.10", "v0.6.0-rc.1", "v0.6.0", "v1.6.8-rc.1", "v1.6.2", "v1.6.8",
            "v1.7.0-test.batchv4", "1.6.8-e2e-47c1c6", "testtag", "v1.14.2", "v1.10.2"]
    assert newest_patches(tags) == ["v0.5.10", "v0.6.0", "v1.6.8", "v1.10.2", "v1.14.2"]
    assert newest_patches(tags, newest="v1.14.0") == ["v0.5.10", "v0.6.0", "v1.6.8", "v1.10.2"]


def test_a_core_commit_between_releases_is_taken_from_cores_history(tmp_path, monkeypatch):
    """provider v1.12.2 pins core by pseudo-version, which the Go module proxy refuses: with core's
    history (HARNESS_CORE_GIT) the commit is exported and built instead; a release pin is left alone."""
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    asked = []
    monkeypatch.setattr(controller, "export_tree", lambda git, ref, under, paths=(): (asked.append((ref, under)) or
                                                                                     (tmp_path / under / ref, ref)))
    (tmp_path / "go.mod").write_text("module m\nrequire sigs.k8s.io/karpenter v1.12.0\nreplace sigs.k8s.io/karpenter => "
                                     "github.com/kubernetes-sigs/karpenter v1.12.1-0.20260514173230-7e9d426919bd\n")
    monkeypatch.delenv(controller.ENV_CORE_GIT, raising=False)
    assert controller.core_from_history(tmp_path) is None
    monkeypatch.setenv(controller.ENV_CORE_GIT, "/core-history")
    assert controller.core_from_history(tmp_path) == tmp_path / "core-src" / "7e9d426919bd"
    (tmp_path / "go.mod").write_text("module m\nrequire sigs.k8s.io/karpenter v1.6.2\n")
    assert controller.core_from_history(tmp_path) is None and asked == [("7e9d426919bd", "core-src")]


def test_nightly_release_matrix_covers_every_line_and_every_pair_profile():
    """The nightly release-controllers job runs one machine per release: each release line's newest
    patch (its smoke set), every profile a core switch's pair names and every release a knob scenario
    replays on (harness/judge/knobreplays.py) must have one."""
    import yaml
    root = Path(__file__).resolve().parents[4]
    workflow = yaml.safe_load((root / ".github/workflows/nightly.yml").read_text())
    matrix = set(workflow["jobs"]["release-controllers"]["strategy"]["matrix"]["release"])
    index = yaml.safe_load((root / "harness/data/releases/index.yaml").read_text())
    tags = {t for p in index["profiles"].values() for t in p["covers"]}
    wanted = set(newest_patches(tags))
    for f in sorted((root / "scenarios/releases/core").glob("*.scenario.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            # `upstream` is the newest release, which every machine's own build is
            wanted |= set(((doc or {}).get("given") or {}).get("profiles") or []) - {"upstream"}
    from harness.judge.knobreplays import NONE, replays
    from harness.scenario.load import load_all
    wanted |= set(replays(load_all([root / "scenarios"]))) - {NONE}
    assert wanted - matrix == set()


def test_a_run_on_a_controller_built_with_substitutes_prints_a_notice_naming_them(tmp_path, monkeypatch, capsys):
    from harness.backends.binaries import substitutes
    from harness.runner.engines.real.controller import releasectl
    skewer = substitutes.Substitute("github.com/Azure/skewer", "v0.0.22", "v0.0.24", "v1.13.0", "why")
    built = controller.ControllerBinary(tmp_path / "controller", "v1.12.2", "git:x", tmp_path, "fast", (skewer,))
    monkeypatch.setattr(controller, "provider_git", lambda: tmp_path)
    monkeypatch.setattr(controller, "provider_tree", lambda git, ref: (tmp_path, ref))
    monkeypatch.setattr(controller, "timing_for", lambda tree: ("fast", ""))
    monkeypatch.setattr(controller, "find_controller", lambda tree, tm: built)
    monkeypatch.setattr(releasectl, "tree_skip", lambda ref, tree: None)
    ctls = releasectl.ReleaseControllers()
    assert ctls.controller("v1.12.2") == (built, None)
    want = "provider v1.12.2: built with github.com/Azure/skewer v0.0.24 for v0.0.22, which the Go module proxy refuses"
    assert ctls.notices[0].startswith(want)
    assert f"NOTICE: {want}" in capsys.readouterr().err
