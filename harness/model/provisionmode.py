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


def refusal(scenario, profile: str | None) -> str | None:
    """`file:line: ...` when the release `profile` answers has not the scenario's provision mode, else None."""
    from harness.model.profile import load_profile
    mode = str(mode_for(scenario.given.get("cluster") or {}) or DEFAULT_MODE)
    if mode == DEFAULT_MODE or profile is None:
        return None
    prof = load_profile(profile)
    have = prof.provision_modes
    if mode in have:
        return None
    named = "provisionMode" in (scenario.given.get("cluster") or {})
    where = scenario.where(("given", "cluster", "provisionMode")) if named else f"{scenario.file}:1"
    via = "" if named else f" (from {MODE_ENV} / --provision-mode)"
    release = getattr(prof, "release", None) or profile
    return (f"{where}: provisionMode {mode}{via}: provider {release} has no such mode (its pkg/consts/consts.go: "
            f"{', '.join(have)}); its controller refuses it at start: provision-mode is invalid: {mode}")
