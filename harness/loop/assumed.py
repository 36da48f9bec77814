"""The timings a scenario may leave out, the values the simulation then assumes, and a cheap test of whether a
run's outcome could hang on them: said in one line of the run's notices (RunResult.assumed), so a run that
reproduced something on an assumed timing says which.

Neither default is a measurement: both are harness assumptions (docs/limits.md "Timings the input does not
give"), kept because the scenario library's results are pinned on them. `harness run --explore` draws each from
`explored` instead (harness/loop/races.py draw_timings)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.loop.result import RunResult


@dataclass(frozen=True)
class Timing:
    key: str                    # the given.loop key (a duration)
    assumed: str                # the value assumed when the scenario does not set it, in words
    explored: tuple[str, ...]   # what `harness run --explore` draws from (races.draw_timings), the default among them


# harness assumption: spreads from at once to minutes, no measured distribution - a VM boots and registers its Node
# in about a minute or more, a force delete of a VM takes tens of seconds to minutes (docs/races.md "Timings")
SPREAD = ("0s", "15s", "45s", "90s", "3m")
NODE_BOOT = Timing("nodeBoot", "a launched VM registers its Node at once (nodeBoot 0s)", SPREAD)
VM_DELETE = Timing("vmDelete", "Azure deletes a VM at once (vmDelete 0s)", SPREAD)
TIMINGS = (NODE_BOOT, VM_DELETE)
TIMING_KEYS = tuple(t.key for t in TIMINGS)


def mattered(result: RunResult, boot_overlapped: bool) -> list[Timing]:
    """The timings the run's outcome could hang on, judged from what it did:
    - nodeBoot, when one settle launched NodeClaims at two instants or deleted one it launched
      (`boot_overlapped`: a later round, or the disruption controller, met - or with a boot would have met - a
      launch still in flight; churn such as create, empty, delete is that), or a disruption command waited on
      a replacement's initialization. A settle that launched once and bound its pods waits for the boot, whatever
      it is: no notice;
    - vmDelete, when its disruptions came at two instants or more (each node's VM deletion holds the NodePool's
      disruption budget until it ends, which paces the next: a drain of many nodes under a small budget takes
      as many VM deletions in turn)."""
    out = []
    if boot_overlapped or any(d.get("replacements") for d in result.disruptions):
        out.append(NODE_BOOT)
    if len({d["at"] for d in result.disruptions if d.get("at") is not None}) > 1:
        out.append(VM_DELETE)
    return out


def notice(result: RunResult, given: frozenset[str], boot_overlapped: bool) -> str | None:
    """The run's one line about the timings it assumed and its outcome may depend on (`given`: the timing keys
    the scenario sets); None when there is none."""
    timings = [t for t in mattered(result, boot_overlapped) if t.key not in given]
    if not timings:
        return None
    keys = " and ".join(f"given.loop.{t.key}" for t in timings)
    return (f"assumed timings the scenario does not give: {'; '.join(t.assumed for t in timings)}. The outcome "
            f"may depend on them: set {keys}, or vary them with `harness run --explore N`")
