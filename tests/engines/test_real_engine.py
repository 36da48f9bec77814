"""Pure parts of the real engine: skips, selectors, the loopback evidence from the controller log, the
cluster a scenario naming another Kubernetes version runs on."""
from types import SimpleNamespace

import pytest

from harness.backends.binaries import controlplane as binaries, controller
from harness.runner.engines.real import engine as enginemod
from harness.runner.engines.real.engine import RealEngine, RealRun, log_hosts


def _sc(given, manifests=(), steps=()):
    obj = lambda o: SimpleNamespace(obj=o)      # noqa: E731 - a Manifest's shape
    return SimpleNamespace(given=given, manifests=[obj(m) for m in manifests],
                           step_manifests=[[obj(m) for m in ms] for ms in steps],
                           api_versions=tuple(sorted({(m.get("kind"), m.get("apiVersion")) for m in manifests})))


@pytest.fixture
def no_binaries(monkeypatch, tmp_path):
    """An empty harness cache, the pinned session version and no overrides: nothing is built."""
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    for var in ("K8S_VERSION", "ETCD_VERSION", "KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR", enginemod.BUILD_VERSIONS_ENV,
                *binaries.ENV_OVERRIDES.values()):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(enginemod, "FAILED_BUILDS", {})
    return tmp_path / "cache"


def _built(k8s: str) -> None:
    """Stub binaries of Kubernetes `k8s` in its cache dir (as `build --k8s-version` leaves them)."""
    out = binaries.cached_bin_dir(k8s)
    out.mkdir(parents=True)
    for name in ("kube-apiserver", "kube-scheduler", "kube-controller-manager", "etcd"):
        (out / name).write_text(f"#!/bin/sh\necho Kubernetes {k8s}\n")
        (out / name).chmod(0o755)


def test_a_foreign_kubernetes_version_is_skipped_with_the_reason(no_binaries, monkeypatch):
    monkeypatch.setenv(enginemod.BUILD_VERSIONS_ENV, "0")
    cluster = SimpleNamespace(server_version="v1.36.3", backend="local")
    skip_reason = RealEngine().skip_reason
    why = skip_reason(_sc({"cluster": {"kubernetesVersion": "1.33.0"}}), cluster)
    assert why == ("given.cluster.kubernetesVersion 1.33.0: the controller reads the version from the API server, "
                   "which is v1.36.3: Kubernetes v1.33.13's control plane is not built and HARNESS_BUILD_K8S_VERSIONS=0 "
                   "(build it with: python -m harness.backends build --k8s-version v1.33.13, ~10-15 min of every core)")
    assert skip_reason(_sc({"cluster": {"kubernetesVersion": "1.36.0"}}), cluster) is None
    assert skip_reason(_sc({}), cluster) is None
    assert "SIG access-token server" in skip_reason(_sc({"cluster": {"useSIG": True}}), cluster)


def test_knobs_run_on_the_release_that_has_them_or_are_skipped_naming_the_facts(tmp_path):
    """given.knobs: the release whose own facts they are answers (harness/model/upstream/knobrelease.py); a
    combination no release has is skipped with the facts; another release's controller is not it."""
    from harness.backends.binaries.controller import ControllerBinary
    cluster = SimpleNamespace(server_version="v1.36.3")
    float_format = {"knobs": {"provider": {"requirements": {"ephemeralFormat": "float"}}}}
    v151 = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.5.1", "cache"))
    assert v151.skip_reason(_sc(float_format), cluster, "before-0006") is None
    v1140 = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.14.0", "cache"))
    why = v1140.skip_reason(_sc(float_format), cluster, "before-0006")
    assert why.startswith("given.knobs replays provider v1.5.1: ") and "the controller is v1.14.0" in why
    handmade = {"knobs": {"provider": {"createErrorHandlers": ["SkuNotAvailable"]}}}
    why = v151.skip_reason(_sc(handmade), cluster, "before-0006")
    assert "provider.createErrorHandlers=[\"SkuNotAvailable\"]" in why and "no provider release" in why
    bisect = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.5.1", "cache"), judge_release=False)
    assert "bisect" in bisect.skip_reason(_sc(float_format), cluster, "before-0006")


def test_a_knob_scenario_skipped_for_its_inputs_never_looks_for_the_release_controller():
    """Finding a release's controller may build it (~15 min): a scenario the real engine skips anyway (here
    given.cluster.useSIG, r08's SIG case) is skipped first."""
    engine = RealEngine()
    engine._release_mismatch = lambda profile: pytest.fail(f"looked for {profile}'s controller")
    given = {"knobs": {"provider": {"nvmeOnlyExcludedWithoutSIG": True}}, "cluster": {"useSIG": True}}
    assert "useSIG" in engine.skip_reason(_sc(given), SimpleNamespace(server_version="v1.36.3"), "before-0006")


def test_log_hosts_lists_every_url_host(tmp_path):
    log = tmp_path / "controller.log"
    log.write_text('{"source":"ApiRequestLog","url":"https://127.0.0.1:4443/subscriptions/x"}\n'
                   '{"error":"quota reached, see https://docs.example.com/q"}\n'
                   '{"error":"Get \\"https://login.example.com/t\\": dial tcp: lookup login.example.com: no such host"}\n'
                   '{"error":"dial tcp 169.254.169.254:80: connect: network is unreachable"}\n')
    assert log_hosts(log) == {"127.0.0.1:4443", "login.example.com", "169.254.169.254:80"}
    assert log_hosts(tmp_path / "missing.log") == set()


def test_which_engine_an_xfail_is_about():
    from types import SimpleNamespace

    from harness.scenario.load import Scenario

    def applies(reason: str, real: bool) -> bool:
        sc = SimpleNamespace(xfail={"upstream": reason})
        return Scenario.xfail_reason(sc, "upstream", real) is not None
    assert applies("engine: real: the controller refuses X", True)
    assert not applies("engine: real: the controller refuses X", False)
    assert applies("model: volumes are not modeled", False)
    assert not applies("model: volumes are not modeled", True)
    assert applies("unconfirmed: the report's reading", True) and applies("unconfirmed: x", False)
    assert Scenario.xfail_reason(SimpleNamespace(xfail={}), "upstream") is None


def test_a_profile_of_another_release_than_the_controllers_is_skipped_with_how_to_run_it(tmp_path):
    """The real engine answers for the controller it runs: a label policy or another release's profile
    is skipped, naming the release to build; a commit between releases (bisect) is not judged."""
    from harness.backends.binaries.controller import ControllerBinary
    engine = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.14.0", "cache"))
    assert engine._release_mismatch("upstream") is None
    assert "label policy" in engine._release_mismatch("before-0006")
    assert "--provider-ref v1.6.2" in engine._release_mismatch("v1.6.2")
    mid = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.13.1-7-g5c2fa10", "git:5c2fa10"))
    assert mid._release_mismatch("upstream") is None


def test_a_scheduled_budget_is_skipped_where_the_controllers_clock_cannot_move(monkeypatch):
    """Budget.IsActive reads the controller's clock (core v1.14.0 pkg/apis/v1/nodepool.go): a schedule
    written for the simulated clock's start (2026-01-01 00:00 UTC) means nothing on the wall clock, so it
    runs only where the run moves the clock there (a fast build with its kube-apiserver: runclock.py)."""
    cluster = SimpleNamespace(server_version="v1.36.3")
    pool = {"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "0 0 * * *", "duration": "8h"}]}}}
    plain = {"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "10%"}]}}}
    monkeypatch.setattr(RealEngine, "_moves_clock", lambda self, profile=None: False)
    skip_reason = RealEngine().skip_reason
    assert "wall clock" in skip_reason(_sc({}, [pool]), cluster)
    assert "wall clock" in skip_reason(_sc({}, [plain], [[pool]]), cluster)
    assert skip_reason(_sc({}, [plain]), cluster) is None
    monkeypatch.setattr(RealEngine, "_moves_clock", lambda self, profile=None: True)
    assert RealEngine().skip_reason(_sc({}, [pool]), cluster) is None


def test_an_advance_of_hours_is_played_where_the_run_moves_the_clock():
    """On the wall clock an advance is capped (HARNESS_REAL_MAX_ADVANCE); a run that moves the controller's
    clock plays any length at once."""
    assert "HARNESS_REAL_MAX_ADVANCE" in RealRun._cannot("advance", "22h")
    assert RealRun._cannot("advance", "22h", clocked=True) is None
    assert RealRun._cannot("advance", "30s") is None


def test_an_upgrade_step_moves_to_another_minors_control_plane_or_says_why_not(no_binaries, monkeypatch):
    """A `cluster: {kubernetesVersion}` step upgrades the control plane (RealRun.upgrade_plan): another minor,
    forward, on the local backend, its binaries built or buildable; each refusal names itself."""
    plan = lambda version, have="v1.33.13", backend="local": RealRun.upgrade_plan(    # noqa: E731
        SimpleNamespace(cluster=SimpleNamespace(server_version=have, backend=backend)), version)
    assert RealRun._cannot("cluster", {"kubernetesVersion": "1.34.1"}) is None
    assert "no control plane for Kubernetes 1.29" in RealRun._cannot("cluster", {"kubernetesVersion": "1.29.1"})
    assert plan("1.34.1")[0].kubernetes == "v1.34.4"                      # built on first use
    assert "another patch of Kubernetes 1.33, whose control plane here is v1.33.13" in plan("1.33.5")[1]
    assert "a downgrade from v1.33.13" in plan("1.32.0")[1]
    assert "local backend only, not kind" in plan("1.34.1", backend="kind")[1]
    monkeypatch.setenv(enginemod.BUILD_VERSIONS_ENV, "0")
    assert "build --k8s-version v1.34.4" in plan("1.34.1")[1]
    _built("v1.34.4")
    assert plan("1.34.1") == (binaries.release_for("1.34"), None)


def test_the_run_clock_writes_its_offset_where_the_api_server_and_controller_read_it(tmp_path, monkeypatch):
    """runclock.py: a new run starts at offset 0; an advance adds to it; the file holds the number the
    fast timing's Go side parses (controller-timing/clock_meta.go, clock_apiserver.go,
    clock_gocache.go)."""
    from harness.runner.engines.real.cluster import runclock
    from harness.runner.engines.real.cluster.runclock import RunClock
    monkeypatch.setattr(runclock.time, "time", lambda: 1_000_000.0)      # the wall clock, held still
    clock = RunClock()
    clock.bind(tmp_path / "harness-clock")
    assert (tmp_path / "harness-clock").read_text() == "0.000000\n"
    clock.advance(22 * 3600)
    clock.advance(1.5)
    assert float((tmp_path / "harness-clock").read_text()) == 22 * 3600 + 1.5
    assert clock.now() == 1_000_000.0 + 22 * 3600 + 1.5
    clock.bind(None)
    assert clock.offset == 0.0 and clock.file is None


def test_the_departed_uids_of_every_earlier_run_stay_departed(monkeypatch):
    """An aggregating event recorder can write an event about an object two resets ago: its uid stays
    filtered (engine.py previous_uids)."""
    from types import SimpleNamespace

    from harness.runner.engines.real import engine
    monkeypatch.setattr(engine, "DEPARTED", set())
    objs = {"Pod": [{"metadata": {"uid": "u1"}}]}
    cluster = SimpleNamespace(list=lambda kind: objs.get(kind, []),
                              admin=SimpleNamespace(request=lambda *a: {"items": [{"metadata": {"uid": "rs1"}}]}))
    assert engine.previous_uids(cluster) == {"u1", "rs1"}
    objs["Pod"] = [{"metadata": {"uid": "u2"}}]
    assert engine.previous_uids(cluster) == {"u1", "u2", "rs1"}


def test_a_job_or_cronjob_is_skipped_where_its_controllers_clock_cannot_move(monkeypatch):
    """harness/loop/kube/jobs.py runs a Job's pods for their run-duration and CronJob schedules on the
    simulated clock; the real cluster runs them where the run moves the clock of Karpenter, the API server and
    kube-controller-manager's Job and CronJob controllers (a fast build: controller-timing.yaml), else it is
    skipped, said by name."""
    cluster = SimpleNamespace(server_version="v1.36.3")
    job = {"kind": "Job", "metadata": {"name": "reindex"}}
    cron = {"kind": "CronJob", "metadata": {"name": "nightly"}}
    monkeypatch.setattr(RealEngine, "_runs_jobs_on_clock", lambda self, profile=None: False)
    skip_reason = RealEngine().skip_reason
    assert "Job/CronJob reindex" in skip_reason(_sc({}, [job]), cluster)
    assert "Job/CronJob nightly" in skip_reason(_sc({}, [], [[cron]]), cluster)
    monkeypatch.setattr(RealEngine, "_runs_jobs_on_clock", lambda self, profile=None: True)
    assert RealEngine().skip_reason(_sc({}, [job]), cluster) is None
    assert RealEngine().skip_reason(_sc({}, [], [[cron]]), cluster) is None


def test_a_version_plan_names_the_release_or_why_not(no_binaries, monkeypatch):
    engine = RealEngine()
    plan = lambda version, backend="local": engine.version_plan(    # noqa: E731
        _sc({"cluster": {"kubernetesVersion": version}}), backend)
    assert plan("1.36.0") == (None, None)                    # the session's minor: its own cluster
    assert engine.version_plan(_sc({}), "local") == (None, None)
    release, why = plan("1.29.4")
    assert release is None and why.startswith("no control plane for Kubernetes 1.29 in harness/data/kubernetes-versions.yaml")
    assert "local backend only, not kind" in plan("1.33.0", "kind")[1]
    monkeypatch.setattr(binaries, "go_binary", lambda: None)
    assert "there is no Go toolchain" in plan("1.33.0")[1]
    monkeypatch.setattr(binaries, "go_binary", lambda: "/usr/bin/go")
    assert plan("1.33.0")[0].kubernetes == "v1.33.13"          # to be built on first use
    monkeypatch.setenv(enginemod.BUILD_VERSIONS_ENV, "0")
    assert "HARNESS_BUILD_K8S_VERSIONS=0" in plan("1.33.0")[1]
    _built("v1.33.13")
    assert plan("1.33.0") == (binaries.release_for("1.33"), None)   # built: runs even with builds off


def test_a_scenario_naming_another_version_gets_that_versions_cluster(no_binaries, monkeypatch):
    _built("v1.33.13")
    kcm = []
    monkeypatch.setattr(controller, "build_timed_kcm", lambda name=None, echo=False, k8s=None: kcm.append(k8s) or None)
    engine = RealEngine()
    options = engine.cluster_options_for(_sc({"cluster": {"kubernetesVersion": "1.33.0"}}), None, "local")
    assert options == {**engine.cluster_options, "k8s_version": "v1.33.13", "kcm_binary": None, "apiserver_binary": None}
    assert kcm == ["v1.33.13"]
    # the session's version, and a scenario the engine skips anyway, share the default cluster
    assert engine.cluster_options_for(_sc({"cluster": {"kubernetesVersion": "1.36.1"}}), None) == engine.cluster_options
    skipped = _sc({"cluster": {"useSIG": True, "kubernetesVersion": "1.33.0"}})
    assert engine.cluster_options_for(skipped, None) == engine.cluster_options and kcm == ["v1.33.13"]
    # builds off: the timing's kube-controller-manager of that version only when it is built already
    monkeypatch.setenv(enginemod.BUILD_VERSIONS_ENV, "0")
    monkeypatch.setattr(controller, "timed_kcm", lambda name=None, k8s=None: f"/kcm-{k8s}")
    options = engine.cluster_options_for(_sc({"cluster": {"kubernetesVersion": "1.33.0"}}), None, "local")
    assert options["kcm_binary"] == "/kcm-v1.33.13" and kcm == ["v1.33.13"]


def test_a_failed_build_of_a_version_is_said_by_its_later_scenarios(no_binaries, monkeypatch):
    monkeypatch.setattr(binaries, "go_binary", lambda: "/usr/bin/go")

    def fails(**_):
        raise binaries.BinariesError("build-binaries.sh failed (exit 1) after 3s:\nno network")
    monkeypatch.setattr(binaries, "ensure_binaries", fails)
    engine = RealEngine()
    sc = _sc({"cluster": {"kubernetesVersion": "1.33.0"}})
    with pytest.raises(binaries.BinariesError):
        engine.cluster_options_for(sc, None)
    assert engine.cluster_options_for(sc, None) == engine.cluster_options
    cluster = SimpleNamespace(server_version="v1.36.3", backend="local")
    assert engine.skip_reason(sc, cluster).endswith(
        "building Kubernetes v1.33.13 failed earlier in this process: build-binaries.sh failed (exit 1) after 3s:")


def test_a_run_on_a_substituted_controller_carries_the_notice_in_its_result(tmp_path, monkeypatch):
    from harness.backends.binaries.controller import ControllerBinary
    from harness.backends.binaries.substitutes import Substitute
    from harness.runner.engines.base import Outcome
    skewer = Substitute("github.com/Azure/skewer", "v0.0.22", "v0.0.24", "v1.13.0", "why")
    ctl = ControllerBinary(tmp_path / "controller", "v1.12.2", "git:x", tmp_path, "fast", (skewer,))
    monkeypatch.setattr(enginemod, "RealRun", lambda *a: "run")
    monkeypatch.setattr(enginemod.applicability, "ignored_given", lambda given: [])
    scenario = SimpleNamespace(given={}, api_versions={})
    outcome = Outcome(scenario, "v1.12.2", "local", SimpleNamespace(release=None), engine="real")
    assert RealEngine(controller=ctl).start(scenario, "v1.12.2", None, outcome) == "run"
    assert outcome.notices == [("provider v1.12.2: built with github.com/Azure/skewer v0.0.24 for v0.0.22, which the "
                                "Go module proxy refuses here (harness/data/controller-module-substitutes.yaml; a "
                                "machine with full proxy access builds the release as released)")]


def test_a_placement_of_the_runs_clock_leaves_the_fakes_clock_running_on(monkeypatch):
    """clock_at places the run's clock (a dump's createdAt, days back, then the start): the fake's clock does
    not follow, or the resource graph would hide every VM created since and core's garbage collection
    delete their NodeClaims once their Nodes are not Ready."""
    from types import SimpleNamespace

    from harness.runner.engines.real import engine
    from harness.runner.engines.real.cluster import runclock
    from harness.runner.engines.real.cluster.runclock import FakeAzureClock, RunClock
    clock = RunClock()
    monkeypatch.setattr(runclock, "CLOCK", clock)
    monkeypatch.setattr(engine, "CLOCK", clock)
    monkeypatch.setattr(runclock.time, "time", lambda: 1_000_000.0)
    fake = FakeAzureClock(start=500.0)
    run = SimpleNamespace(clocked=True, fake=SimpleNamespace(clock=fake),
                          _move_clock=lambda seconds, touch=True, confirm=True: clock.advance(seconds))
    engine.RealRun.clock_at(run, 1_000_000.0 - 3 * 86400, touch=False)
    assert clock.now() == 1_000_000.0 - 3 * 86400 and fake.time() == 500.0
    engine.RealRun.clock_at(run, 1_000_000.0)
    assert fake.time() == 500.0


def test_existing_nodes_a_step_advances_from_place_the_runs_clock_at_the_start():
    """places_clock: the seeding's seconds are no scenario time, so a run that seeds and advances starts its
    clock at the scenario's start and seeds every entry there (history.at_start)."""
    seeded = {"existingNodes": [{"nodePool": "default", "instanceType": "Standard_D2s_v3"}]}
    steps = [{"advance": "59s"}]
    assert enginemod.places_clock(SimpleNamespace(given=seeded, manifests=[], step_manifests=[], steps=steps))
    assert not enginemod.places_clock(SimpleNamespace(given=seeded, manifests=[], step_manifests=[], steps=[]))
    assert not enginemod.places_clock(SimpleNamespace(given={}, manifests=[], step_manifests=[], steps=steps))
    assert enginemod.places_clock(SimpleNamespace(given={}, manifests=[], step_manifests=[], steps=[{"advance": "1h"}]))


def test_a_settles_scenario_time_leaves_the_nodepools_conditions_out():
    """_scene: a NodePool's readiness flapping after the seeding restores its disruption is no scenario time."""
    fp = (("claims",), ("nodes",), ("pods",), (("default", (("Ready", "True"),)),), ("vms",))
    flapped = fp[:3] + ((("default", (("Ready", "Unknown"),)),),) + fp[4:]
    assert enginemod._scene(fp) == enginemod._scene(flapped)
    assert enginemod._scene(fp) != enginemod._scene((("claims", "another"),) + fp[1:])


def test_a_crash_loop_names_each_exit_and_its_last_log_lines():
    from harness.model.kube.crashloop import CrashLoop
    loop = CrashLoop()
    for at in (102.0, 104.0, 116.0):
        loop.exited(at, "the controller exited (code 2)", False, "panic: boom\ngoroutine 1 [running]:")
    text = enginemod.crash_loop_text(loop.looping(3), 100.0)
    assert text.startswith("the Karpenter controller is in a crash loop: it exited 3 times by itself")
    assert "its next start would wait 20s" in text
    assert "exit 2 at +4.0s: the controller exited (code 2), restarted at +14.0s; last log lines:\n    panic: boom" in text


def test_a_node_seeded_not_ready_is_played_unless_it_is_still_in_flight():
    """The stand-ins hold an initialized node not Ready for good (cluster/existing.py not_ready), so node repair
    can be judged on the real controller; one still in flight is released Ready when Karpenter launches."""
    engine = RealEngine.__new__(RealEngine)
    engine._moves_clock = lambda profile=None: True
    down = {"nodePool": "web", "instanceType": "Standard_D2s_v3", "ready": False}
    assert engine._scenario_skip(_sc({"existingNodes": [down]})) is None
    assert engine._scenario_skip(_sc({"existingNodes": [{**down, "ready": "Unknown"}]})) is None
    why = engine._scenario_skip(_sc({"existingNodes": [{**down, "initialized": False}]}))
    assert why.startswith("given.existingNodes[0].ready: a Karpenter node seeded not Ready and still in flight")
