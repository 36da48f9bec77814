"""Pure parts of the real engine: skips, selectors, the loopback evidence from the controller log."""
from types import SimpleNamespace

from harness.runner.engines.real.engine import RealEngine, _default_selector, log_hosts


def _sc(given):
    return SimpleNamespace(given=given)


def test_knobs_and_a_foreign_kubernetes_version_are_skipped_with_the_reason():
    cluster = SimpleNamespace(server_version="v1.36.3")
    skip_reason = RealEngine().skip_reason
    assert "older provider version" in skip_reason(_sc({"knobs": {"provider": {}}}), cluster)
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
