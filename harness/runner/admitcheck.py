"""What the API server would refuse of a scenario's manifests, found before any run (`harness validate`).

A NodePool, NodeClaim or AKSNodeClass the release's CRDs refuse never exists in the run: its pods stay
pending and, without an expectation naming it, the run would pass. The run fails such a scenario
(harness/runner/expect.py unexpected_refusals); `harness validate` says it first, at the manifest's line, in
the API server's words, for each profile whose CRDs refuse it. A refusal the scenario expects
(`nodePools.<name>.rejected` or `nodeClasses.<name>.rejected`, at that profile) is the point, not an error.
"""
from __future__ import annotations

from harness.model import aksnodeclass, apiversions
from harness.model.profile import load_profile
from harness.model.validation import admission_rejection
from harness.runner.scenario import Scenario

# the expect key naming an object of each kind this checks
EXPECT_KEYS = {"NodePool": "nodePools", "NodeClaim": None, "AKSNodeClass": "nodeClasses"}


def refusal(obj: dict, profile) -> str | None:
    """The API server's message refusing `obj` at `profile`'s release, or None (admitted)."""
    rejected = apiversions.served_rejection(obj, profile)
    if rejected is None and obj.get("kind") in ("NodePool", "NodeClaim"):
        rejected = admission_rejection(obj, apiversions.admission_profile(obj, profile))
    if rejected is None and obj.get("kind") == "AKSNodeClass":
        schema = apiversions.nodeclass_schema(obj, profile)
        if schema is not None:
            admitted = aksnodeclass.admit(obj, schema)
            if admitted.errors:
                rejected = aksnodeclass.rejection(obj, admitted.errors)
    return None if rejected is None else rejected.message


def unexpected_refusals(scenario: Scenario) -> list[str]:
    """`file:line: ...` for each manifest some profile's API server refuses without the scenario expecting it."""
    out = []
    for m in scenario.manifests:
        kind = m.obj.get("kind")
        if kind not in EXPECT_KEYS:
            continue
        name = str((m.obj.get("metadata") or {}).get("name") or "")
        by_message: dict[str, list[str]] = {}
        for profile in scenario.profiles:
            key = EXPECT_KEYS[kind]
            if key and name in (scenario.expect_for(profile).get(key) or {}):
                continue
            message = refusal(m.obj, load_profile(profile))
            if message is not None:
                by_message.setdefault(message, []).append(profile)
        for message, profiles in by_message.items():
            hint = f"; expect it with {EXPECT_KEYS[kind]}.{name}.rejected if that is the point" if EXPECT_KEYS[kind] else ""
            out.append(f"{m.file}:{m.line}: {kind} {name}: refused by the API server at {', '.join(profiles)}: "
                       f"{message}{hint}")
    return out
