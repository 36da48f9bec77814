"""A run's behaviour fingerprint: a short digest of everything a scenario run produced (node labels
with their writers, NodeClaims, pods, events, dropped SKUs, the fake's snapshot, the loop trace,
mismatches; wall-clock timings and the decision record left out), and of each run of an exploration.

Two runs with one fingerprint behaved the same. bench/fingerprint_library.py compares a whole library
before and after a change; tests/judge/test_fingerprint.py runs scenarios in one process in two orders
and asks for the same fingerprints (no state carried from one run to the next).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json

from harness.runner.engines.base import Outcome


def _plain(obj):
    """JSON-able view of a result: dataclasses as dicts without their empty fields (None, empty containers: a
    field added to a result, empty in every run that does not use it, moves no fingerprint), sets sorted,
    unknown objects by repr."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(v) for f in dataclasses.fields(obj)
                if (v := getattr(obj, f.name)) is not None and not (isinstance(v, (dict, list, tuple, set, frozenset))
                                                                    and not v)}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(repr(v) for v in obj)
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


# what a run said about itself rather than what it did: the wall-clock timings, its reasons (the decision
# record and the switches it read, harness/loop/decisions.py, and what `--why` reads beside it) and the timings
# it assumed (harness/loop/assumed.py), so a change that only adds or rewords such a line moves no fingerprint;
# and what it derives from what it did (`unmade`: its FailedCreate events and pods)
NOT_BEHAVIOUR = ("timings", "decisions", "core_consulted", "facts_consulted", "facts_listed_only", "why_facts",
                 "assumed", "unmade")


def result_digest(result) -> str:
    """One RunResult (or any dataclass), what NOT_BEHAVIOUR names left out."""
    view = _plain(result)
    for key in NOT_BEHAVIOUR:
        view.pop(key, None)
    return hashlib.sha256(json.dumps(view, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def fingerprint(outcome: Outcome) -> str:
    """The run's result, each step's, its mismatches, and (explored) every seed's run the same way."""
    parts = [result_digest(outcome.result)] + [result_digest(r) for r in outcome.step_results]
    parts.append(hashlib.sha256(repr([str(m) for m in outcome.mismatches]).encode()).hexdigest()[:8])
    exploration = outcome.exploration
    if exploration is not None:
        parts += [fingerprint(dataclasses.replace(o, exploration=None)) for o in exploration.outcomes[1:]]
    return "-".join(parts)
