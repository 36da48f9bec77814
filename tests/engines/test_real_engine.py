"""Pure parts of the real engine: skips, selectors, the loopback evidence from the controller log."""
from types import SimpleNamespace

from harness.runner.engines.real.engine import RealEngine, _default_selector, log_hosts


def _sc(given, manifests=(), steps=()):
    obj = lambda o: SimpleNamespace(obj=o)      # noqa: E731 - a Manifest's shape
    return SimpleNamespace(given=given, manifests=[obj(m) for m in manifests],
                           step_manifests=[[obj(m) for m in ms] for ms in steps])


def test_knobs_and_a_foreign_kubernetes_version_are_skipped_with_the_reason():
    cluster = SimpleNamespace(server_version="v1.36.3")
    skip_reason = RealEngine().skip_reason
    assert "--profile vX.Y.Z" in skip_reason(_sc({"knobs": {"provider": {}}}), cluster)
    assert "v1.36.3" in skip_reason(_sc({"cluster": {"kubernetesVersion": "1.33.0"}}), cluster)
    assert skip_reason(_sc({"cluster": {"kubernetesVersion": "1.36.0"}}), cluster) is None
    assert skip_reason(_sc({}), cluster) is None
    assert "SIG access-token server" in skip_reason(_sc({"cluster": {"useSIG": True}}), cluster)


def test_a_deployment_without_selector_gets_its_template_labels():
    dep = {"metadata": {"name": "web"}, "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}
    _default_selector(dep)
    assert dep["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    bare = {"metadata": {"name": "x"}, "spec": {"template": {"spec": {}}}}
    _default_selector(bare)
    assert bare["spec"]["selector"]["matchLabels"] == bare["spec"]["template"]["metadata"]["labels"]
    kept = {"metadata": {"name": "y"}, "spec": {"selector": {"matchLabels": {"a": "b"}},
                                               "template": {"metadata": {"labels": {"a": "b", "c": "d"}}}}}
    _default_selector(kept)
    assert kept["spec"]["selector"] == {"matchLabels": {"a": "b"}}


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

    from harness.runner.scenario import Scenario

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
    from harness.backends.controller import ControllerBinary
    engine = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.14.0", "cache"))
    assert engine._release_mismatch("upstream") is None
    assert "label policy" in engine._release_mismatch("before-0006")
    assert "--provider-ref v1.6.2" in engine._release_mismatch("v1.6.2")
    mid = RealEngine(controller=ControllerBinary(tmp_path / "controller", "v1.13.1-7-g5c2fa10", "git:5c2fa10"))
    assert mid._release_mismatch("upstream") is None


def test_a_scheduled_budget_is_skipped_the_simulated_clock_is_not_the_wall_clock():
    """Budget.IsActive reads the controller's clock (core v1.14.0 pkg/apis/v1/nodepool.go): a schedule
    written for the simulated clock's start (2026-01-01 00:00 UTC) means nothing on the wall clock."""
    cluster = SimpleNamespace(server_version="v1.36.3")
    pool = {"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "0", "schedule": "0 0 * * *", "duration": "8h"}]}}}
    plain = {"kind": "NodePool", "spec": {"disruption": {"budgets": [{"nodes": "10%"}]}}}
    skip_reason = RealEngine().skip_reason
    assert "wall clock" in skip_reason(_sc({}, [pool]), cluster)
    assert "wall clock" in skip_reason(_sc({}, [plain], [[pool]]), cluster)
    assert skip_reason(_sc({}, [plain]), cluster) is None


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


def test_a_job_or_cronjob_is_skipped_their_pods_complete_on_the_simulated_clock():
    """harness/loop/controllers/jobs.py runs a Job's pods for their run-duration and CronJob schedules on the
    simulated clock; the real cluster's pods run until deleted."""
    cluster = SimpleNamespace(server_version="v1.36.3")
    skip_reason = RealEngine().skip_reason
    job = {"kind": "Job", "metadata": {"name": "reindex"}}
    cron = {"kind": "CronJob", "metadata": {"name": "nightly"}}
    assert "Job/CronJob reindex" in skip_reason(_sc({}, [job]), cluster)
    assert "Job/CronJob nightly" in skip_reason(_sc({}, [], [[cron]]), cluster)
