"""A scenario that seeds a customer's dump of hundreds of nodes: kube-controller-manager's
--node-monitor-grace-period its own default instead of the fast timing's 15 s, the stand-in kubelets'
Lease cadence a kubelet's, and the controller's wait before it validates a consolidation command
upstream's (harness/data/controller-timing.yaml `at-scale`). Why: docs/architecture/real-engine.md "The
stand-in kubelets' heartbeats"."""
from __future__ import annotations

from harness.backends.binaries.controller import timing_data
from harness.backends.binaries.editrules import applies

GRACE_FLAG = "node-monitor-grace-period"
VALIDATION_DELAY_ENV = "KARPENTER_HARNESS_COMMAND_VALIDATION_DELAY"


def _rule() -> dict:
    return timing_data().get("at-scale") or {}


def seeded(scenario) -> int:
    """How many existing nodes the scenario seeds (given.existingNodes)."""
    return len((scenario.given or {}).get("existingNodes") or ())


def at_scale(scenario) -> bool:
    """The scenario seeds as many existing nodes as the at-scale rule's `nodes` or more."""
    least = _rule().get("nodes")
    return least is not None and seeded(scenario) >= int(least)


def kcm_settings(scenario, settings: tuple[tuple[str, object], ...]) -> tuple[tuple[str, object], ...]:
    """kube-controller-manager's flags for a run of `scenario`: the timing's `settings`, without the
    at-scale rule's `unset` ones when the scenario is at scale."""
    if not at_scale(scenario):
        return tuple(settings)
    unset = set(_rule().get("unset") or ())
    return tuple((k, v) for k, v in settings if k not in unset)


def controller_env(scenario) -> dict[str, str]:
    """What the at-scale rule adds to the controller's environment for `scenario` (`controller-env`: read
    by a fast build only, harness/data/controller-timing/validation_delay.go); empty below its size."""
    if not at_scale(scenario):
        return {}
    return {k: str(v) for k, v in (_rule().get("controller-env") or {}).items()}


def default_grace(version: str | None) -> str | None:
    """kube-controller-manager's own --node-monitor-grace-period at Kubernetes `version` ("v1.33.13"), or
    None when the data has no entry for it."""
    for entry in _rule().get("default-grace") or ():
        if version and applies(entry, version.split("+")[0]):
            return str(entry["value"])
    return None


def grace_notice(scenario, cluster, fast: bool = True) -> str | None:
    """The run's line naming the grace its kube-controller-manager runs with and why, for a scenario at
    scale (None otherwise); read from the cluster's own flags (`kcm_settings`), not from the rule. `fast`:
    the controller is a fast build, whose validation wait the rule sets too."""
    if not at_scale(scenario):
        return None
    flags = dict(getattr(cluster, "kcm_settings", ()) or ())
    version = getattr(cluster, "server_version", "") or ""
    given = flags.get(GRACE_FLAG)
    grace = (f"{given} (the cluster was started with it)" if given is not None else
             f"{default_grace(version) or 'its default'}, kube-controller-manager's default at Kubernetes "
             f"{version or 'this version'}")
    return (f"kube-controller-manager --{GRACE_FLAG}: {grace}; the scenario seeds {seeded(scenario):,} existing "
            f"nodes (at least {int(_rule()['nodes']):,}: harness/data/controller-timing.yaml "
            f"at-scale), the stand-in kubelets renew each Lease every 10 s, as a kubelet does"
            + (f", and a fast build validates a consolidation command after {delay}, upstream's wait, not a "
               f"tenth of it" if fast and (delay := controller_env(scenario).get(VALIDATION_DELAY_ENV)) else ""))


def renew_seconds(scenario, cluster) -> float | None:
    """How often the stand-in kubelets renew their Leases in a run of `scenario` on `cluster`: a kubelet's
    10 s when the scenario is at scale and the cluster's kube-controller-manager keeps its own grace; None
    (the fast timing's 2 s, kubelet.py RENEW_SECONDS) otherwise."""
    from harness.runner.engines.real.cluster.kubelet import KUBELET_RENEW_SECONDS
    if at_scale(scenario) and GRACE_FLAG not in dict(getattr(cluster, "kcm_settings", ()) or ()):
        return KUBELET_RENEW_SECONDS
    return None
