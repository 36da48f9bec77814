"""The real engine's session: is it runnable here, the one shared `local` cluster it runs on, and
a failure text for pytest and `harness run`."""
from __future__ import annotations

from harness.backends import binaries
from harness.backends.controller import ensure_controller

# the cluster the controller needs: kube-scheduler binds pods, kube-controller-manager runs
# Deployments/DaemonSets and the node lifecycle controller (not-ready taint), no harness CRDs
CLUSTER_OPTIONS = {"scheduler": True, "controller_manager": True, "profile": None}


def available(backend: str = "local") -> tuple[bool, str]:
    """(True, "") when the controller, the control plane and the sandbox are all there; else why not."""
    from harness.backends.registry import get_backend
    from harness.runner.real.sandbox import sandbox_available
    try:
        ensure_controller()
    except binaries.BinariesError as e:
        return False, str(e)
    ok, why = get_backend(backend, **CLUSTER_OPTIONS).available()
    if not ok:
        return False, f"backend {backend!r} unavailable: {why}"
    return sandbox_available()


def cluster(keep: bool = False, cache=None, backend: str = "local"):
    """The shared cluster in `cache` (a pytest session's, else the process's default cache):
    `local`, or `kind`, where the controller's VMs boot real kubelets."""
    from harness.backends.registry import shared_cluster
    return shared_cluster(backend, cache=cache, **CLUSTER_OPTIONS, **({"keep": True} if keep else {}))


def run(scenario, profile: str, keep: bool = False, cache=None, backend: str = "local"):
    from harness.runner.real.engine import run as run_real
    return run_real(scenario, profile, cluster(keep, cache, backend))


def failure_text(outcome, trace: bool = False) -> str:
    from harness.runner.report import failure_text as sim_text
    text = sim_text(outcome, trace).replace(f"on backend {outcome.backend!r}",
                                            f"on the real engine (controller {outcome.controller_version})", 1)
    extra = [f"  {n.render()}" for n in outcome.not_applicable]
    if trace and outcome.log_tail:
        extra += ["  --- controller log (tail) ---"] + [f"  {line}" for line in outcome.log_tail.splitlines()]
    return "\n".join([text] + extra)
