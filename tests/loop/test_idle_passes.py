"""Passes skipped because the cluster is as the last one found it (LoopState.unchanged_since) give the runs
they would have given: kube-scheduler, the PDB status and the pod events controllers on the embedded store,
which counts its writes, against the same runs on a store that hides its count (as a real API server's
client does), so nothing is skipped there."""
from __future__ import annotations

from pathlib import Path

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.judge.fingerprint import fingerprint
from harness.scenario.load import load_scenarios
from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation

ROOT = Path(__file__).resolve().parents[2]
# pods that fit nowhere beside consolidation, PDBs over drained nodes, a dump's seeded cluster, volumes, Jobs
FILES = ["scenarios/tickets", "scenarios/disruption/consolidation.scenario.yaml",
         "scenarios/disruption/protection.scenario.yaml", "scenarios/loop/kubectl-verbs.scenario.yaml",
         "scenarios/loop/dump-owners.scenario.yaml", "scenarios/loop/volume-topology.scenario.yaml",
         "scenarios/workloads"]


class Uncounted:
    """The embedded store without its write count: every pass reads the cluster."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        if name == "writes":
            raise AttributeError(name)
        return getattr(self._inner, name)


def _scenarios():
    out = []
    for f in FILES:
        path = ROOT / f
        files = sorted(path.rglob("*.scenario.yaml")) if path.is_dir() else [path]
        for file in files:
            out += [(sc, p) for sc in load_scenarios(file) for p in sc.profiles]
    return out


def test_skipped_passes_change_no_run():
    cases = _scenarios()
    assert len(cases) > 40
    counted = EmbeddedBackend().start()
    uncounted = Uncounted(EmbeddedBackend().start())
    try:
        moved = [f"{sc.name}[{p}]" for sc, p in cases
                 if fingerprint(run(sc, p, counted)) != fingerprint(run(sc, p, uncounted))]
    finally:
        counted.close()
        uncounted._inner.close()
    assert moved == []


def test_kube_scheduler_skips_a_pass_that_would_repeat_the_last(embedded, monkeypatch):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1, cpu="100m"),
                               pod("huge", cpu="900")]) as sim:
        sim.converge()
        s = sim.state
        assert s.result.pods["default/huge"].scheduler_error           # fits on no Node
        reads = []
        real_list = s.cluster.list
        monkeypatch.setattr(s.cluster, "list", lambda *a, **k: reads.append(a) or real_list(*a, **k))
        s.cluster.create({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "other"}})
        assert sim.kube_scheduler.reconcile() is False                  # a write: the pass reads, binds nothing
        assert reads
        reads.clear()
        assert sim.kube_scheduler.reconcile() is False
        assert reads == []                                              # skipped: nothing written since
        assert s.result.pods["default/huge"].scheduler_error            # its message stays


def test_unbound_pods_are_the_live_pods_on_no_node(monkeypatch):
    """LoopState.unbound, kept where pods are created, bound, deleted and completed, is at every kube-scheduler
    pass the set a scan of every pod finds."""
    from harness.loop.kube.binding import KubeScheduler
    checked = []
    real = KubeScheduler.reconcile

    def reconcile(self):
        s = self.state
        assert set(s.unbound) == {k for k in s.pod_views if not s.result.pods[k].node}
        checked.append(1)
        return real(self)
    monkeypatch.setattr(KubeScheduler, "reconcile", reconcile)
    cluster = EmbeddedBackend().start()
    try:
        for sc, p in _scenarios():
            run(sc, p, cluster)
    finally:
        cluster.close()
    assert len(checked) > 1000
