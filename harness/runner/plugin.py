"""The pytest plugin: `pytest scenarios/` collects one item per scenario x profile x backend.

Registered through the `pytest11` entry point (and the repository's root conftest.py), so it is
loaded into every pytest process of an environment the package is installed in; it must cost such a
process nothing and never clash with another plugin. Hence every option carries the `--harness-`
prefix (a bare `--profile` clashes with pytest-profiling, `--keep-cluster` with pytest-kind), and
nothing beyond pytest is imported until a scenario file is collected or a harness option is used.

Item ids are `<file>::<scenario>[<profile>-<backend>]`, scenario labels become markers,
`--harness-profile` and `--harness-backend` select, a failure prints a compact expectation diff (a
plain string, so it reads the same serially and under xdist), and bad scenario files fail collection
with `file:line: reason`.
"""
from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from harness.scenario.notices import HarnessWarning
from harness.scenario.selection import SUFFIX, no_scenario, profiles_for, split_profiles, unknown_profile

if TYPE_CHECKING:
    from harness.scenario.load import Scenario


def pytest_addoption(parser):
    group = parser.getgroup("harness", "Karpenter-on-Azure scenarios")
    group.addoption("--harness-profile", action="append", default=[], metavar="NAME", dest="harness_profile",
                    help="run scenarios only under these label profiles (repeatable); default: each scenario's own list")
    group.addoption("--harness-backend", action="append", default=[], metavar="NAME", dest="harness_backend",
                    help="cluster backend(s): embedded (default), local, container, kind (repeatable)")
    group.addoption("--harness-engine", default="simulated", choices=["simulated", "real"], dest="harness_engine",
                    help="simulated (default): the harness's own loop; real: the Karpenter-on-Azure controller "
                         "(built by `python -m harness.backends build --controller`) on the local backend")
    group.addoption("--harness-conformance", default=None, metavar="DIR", dest="harness_conformance",
                    help="with --harness-engine real: also run each scenario on the simulated engine and write the "
                         "conformance report DIR/conformance.{md,json} (harness/judge/conformance.py)")
    group.addoption("--harness-real-subset", action="store_true", default=False, dest="harness_real_subset",
                    help="with --harness-engine real: only the small representative subset "
                         "(harness/data/real-engine.yaml ci_subset), for CI")
    group.addoption("--harness-real-timing", default=None, choices=["fast", "upstream"], dest="harness_real_timing",
                    help="with --harness-engine real: fast (the default): a disruption pass on request, two of core's waits divided by "
                         "ten; upstream runs the release as is (harness/data/controller-timing.yaml; "
                         "also KARPENTER_CONTROLLER_TIMING)")
    group.addoption("--harness-provision-mode", default=None, metavar="MODE", dest="harness_provision_mode",
                    help="the provider's PROVISION_MODE for every scenario whose given.cluster names none, on both "
                         "engines (harness/model/upstream/provisionmodes.py; also HARNESS_PROVISION_MODE)")
    group.addoption("--harness-provider-git", default=None, metavar="DIR", dest="harness_provider_git",
                    help="with --harness-engine real: a karpenter-provider-azure clone with its tags, for "
                         "--harness-provider-version (also KARPENTER_PROVIDER_GIT)")
    group.addoption("--harness-provider-version", default=None, metavar="REF", dest="harness_provider_version",
                    help="with --harness-engine real: the controller built from this release tag or commit of "
                         "--harness-provider-git (cached per commit, with its own CRDs); a release tag also "
                         "selects its profile unless --harness-profile is given")
    group.addoption("--harness-core-version", default=None, metavar="VERSION", dest="harness_core_version",
                    help="with --harness-engine real: build the provider against this sigs.k8s.io/karpenter "
                         "(a go.mod replace; where it compiles; also KARPENTER_CORE_VERSION)")
    group.addoption("--harness-keep-cluster", action="store_true", default=False, dest="harness_keep_cluster",
                    help="leave real-backend clusters running after the session (debugging)")
    group.addoption("--harness-report", default=None, metavar="DIR", dest="harness_report",
                    help="write every scenario run as a self-contained HTML page to DIR, with an index "
                         "(harness/report/runpage.py; docs/report.md)")
    group.addoption("--harness-trace", action="store_true", default=False, dest="harness_trace",
                    help="append the loop's event trace to every scenario failure")
    group.addoption("--harness-shard", default=None, metavar="K/N", dest="harness_shard",
                    help="run only shard K of N (0-based) of the collected items, for splitting the matrix "
                         "across machines: balanced by the measured durations in "
                         "harness/data/scenario-durations.json; stable across runs")
    group.addoption("--harness-record-durations", default=None, metavar="FILE", dest="harness_record_durations",
                    help="write each passed or failed item's call duration (seconds) to FILE as JSON "
                         "(scripts/refresh-durations.sh uses it)")


# The spellings before the `--harness-` prefix. None is registered (a registered name can clash with
# another plugin's option, which fails every pytest run of the environment). When no other plugin owns
# one, it still works as a deprecated alias, except the two whose owners are known: there the meaning
# of a command line would change with what else is installed, so it is refused with the new name.
OLD_SPELLINGS = {
    "--backend": "--harness-backend",
    "--engine": "--harness-engine",
    "--real-subset": "--harness-real-subset",
    "--scenario-trace": "--harness-trace",
    "--shard": "--harness-shard",
    "--record-durations": "--harness-record-durations",
}
REFUSED_SPELLINGS = {"--profile": ("--harness-profile", "pytest-profiling"),
                     "--keep-cluster": ("--harness-keep-cluster", "pytest-kind")}


def _owned_elsewhere(parser, flag: str) -> bool:
    """Whether another plugin registered `flag` (the parser knows it)."""
    try:
        _, unknown = parser.parse_known_and_unknown_args([flag])
    except (pytest.UsageError, SystemExit):      # known, and wants a value: someone owns it
        return True
    return flag not in unknown


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Old option spellings no other plugin owns: aliases with a deprecation warning, or (for the two
    that clash with known plugins) a usage error naming the new spelling. Runs only where the plugin is
    loaded early (the pytest11 entry point, `-p harness.runner.plugin`); through conftest.py alone, an
    old spelling is an unrecognized argument."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        flag, eq, value = arg.partition("=")
        if flag not in OLD_SPELLINGS and flag not in REFUSED_SPELLINGS:
            continue
        if _owned_elsewhere(parser, flag):
            continue
        if flag in REFUSED_SPELLINGS:
            new, clash = REFUSED_SPELLINGS[flag]
            raise pytest.UsageError(f"{flag} is now {new} (the old name clashes with {clash}'s option)")
        args[i] = OLD_SPELLINGS[flag] + eq + value
        early_config.issue_config_time_warning(
            pytest.PytestDeprecationWarning(f"{flag} is deprecated: use {OLD_SPELLINGS[flag]}"), stacklevel=2)


# profiles declared by the scenarios collected this session (for "--harness-profile X selects nothing")
DECLARED = pytest.StashKey[dict]()
# the session's shared clusters (a harness.backends.lifetime.ClusterCache, made on first use), closed at
# sessionfinish
CLUSTERS = pytest.StashKey[object]()


def pytest_configure(config):
    config.addinivalue_line("markers", "scenario: a declarative scenario (harness)")
    config.stash[DECLARED] = {"scenarios": 0, "profiles": set()}
    config.pluginmanager.register(ScenarioReporting(config), "harness-scenario-reporting")
    if config.option.harness_real_timing:       # read where the controller is found (xdist workers inherit it)
        os.environ["KARPENTER_CONTROLLER_TIMING"] = config.option.harness_real_timing
    if config.option.harness_provision_mode:    # read by cluster_settings on both engines (xdist workers inherit it)
        from harness.model.upstream.provisionmodes import MODE_ENV, PROVISION_MODES   # only when asked: a pytest
        mode = config.option.harness_provision_mode                                  # run without the harness
        if mode not in PROVISION_MODES:                                               # imports no model
            raise pytest.UsageError(f"--harness-provision-mode: {mode!r} is not a provision mode "
                                    f"({', '.join(PROVISION_MODES)})")
        os.environ[MODE_ENV] = mode
    choose_provider(config.option)
    if config.option.harness_report and not hasattr(config, "workerinput"):   # before any worker writes a run
        from harness.report.runpage import clear
        clear(Path(config.option.harness_report))
    check_selection_options(config.option.harness_profile, config.option.harness_backend, config)
    if config.option.harness_engine == "real" and getattr(config.option, "maxschedchunk", "") is None:
        # runs handed out longest first (real_longest_first) one at a time: xdist's load scheduling
        # otherwise sends each worker a consecutive quarter of its share up front, and the first worker
        # took the sixteen longest runs of the library (20 min 45 s under -n 4, one worker alone for the
        # last 5 minutes)
        config.option.maxschedchunk = 1


def choose_provider(option) -> None:
    """--harness-provider-git/-version/--harness-core-version as the environment the controller is found
    by (harness/backends/binaries/controller.py; xdist workers inherit it). A release tag with a profile of its
    own (harness/data/profiles) runs under that profile when no --harness-profile is given: the real
    engine skips a profile of another release than its controller's."""
    if not (option.harness_provider_git or option.harness_core_version or option.harness_provider_version):
        return                                   # (nothing imported: a run without them stays light)
    from harness.backends.binaries.controller import ENV_CORE, ENV_GIT, ENV_REF
    if option.harness_provider_git:
        os.environ[ENV_GIT] = option.harness_provider_git
    if option.harness_core_version:
        os.environ[ENV_CORE] = option.harness_core_version
    ref = option.harness_provider_version
    if not ref:
        return
    if not os.environ.get(ENV_GIT):
        raise pytest.UsageError(f"--harness-provider-version {ref}: needs --harness-provider-git DIR (or {ENV_GIT}), "
                                f"a karpenter-provider-azure clone with its tags")
    os.environ[ENV_REF] = ref
    os.environ.setdefault("HARNESS_BUILD_CONTROLLER", "1")     # the release asked for is built on first use
    from harness.model.upstream import releases
    if not option.harness_profile and ref in releases.release_profiles():
        option.harness_profile = [ref]


def _clusters(config):
    """The session's ClusterCache, made when a scenario first needs a cluster."""
    cache = config.stash.get(CLUSTERS, None)
    if cache is None:
        from harness.backends.lifetime import ClusterCache
        cache = config.stash[CLUSTERS] = ClusterCache()
    return cache


def check_selection_options(profiles: list[str], backends: list[str], config=None) -> None:
    """An option value that can never select a scenario is a usage error, said before collecting
    (otherwise pytest exits 5, "no tests ran", with no reason)."""
    if not profiles and not backends:
        return
    from harness.backends.registry import BACKEND_NAMES
    from harness.model.upstream.profile import ProfileError, available_profiles
    from harness.scenario.selection import split_profiles, version_notices
    for p in profiles:
        try:
            split_profiles([p])
        except ProfileError:
            raise pytest.UsageError(unknown_profile(p, available_profiles(), "--harness-profile")) from None
    for text in version_notices(profiles):     # a version the harness has no profile for: say so, loudly
        if config is not None:
            config.issue_config_time_warning(HarnessWarning(text), stacklevel=2)
        else:
            warnings.warn(text, HarnessWarning, stacklevel=2)
    for b in backends:
        if b not in BACKEND_NAMES:
            raise pytest.UsageError(f"--harness-backend {b}: unknown backend; known backends: {', '.join(BACKEND_NAMES)}")


def _register_tag(config, tag: str) -> None:
    """Scenario labels become markers; each is registered as its file is collected, so
    --strict-markers accepts it (pytest re-reads the `markers` ini on an unknown name)."""
    if f"{tag}: scenario label" not in config.getini("markers"):
        config.addinivalue_line("markers", f"{tag}: scenario label")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Real-engine runs under `--dist load` (xdist's default with -n): longest first, and a worker's next
    short run one its kept controller serves (harness/runner/engines/real/controller/affinity.py)."""
    if config.getoption("harness_engine", "simulated") != "real" or config.getvalue("dist") != "load":
        return None
    from harness.runner.engines.real.controller.affinity import AffinityScheduling
    return AffinityScheduling(config, log)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_auto_num_workers(config):
    """`-n auto` on the real engine: `xdist_workers_per_core` workers per core (harness/data/real-engine.yaml),
    unless PYTEST_XDIST_AUTO_NUM_WORKERS says otherwise; the simulated engine keeps xdist's one per core."""
    if config.getoption("harness_engine", "simulated") != "real" or os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    from harness.runner.engines.real.controller.settings import engine_data
    return max(1, len(os.sched_getaffinity(0)) * int(engine_data()["xdist_workers_per_core"]))


def pytest_collection_modifyitems(config, items):
    declared = config.stash[DECLARED]
    wanted = config.option.harness_profile
    if wanted and declared["scenarios"] and not split_profiles(wanted)[1] and not declared["profiles"] & set(wanted):
        raise pytest.UsageError(no_scenario(wanted, declared["scenarios"], declared["profiles"],
                                            flag="--harness-profile"))
    group_by_profile(items)
    if config.option.harness_engine == "real":
        real_longest_first(items, config)
    shard = config.option.harness_shard
    if not shard:
        return
    try:
        k, n = (int(x) for x in shard.split("/"))
        assert 0 <= k < n
    except (ValueError, AssertionError):
        raise pytest.UsageError(f"--harness-shard expects K/N with 0 <= K < N, got {shard!r}") from None
    from harness.runner.shards import assign, load_durations
    shards = assign([item.nodeid for item in items], n, load_durations())
    keep, drop = [], []
    for item in items:
        (keep if shards[item.nodeid] == k else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session):
    """With scenario items to run, the objects alive now (modules, the parsed library, and for the
    simulated engine the Azure SDK's clients) are frozen out of the garbage collector's full
    collections (harness/heap.py); a session without scenario items to run (--collect-only
    included) is left as it is."""
    if session.config.option.collectonly:
        return
    engines = {item.engine for item in session.items if isinstance(item, ScenarioItem)}
    if "simulated" in engines:
        from harness.runner.engines.simulated import prepare_process
        prepare_process()
    elif engines:
        from harness.heap import freeze_long_lived
        freeze_long_lived()


def group_by_profile(items: list) -> None:
    """On a real API server, a profile change re-applies the CRDs and waits until their rules
    judge (~0.1-0.2 s); scenario runs are independent (reset() between them), so the real-backend
    scenario items are ordered by profile within the slots they already hold (a stable sort: all
    other items, and the order within a profile, stay as collected)."""
    slots = [i for i, it in enumerate(items)
             if isinstance(it, ScenarioItem) and it.backend != "embedded" and it.engine == "simulated"]
    for i, it in zip(slots, sorted((items[i] for i in slots), key=lambda it: (it.backend, it.profile))):
        items[i] = it


def real_longest_first(items: list, config) -> None:
    """The real-engine items, in the slots they hold, longest first by the conformance report's seconds
    (harness/runner/shards.py longest_first): a library run on the real engine is as long as its longest
    worker, and a run that waits out a 3-minute timer handed out last ends the session minutes after
    the others."""
    from harness.runner.shards import longest_first, real_seconds
    slots = [i for i, it in enumerate(items) if isinstance(it, ScenarioItem) and it.engine == "real"]
    if len(slots) < 2:
        return
    seconds = real_seconds(config.rootpath / "docs" / "conformance" / "conformance.json")
    if not seconds:
        return
    real = [items[i] for i in slots]
    keys = [(_relative(config, it.path), it.scenario.name, it.profile) for it in real]
    for i, j in zip(slots, longest_first(keys, {k: seconds[k] for k in keys if k in seconds})):
        items[i] = real[j]


def pytest_collect_file(parent, file_path):
    if file_path.name.endswith(SUFFIX):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


def _item_backend(real: bool, backend: str) -> str:
    """The backend part of an item's name: "real" for the real engine on `local`, "real-kind" on kind."""
    return backend if not real else ("real" if backend == "local" else f"real-{backend}")


class ScenarioFile(pytest.File):
    def collect(self):
        from harness.runner.engines import engine_backends
        from harness.scenario.load import load_scenarios
        scenarios = load_scenarios(self.path)
        opts = self.config.option
        real = opts.harness_engine == "real"
        backends = engine_backends(opts.harness_engine, opts.harness_backend or [])
        subset = _real_subset() if real and opts.harness_real_subset else None
        declared = self.config.stash[DECLARED]
        for sc in scenarios:
            declared["scenarios"] += 1
            declared["profiles"].update(sc.profiles)
            if subset is not None and sc.name not in subset:
                continue
            profiles = profiles_for(sc.profiles, opts.harness_profile)    # release versions / `all` add profiles
            for profile in profiles:
                for backend in backends:
                    item = ScenarioItem.from_parent(self, name=f"{sc.name}[{profile}-{_item_backend(real, backend)}]",
                                                    scenario=sc, profile=profile, backend=backend,
                                                    engine=opts.harness_engine)
                    item.add_marker(pytest.mark.scenario)
                    for tag in sc.tags:
                        _register_tag(self.config, tag)
                        item.add_marker(getattr(pytest.mark, tag))
                    if backend not in sc.backends:
                        item.add_marker(pytest.mark.skip(reason=f"scenario runs on {', '.join(sc.backends)} only"))
                    if (reason := sc.xfail_reason(profile, real)) is not None:
                        # only a failed expectation is the declared disagreement; a run that raised is an error
                        item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=ScenarioFailure))
                    if sc.given.get("serial"):
                        item.add_marker(pytest.mark.xdist_group(f"serial-{backend}"))
                    yield item

    def repr_failure(self, excinfo):
        from harness.scenario.yamlsource import SourceError
        if isinstance(excinfo.value, SourceError):
            return excinfo.value.render()
        return super().repr_failure(excinfo)


class ScenarioFailure(Exception):
    pass


class ScenarioError(Exception):
    """The run raised (a bug of the harness included): the item's error verdict, rendered as the
    scenario's file:line and the exception (harness.runner.engines.base.errored)."""


def _real_subset() -> set[str]:
    from harness.runner.engines.real.controller.settings import engine_data
    return set(engine_data()["ci_subset"])


class ScenarioItem(pytest.Item):
    def __init__(self, *, scenario: Scenario, profile: str, backend: str, engine: str = "simulated", **kw):
        super().__init__(**kw)
        self.scenario, self.profile, self.backend, self.engine = scenario, profile, backend, engine
        self.outcome = None
        from harness.model.upstream.releases import modeled_text
        self.user_properties += [("profile", profile), ("release", modeled_text(profile)), ("backend", backend),
                                 ("seed", scenario.seed)]

    def runtest(self):
        from harness.runner.engines import get_engine
        from harness.judge.explore import run_scenario
        from harness.scenario.notices import emit
        engine = get_engine(self.engine)
        if self.engine == "simulated":
            emit(self.scenario.warnings)        # unmodeled fields, synthesized SKUs (HarnessWarning)
        else:
            ok, why = engine.available(self.backend)
            if not ok:
                pytest.skip(why)
        # the real engine: the control plane of the Kubernetes version the scenario names (started once
        # per session and version, closed with the session's other clusters; built first if need be)
        from harness.backends.binaries.controlplane import BinariesError
        try:
            options = engine.cluster_options_for(self.scenario, self.profile, self.backend)
        except BinariesError as e:          # that version's build failed: this item's ERROR, said plainly
            raise ScenarioError(f"{self.scenario.file}:{self.scenario.line}: {e}") from None
        cluster = _cluster(self.config, self.backend, options)
        # explored under several seeds when the scenario declares an outcome set (harness/judge/explore.py);
        # a run that raises is an ERROR verdict (base.errored)
        pages = self.config.option.harness_report
        from harness.loop.scheduling.why import EVERY_PENDING
        self.outcome = o = run_scenario(engine, self.scenario, self.profile, cluster,
                                        why=[EVERY_PENDING] if pages else None)
        if pages:                 # each process writes its runs; the controller writes the pages (sessionfinish)
            from harness.report.runpage import write_run
            write_run(Path(pages), o)
        report = self.config.getoption("--harness-conformance")
        if report and self.engine == "real":          # an errored real run is in the report too (ERROR)
            from harness.judge import conformance
            conformance.write_entry(Path(report), conformance.judge(self.scenario, self.profile, o,
                                                                    cluster.server_version))
        if o.error is not None:
            raise ScenarioError(o.error)
        if o.skipped:
            pytest.skip(f"{self.engine} engine: {o.skipped}")
        r = o.result
        for text in o.final.core_notices:         # core behaviours answered as v1.14.0's: say so, by name
            warnings.warn_explicit(HarnessWarning(text), HarnessWarning, str(self.scenario.file), self.scenario.line)
        if r.core_notices:
            self.user_properties.append(("coreNotices", "; ".join(r.core_notices)))
        if o.final.assumed:          # timings the run assumed (harness/loop/assumed.py): said, not warned per run
            self.user_properties.append(("assumedTimings", "; ".join(o.final.assumed)))
        if self.engine == "real":
            knobs = (r.release or {}).get("knobs")
            if knobs:         # the release replaying given.knobs answered, not the profile's (knobrelease.py)
                self.user_properties.append(("knobRelease", knobs["reason"]))
                warnings.warn_explicit(HarnessWarning(knobs["reason"]), HarnessWarning, str(self.scenario.file),
                                       self.scenario.line)
            runs = next((x.split()[2] for x in r.trace if x.startswith("[controller] run ")), "")
            self.user_properties += [("engine", "real"), ("controller", o.version), ("seconds", round(o.seconds, 2)),
                                     ("controllerRun", runs),     # its controller's nth run: > 1 when kept (keeper.py)
                                     ("notApplicable", "; ".join(n.render() for n in o.not_applicable))]
        else:
            self.user_properties += [("nodes", len(r.nodes)), ("iterations", r.iterations),
                                     ("seconds", round(o.seconds, 4))]
        if o.mismatches:
            raise ScenarioFailure()

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ScenarioFailure) and self.outcome is not None:
            from harness.report.console import failure_text
            return failure_text(self.outcome, trace=self.config.option.harness_trace)
        if isinstance(excinfo.value, ScenarioError):
            return f"ERROR {excinfo.value}"
        from harness.scenario.yamlsource import SourceError
        if isinstance(excinfo.value, SourceError):
            return excinfo.value.render()
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, self.scenario.line - 1, f"scenario: {self.scenario.name} [{self.profile}/{self.backend}]"


def _cluster(config, backend: str, engine_options: dict):
    """One cluster per backend (and engine's needs) per session (per xdist worker), reset between
    scenarios."""
    from harness.backends.registry import shared_cluster
    # --harness-keep-cluster: a real backend's cluster is started with keep=True, which closing the
    # cache leaves running (the embedded backend has nothing to keep)
    options = {"keep": True} if config.option.harness_keep_cluster and backend != "embedded" else {}
    try:
        return shared_cluster(backend, cache=_clusters(config), **engine_options, **options)
    except RuntimeError as e:
        if type(e) is not RuntimeError:       # a start failure (StartError, ...) is an error, not a skip
            raise
        pytest.skip(str(e))                   # "backend 'local' unavailable: <why>"


# -- where a result points: JUnit file/line, GitHub annotations ---------------------------------------
def _relative(config, path) -> str:
    try:
        return str(Path(path).resolve().relative_to(config.rootpath))
    except ValueError:
        return str(path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each scenario report carries its file and line (`harness_location`) and, on failure, one
    (file, line, message) per unmet expectation (`harness_annotations`): plain data, so it travels
    from xdist workers to the controller that writes the JUnit XML and the annotations."""
    outcome = yield
    report = outcome.get_result()
    if not isinstance(item, ScenarioItem):
        return
    sc = item.scenario
    file = _relative(item.config, sc.file)
    report.harness_location = [file, getattr(item, "harness_line", sc.line)]
    if report.when != "call" or not report.failed:
        return
    if call.excinfo is not None and isinstance(call.excinfo.value, ScenarioFailure) and item.outcome is not None:
        marks = [[file, m.line or sc.line, m.render()] for m in item.outcome.mismatches]
        item.harness_line = marks[0][1] if marks else sc.line     # the testcase points at the first
    else:                                  # an XPASS(strict), an error: the scenario's own line
        marks = [[file, sc.line, str(getattr(report, "longreprtext", "") or "failed").splitlines()[-1]]]
    report.harness_annotations = [[f, ln, f"{sc.name} [{item.profile}/{item.backend}]: {msg}"] for f, ln, msg in marks]


def github_annotation(file: str, line: int, message: str, title: str = "scenario failed") -> str:
    """A GitHub Actions workflow command that marks `file:line` in the pull request's diff view
    (https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions#setting-an-error-message)."""
    def esc(text: str, prop: bool = False) -> str:
        text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return text.replace(":", "%3A").replace(",", "%2C") if prop else text
    return f"::error file={esc(file, True)},line={int(line)},title={esc(title, True)}::{esc(message)}"


class ScenarioReporting:
    """Registered per session in pytest_configure, so the hooks below know the config without a
    module global. They run on the process that writes the reports (the xdist controller)."""

    def __init__(self, config):
        self.config = config
        self.github = os.environ.get("GITHUB_ACTIONS") == "true"
        self.durations: dict[str, float] = {}

    def pytest_sessionfinish(self, session, exitstatus):
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and not hasattr(self.config, "workerinput"):
            self._explain_empty_selection(session)
        path = self.config.option.harness_record_durations
        if path and self.durations and not hasattr(self.config, "workerinput"):
            from harness.runner.shards import write_durations
            write_durations(path, self.durations)
        report = self.config.getoption("--harness-conformance")
        if report and not hasattr(self.config, "workerinput"):     # after every worker wrote its entries
            from harness.judge.conformance import assemble
            made = assemble(Path(report))
            if made:
                print(f"\nconformance report: {made[0]} {made[1]}", flush=True)
        pages = self.config.option.harness_report
        if pages and not hasattr(self.config, "workerinput"):      # after every worker wrote its runs
            from harness.report.runpage import write_site
            conformance = Path(report) / "conformance.json" if report else None
            index = write_site(Path(pages), conformance)
            if index is not None:
                print(f"\nrun report: {index}", flush=True)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report):
        """`file` and `line` (1-based) on the scenario's JUnit <testcase>: set on the element JUnit
        XML's own hook builds at teardown (xunit2 filters attributes set before that); under GitHub
        Actions, one annotation per unmet expectation."""
        if report.when == "call":
            self.durations[report.nodeid] = report.duration
        location = getattr(report, "harness_location", None)
        reporter = None
        if location is not None and report.when == "teardown":
            from _pytest.junitxml import xml_key
            xml = self.config.stash.get(xml_key, None)
            if xml is not None:
                reporter = xml.node_reporter(report)     # the one its teardown finalizes
        if location is not None and self.github and report.when == "call":
            # before the terminal reporter writes this item's progress letter
            for file, line, message in getattr(report, "harness_annotations", None) or []:
                self._emit(github_annotation(file, line, message))
        result = yield
        if reporter is not None:
            element = reporter.to_xml()        # after finalize: the element that is written out
            element.set("file", str(location[0]))
            element.set("line", str(location[1]))
        return result

    def _explain_empty_selection(self, session) -> None:
        """Under xdist the workers collect, and their usage error is not shown: the controller
        says why `--harness-profile` selected nothing, and the run exits as a usage error (4), not 5."""
        from pathlib import Path

        from harness.scenario.load import find_scenario_files, load_scenarios
        from harness.scenario.yamlsource import SourceError
        wanted = self.config.option.harness_profile
        if not wanted or split_profiles(wanted)[1]:
            return
        paths = [a.split("::")[0] for a in self.config.args if Path(a.split("::")[0]).exists()]
        files = [f for f in find_scenario_files(paths) if f.name.endswith(SUFFIX)]
        scenarios = []
        for f in files:
            try:
                scenarios += load_scenarios(f)
            except SourceError:
                continue
        declared = {p for sc in scenarios for p in sc.profiles}
        if scenarios and not declared & set(wanted):
            message = no_scenario(wanted, len(scenarios), declared, flag="--harness-profile")
            tr = self.config.pluginmanager.get_plugin("terminalreporter")
            if tr is not None:
                tr.write_line(f"ERROR: {message}", red=True)
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def _emit(self, command: str) -> None:
        """A workflow command must start its own line: the terminal reporter breaks the progress dots."""
        tr = self.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write("\n")                      # ends a line of progress letters, if one is open
            tr.write_line(command)
        else:
            print(command, flush=True)

    def pytest_collectreport(self, report):
        """A scenario file that does not load is annotated at its `file:line` too."""
        if not (self.github and report.failed and str(report.nodeid).endswith(SUFFIX)):
            return
        m = re.match(r"(?P<file>[^:\n]+):(?P<line>\d+): (?P<reason>.*)", str(report.longrepr))
        if m:
            self._emit(github_annotation(_relative(self.config, m["file"]), int(m["line"]), m["reason"],
                                         title="bad scenario file"))


def pytest_sessionfinish(session, exitstatus):
    cache = session.config.stash.get(CLUSTERS, None)
    if cache is not None:
        cache.close()
