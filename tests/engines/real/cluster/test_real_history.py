"""A dump's history on the real engine (harness/runner/engines/real/cluster/history.py, existing.py seed): when the run's
clock reads what while each entry is seeded, and what is written on its NodeClaim, checked against the
simulation's seeding (harness/loop/seed.py). The live runs are the dump-derived tickets
(scenarios/tickets/t14, t15) on the real engine."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedBackend
from harness.model.kube.kubetime import parse_rfc3339
from harness.model.upstream.profile import load_profile
from harness.runner.engines.real.cluster import existing, history
from harness.runner.engines.real.engine import RealEngine
from harness.scenario.load import load_scenarios_text

START = "2026-11-26T20:56:32Z"
MANIFESTS = ("[{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: web}, spec: {template: {spec: "
             "{nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: web}, requirements: []}}}}, "
             "{apiVersion: karpenter.azure.com/v1beta1, kind: AKSNodeClass, metadata: {name: web}, spec: {}}]")
ENTRY = {"nodeClaim": "web-a8f2k", "nodePool": "web", "instanceType": "Standard_D4s_v5",
         "createdAt": "2026-11-26T10:00:00Z", "initializedAt": "2026-11-26T10:01:30Z",
         "deleting": "2026-11-26T20:00:00Z",
         "pods": [{"metadata": {"name": "api-1"}, "status": {"startTime": "2026-11-26T10:02:00Z"}},
                  {"metadata": {"name": "api-2", "namespace": "shop"}}]}


def test_an_entry_is_created_and_deleted_at_the_dumps_times_and_else_at_the_start():
    start = parse_rfc3339(START)
    when = history.instants(ENTRY, start)
    assert (when.created, when.deleted) == (parse_rfc3339(ENTRY["createdAt"]), parse_rfc3339(ENTRY["deleting"]))
    plain = history.instants({"nodePool": "web", "deleting": True}, start)
    assert (plain.created, plain.deleted) == (start, start)


def test_the_dated_transitions_are_the_simulations_phases():
    """Launched at createdAt; Registered and Initialized at initializedAt, else createdAt (seed.py _dumped_phases)."""
    assert history.transitions(ENTRY) == {"Launched": "2026-11-26T10:00:00Z", "Registered": "2026-11-26T10:01:30Z",
                                          "Initialized": "2026-11-26T10:01:30Z"}
    assert history.transitions({"createdAt": "2026-11-26T10:00:00+01:00"}) == {
        t: "2026-11-26T09:00:00Z" for t in ("Launched", "Registered", "Initialized")}
    assert history.transitions({"lastPodEventTime": "2026-11-26T10:00:00Z"}) == {}


def test_a_dated_entry_without_a_pod_event_has_none_and_its_pods_keep_their_start():
    """The seeded pods' binding is no pod event (seed.py _settled_pods): consolidateAfter then counts from the
    Initialized transition, as core does with a zero lastPodEventTime (nodeclaim/disruption/consolidation.go)."""
    assert history.pod_event(ENTRY) is None
    assert history.pod_event({**ENTRY, "lastPodEventTime": "2026-11-26T12:00:00.5Z"}) == "2026-11-26T12:00:00Z"
    assert history.pod_starts(ENTRY) == {("default", "api-1"): "2026-11-26T10:02:00Z"}


LIVE = {"karpenter.sh/nodepool-hash": "111", "karpenter.sh/nodepool-hash-version": "v3",
        "karpenter.azure.com/aksnodeclass-hash": "222", "karpenter.azure.com/aksnodeclass-hash-version": "v3"}


@pytest.mark.parametrize("entry, changed", [
    ({"drifted": "NodeClassDrifted"}, {"karpenter.azure.com/aksnodeclass-hash": "launched-from-an-older-aksnodeclass"}),
    ({"drifted": "NodePoolDrifted"}, {"karpenter.sh/nodepool-hash": "launched-from-an-older-nodepool"}),
    # the dump's own hash of the drifted kind; its other hash is another cluster's digits: the live one stays
    ({"drifted": "NodePoolDrifted", "annotations": {"karpenter.sh/nodepool-hash": "999",
                                                   "karpenter.azure.com/aksnodeclass-hash": "888"}},
     {"karpenter.sh/nodepool-hash": "999"}),
    # nothing drifted: both hashes stay live, other annotations are the dump's
    ({"annotations": {"karpenter.sh/nodepool-hash": "999", "karpenter.sh/do-not-disrupt": "true"}},
     {"karpenter.sh/do-not-disrupt": "true"}),
])
def test_the_dumps_annotations_over_the_live_ones_as_the_simulation_writes_them(entry, changed):
    assert history.annotations(entry, LIVE) == {**LIVE, **changed}


def test_a_dumped_hash_version_is_restamped_as_the_simulation_does():
    """A v2 NodeClaim under a NodePool without the release's v3 annotation takes the live version (core's hash
    controller would have re-stamped it: hashes.py restamps); under a NodePool already at v3 it keeps v2."""
    entry = {"nodePool": "default", "annotations": {"karpenter.sh/nodepool-hash-version": "v2"}}
    live = {**LIVE, "karpenter.sh/nodepool-hash-version": "v3"}
    upstream = load_profile("upstream")
    assert history.restamped(entry, {"metadata": {"name": "default"}}, upstream)
    assert not history.restamped(entry, {"metadata": {"annotations": {"karpenter.sh/nodepool-hash-version": "v3"}}},
                                 upstream)
    assert history.annotations(entry, live, restamp=True) == live
    assert history.annotations(entry, live)["karpenter.sh/nodepool-hash-version"] == "v2"


def test_the_simulations_seeding_drifts_the_same_hash():
    """One drifted entry seeded by the simulation: the annotation it replaces is the one history.annotations
    replaces, with the same placeholder."""
    from harness.loop.seed import seed_existing_nodes
    from tests.loop.loopkit import nodeclass, nodepool, simulation
    cluster = EmbeddedBackend().start()
    try:
        for drifted in ("NodeClassDrifted", "NodePoolDrifted"):
            entry = {"nodePool": "default", "instanceType": "Standard_D4s_v3", "zone": "southcentralus-2",
                     "drifted": drifted}
            with simulation(cluster, [nodeclass(), nodepool()]) as sim:
                seed_existing_nodes(sim, [entry])
                sim_ann = sim.state.claims[-1].obj["metadata"]["annotations"]
            live = {k: "live" if not k.endswith("version") else "v3" for k in LIVE}
            real = history.annotations(entry, live)
            replaced = {k for k in LIVE if real[k] != live[k]}
            assert replaced and all(sim_ann[k] == real[k] for k in replaced)
            cluster.reset()
    finally:
        cluster.close()


def _nodeclaim(cluster, name="web-a8f2k"):
    cluster.create({"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
                    "metadata": {"name": name, "annotations": dict(LIVE)},
                    "spec": {"nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "web"},
                             "requirements": []}})
    nc = cluster.get("NodeClaim", name)
    nc["status"] = {"lastPodEventTime": START, "conditions": [
        {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": START}
        for t in ("Launched", "Registered", "Initialized", "Ready")]}
    cluster.update_status(nc)


@pytest.fixture()
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def test_write_puts_the_dumps_times_and_hashes_on_the_nodeclaim(cluster):
    _nodeclaim(cluster)
    entry = {**ENTRY, "drifted": "NodePoolDrifted"}
    history.write(cluster, "web-a8f2k", entry)
    nc = cluster.get("NodeClaim", "web-a8f2k")
    times = {c["type"]: c["lastTransitionTime"] for c in nc["status"]["conditions"]}
    assert times == {"Launched": "2026-11-26T10:00:00Z", "Registered": "2026-11-26T10:01:30Z",
                     "Initialized": "2026-11-26T10:01:30Z", "Ready": START}
    assert "lastPodEventTime" not in nc["status"]
    assert nc["metadata"]["annotations"]["karpenter.sh/nodepool-hash"] == "launched-from-an-older-nodepool"
    assert history.differs(cluster, "web-a8f2k", entry) == []


def test_a_status_core_wrote_over_from_an_older_copy_is_written_again(cluster, monkeypatch):
    """core's lifecycle controller patches status without the optimistic lock: a write it took back is
    found on the read-back and written again."""
    _nodeclaim(cluster)
    entry = {"createdAt": "2026-11-26T10:00:00Z", "lastPodEventTime": "2026-11-26T11:00:00Z"}
    monkeypatch.setattr(existing, "HISTORY_SETTLE", 0.0)
    stale = cluster.get("NodeClaim", "web-a8f2k")
    real_write, writes = history.write, []

    def write_then_core_reverts(c, name, e, restamp):
        real_write(c, name, e, restamp)
        writes.append(name)
        if len(writes) == 1:       # core's older copy lands after the first write
            stale["metadata"]["resourceVersion"] = c.get("NodeClaim", name)["metadata"]["resourceVersion"]
            c.update_status(stale)
    monkeypatch.setattr(history, "write", write_then_core_reverts)

    class Run:
        pass
    run = Run()
    run.cluster, run.profile = cluster, load_profile("upstream")
    run.scenario = type("Scenario", (), {"manifests": []})()
    assert history.differs(cluster, "web-a8f2k", entry) == ["Launched", "Registered", "Initialized",
                                                            "lastPodEventTime"]
    existing.write_history(run, [("web-a8f2k", entry)])
    assert len(writes) == 2 and history.differs(cluster, "web-a8f2k", entry) == []


class _SeedRun:
    """What existing.seed reads of a run, recording the clock each entry is seeded at."""

    def __init__(self, scenario, cluster):
        self.scenario, self.cluster, self.clocked, self.placed = scenario, cluster, True, True
        self.now = 0.0
        self.moves: list[float] = []
        self.kubelets = type("K", (), {"started": {}})()
        self.observer = type("O", (), {"seeded": []})()

    def clock_at(self, instant, touch=True):
        self.moves.append((instant, touch))
        self.now = instant


def test_seeding_gives_each_entry_its_times_then_moves_back_to_the_start(cluster, monkeypatch):
    text = f"""
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: dated}}
given:
  startTime: '{START}'
  existingNodes:
  - {{nodePool: web, instanceType: Standard_D4s_v5, createdAt: '2026-11-26T10:00:00Z', deleting: '2026-11-26T20:00:00Z'}}
  - {{nodePool: web, instanceType: Standard_D4s_v5}}
manifests: {MANIFESTS}
"""
    (scenario,) = load_scenarios_text(text)
    run = _SeedRun(scenario, cluster)
    seeded = []

    def seed_group(r, group, skus):
        seeded.extend((i, when.created, when.deleted) for i, _, when in group)
        return [(f"web-{i}", f"aks-web-{i}", True) for i, _, _ in group]
    monkeypatch.setattr(existing, "seed_group", seed_group)
    monkeypatch.setattr(existing, "hold_disruption", lambda c, pools: {})
    monkeypatch.setattr(existing, "stamp_pod_events", lambda c, names: seeded.append(("stamped", names)))
    monkeypatch.setattr(existing, "write_history", lambda r, dated: seeded.append(("dated", [n for n, _ in dated])))
    existing.seed(run, scenario.given["existingNodes"], {})
    start = parse_rfc3339(START)
    # the newest first (existing.seed_groups), the deleting entry in a group of its own
    # an entry that dates nothing was there at the start (history.at_start): dated like the others, not stamped
    assert seeded == [(1, start, start), (0, parse_rfc3339("2026-11-26T10:00:00Z"), parse_rfc3339("2026-11-26T20:00:00Z")),
                      ("stamped", []), ("dated", ["web-1", "web-0"])]
    assert run.moves == [(start, True)]       # back at the start, touching what core timed on the old clock
    # the nodes' order is the entries' (observe.py _nodes_and_claims), whatever their createdAt
    assert run.observer.seeded == ["web-0", "web-1"]


def _skip(text: str, moves: bool) -> str | None:
    (scenario,) = load_scenarios_text(text)
    engine = RealEngine.__new__(RealEngine)
    engine._moves_clock = lambda profile=None: moves
    return engine._scenario_skip(scenario)


def test_history_is_skipped_by_name_only_where_the_controller_keeps_the_wall_clock():
    text = f"""
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: dated}}
given:
  startTime: '{START}'
  existingNodes:
  - {{nodePool: web, instanceType: Standard_D4s_v5, lastPodEventTime: '2026-11-26T10:00:00Z', deleting: '{START}'}}
manifests: {MANIFESTS}
"""
    assert _skip(text, moves=True) is None
    why = _skip(text, moves=False)
    assert why.startswith("a dump's history (given.startTime, existingNodes[].lastPodEventTime, "
                          "existingNodes[].deleting (a time)) is replayed on the simulated clock")


def test_the_clock_is_judged_on_the_release_profiles_own_controller(monkeypatch):
    """A release profile runs its release's controller: a release built as released (timing upstream, core
    v0.36) keeps the wall clock even where the default controller moves it, so the history is skipped there."""
    from types import SimpleNamespace
    from harness.backends.binaries import controller
    (scenario,) = load_scenarios_text(f"""
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: dated}}
given:
  startTime: '{START}'
  existingNodes:
  - {{nodePool: web, instanceType: Standard_D4s_v5, createdAt: '2026-11-26T10:00:00Z'}}
manifests: {MANIFESTS}
""")
    monkeypatch.setattr(controller, "timed_apiserver", lambda timing: "kube-apiserver" if timing == "fast" else None)
    monkeypatch.setattr(controller, "ensure_controller", lambda: SimpleNamespace(timing="fast"))
    timings = {"v0.6.3": "upstream", "v1.12.2": "fast"}
    engine = RealEngine.__new__(RealEngine)
    engine.controller = None
    engine.releases = SimpleNamespace(
        choice=lambda p: SimpleNamespace(ref=p if p in timings else None, skip=None),
        controller=lambda ref: (SimpleNamespace(timing=timings[ref]), None))
    assert engine._scenario_skip(scenario, "upstream") is None
    assert engine._scenario_skip(scenario, "v1.12.2") is None
    assert "wall clock" in engine._scenario_skip(scenario, "v0.6.3")


def test_a_cluster_whose_api_server_keeps_the_wall_clock_skips_the_history_by_name(tmp_path):
    """The controller may move its clock while the cluster it runs on cannot (kind, or another Kubernetes
    version's control plane without the fast kube-apiserver): its creationTimestamps would be the wall
    clock's, so the run is skipped rather than seeded undated."""
    (scenario,) = load_scenarios_text(f"""
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: dated}}
given:
  startTime: '{START}'
  existingNodes:
  - {{nodePool: web, instanceType: Standard_D4s_v5, createdAt: '2026-11-26T10:00:00Z'}}
manifests: {MANIFESTS}
""")
    engine = RealEngine.__new__(RealEngine)
    engine._skip_before_cluster = lambda sc, profile: None
    cluster = type("C", (), {"backend": "kind", "server_version": "v1.36.3", "clock_file": None})()
    why = engine.skip_reason(scenario, cluster, "upstream")
    assert why.startswith("a dump's history (given.startTime, existingNodes[].createdAt) is replayed on the "
                          "simulated clock; this cluster's kube-apiserver (kind, v1.36.3) stamps")
    cluster.clock_file = tmp_path / "clock"
    assert engine.skip_reason(scenario, cluster, "upstream") is None


def test_an_entry_that_dates_nothing_was_there_at_the_start():
    """history.at_start: created (and so launched, registered, initialized) at the start, its pods started then; what
    the entry dates stays its own."""
    start = parse_rfc3339(START)
    entry = history.at_start({"nodePool": "web", "pods": [{"metadata": {"name": "a"}},
                                                          {"metadata": {"name": "b"}, "status": {"startTime": "2026-11-26T09:00:00Z"}}]},
                             start)
    assert history.transitions(entry) == {t: START for t in ("Launched", "Registered", "Initialized")}
    assert history.pod_starts(entry) == {("default", "a"): START, ("default", "b"): "2026-11-26T09:00:00Z"}
    dated = {"nodePool": "web", "createdAt": "2026-11-26T08:00:00Z", "initializedAt": "2026-11-26T08:01:00Z"}
    assert history.at_start(dated, start) == dated
