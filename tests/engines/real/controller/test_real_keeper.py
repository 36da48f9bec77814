"""One controller kept per process across real-engine runs (harness/runner/engines/real/controller/keeper.py): the
run's fake plugged into the kept server, the controller handed back only when its run left nothing in
its memory, replaced when the next run asks for another one; and, where the real engine is built, two
library documents in a row served by one controller process."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.runner.engines.real.controller import keeper
from harness.runner.engines.real.engine import RealRun
from harness.runner.engines.real.controller.fakeside import Switch, WireTap

ROOT = Path(__file__).resolve().parents[4]


class _Answer:
    def __init__(self, status):
        self.status = status

    def handle(self, method, url, headers=None, body=None):
        return self.status, {}, b"{}"


def test_the_switch_answers_with_the_plugged_runs_fake_and_refuses_between_runs():
    switch = Switch()
    assert switch.handle("GET", "https://x/")[0] == 503
    tap = switch.plug(_Answer(200))
    assert switch.handle("GET", "https://x/", {"Host": "management.azure.com"})[0] == 200
    assert tap.hosts == {"management.azure.com"}
    second = switch.plug(_Answer(201))
    assert switch.handle("PUT", "https://x/")[0] == 201 and second is not tap


def test_refusals_count_but_a_not_found_does_not():
    assert WireTap(_Answer(404)).handle("GET", "https://x/")[0] == 404
    tap = WireTap(_Answer(404))
    tap.handle("GET", "https://x/")
    assert tap.refused == 0
    tap.state = _Answer(409)
    tap.handle("PUT", "https://x/")
    assert tap.refused == 1


class _Kept:
    def __init__(self, key, alive=True):
        self.key, self._alive, self.paused, self.closed = key, alive, False, False

    def alive(self):
        return self._alive

    def pause(self):
        self.paused = True

    def close(self):
        self.closed = True


def test_the_keeper_hands_back_a_matching_live_controller_and_closes_any_other(monkeypatch):
    monkeypatch.delenv(keeper.KEEP_ENV, raising=False)
    k = keeper.Keeper()
    a = _Kept(("a",))
    k.give_back(a, [])
    assert a.paused and not a.closed and k.kept is a
    assert k.take(("b",)) is None and a.closed and k.kept is None       # another key: replaced
    b = _Kept(("b",))
    k.give_back(b, [])
    assert k.take(("b",)) is b and not b.closed
    dead = _Kept(("c",), alive=False)
    k.kept = dead
    assert k.take(("c",)) is None and dead.closed


def test_a_run_that_left_something_behind_or_keeping_off_closes_the_controller(monkeypatch):
    k = keeper.Keeper()
    a = _Kept(("a",))
    k.give_back(a, ["the fake refused 1 requests"])
    assert a.closed and k.kept is None
    monkeypatch.setenv(keeper.KEEP_ENV, "0")
    b = _Kept(("a",))
    k.give_back(b, [])
    assert b.closed and k.kept is None


def _run(**kw):
    observer = SimpleNamespace(exited=None, deleted=set(), failures={}, node_objects=[], claims={}, live=set())
    scenario = SimpleNamespace(given={}, steps=[])
    base = dict(finished=True, steady=True, observer=observer, tap=SimpleNamespace(refused=0), scenario=scenario,
                ever_evicted=False, restricted=False, clock_moved=False, restarts=[])
    return SimpleNamespace(**{**base, **kw})


def test_leftovers_name_what_a_run_left_in_the_controllers_memory():
    assert RealRun.leftovers(_run()) == []
    assert RealRun.leftovers(_run(steady=False)) == ["the run did not finish settled"]
    assert "faults" in RealRun.leftovers(_run(scenario=SimpleNamespace(given={"faults": [{}]}, steps=[])))
    failed = _run()
    failed.observer.failures = {"default-abc": "launch failed"}
    assert RealRun.leftovers(failed) == ["NodeClaims failed"]
    # a deletion: core's termination events are deduped by their subject's name for two minutes, so a
    # controller that evicted a pod the scenario names itself may not serve a run that names it again;
    # launched NodeClaims' and Nodes', and Deployments' pods' names are random
    pod = SimpleNamespace(obj={"kind": "Pod", "metadata": {"name": "batch"}})
    scenario = SimpleNamespace(given={}, steps=[], manifests=[pod], step_manifests=[])
    gone = _run(scenario=scenario)
    gone.observer.deleted = {"default-abc"}
    events = [{"kind": "Pod", "name": "web-7d9f-x2x4q", "reason": "Evicted"},
              {"kind": "Node", "name": "aks-default-abc", "reason": "FailedDraining"}]
    assert RealRun.leftovers(gone, events) == []
    events.append({"kind": "Pod", "name": "batch", "reason": "Evicted"})
    assert RealRun.leftovers(gone, events) == [
        "core's termination events named batch, which a later run may name again (they are deduped by name for two minutes)"]
    assert "the run's events are unknown" in RealRun.leftovers(gone)[0]
    seeded = _run(scenario=SimpleNamespace(given={"existingNodes": [{}]}, steps=[], manifests=[], step_manifests=[]))
    seeded.observer.deleted = {"default-existing-0"}
    assert "default-existing-0" in RealRun.leftovers(seeded, [{"kind": "NodeClaim", "name": "default-existing-0",
                                                               "reason": "TerminationGracePeriodExpiring"}])[0]
    # a moved clock (runclock.py): the next run starts at offset 0, which this controller's timers never saw
    assert RealRun.leftovers(_run(clock_moved=True)) == ["the run moved the controller's clock"]
    node_deleted = _run(scenario=SimpleNamespace(given={}, steps=[{"delete": [{"kind": "Node", "name": "n"}]}]))
    assert RealRun.leftovers(node_deleted) == ["a node was evicted or deleted"]
    draining = _run()
    draining.observer.node_objects = [{"metadata": {"name": "n", "deletionTimestamp": "2026-01-01T00:00:00Z"}}]
    assert RealRun.leftovers(draining) == ["a deletion is under way"]
    # before provider v1.10 the SKU list is read at the first List, which may come after a `restrict` step
    # played, and kept 23 h: the next run, keyed on the catalog before the step, would meet the restriction
    assert RealRun.leftovers(_run(scenario=SimpleNamespace(given={}, steps=[{"restrict": [{}]}]))) == []  # not played
    restricted = _run(restricted=True)
    assert RealRun.leftovers(restricted) == ["a step restricted a size (the controller's SKU list may hold the restriction)"]


class _Sandbox:
    def __init__(self, answers):
        self.answers = list(answers)

    def http_get(self, port, path, timeout=2.0):
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def test_a_continued_controller_is_awaited_until_its_state_has_no_node(monkeypatch):
    monkeypatch.setattr(keeper.time, "sleep", lambda s: None)
    kept = keeper.Kept(("k",), Path("/nonexistent"), Switch())
    kept.sandbox = _Sandbox(["karpenter_cluster_state_node_count 2\n", "karpenter_cluster_state_node_count 0\n"])
    assert kept.await_empty() is None
    kept.sandbox = _Sandbox(["# no node ever tracked: the gauge is not there yet\n"])
    assert kept.await_empty() is None
    monkeypatch.setattr(keeper, "EMPTY_TIMEOUT", 0.05)
    kept.sandbox = _Sandbox(["karpenter_cluster_state_node_count 1\n"])
    assert kept.await_empty() == "its cluster state still holds 1 nodes"


# -- on the real controller ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_cluster():
    from harness.backends.registry import close_shared, shared_cluster
    from harness.runner.engines import get_engine
    engine = get_engine("real")
    ok, why = engine.available("local")
    if not ok:
        pytest.skip(f"real engine unavailable: {why}")
    try:
        yield engine, shared_cluster("local", **engine.cluster_options)
    finally:
        keeper.KEEPER.close()
        close_shared()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_two_documents_in_a_row_share_one_controller_stopped_between_them(real_cluster, monkeypatch):
    from harness.runner.engines.base import execute
    from harness.scenario.load import load_scenarios
    monkeypatch.delenv(keeper.KEEP_ENV, raising=False)
    engine, cluster = real_cluster
    keeper.KEEPER.close()
    docs = load_scenarios(ROOT / "scenarios/upstream-core/scheduling/binpacking.scenario.yaml")[:2]
    first = execute(engine, docs[0], "upstream", cluster)
    assert first.passed, first.mismatches
    kept = keeper.KEEPER.kept
    assert kept is not None and _state(kept.sandbox.process.pid) == "T"      # stopped between runs
    second = execute(engine, docs[1], "upstream", cluster)
    assert second.passed, second.mismatches
    assert "[controller] run 2 of this controller process" in second.result.trace
    assert keeper.KEEPER.kept is kept
    # another cloud (given.pricing: compiled-in) needs a controller of its own
    other = next(sc for sc in load_scenarios(ROOT / "scenarios/loop/compiled-in-prices.scenario.yaml")
                 if sc.given.get("pricing") == "compiled-in")
    third = execute(engine, other, "upstream", cluster)
    assert "[controller] run 1 of this controller process" in third.result.trace
    assert kept.sandbox.process is None or not kept.sandbox.process.alive()


def test_a_kept_controller_closes_with_its_cluster_and_once(tmp_path):
    """Its server and relays are threads Python's exit waits for before any atexit handler: the cluster's
    close() closes it first (RealCluster.dependents)."""
    cluster = SimpleNamespace(dependents=[])
    kept = keeper.Kept(("k",), tmp_path / "home", Switch(), cluster=cluster)
    (tmp_path / "home").mkdir()
    cluster.dependents.append(kept.close)
    for close in list(cluster.dependents):
        close()
    assert kept.closed and cluster.dependents == [] and not (tmp_path / "home").exists()
    kept.close()        # idempotent


def test_faults_need_a_controller_of_their_own():
    """A fault may aim at what the controller asks once, at its start (loop/transient-azure-errors:
    the SKU list throttled once): a kept controller would never ask."""
    from harness.scenario.load import load_scenarios
    docs = load_scenarios(ROOT / "scenarios/loop/transient-azure-errors.scenario.yaml")
    assert {keeper.needs_its_own(sc) for sc in docs if sc.given.get("faults")} == {"given.faults"}
    # a fault a step adds meets a controller that has started already: a kept one will do
    assert {keeper.needs_its_own(sc) for sc in docs if not sc.given.get("faults")} <= {None}
    plain = load_scenarios(ROOT / "scenarios/upstream-core/scheduling/binpacking.scenario.yaml")[0]
    assert keeper.needs_its_own(plain) is None
    k = keeper.Keeper()
    a = _Kept(("a",))
    k.kept = a
    assert k.take(None) is None and a.closed


def test_a_restart_starts_a_new_process_in_the_same_home_and_log(monkeypatch, tmp_path):
    """given.restrict (RealRun.restrict_at_start): the process is replaced, its sandbox's settings, home and
    log kept, and the sandbox's start file removed so the new shell waits for its forwards."""
    started = []

    class Sandbox:
        def __init__(self, name, argv, env, workdir, secrets, forwards, hosts=()):
            self.name, self.argv, self.env, self.workdir = name, argv, env, workdir
            self.secrets, self.forwards, self.hosts = secrets, forwards, hosts
            self.stopped = False

        def start(self, log):
            assert not (self.workdir / f"{self.name}.go").exists()
            started.append((self, log))

        def stop(self):
            self.stopped = True
    monkeypatch.setattr(keeper, "Sandbox", Sandbox)
    old = Sandbox("karpenter-controller", ["ctl"], {"A": "1"}, tmp_path, {}, ["fw"], hosts=("h",))
    (tmp_path / "karpenter-controller.go").write_text("")
    kept = keeper.Kept(("k",), tmp_path, Switch(), sandbox=old)
    kept.restart()
    assert old.stopped and kept.sandbox is not old and started == [(kept.sandbox, kept.log)]
    assert (kept.sandbox.argv, kept.sandbox.env, kept.sandbox.forwards, kept.sandbox.hosts) == (["ctl"], {"A": "1"}, ["fw"], ("h",))
