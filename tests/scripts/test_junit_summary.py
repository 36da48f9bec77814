"""scripts/junit-summary.py tells a skip by design from a missing prerequisite: the real engine's skip of a
scenario naming a Kubernetes version CI does not build is by design, the same skip without a Go toolchain
is not."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.backends.binaries import controlplane as binaries
from harness.runner.engines.real import engine as enginemod

from tests.scriptload import load_script



def _summary():
    return load_script("scripts/junit-summary.py", "junit_summary")


@pytest.fixture
def skip_message(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path))
    # CI's scripts/test.sh sets the build switch for the whole run: each test says its own
    for var in ("K8S_VERSION", "ETCD_VERSION", "KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR", enginemod.BUILD_VERSIONS_ENV,
                *binaries.ENV_OVERRIDES.values()):
        monkeypatch.delenv(var, raising=False)
    scenario = SimpleNamespace(given={"cluster": {"kubernetesVersion": "1.33.0"}}, manifests=[], step_manifests=[])
    cluster = SimpleNamespace(server_version="v1.36.3", backend="local")
    # as the pytest plugin words it (harness/runner/plugin.py)
    return lambda: "real engine: " + enginemod.RealEngine().skip_reason(scenario, cluster)


def test_ci_without_that_version_built_skips_by_design(skip_message, monkeypatch):
    monkeypatch.setenv(enginemod.BUILD_VERSIONS_ENV, "0")
    assert _summary().by_design(skip_message())


def test_no_go_toolchain_is_a_missing_prerequisite(skip_message, monkeypatch):
    monkeypatch.setattr(binaries, "go_binary", lambda: None)
    assert not _summary().by_design(skip_message())
