"""The reasons' words per core release (harness/loop/disruption/reasonwords.py), from each switch's two values."""
from harness.loop.disruption import reasonwords as rw
from harness.model.upstream.corebehaviour import CoreBehaviour, newest_values


def core(**values) -> CoreBehaviour:
    return CoreBehaviour("test", {**newest_values(), **values})


OLD = core(disruptionBlockedMessage="prefixed", blockedReasonFormat="quoted",
           whenEmptyUnconsolidatableMessage="nonEmptyDisabled")      # core v1.0.x
MID = core(disruptionBlockedMessage="sentence", blockedReasonFormat="quoted")   # v1.2.0-v1.4.x
NEW = core(disruptionBlockedMessage="sentence", blockedReasonFormat="keyValue",
           whenEmptyUnconsolidatableMessage="notEmpty")              # v1.14.0


def test_node_reasons_lost_state_node_at_v1_2():
    assert rw.node_reason(OLD, "initialized") == "state node isn't initialized"
    assert rw.node_reason(OLD, "deleting") == "state node is marked for deletion"
    assert rw.node_reason(MID, "deleting") == "node is deleting or marked for deletion"
    assert rw.node_reason(NEW, "nominated") == "node is nominated for a pending pod"


def test_missing_label_combines_both_rewordings():
    assert rw.missing_label(OLD, "karpenter.sh/nodepool") == 'state node doesn\'t have required label "karpenter.sh/nodepool"'
    assert rw.missing_label(MID, "karpenter.sh/nodepool") == 'node doesn\'t have required label "karpenter.sh/nodepool"'
    assert rw.missing_label(NEW, "karpenter.sh/nodepool") == "node doesn't have required label (label=karpenter.sh/nodepool)"


def test_objects_quoted_before_v1_5_then_key_value():
    assert rw.do_not_disrupt_pod(MID, "default", "app") == 'pod "default/app" has "karpenter.sh/do-not-disrupt" annotation'
    assert rw.do_not_disrupt_pod(NEW, "default", "app") == 'pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/app)'
    assert rw.pdb_blocks(MID, "default/web") == 'pdb "default/web" prevents pod evictions'
    assert rw.pdb_blocks(NEW, "[default/web]") == "pdb prevents pod evictions (PodDisruptionBudget=[default/web])"
    assert rw.nodepool_not_found(MID, "a") == 'NodePool "a" not found'
    assert rw.nodepool_not_found(NEW, "a") == "NodePool not found (NodePool=a)"


def test_events_prefixed_before_v1_2_and_sentence_after():
    assert rw.blocked_event(OLD, "NodeClaim", "state node isn't initialized") == \
        "Cannot disrupt NodeClaim: state node isn't initialized"
    assert rw.blocked_event(NEW, "Node", "node isn't initialized") == "Node isn't initialized"
    assert rw.scheduling_errors(OLD, "not all pods would schedule, x") == "not all pods would schedule, x"
    assert rw.scheduling_errors(NEW, "not all pods would schedule, x") == "Not all pods would schedule, x"


def test_when_empty_message():
    assert rw.when_empty_not_empty(OLD, "default") == 'NodePool "default" has non-empty consolidation disabled'
    assert rw.when_empty_not_empty(NEW, "default") == \
        'NodePool "default" has consolidation policy WhenEmpty, but node is not empty'
