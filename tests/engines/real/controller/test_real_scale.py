"""harness/runner/engines/real/controller/scale.py: a dump of hundreds of nodes runs kube-controller-manager with its
own node-monitor grace, the stand-ins renew as kubelets do, a fast build validates a consolidation command
after upstream's 15 s, and the run says so."""
import os
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.runner.engines.real.controller import scale

FAST = (("node-monitor-grace-period", "15s"), ("node-monitor-period", "1s"))


def _scenario(nodes: int):
    return SimpleNamespace(given={"existingNodes": [{"nodePool": "default"}] * nodes})


def _least() -> int:
    return int(scale._rule()["nodes"])


def test_a_small_scenario_keeps_the_timings_flags_and_cadence():
    """The library's scenarios (the 100-node dump too) run as before: the fast timing's 15 s grace, 2 s renewals."""
    small = _scenario(_least() - 1)
    assert scale.kcm_settings(small, FAST) == FAST
    assert scale.renew_seconds(small, SimpleNamespace(kcm_settings=FAST)) is None
    assert scale.grace_notice(small, SimpleNamespace(kcm_settings=FAST, server_version="v1.34.4")) is None
    assert scale.controller_env(small) == {}


def test_a_dump_at_scale_runs_kube_controller_managers_own_grace_and_says_so():
    big = _scenario(_least())
    assert scale.kcm_settings(big, FAST) == (("node-monitor-period", "1s"),)
    cluster = SimpleNamespace(kcm_settings=scale.kcm_settings(big, FAST), server_version="v1.33.13")
    assert scale.renew_seconds(big, cluster) == 10.0
    notice = scale.grace_notice(big, cluster)
    assert notice.startswith("kube-controller-manager --node-monitor-grace-period: 50s, kube-controller-manager's "
                             "default at Kubernetes v1.33.13;")
    assert f"seeds {_least():,} existing nodes" in notice
    assert scale.controller_env(big) == {"KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY": "15s"}
    assert notice.endswith("a fast build validates a consolidation command after 15s, upstream's wait, not a tenth of it")
    assert "validates" not in scale.grace_notice(big, cluster, fast=False)


def test_the_at_scale_validation_delay_is_upstreams_own():
    """The wait the rule names is core's commandValidationDelay as released (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/disruption/consolidation.go), the constant the fast timing's edit replaces."""
    from harness.backends.binaries.controller import timing_data
    edit = next(e for e in timing_data()["fast"] if e.get("find", "").startswith("const commandValidationDelay"))
    upstream = re.fullmatch(r"const commandValidationDelay = (\d+) \* time\.Second", edit["find"]).group(1)
    assert scale.controller_env(_scenario(_least()))["KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY"] == f"{upstream}s"
    assert "harnessValidationDelay(" in edit["replace"]


def test_the_controller_environment_carries_the_at_scale_wait(tmp_path):
    """settings.controller_env adds what the rule names, and a kept controller started without it does not
    serve a dump at scale (keeper.scenario_key differs)."""
    from harness.runner.engines.real.controller import keeper, settings
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nfake\n-----END CERTIFICATE-----\n")
    ep = settings.Endpoints("https://127.0.0.1:4443", ca, "https://127.0.0.1:6443", ca)
    files = settings.write_files(tmp_path / "cfg", ep, "t", "s")
    big = _scenario(_least())
    env = settings.controller_env({"region": "eastus", "nodeResourceGroup": "MC_rg"}, ep, files, "sub", files["az_dir"],
                                  {"metrics": 1, "health": 2, "probe": 3}, harness_env=scale.controller_env(big))
    assert env["KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY"] == "15s"
    fake = SimpleNamespace(region="eastus", skus=lambda: [], region_prices=lambda r: {})
    assert keeper.scenario_key(_scenario(1), {}, fake) != keeper.scenario_key(big, {}, fake)


def test_a_cluster_started_with_the_short_grace_keeps_the_short_cadence():
    """The notice and the cadence follow the cluster's own flags, not the rule: a cluster some other way
    started with 15 s keeps the stand-ins at 2 s and says 15s."""
    big = _scenario(_least())
    cluster = SimpleNamespace(kcm_settings=FAST, server_version="v1.33.13")
    assert scale.renew_seconds(big, cluster) is None
    assert "grace-period: 15s (the cluster was started with it)" in scale.grace_notice(big, cluster)


def test_the_real_engine_asks_for_a_cluster_of_its_own_at_scale():
    from harness.runner.engines.real.engine import RealEngine
    opts = RealEngine().cluster_options
    assert RealEngine._at_scale(_scenario(1), opts) == opts
    assert dict(RealEngine._at_scale(_scenario(_least()), opts)["kcm_settings"]).get("node-monitor-grace-period") is None


@pytest.mark.parametrize("version,grace", [("v1.31.14", "40s"), ("v1.32.13", "50s"), ("v1.33.13", "50s"),
                                           ("v1.36.3", "50s"), ("v1.36.3+harness", "50s")])
def test_kube_controller_managers_default_grace_by_release(version, grace):
    assert scale.default_grace(version) == grace


def _gomodcache() -> Path | None:
    try:
        out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(out) if out else None


def test_the_default_grace_is_kubernetes_own_for_every_release_the_harness_builds():
    """default-grace against k8s.io/kubernetes's source of each release of kubernetes-versions.yaml, where
    the Go module cache holds it (RecommendedDefaultNodeLifecycleControllerConfiguration)."""
    from harness.backends.binaries.controlplane import kubernetes_releases, release_for
    cache = _gomodcache()
    checked = 0
    for minor in kubernetes_releases():
        version = release_for(minor).kubernetes
        src = (cache or Path(os.devnull)) / f"k8s.io/kubernetes@{version}" / \
            "pkg/controller/nodelifecycle/config/v1alpha1/defaults.go"
        if not src.is_file():
            continue
        m = re.search(r"NodeMonitorGracePeriod = metav1\.Duration\{Duration: (\d+) \* time\.Second\}", src.read_text())
        assert m, src
        assert scale.default_grace(version) == f"{m.group(1)}s", version
        checked += 1
    if not checked:
        pytest.skip("no k8s.io/kubernetes source in the Go module cache")
