"""What a pass keeps of a Node from the passes before while its pods are the same (LoopState.on_node_changed:
kube-scheduler's sums, the provisioner's existing nodes, a state node's ValidatePodsDisruptable verdict and pod
costs) gives the runs a pass reading every Node anew gives."""
from __future__ import annotations

from harness.backends.embedded import EmbeddedBackend
from harness.loop import state
from harness.runner.engines import run
from harness.judge.fingerprint import fingerprint
from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation
from tests.loop.test_idle_passes import _scenarios


class Changed(dict):
    """on_node_changed that says every Node changed since any pass read it: nothing kept is used."""

    def get(self, key, default=None):
        return object()

    def __getitem__(self, key):
        return object()


def test_what_passes_keep_changes_no_run(monkeypatch):
    cases = _scenarios()
    backend = EmbeddedBackend().start()
    try:
        kept = [fingerprint(run(sc, p, backend)) for sc, p in cases]
        init = state.LoopState.__init__

        def fresh(self, *a, **k):
            init(self, *a, **k)
            self.on_node_changed = Changed()
        monkeypatch.setattr(state.LoopState, "__init__", fresh)
        moved = [f"{sc.name}[{p}]" for (sc, p), fp in zip(cases, kept) if fingerprint(run(sc, p, backend)) != fp]
    finally:
        backend.close()
    assert moved == []


def test_a_node_counts_as_changed_when_a_pod_binds_leaves_or_changes_in_place(embedded):
    with simulation(embedded, [nodeclass(), nodepool(), deployment("web", replicas=1, cpu="100m")]) as sim:
        s = sim.state
        s.create_pod(pod("a", "100m"), "", "", node="n1")
        at = s.on_node_changed["n1"]
        s.changed_in_place("default/a")
        assert s.on_node_changed["n1"] > at and s.moved[-1] == "default/a"
        at = s.on_node_changed["n1"]
        s.terminate_pod("default/a", "kubectl delete")
        assert s.on_node_changed["n1"] > at
