"""The provider's provision mode (PROVISION_MODE) a run is in, and a release's refusal of one it does not have.

A scenario names it in `given.cluster.provisionMode`; `harness run --provision-mode` and pytest's
`--harness-provision-mode` (the environment variable MODE_ENV, which xdist workers inherit) give it to every
scenario that names none, on both engines (azureside.cluster_settings). Which modes a release has is its own
source's (probe `provider.provisionModes`, pkg/consts/consts.go ProvisionMode*): the release's controller exits at
start on any other (provider v1.14.0 pkg/operator/options/options_validation.go validateProvisionMode
"provision-mode is invalid: %s"), so a run of a mode its release lacks is refused at the scenario's line.
"""
from __future__ import annotations

import json
import os

from harness.model.data import DATA_DIR

MODE_ENV = "HARNESS_PROVISION_MODE"
DEFAULT_MODE = "aksscriptless"


def _schema_modes() -> list[str]:
    """given.cluster.provisionMode's enum in the scenario schema: every mode the newest release has."""
    def find(node):
        if isinstance(node, dict):
            if isinstance(node.get("provisionMode"), dict) and "enum" in node["provisionMode"]:
                return list(node["provisionMode"]["enum"])
            return next((m for v in node.values() if (m := find(v))), None)
        if isinstance(node, list):
            return next((m for v in node if (m := find(v))), None)
        return None
    return find(json.loads((DATA_DIR / "scenario.schema.json").read_text())) or [DEFAULT_MODE]


PROVISION_MODES = _schema_modes()


def forced_mode() -> str | None:
    """The mode the harness option gives scenarios that name none (None: the option is not given)."""
    return os.environ.get(MODE_ENV) or None


def mode_for(cluster: dict) -> str | None:
    """The provision mode of a scenario's given.cluster: its own, else the harness option's (None: neither)."""
    return cluster.get("provisionMode") or forced_mode()


def lacks(mode: str, profile: str) -> str | None:
    """Why the release `profile` answers cannot run in `mode`, in the words every refusal uses (a scenario's
    line at load, a run's --profile, the harness option), or None when the release has the mode."""
    from harness.model.upstream.profile import load_profile
    from harness.model.upstream.releases import resolve
    answer = resolve(profile).profile
    prof = load_profile(answer)
    have = prof.provision_modes
    if mode in have:
        return None
    release = getattr(prof, "release", None) or answer
    named = f"provider {release}" + (f" (profile {profile})" if profile not in (release, answer) else "")
    if not prof.provider_setting("provisionModes"):
        return (f"provisionMode {mode}: {named} reads no PROVISION_MODE (its pkg/consts/consts.go has none): its "
                f"controller would run as aksscriptless")
    return (f"provisionMode {mode}: {named} has no such mode (its pkg/consts/consts.go: {', '.join(have)}); its "
            f"controller refuses it at start: provision-mode is invalid: {mode}")


def refusal(scenario, profile: str | None) -> str | None:
    """`file:line: ...` when the release `profile` answers has not the scenario's provision mode, else None."""
    mode = str(mode_for(scenario.given.get("cluster") or {}) or DEFAULT_MODE)
    if mode == DEFAULT_MODE or profile is None:
        return None
    why = lacks(mode, profile)
    if why is None:
        return None
    named = "provisionMode" in (scenario.given.get("cluster") or {})
    where = scenario.where(("given", "cluster", "provisionMode")) if named else f"{scenario.file}:1"
    via = "" if named else f" (from {MODE_ENV} / --provision-mode)"
    return f"{where}: {why.replace(f'provisionMode {mode}:', f'provisionMode {mode}{via}:', 1)}"
