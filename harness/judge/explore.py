"""Outcome sets (issue 28): a scenario run under several seeds, and the distinct outcomes it reaches.

Where upstream breaks a tie at random (Go map order in core's topology, kube-scheduler's `selectHost`
among equal scores) or races (which Node becomes Ready first), one run of the simulation is one draw.
The loop draws every such choice from its one seeded RNG (harness/loop/state.py), so a
scenario run under seeds `given.seed`, `given.seed + 1`, ... explores what upstream can do, and each
seed replays exactly. With `races` (`harness run --explore N`, the conformance judge) each run after
the first also turns the loop's timing races the scenario leaves open on or off (harness/loop/races.py),
recorded per run so every outcome names the options that replay it.

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from harness.loop import races as loop_races
from harness.runner.engines.base import Checkpoint, Outcome, errored, execute, execute_guarded
from harness.scenario.expect.match import check_explored, merge_runs
from harness.judge.outcome import digest, outcome_view
from harness.scenario.load import Scenario

DEFAULT_EXPLORE = 8          # seeds a scenario with `outcomes` and no given.explore runs under
MAX_SEED = 2 ** 63           # given.seed's range (the schema's maximum + 1)


def has_outcomes(scenario: Scenario) -> bool:
    blocks = [scenario.expect, *scenario.expect_by_profile.values()]
    for step in scenario.steps:
        blocks += [step.get("expect") or {}, *(step.get("expectByProfile") or {}).values()]
    return any(isinstance(b, dict) and "outcomes" in b for b in blocks)


def declared(scenario: Scenario) -> int | None:
    """The seeds the scenario asks to be explored under: given.explore, or DEFAULT_EXPLORE when an
    expectation has `outcomes`; None for a plain run."""
    n = scenario.given.get("explore")
    if n:
        return int(n)
    return DEFAULT_EXPLORE if has_outcomes(scenario) else None


def seeds(scenario: Scenario, n: int) -> list[int]:
    """The scenario's own seed first, then the next ones: run 0 of an exploration is the plain run."""
    return [(scenario.seed + k) % MAX_SEED for k in range(n)]


def _strip(expect: dict | None) -> dict:
    return {k: v for k, v in (expect or {}).items() if k != "outcomes"}


def with_seed(scenario: Scenario, seed: int, strip_outcomes: bool = False) -> Scenario:
    """The scenario under another seed (the document, its lines and its digest unchanged).
    `strip_outcomes`: without its `outcomes` blocks, which only the whole set can answer."""
    sc = dataclasses.replace(scenario, given={**scenario.given, "seed": seed})
    if strip_outcomes:
        sc = dataclasses.replace(
            sc, expect=_strip(sc.expect),
            expect_by_profile={p: _strip(e) for p, e in sc.expect_by_profile.items()},
            steps=[{**s, "expect": _strip(s.get("expect")),
                    "expectByProfile": {p: _strip(e) for p, e in (s.get("expectByProfile") or {}).items()}}
                   if isinstance(s, dict) else s for s in sc.steps])
    return sc


def with_races(scenario: Scenario, loop: dict) -> Scenario:
    """The scenario with `loop` added to its given.loop (the races a run of an exploration turned on)."""
    if not loop:
        return scenario
    return dataclasses.replace(scenario, given={**scenario.given, "loop": {**(scenario.given.get("loop") or {}), **loop}})


@dataclass
class Exploration:
    """The runs of one scenario x profile under `seeds`, in that order."""
    seeds: list[int]
    outcomes: list[Outcome]
    views: list[dict] = field(default_factory=list)     # outcome.outcome_view of each run's final state
    # the given.loop options each run added (harness/loop/races.py draw); empty: the scenario as written
    races: list[dict] = field(default_factory=list)

    def races_of(self, seed: int) -> dict:
        """The options the run under `seed` added (its replay: the scenario with these under given.loop)."""
        i = self.seeds.index(seed)
        return self.races[i] if i < len(self.races) else {}

    def distinct(self) -> list[tuple[dict, list[int]]]:
        """(outcome, the seeds that reached it), most frequent first (then by first seed)."""
        groups: dict[str, tuple[dict, list[int]]] = {}
        for seed, view in zip(self.seeds, self.views):
            groups.setdefault(digest(view), (view, []))[1].append(seed)
        return sorted(groups.values(), key=lambda g: -len(g[1]))

    def contains(self, view: dict) -> bool:
        return digest(view) in {digest(v) for v in self.views}


def explore(engine, scenario: Scenario, profile: str, cluster, n: int, *, why: list[str] | None = None,
            races: bool = False, timings: bool = False, **options) -> Outcome:
    """Run the scenario under `n` seeds; the outcome of the first (the scenario's own seed), whose
    mismatches are every run's (each said once, with the seeds it happened under) and those of
    `outcomes` over the set, with the `Exploration` attached. `races`: each run after the first also
    varies the timing races the scenario leaves open (harness/loop/races.py draw); `timings`: and draws the
    timings it does not give (node boot, VM deletion: races.draw_timings)."""
    runs: list[Outcome] = []
    points: list[list[Checkpoint]] = []
    added: list[dict] = []
    loop = scenario.given.get("loop") or {}
    for k, seed in enumerate(seeds(scenario, n)):
        cps: list[Checkpoint] = []
        added.append(loop_races.draw(loop, seed, k) if races else {})
        if timings:         # over the races' draw: a drawn boot replaces the nodeBoot race's 1s
            added[-1].update(loop_races.draw_timings(loop, seed, k))
        sc = with_races(with_seed(scenario, seed, strip_outcomes=True), added[-1])
        runs.append(execute(engine, sc, profile, cluster, why=why if not runs else None, checkpoints=cps, **options))
        points.append(cps)
    first = runs[0]
    if first.skipped:
        return first
    mismatches = []
    roots = []
    for cps in points:
        roots += [cp.root for cp in cps if cp.root not in roots]
    for root in roots:                  # `expect`, then each step's, as far as the runs got
        at = [(o, cp) for o, cps in zip(runs, points) for cp in cps if cp.root == root]
        mismatches += check_explored(expectation(scenario, profile, root), [cp.result for _, cp in at], scenario,
                                     root, profile, per_run=[cp.mismatches for _, cp in at])
    # what no check point holds: a step the run's state did not allow, an engine error
    seen = {id(m) for cps in points for cp in cps for m in cp.mismatches}
    mismatches += merge_runs([(o.result.seed, [m for m in o.mismatches if id(m) not in seen]) for o in runs])
    # the first run, judged over the set; the runs themselves keep their own mismatches
    return dataclasses.replace(first, mismatches=mismatches, seconds=sum(r.seconds for r in runs),
                               exploration=Exploration([r.result.seed for r in runs], runs,
                                                       [outcome_view(r.final) for r in runs], added))


def expectation(scenario: Scenario, profile: str, root: str) -> dict:
    """The merged expectation the engine checks at `root` (base.execute)."""
    if root == "expect":
        return scenario.expect_for(profile)
    step = scenario.steps[int(root[len("steps["):root.index("]")])]
    return scenario.expect_for(profile, step.get("expect") or {}, step.get("expectByProfile") or {})


def run_scenario(engine, scenario: Scenario, profile: str, cluster, *, explore_seeds: int | None = None,
                 races: bool = False, timings: bool = False, why: list[str] | None = None, **options) -> Outcome:
    """One scenario x profile as the runner runs it: explored when the scenario asks to (or
    `explore_seeds` says so) on the simulated engine, else one run (base.execute_guarded). Either
    way a run that raises is that scenario's ERROR verdict (base.errored) and the others go on.
    `races`: the exploration also varies the timing races the scenario leaves open (`explore`); a
    scenario's own exploration does not (its outcome set is judged as it states its races)."""
    n = explore_seeds or declared(scenario)
    if n is None or engine.name != "simulated":
        return execute_guarded(engine, scenario, profile, cluster, why=why, **options)
    t0 = time.perf_counter()
    try:
        return explore(engine, scenario, profile, cluster, n, why=why, races=races, timings=timings, **options)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as e:      # noqa: BLE001 - isolation, as base.execute_guarded
        return errored(engine.name, scenario, profile, cluster.backend, e, time.perf_counter() - t0)


# -- reporting ------------------------------------------------------------------------------------
def _flat(obj, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_flat(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _claims(n: int) -> str:
    return f"{n} NodeClaim" + ("" if n == 1 else "s")


def describe(view: dict) -> str:
    """One outcome in a line: NodeClaims, node sizes, pod states, runaway."""
    sizes: dict[str, int] = {}
    for n in view.get("nodes") or []:
        sizes[n["instanceType"]] = sizes.get(n["instanceType"], 0) + 1
    states: dict[str, int] = {}
    for v in (view.get("pods") or {}).values():
        for state, count in (v.items() if isinstance(v, dict) else [(v, 1)]):
            states[state] = states.get(state, 0) + count
    text = _claims(view.get("nodeClaimsLaunched", 0))
    if sizes:
        text += " (" + ", ".join(f"{c}x {s}" for s, c in sorted(sizes.items())) + ")"
    if states:
        text += "; pods " + ", ".join(f"{c} {s}" for s, c in sorted(states.items()))
    if view.get("runaway"):
        text += "; runaway"
    return text


def differences(view: dict, base: dict, limit: int = 4) -> list[str]:
    """The fields where `view` differs from `base`, as `field: base -> view`."""
    a, b = _flat(base), _flat(view)
    # totals and node sizes before the labels that follow from them
    keys = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=lambda k: ("abels." in k, k))
    out = [f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in keys[:limit]]
    return out + ([f"... {len(keys) - limit} more"] if len(keys) > limit else [])


def headline(ex: Exploration) -> str:
    """'4 NodeClaims in 7 of 10, 5 in 3 of 10' (or the count of distinct outcomes when the
    NodeClaim count does not tell them apart)."""
    n = len(ex.views)
    by_count: dict[int, int] = {}
    for v in ex.views:
        by_count[v.get("nodeClaimsLaunched", 0)] = by_count.get(v.get("nodeClaimsLaunched", 0), 0) + 1
    ordered = sorted(by_count.items(), key=lambda kv: (-kv[1], kv[0]))
    text = ", ".join((f"{_claims(c)} in {k} of {n}" if i == 0 else f"{c} in {k} of {n}")
                     for i, (c, k) in enumerate(ordered))
    distinct = len(ex.distinct())
    if distinct > len(by_count):
        text += f" ({distinct} distinct outcomes)"
    return text


def _seed_list(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds[:10])) + (", ..." if len(seeds) > 10 else "")


def render(o: Outcome) -> list[str]:
    """The text `harness run --explore` prints for one scenario x profile."""
    ex: Exploration = o.exploration
    head = f"{o.scenario.name} [{o.profile}]: {headline(ex)}"
    lines = [head]
    groups = ex.distinct()
    base = groups[0][0]
    for k, (view, group_seeds) in enumerate(groups):
        lines.append(f"  {len(group_seeds)} of {len(ex.views)}: {describe(view)}  (seeds {_seed_list(group_seeds)})")
        if any(ex.races):
            lines.append(f"      e.g. seed {group_seeds[0]}, {race_text(ex.races_of(group_seeds[0]))}")
        if k:
            lines += [f"      {d}" for d in differences(view, base)]
    return lines


def race_text(added: dict) -> str:
    """`given.loop {nodesReady: spread, nodeBoot: 1s}` or `the scenario as written`."""
    if not added:
        return "the scenario as written"
    return "given.loop {" + ", ".join(f"{k}: {v}" for k, v in added.items()) + "}"


def to_json(o: Outcome) -> dict:
    ex: Exploration = o.exploration
    return {"scenario": o.scenario.name, "file": str(o.scenario.file), "profile": o.profile,
            "runs": len(ex.views), "seeds": ex.seeds, "headline": headline(ex),
            "outcomes": [{"count": len(s), "seeds": s, "summary": describe(v), "outcome": v,
                          "races": [ex.races_of(x) for x in s]}
                         for v, s in ex.distinct()],
            "mismatches": [m.render() for m in o.mismatches]}
