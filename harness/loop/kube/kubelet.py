"""The kubelet's part of a graceful pod delete: a terminating pod bound to a Node is confirmed gone once
its containers have stopped (kubernetes v1.36.3 pkg/kubelet/pod_workers.go syncTerminatingPod, then the
status manager's final delete), at the instant harness/model/kube/podtermination.py stops_at gives: at once
without a preStop sleep, else when the sleep or the grace period ends. LoopState.terminate_pod starts it."""
from __future__ import annotations

from harness.loop.state import LoopState
from harness.model.kube import podtermination


class Kubelet:
    def __init__(self, state: LoopState):
        self.state = state

    def reconcile(self) -> bool:
        s = self.state
        now = s.clock.now()
        done = [k for k in s.terminating if (at := self._stops_at(k)) is not None and at <= now]
        for k in done:
            s.finish_pod(k)
        return bool(done)

    def next_stop(self) -> float | None:
        """When the next terminating pod's containers have stopped: a timer a step's `advance` reaches (a
        settle does not wait for it, as the real engine's does not)."""
        return min((at for k in self.state.terminating if (at := self._stops_at(k)) is not None), default=None)

    def _stops_at(self, key: str) -> float | None:
        pv = self.state.pod_views.get(key)
        return podtermination.stops_at(pv.obj) if pv is not None else None
