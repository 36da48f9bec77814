"""harness/backends/binaries/controller.py: where the controller comes from, and what a missing one says."""
import os

import pytest

from harness.backends.binaries import controller
from harness.backends.binaries.controlplane import BinariesError


def test_env_override_must_be_executable(monkeypatch, tmp_path):
    monkeypatch.setenv(controller.ENV_BIN, str(tmp_path / "nope"))
    with pytest.raises(BinariesError, match="is not an executable file"):
        controller.find_controller()


def test_env_override_wins(monkeypatch, tmp_path):
    b = tmp_path / "controller"
    b.write_text("#!/bin/sh\n")
    os.chmod(b, 0o755)
    monkeypatch.setenv(controller.ENV_BIN, str(b))
    assert controller.find_controller().path == b


def test_cache_is_keyed_by_version_or_by_source_content(monkeypatch, tmp_path):
    monkeypatch.delenv(controller.ENV_BIN, raising=False)
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv(controller.ENV_TIMING, "upstream")
    assert controller.cache_entry().name == controller.DEFAULT_PROVIDER_VERSION
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "go.mod").write_text("module github.com/Azure/karpenter-provider-azure\n")
    (src / "pkg" / "a.go").write_text("package pkg\n")
    first = controller.cache_entry(src).name
    (src / "pkg" / "a_test.go").write_text("package pkg\n")     # tests do not change the binary
    assert controller.cache_entry(src).name == first
    (src / "pkg" / "a.go").write_text("package pkg // edited\n")
    assert controller.cache_entry(src).name != first and first.startswith("src-")
    assert controller.find_controller(src) is None
    assert "python -m harness.backends build --controller --provider-src" in controller.missing_message(src)


def test_the_fast_timing_is_the_default_and_has_its_own_cache_entry(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(controller.ENV_TIMING, raising=False)
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    assert controller.timing() == "fast"
    assert controller.cache_entry().name == f"{controller.DEFAULT_PROVIDER_VERSION}+fast-{controller.timing_hash()}"
    monkeypatch.setenv(controller.ENV_TIMING, "slow")
    with pytest.raises(BinariesError, match="expected one of fast, upstream"):
        controller.timing()
    assert controller.timing_patches("upstream") == []


def test_every_fast_edit_applies_once_to_the_pinned_core():
    """Each `find` of controller-timing.yaml occurs exactly once in the module it names (sigs.k8s.io/karpenter
    when none) as the pinned provider requires it (build-controller.sh refuses otherwise), a duration edit
    changes a duration only (or caps a computed wait at one: min(wait, D); or makes it a variable the harness may
    set: validation_delay.go), and an added
    file is new to the module and of its package."""
    import re
    from pathlib import Path

    from harness.backends.binaries.controlplane import go_module_dir
    gomod = (go_module_dir(controller.MODULE, controller.DEFAULT_PROVIDER_VERSION) / "go.mod").read_text()
    from harness.backends.binaries import editrules
    gomod = (go_module_dir(controller.MODULE, controller.DEFAULT_PROVIDER_VERSION) / "go.mod").read_text()
    pinned = {m: re.search(rf"^\s*{re.escape(m)} (v\S+)", gomod, re.M).group(1)
              for m in ("sigs.k8s.io/karpenter", "k8s.io/apimachinery", "github.com/patrickmn/go-cache")}
    patches = controller.timing_patches("fast")
    assert {p["kind"] for p in patches} == {"trigger", "observe", "duration", "clock"}
    assert {p.get("module", controller.CORE_MODULE) for p in patches} == set(pinned)
    for p in patches:
        module = p.get("module", controller.CORE_MODULE)
        if not editrules.applies(p, pinned[module]):       # another core's spelling (test_timing_releases.py)
            continue
        root = go_module_dir(module, pinned[module])
        if "add" in p:
            assert not (root / p["file"]).exists(), p
            beside = next(f for f in sorted((root / p["file"]).parent.glob("*.go")) if not f.name.endswith("_test.go"))
            package = re.search(r"^package (\w+)$", beside.read_text(), re.M).group(1)
            assert f"\npackage {package}\n" in Path(p["add"]).read_text(), p
            continue
        assert (root / p["file"]).read_text().count(p["find"]) == editrules.expected(p), p
        if p["kind"] == "duration":
            # the harness's own reader of the environment (validation_delay.go) reads as the constant it replaces
            unread = lambda t: re.sub(r"^var (\w+) = harness\w+\((.*)\)$", r"const \1 = \2", t)  # noqa: E731
            strip = lambda t: re.sub(r"\d+ \* time\.\w+|time\.\w+ \* \d+|time\.(?:Millisecond|Second|Minute|Hour)\b", "D", unread(t))  # noqa: E731
            uncap = lambda t: re.sub(r"min\((.*), D\)", r"\1", t)  # noqa: E731  (a wait capped: min(wait, D))
            assert strip(p["find"]) == uncap(strip(p["replace"])), p          # only the duration differs


def test_the_fast_kube_apiserver_edit_applies_once_to_its_staging_module():
    """controller-timing.yaml kube-apiserver-source: each edit names k8s.io/apiserver, whose version is the
    control plane's staging version (v0.<minor>.<patch> of Kubernetes v1.<minor>.<patch>)."""
    from pathlib import Path

    from harness.backends.binaries import editrules
    from harness.backends.binaries.controlplane import go_module_dir, versions
    edits = controller.source_edits("kube-apiserver", "fast")
    assert edits and controller.source_edits("kube-apiserver", "upstream") == []
    staging = "v0." + versions()["k8s"].removeprefix("v1.")
    root = go_module_dir("k8s.io/apiserver", staging)
    for p in edits:
        assert p["module"] == "k8s.io/apiserver"
        if not editrules.applies(p, staging):       # another release's spelling of the line
            continue
        if "add" in p:
            assert not (root / p["file"]).exists() and "\npackage rest\n" in Path(p["add"]).read_text()
        else:
            assert (root / p["file"]).read_text().count(p["find"]) == 1, p


def test_the_real_engines_cluster_takes_kube_schedulers_settings_from_the_timing(monkeypatch):
    """controller-timing.yaml `kube-scheduler`: the fast timing's backoff of 1 s; upstream keeps the
    defaults. The settings go into kube-scheduler's --config file, which names its kubeconfig."""
    import yaml

    from harness.backends.realcluster import scheduler_config
    from harness.runner.engines.real.engine import RealEngine
    monkeypatch.delenv(controller.ENV_TIMING, raising=False)
    fast = RealEngine().cluster_options["scheduler_config"]
    assert dict(fast) == {"podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1}
    monkeypatch.setenv(controller.ENV_TIMING, "upstream")
    assert RealEngine().cluster_options["scheduler_config"] == ()
    doc = yaml.safe_load(scheduler_config("/k/kc", fast))
    assert doc["kind"] == "KubeSchedulerConfiguration" and doc["clientConnection"] == {"kubeconfig": "/k/kc"}
    assert doc["podMaxBackoffSeconds"] == 1 and doc["leaderElection"] == {"leaderElect": False}


def test_the_real_engines_cluster_runs_kube_controller_manager_without_taint_eviction():
    """engine.py KCM_CONTROLLERS: the stand-in's Node is Ready at registration, so taint eviction could
    delete a pod bound the moment karpenter.sh/unregistered is lifted; the flag reaches the process."""
    from harness.backends.local import COMPONENTS, kcm_args
    from harness.runner.engines.real.engine import RealEngine
    opts = RealEngine().cluster_options
    assert opts["kcm_controllers"] == ("*", "-taint-eviction-controller")
    kcm = next(c for c in COMPONENTS if c.name == "kube-controller-manager")
    paths = {"sa_key": "/k/sa", "ca": "/k/ca", "ca_key": "/k/ca.key"}
    args = kcm.args("/k/kc", 1, "/k/certs", paths, "", controllers=opts["kcm_controllers"])
    assert "--controllers=*,-taint-eviction-controller" in args
    assert not any(a.startswith("--controllers") for a in kcm_args("/k/kc", 1, "/k/certs", paths))
    # the fast timing's node lifecycle flags (controller-timing.yaml kube-controller-manager)
    assert ("node-monitor-grace-period", "15s") in opts["kcm_settings"]
    args = kcm.args("/k/kc", 1, "/k/certs", paths, "", settings=opts["kcm_settings"])
    assert "--node-monitor-grace-period=15s" in args and "--node-monitor-period=1s" in args


def test_every_kcm_edit_applies_once_to_the_pinned_kubernetes_and_changes_a_duration_or_the_clock():
    """controller-timing.yaml `kube-controller-manager-source`: each `find` occurs exactly once in
    k8s.io/kubernetes as pinned (build-binaries.sh --kcm refuses otherwise); an edit changes a duration, or
    hands the Job, CronJob and TTL-after-finished controllers the harness's clock (clock_kcm.go) and nothing
    else does (node lifecycle stays on the wall clock); upstream edits nothing. Skips where the module is not
    in the Go module cache (no control-plane build)."""
    import re

    from harness.backends.binaries.controlplane import go_module_dir, versions
    edits = controller.kcm_source_edits("fast")
    clocked = {e["file"] for e in edits if "add" not in e and "Harness" in e["replace"]}
    assert clocked == {"pkg/controller/job/job_controller.go", "pkg/controller/cronjob/cronjob_controllerv2.go",
                       "pkg/controller/ttlafterfinished/ttlafterfinished_controller.go"}
    assert {e["file"] for e in edits if "add" in e} == {"pkg/controller/zz_harness_clock.go"}
    assert {e["file"] for e in edits} - clocked - {"pkg/controller/zz_harness_clock.go"} == {
        "pkg/controller/podgc/gc_controller.go"}
    assert controller.kcm_source_edits("upstream") == [] and controller.timed_kcm_path("upstream") is None
    from harness.backends.binaries import editrules
    from harness.backends.binaries.controlplane import kubernetes_releases
    try:
        pinned = go_module_dir("k8s.io/kubernetes", versions()["k8s"])
    except BinariesError as e:
        pytest.skip(f"k8s.io/kubernetes is not in the Go module cache: {e}")
    strip = lambda t: re.sub(r"\d+ \* time\.\w+", "D", t)  # noqa: E731
    for release in kubernetes_releases().values():     # the pinned one, and each minor's built here
        root = pinned.parent / f"kubernetes@{release.kubernetes}"
        if not root.is_dir():
            continue
        for e in (e for e in edits if editrules.applies(e, release.kubernetes)):   # its spelling of a line
            if "add" in e:
                assert not (root / e["file"]).exists(), e
                continue
            assert (root / e["file"]).read_text().count(e["find"]) == 1, (release.kubernetes, e)
            if e["file"] not in clocked:
                assert strip(e["find"]) == strip(e["replace"]) and e["find"] != e["replace"], e


def test_the_timed_kcm_is_keyed_by_its_edits_and_runs_once_built(monkeypatch, tmp_path):
    """The fast kube-controller-manager sits beside the pinned bin dir, named by the k8s version, the
    timing and a digest of its edits; the real engine's cluster runs it once it exists, the pinned one
    before (same outcomes, later)."""
    from harness.runner.engines.real.engine import RealEngine
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    monkeypatch.delenv(controller.ENV_TIMING, raising=False)
    path = controller.timed_kcm_path("fast")
    assert path.parent.parent == tmp_path / "bin" and path.parent.name.startswith("kcm-v1.36.3+fast-")
    assert controller.timed_kcm() is None and RealEngine().cluster_options["kcm_binary"] is None
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    assert RealEngine().cluster_options["kcm_binary"] == str(path)


def test_apply_edits_refuses_a_find_that_is_not_there_exactly_once(tmp_path):
    """apply-edits.py (both build scripts): an edit applies where its find occurs once, and stops the
    build naming the file and the count otherwise."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    script = Path(controller.__file__).with_name("apply-edits.py")
    (tmp_path / "m" / "pkg").mkdir(parents=True)
    (tmp_path / "m" / "pkg" / "a.go").write_text("const x = 20 * time.Second\n")
    edits = tmp_path / "e.json"
    edits.write_text(json.dumps([{"file": "pkg/a.go", "find": "20 * time.Second", "replace": "2 * time.Second"}]))
    run = lambda: subprocess.run([sys.executable, str(script), str(edits), str(tmp_path / "m"), "fast",  # noqa: E731
                                  "k8s.io/kubernetes v1.36.3", "build-binaries"], capture_output=True, text=True)
    ok = run()
    assert ok.returncode == 0 and "fast: pkg/a.go: 20 * time.Second -> 2 * time.Second" in ok.stderr
    assert (tmp_path / "m" / "pkg" / "a.go").read_text() == "const x = 2 * time.Second\n"
    again = run()
    assert again.returncode == 1
    assert "pkg/a.go of k8s.io/kubernetes v1.36.3 has 0 occurrence(s) of '20 * time.Second', not 1" in again.stderr


def test_apply_edits_takes_an_edit_in_its_module_versions_only_and_counts_each_find(tmp_path):
    """apply-edits.py: an edit with `since`/`until` applies to the module versions in its range only
    (editrules.py), so core's older spelling of a line is the next edit; `count` finds replace them all."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    script = Path(controller.__file__).with_name("apply-edits.py")
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a.go").write_text("const consolidationTTL = 15 * time.Second\nt := time.Now(); u := time.Now()\n")
    edits = tmp_path / "e.json"
    edits.write_text(json.dumps([
        {"file": "a.go", "find": "const commandValidationDelay = 15 * time.Second", "replace": "x", "since": "v1.12.0"},
        {"file": "a.go", "find": "const consolidationTTL = 15 * time.Second",
         "replace": "const consolidationTTL = 1500 * time.Millisecond", "until": "v1.12.0"},
        {"file": "a.go", "find": "time.Now()", "replace": "harnessNow()", "count": 2}]))
    run = lambda version: subprocess.run([sys.executable, str(script), str(edits), str(tmp_path / "m"), "fast",  # noqa: E731
                                          f"sigs.k8s.io/karpenter {version}", "build-controller"],
                                         capture_output=True, text=True)
    newer = run("v1.12.1-0.20260514173230-7e9d426919bd")     # a pseudo-version after v1.12.0: the newer spelling
    assert newer.returncode == 1 and "'const commandValidationDelay = 15 * time.Second', not 1" in newer.stderr
    older = run("v1.6.2")
    assert older.returncode == 0, older.stderr
    assert (tmp_path / "m" / "a.go").read_text() == ("const consolidationTTL = 1500 * time.Millisecond\n"
                                                    "t := harnessNow(); u := harnessNow()\n")


def test_a_release_the_timing_edits_miss_runs_its_binary_as_released(monkeypatch, tmp_path):
    """A Kubernetes release whose source lacks a line the timing's edits change (apply-edits.py ends its
    refusal with '; build with timing upstream'): no timed binary, the reason kept so the build is not tried
    again and the run can say why its clock is the wall clock."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "cache" / "bin" / "apiserver-v1.33.13+fast-x" / "kube-apiserver"
    monkeypatch.setattr(controller, "timed_path", lambda binary, name=None, k8s=None: target)
    monkeypatch.setattr(controller, "go_binary", lambda: "/usr/local/go/bin/go")
    monkeypatch.setattr(controller, "source_edits", lambda binary, name=None: [])
    monkeypatch.setattr(controller, "versions", lambda k8s=None: {"k8s": "v1.33.13"})
    why = ("timing fast: pkg/registry/rest/meta.go of k8s.io/apiserver v0.33.13 has 0 occurrence(s) of "
           "'var metav1Now = metav1.Now', not 1; build with timing upstream")
    calls = []

    def refuse(*args, **kwargs):
        calls.append(args)
        raise BinariesError(f"build-binaries.sh failed (exit 1) after 1s:\n[build-binaries] resolving\n{why}")
    monkeypatch.setattr(controller, "run_logged", refuse)
    assert controller.build_timed("kube-apiserver", "fast", k8s="1.33.13") is None
    assert controller.unapplied_timing("kube-apiserver", "fast", "1.33.13") == why
    assert controller.build_timed("kube-apiserver", "fast", k8s="1.33.13") is None
    assert len(calls) == 1                          # not tried again

    def broken(*args, **kwargs):
        raise BinariesError("build-binaries.sh failed (exit 1) after 1s:\ngo: network unreachable")
    monkeypatch.setattr(controller, "run_logged", broken)
    other = tmp_path / "cache" / "bin" / "apiserver-v1.34.0+fast-x" / "kube-apiserver"
    monkeypatch.setattr(controller, "timed_path", lambda binary, name=None, k8s=None: other)
    with pytest.raises(BinariesError, match="network unreachable"):
        controller.build_timed("kube-apiserver", "fast", k8s="1.34.0")
