"""What the API server would refuse of a scenario's manifests, found before any run (`harness validate`): a
NodePool, NodeClaim, AKSNodeClass or NodeOverlay at a profile's release, a PriorityClass or LimitRange at any.

A NodePool, NodeClaim or AKSNodeClass the release's CRDs refuse never exists in the run: its pods stay
pending and, without an expectation naming it, the run would pass. The run fails such a scenario
(harness/scenario/expect/match.py unexpected_refusals); `harness validate` says it first, at the manifest's line, in
the API server's words, for each profile whose CRDs refuse it. A refusal the scenario expects
(`nodePools.<name>.rejected` or `nodeClasses.<name>.rejected`, at that profile) is the point, not an error.
Its words are those of the API server the run emulates: the scenario's `given.cluster.kubernetesVersion`
(how a failed rule prints its value changed at Kubernetes 1.35: harness/model/crd/schema.py).
"""
from __future__ import annotations

from harness.model.crd import aksnodeclass, apiversions, nodeoverlay, rules as crdrules
from harness.model.kube import limitranger, priorityclass
from harness.model.kube.apistatus import APIRejected
from harness.model.azure.params import ClusterParams
from harness.model.upstream.profile import load_profile
from harness.model.crd.validation import admission_rejection, parse_version
from harness.scenario.load import Scenario

# the expect key naming an object of each kind this checks
EXPECT_KEYS = {"NodePool": "nodePools", "NodeClaim": None, "AKSNodeClass": "nodeClasses",
               # the same at every release (k8s.io/kubernetes v1.36.3 validation; harness/model/kube/priorityclass.py,
               # limitranger.py): a run reports their refusal as an input error on both engines
               "PriorityClass": None, "LimitRange": None,
               # a release before core v1.7.0 has no such kind; from it, its CRD judges it (crd/nodeoverlay.py)
               "NodeOverlay": None}


def refusal(obj: dict, profile, server_version: str | None = None, classes: list[dict] = ()) -> str | None:
    """The message of a kube-apiserver of `server_version` (None: the newest) refusing `obj` at `profile`'s
    release, or None (admitted). `classes`: the PriorityClasses applied before it (only one may be the
    globalDefault)."""
    kind = obj.get("kind")
    if kind in ("PriorityClass", "LimitRange"):
        try:
            priorityclass.admit(obj, classes) if kind == "PriorityClass" else limitranger.admit_limitrange(obj)
        except APIRejected as e:
            return e.message
        return None
    rejected = apiversions.served_rejection(obj, profile)
    if rejected is None and obj.get("kind") in ("NodePool", "NodeClaim"):
        rejected = admission_rejection(obj, apiversions.admission_profile(obj, profile), server_version)
    if rejected is None and obj.get("kind") == "NodeOverlay":
        schema = crdrules.spec_schema(profile, "NodeOverlay")
        if schema is not None:
            admitted = nodeoverlay.admit(obj, schema, parse_version(server_version))
            if admitted.errors:
                rejected = nodeoverlay.rejection(obj, admitted.errors)
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
    classes: list[dict] = []
    for m in scenario.manifests:
        kind = m.obj.get("kind")
        if kind not in EXPECT_KEYS:
            continue
        if kind == "PriorityClass":
            message = refusal(m.obj, None, classes=classes)
            if message is None:
                classes.append(m.obj)
            else:
                out.append(f"{m.file}:{m.line}: {kind} {(m.obj.get('metadata') or {}).get('name')}: refused by the "
                           f"API server: {message}")
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
