"""What the API server would refuse of a scenario's manifests, found before any run (`harness validate`).

A NodePool, NodeClaim or AKSNodeClass the release's CRDs refuse never exists in the run: its pods stay
pending and, without an expectation naming it, the run would pass. The run fails such a scenario
(harness/runner/expect.py unexpected_refusals); `harness validate` says it first, at the manifest's line, in
the API server's words, for each profile whose CRDs refuse it. A refusal the scenario expects
(`nodePools.<name>.rejected` or `nodeClasses.<name>.rejected`, at that profile) is the point, not an error.
Its words are those of the API server the run emulates: the scenario's `given.cluster.kubernetesVersion`
(how a failed rule prints its value changed at Kubernetes 1.35: harness/model/crdschema.py).
"""
from __future__ import annotations

from harness.model import aksnodeclass, apiversions
from harness.model.params import ClusterParams
from harness.model.profile import load_profile
from harness.model.validation import admission_rejection, parse_version
from harness.runner.scenario import Scenario

# the expect key naming an object of each kind this checks
EXPECT_KEYS = {"NodePool": "nodePools", "NodeClaim": None, "AKSNodeClass": "nodeClasses"}


def refusal(obj: dict, profile, server_version: str | None = None) -> str | None:
    """The message of a kube-apiserver of `server_version` (None: the newest) refusing `obj` at `profile`'s
    release, or None (admitted)."""
    rejected = apiversions.served_rejection(obj, profile)
    if rejected is None and obj.get("kind") in ("NodePool", "NodeClaim"):
        rejected = admission_rejection(obj, apiversions.admission_profile(obj, profile), server_version)
    if rejected is None and obj.get("kind") == "AKSNodeClass":
        schema = apiversions.nodeclass_schema(obj, profile)
        if schema is not None:
            admitted = aksnodeclass.admit(obj, schema, parse_version(server_version))
            if admitted.errors:
                rejected = aksnodeclass.rejection(obj, admitted.errors)
    return None if rejected is None else rejected.message


def unexpected_refusals(scenario: Scenario) -> list[str]:
    """`file:line: ...` for each manifest some profile's API server refuses without the scenario expecting it."""
    out = []
    # the version the embedded API server emulates (harness/runner/engines/simulated.py configures it)
    server_version = ClusterParams.from_dict(scenario.given.get("cluster")).kubernetes_version
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
            message = refusal(m.obj, load_profile(profile), server_version)
            if message is not None:
                by_message.setdefault(message, []).append(profile)
        for message, profiles in by_message.items():
            hint = f"; expect it with {EXPECT_KEYS[kind]}.{name}.rejected if that is the point" if EXPECT_KEYS[kind] else ""
            out.append(f"{m.file}:{m.line}: {kind} {name}: refused by the API server at {', '.join(profiles)}: "
                       f"{message}{hint}")
    return out
