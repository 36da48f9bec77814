"""The Kubernetes versions the real backends can start (harness/data/kubernetes-versions.yaml) and the
per-version lookup and build of harness/backends/binaries/controlplane.py; no Go build (stand-in build scripts)."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from harness.backends.binaries import controlplane as binaries


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    """An empty cache, the pinned versions, no overrides."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    for var in ("K8S_VERSION", "ETCD_VERSION", "KWOK_VERSION", "KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR",
                *binaries.ENV_OVERRIDES.values()):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def test_every_release_row_is_its_minors_and_the_default_is_one_of_them():
    releases = binaries.kubernetes_releases()
    assert list(releases) == sorted(releases, key=lambda m: tuple(map(int, m.split("."))))
    for minor, rel in releases.items():
        assert binaries.minor_of(rel.kubernetes) == minor == rel.minor
        assert re.fullmatch(r"v1\.\d+\.\d+", rel.kubernetes) and re.fullmatch(r"v3\.\d+\.\d+", rel.etcd)
    assert binaries.release_for(binaries.DEFAULT_K8S_VERSION).kubernetes == binaries.DEFAULT_K8S_VERSION


@pytest.mark.parametrize("version, minor", [("1.33.0", "1.33"), ("v1.33.13", "1.33"), ("v1.33.13+k3s1", "1.33"),
                                            ("1.34", "1.34"), (" 1.31.2", "1.31"), ("latest", None), ("1", None)])
def test_minor_of(version, minor):
    assert binaries.minor_of(version) == minor


def test_the_session_etcd_is_paired_with_its_kubernetes_unless_set(clean_env, monkeypatch):
    assert binaries.versions() == {"k8s": "v1.36.3", "etcd": "v3.6.8", "kwok": "v0.8.0"}
    monkeypatch.setenv("K8S_VERSION", "v1.34.4")
    assert binaries.versions()["etcd"] == "v3.6.5"
    monkeypatch.setenv("ETCD_VERSION", "v3.6.4")
    assert binaries.versions()["etcd"] == "v3.6.4"
    # another version's etcd is its own, whatever the session's is
    assert binaries.versions("v1.33.13") == {"k8s": "v1.33.13", "etcd": "v3.5.24", "kwok": "v0.8.0"}
    assert binaries.cached_bin_dir("v1.33.13").name == "k8s-v1.33.13-etcd-v3.5.24-kwok-v0.8.0"
    monkeypatch.setenv("K8S_VERSION", "v1.29.4")
    monkeypatch.delenv("ETCD_VERSION")
    with pytest.raises(binaries.BinariesError, match=r"no etcd is paired with Kubernetes v1.29.4 .*set ETCD_VERSION"):
        binaries.versions()


def _stub(path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {text}\n")
    path.chmod(0o755)


def test_another_version_is_looked_up_in_its_own_cache_dir_only(clean_env, monkeypatch):
    _stub(clean_env / "session" / "kube-apiserver", "Kubernetes v1.36.3")
    monkeypatch.setenv("KUBE_APISERVER_BIN", str(clean_env / "session" / "kube-apiserver"))
    assert binaries.find_binaries(k8s="v1.33.13").paths == {}
    _stub(binaries.cached_bin_dir("v1.33.13") / "kube-apiserver", "Kubernetes v1.33.13")
    found = binaries.find_binaries(k8s="v1.33.13")
    assert found.sources == {"kube-apiserver": "cache"} and found.versions == {"kube-apiserver": "v1.33.13"}
    assert binaries.session_version() == "v1.36.3"
    assert "python -m harness.backends build --k8s-version v1.33.13" in binaries.missing_message(found, ("etcd",), "v1.33.13")


def test_another_versions_build_says_its_cost_and_builds_what_is_needed(clean_env, monkeypatch, capsys):
    """ensure_binaries(k8s=...) runs build-binaries.sh (a stand-in here) with that version, its etcd and
    only the binaries asked for, under the build lock, after saying what it costs."""
    out = binaries.cached_bin_dir("v1.33.13")
    seen = clean_env / "env.txt"
    script = clean_env / "fake-build.sh"
    script.write_text(f"""#!/usr/bin/env bash
set -e
echo "$K8S_VERSION $ETCD_VERSION $K8S_BINARIES $1" > "{seen}"
mkdir -p "$1"
for b in $K8S_BINARIES; do printf '#!/bin/sh\\necho Kubernetes %s\\n' "$K8S_VERSION" > "$1/$b"; chmod +x "$1/$b"; done
""")
    monkeypatch.setattr(binaries, "BUILD_SCRIPT", script)
    monkeypatch.setattr(binaries, "go_binary", lambda: "/usr/bin/go")
    need = ("etcd", "kube-apiserver", "kube-scheduler")
    bs = binaries.ensure_binaries(build=True, need=need, k8s="v1.33.13")
    assert seen.read_text().split() == ["v1.33.13", "v3.5.24", "kube-apiserver", "etcd", "kube-scheduler", str(out)]
    assert sorted(bs.paths) == sorted(need)
    err = capsys.readouterr().err
    assert "[build] Kubernetes v1.33.13 is not built" in err and binaries.BUILD_COST in err
    # built: the next one reuses it, silently
    binaries.ensure_binaries(build=True, need=need, k8s="v1.33.13")
    assert "is not built" not in capsys.readouterr().err
    with pytest.raises(binaries.BinariesError, match=r"missing Kubernetes v1.33.13 binaries \['kube-controller-manager'\]"):
        binaries.ensure_binaries(build=False, need=need + ("kube-controller-manager",), k8s="v1.33.13")


def test_the_build_script_reuses_a_complete_subset(tmp_path):
    """K8S_BINARIES names the set build-binaries.sh must leave in the bin dir: when those are there it
    builds nothing (kwok and the rest of the full set are not asked for)."""
    for name in ("kube-apiserver", "etcd"):
        _stub(tmp_path / "bin" / name, "x")
    env = {**os.environ, "K8S_VERSION": "v1.33.13", "ETCD_VERSION": "v3.5.24", "KWOK_VERSION": "v0.8.0",
           "K8S_BINARIES": "kube-apiserver etcd", "PATH": "/usr/bin:/bin"}
    r = subprocess.run(["bash", str(binaries.BUILD_SCRIPT), str(tmp_path / "bin"), str(tmp_path / "work")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "reusing" in r.stderr
    assert not (tmp_path / "work").exists()


def test_a_backend_for_another_version_looks_for_that_versions_binaries(clean_env, monkeypatch):
    from harness.backends.registry import get_backend
    ok, why = get_backend("local", k8s_version="v1.33.13", scheduler=True).available()
    assert not ok and why.startswith("missing Kubernetes v1.33.13 binaries ['etcd', 'kube-apiserver', 'kube-scheduler']")
    monkeypatch.setattr(binaries, "go_binary", lambda: "/usr/bin/go")
    assert get_backend("local", k8s_version="v1.33.13", build=True).available() == (True, "")
    for name in ("container", "kind"):
        ok, why = get_backend(name, k8s_version="v1.33.13").available()
        assert not ok and why == (f"Kubernetes v1.33.13: the {name} backend runs the session's version only "
                                  "(another version's control plane: the local backend)")


def test_build_names_the_minors_it_knows(capsys):
    from harness.backends.__main__ import main
    assert main(["build", "--k8s-version", "1.29"]) == 1
    assert capsys.readouterr().err.strip() == ("build failed: no Kubernetes 1.29 in kubernetes-versions.yaml "
                                               "(minors 1.31, 1.32, 1.33, 1.34, 1.35, 1.36)")
