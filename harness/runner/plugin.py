"""The pytest plugin: `pytest scenarios/` collects one item per scenario x profile x backend.

Registered through the `pytest11` entry point (and the repository's root conftest.py). Item ids are
`<file>::<scenario>[<profile>-<backend>]`, scenario labels become markers, `--profile` and
`--backend` select, a failure prints a compact expectation diff (a plain string, so it reads the
same serially and under xdist), and bad scenario files fail collection with `file:line: reason`.
"""
from __future__ import annotations

import pytest

from harness.runner.scenario import SUFFIX, Scenario, load_scenarios
from harness.runner.yamlsource import SourceError


def pytest_addoption(parser):
    group = parser.getgroup("harness", "Karpenter-on-Azure scenarios")
    group.addoption("--profile", action="append", default=[], metavar="NAME",
                    help="run scenarios only under these label profiles (repeatable); default: each scenario's own list")
    group.addoption("--backend", action="append", default=[], metavar="NAME",
                    help="cluster backend(s): embedded (default), local, container (repeatable)")
    group.addoption("--engine", default="simulated", choices=["simulated", "real"],
                    help="simulated (default): the harness's own loop; real: the Karpenter-on-Azure controller "
                         "(built by `python -m harness.backends build --controller`) on the local backend")
    group.addoption("--real-subset", action="store_true", default=False,
                    help="with --engine real: only the small representative subset "
                         "(harness/data/real-engine.yaml ci_subset), for CI")
    group.addoption("--keep-cluster", action="store_true", default=False,
                    help="leave real-backend clusters running after the session (debugging)")
    group.addoption("--scenario-trace", action="store_true", default=False,
                    help="append the loop's event trace to every scenario failure")
    group.addoption("--shard", default=None, metavar="K/N",
                    help="run only shard K of N (0-based) of the collected scenario items, for "
                         "splitting the matrix across machines; stable across runs")


def pytest_configure(config):
    config.addinivalue_line("markers", "scenario: a declarative scenario (harness)")


def _register_tag(config, tag: str) -> None:
    """Scenario labels become markers; each is registered as its file is collected, so
    --strict-markers accepts it (pytest re-reads the `markers` ini on an unknown name)."""
    if f"{tag}: scenario label" not in config.getini("markers"):
        config.addinivalue_line("markers", f"{tag}: scenario label")


def pytest_collection_modifyitems(config, items):
    shard = config.getoption("--shard")
    if not shard:
        return
    try:
        k, n = (int(x) for x in shard.split("/"))
        assert 0 <= k < n
    except (ValueError, AssertionError):
        raise pytest.UsageError(f"--shard expects K/N with 0 <= K < N, got {shard!r}") from None
    import zlib
    keep, drop = [], []
    for item in items:
        (keep if zlib.crc32(item.nodeid.encode()) % n == k else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collect_file(parent, file_path):
    if file_path.name.endswith(SUFFIX):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFile(pytest.File):
    def collect(self):
        scenarios = load_scenarios(self.path)
        opts = self.config.option
        real = opts.engine == "real"
        backends = ["local"] if real else (opts.backend or ["embedded"])
        subset = _real_subset() if real and opts.real_subset else None
        for sc in scenarios:
            if subset is not None and sc.name not in subset:
                continue
            profiles = [p for p in sc.profiles if not opts.profile or p in opts.profile]
            for profile in profiles:
                for backend in backends:
                    item = ScenarioItem.from_parent(self, name=f"{sc.name}[{profile}-{'real' if real else backend}]",
                                                    scenario=sc, profile=profile, backend=backend,
                                                    engine=opts.engine)
                    item.add_marker(pytest.mark.scenario)
                    for tag in sc.tags:
                        _register_tag(self.config, tag)
                        item.add_marker(getattr(pytest.mark, tag))
                    if backend not in sc.backends:
                        item.add_marker(pytest.mark.skip(reason=f"scenario runs on {', '.join(sc.backends)} only"))
                    if profile in sc.xfail and _xfail_applies(sc.xfail[profile], real):
                        item.add_marker(pytest.mark.xfail(reason=sc.xfail[profile], strict=True))
                    if sc.given.get("serial"):
                        item.add_marker(pytest.mark.xdist_group(f"serial-{backend}"))
                    yield item

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, SourceError):
            return excinfo.value.render()
        return super().repr_failure(excinfo)


class ScenarioFailure(Exception):
    pass


def _xfail_applies(reason: str, real: bool) -> bool:
    """Which engine a declared xfail is about: `engine: real` names the real controller's
    disagreement; `model:` a gap of the simulation's model (the real controller has none of those);
    any other (e.g. `unconfirmed:`) holds on both, so the real engine passing it is an XPASS."""
    if "engine: real" in reason:
        return real
    if reason.lstrip().startswith("model:"):
        return not real
    return True


def _real_subset() -> set[str]:
    from harness.runner.real.settings import engine_data
    return set(engine_data()["ci_subset"])


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, profile: str, backend: str, engine: str = "simulated", **kw):
        super().__init__(**kw)
        self.scenario, self.profile, self.backend, self.engine = scenario, profile, backend, engine
        self.outcome = None
        self.user_properties += [("profile", profile), ("backend", backend), ("seed", scenario.seed)]

    def runtest(self):
        if self.engine == "real":
            return self._runtest_real()
        from harness.runner.engine import run
        cluster = _cluster(self.config, self.backend)
        self.outcome = run(self.scenario, self.profile, cluster)
        r = self.outcome.result
        self.user_properties += [("nodes", len(r.nodes)), ("iterations", r.iterations),
                                 ("seconds", round(self.outcome.seconds, 4))]
        if self.outcome.mismatches:
            raise ScenarioFailure()

    def _runtest_real(self):
        from harness.runner.real import session
        ok, why = session.available()
        if not ok:
            pytest.skip(why)
        self.outcome = session.run(self.scenario, self.profile,
                                   keep=bool(self.config.getoption("--keep-cluster")))
        if self.outcome.skipped:
            pytest.skip(f"real engine: {self.outcome.skipped}")
        self.user_properties += [("engine", "real"), ("controller", self.outcome.controller_version),
                                 ("seconds", round(self.outcome.seconds, 2)),
                                 ("notApplicable", "; ".join(n.render() for n in self.outcome.not_applicable))]
        if self.outcome.mismatches:
            raise ScenarioFailure()

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ScenarioFailure) and self.outcome is not None:
            from harness.runner.report import failure_text
            if self.engine == "real":
                from harness.runner.real.session import failure_text
            return failure_text(self.outcome, trace=self.config.option.scenario_trace)
        if isinstance(excinfo.value, SourceError):
            return excinfo.value.render()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.scenario.line - 1, f"scenario: {self.scenario.name} [{self.profile}/{self.backend}]"


def _cluster(config, backend: str):
    """One cluster per backend per session (per xdist worker), reset between scenarios."""
    from harness.backends.registry import shared_cluster
    # --keep-cluster: a real backend's cluster is started with keep=True, which close_shared leaves
    # running (the embedded backend has nothing to keep)
    options = {"keep": True} if config.getoption("--keep-cluster") and backend != "embedded" else {}
    try:
        return shared_cluster(backend, **options)
    except RuntimeError as e:
        if type(e) is not RuntimeError:       # a start failure (StartError, ...) is an error, not a skip
            raise
        pytest.skip(str(e))                   # "backend 'local' unavailable: <why>"


def pytest_sessionfinish(session, exitstatus):
    from harness.backends.registry import close_shared
    close_shared()
