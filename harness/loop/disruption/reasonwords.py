"""The words of the reasons a node is no disruption candidate, per core release.

The rewordings several places of the disruption controller share, each a switch in
harness/data/core-behaviour.yaml read here (a switch whose words one branch alone gives keeps them beside
that branch, as unmanagedNodeBlockedEvent in candidates.py validate_node):
- disruptionBlockedMessage (#1906, v1.2.0): the node's own reasons lost "state node"
  (sigs.k8s.io/karpenter v1.0.6 pkg/controllers/state/statenode.go ValidateNodeDisruptable against v1.2.0),
  and scheduling errors in events got pretty.Sentence;
- blockedReasonFormat (#2136, v1.5.0): reasons naming an object moved it from inside the sentence
  (`pod "ns/name" has ...`) to a trailing key=value pair (serrors.Wrap: `pod has ... (Pod=ns/name)`);
- whenEmptyUnconsolidatableMessage (#2962, v1.14.0): the WhenEmpty Unconsolidatable text.
"""
from __future__ import annotations

from harness.loop.scheduling.podutil import DO_NOT_DISRUPT
from harness.model.upstream.corebehaviour import CoreBehaviour

# the node's own reasons by disruptionBlockedMessage value (v1.0.6 / v1.2.0 statenode.go ValidateNodeDisruptable)
_NODE = {
    "prefixed": {"initialized": "state node isn't initialized",
                 "deleting": "state node is marked for deletion",
                 "nominated": "state node is nominated for a pending pod",
                 "label": "state node doesn't have required label"},
    "sentence": {"initialized": "node isn't initialized",
                 "deleting": "node is deleting or marked for deletion",
                 "nominated": "node is nominated for a pending pod",
                 "label": "node doesn't have required label"},
}


def blocked_event(core: CoreBehaviour, kind: str, reason: str) -> str:
    """disruptionevents.Blocked's message on a Node or NodeClaim: "Cannot disrupt <kind>: <reason>" before
    core v1.2.0 (v1.0.6 pkg/controllers/disruption/events/events.go Blocked), later the reason as a sentence
    (NewCandidate's pretty.Sentence)."""
    if core["disruptionBlockedMessage"] == "prefixed":
        return f"Cannot disrupt {kind}: {reason}"
    return sentence(reason)


def _keyed(core: CoreBehaviour, text: str, key: str, value: str, quoted: str) -> str:
    """`text (key=value)` (serrors.Wrap) from core v1.5.0, else the sentence with the object quoted in it."""
    return f"{text} ({key}={value})" if core["blockedReasonFormat"] == "keyValue" else quoted


def node_reason(core: CoreBehaviour, what: str) -> str:
    """One of the node's own reasons without an object: initialized, deleting, nominated."""
    return _NODE[core["disruptionBlockedMessage"]][what]


def missing_label(core: CoreBehaviour, label: str) -> str:
    text = _NODE[core["disruptionBlockedMessage"]]["label"]
    return _keyed(core, text, "label", label, f'{text} "{label}"')


def do_not_disrupt_pod(core: CoreBehaviour, namespace: str, name: str) -> str:
    return _keyed(core, f'pod has "{DO_NOT_DISRUPT}" annotation', "Pod", f"{namespace}/{name}",
                  f'pod "{namespace}/{name}" has "{DO_NOT_DISRUPT}" annotation')


def pdb_blocks(core: CoreBehaviour, key: str) -> str:
    """A PDB that allows no eviction; `key` as core prints it (a list in brackets from v1.7.0)."""
    return _keyed(core, "pdb prevents pod evictions", "PodDisruptionBudget", key, f'pdb "{key}" prevents pod evictions')


def nodepool_not_found(core: CoreBehaviour, nodepool: str) -> str:
    """NewCandidate's own event text (not its error): v1.0.6 'NodePool %q not found', v1.5.0 key=value."""
    return _keyed(core, "NodePool not found", "NodePool", nodepool, f'NodePool "{nodepool}" not found')


def scheduling_errors(core: CoreBehaviour, text: str) -> str:
    """Scheduling errors as an event gives them: upper-cased first letter from v1.2.0 (#1906)."""
    return text if core["disruptionBlockedMessage"] == "prefixed" else sentence(text)


def when_empty_not_empty(core: CoreBehaviour, nodepool: str) -> str:
    """consolidation.go ShouldDisrupt on a non-empty node of a WhenEmpty NodePool
    (core-behaviour.yaml whenEmptyUnconsolidatableMessage)."""
    if core["whenEmptyUnconsolidatableMessage"] == "notEmpty":
        return f'NodePool "{nodepool}" has consolidation policy WhenEmpty, but node is not empty'
    return f'NodePool "{nodepool}" has non-empty consolidation disabled'


def sentence(text: str) -> str:
    """operatorpkg pretty.Sentence: the first letter upper-cased."""
    return text[:1].upper() + text[1:] if text else text
