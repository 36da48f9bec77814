"""Mutation testing of scenario expectations (issue 29): every scalar an expectation states, changed,
must make the scenario fail or be refused by validation; one that survives is an expectation that
checks nothing (a key the checker ignores, a selector that does not select, an override no
profile reaches).

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import copy
import json
import random
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import jsonschema

from harness.loop.result import RunResult
from harness.runner.engines import base as engine_base
from harness.runner.engines import get_engine
from harness.scenario.expect.match import check, check_explored
from harness.judge.explore import expectation as explored_expectation
from harness.judge.explore import run_scenario
from harness.scenario.load import Scenario, check_semantics, schema_errors, schema
from harness.scenario.shapes import scenario_value_errors

SUFFIX = "-mutated"
WEAKEN_ONLY_LISTS = frozenset({"labelsAbsent", "taintsAbsent", "kubeletNodeLabelsAbsent",
                               "requirementsAbsent", "valuesExclude", "nodeClaimConditionsAbsent"})
# scalars that say what a value is not: another excluded value is no stronger a check (a label's
# `notValue: v` suffixed still holds wherever `v` did, absent label or another value)
WEAKEN_ONLY_KEYS = frozenset({"notValue"})
UPPER_BOUNDS = frozenset({"maxLaunched", "maxIterations", "max"})
# core's ExpectMaxSkew bound, restated: raised it only weakens, lowered it asks more than upstream asserts
# (the simulation may well spread tighter); what keeps it from holding vacuously is its topologyKey, whose
# mutant must fail (expect.py fails a bound over no domain)
STATED_BOUNDS = frozenset({"maxSkew"})
# booleans whose false checks nothing: flipping true to false only relaxes the expectation (offeringsExactly:
# false compares as a subset; noEvents: false does not look at events), so true is not mutated
ONLY_TRUE_CHECKS = frozenset({"offeringsExactly", "noEvents"})
NUMBERED_STRINGS = frozenset({"ttl", "capacity", "allocatable"})     # the key, or the map it is in
# enum values that pick members of a collection (a subset of a label's writers, VMs by priority,
# taints by effect): another enum value may be just as true there, so they are suffixed (and refused)
MATCHING_ENUMS = frozenset({"writers", "priority", "effect"})
# a timeline action's next enum value is what follows it in every disruption (deleting, draining, drained,
# instance terminating, terminated), so that mutant holds wherever the original did; the contradiction is
# the disruption abandoned (the node untainted), or for an abandoned one, the node deleted
CONTRADICTIONS = {"action": ("untainted", "deleting")}
_NUMBER = re.compile(r"^(\d+)(.*)$")


@dataclass
class Checkpoint:
    """One check the engine made: where (`expect` or `steps[i].expect`), under which profile, the
    merged expectation it checked and the RunResult as it was then."""
    root: str
    step: int | None
    profile: str
    expect: dict
    result: RunResult


@dataclass
class Subject:
    """A scenario document whose runs passed, with every check point of every profile it ran under."""
    scenario: Scenario
    checkpoints: list[Checkpoint]
    profiles: list[str]


@dataclass
class Mutant:
    path: tuple               # into the document's data
    old: object
    new: object
    file: str
    line: int
    note: str = ""            # what the change is, where old/new are whole blocks

    def describe(self) -> str:
        if self.note:
            return f"{self.file}:{self.line}: {self.note}"
        return f"{self.file}:{self.line}: {dotted(self.path)}: {self.old!r} -> {self.new!r}"


@dataclass
class Tally:
    documents: int = 0
    runs: int = 0
    skipped: list[str] = field(default_factory=list)      # documents not run in-process, and why
    mutants: int = 0
    killed: int = 0
    refused: int = 0
    equivalent: int = 0        # survived, but the mutated expectation says what the original does (same_commands)
    survivors: list[Mutant] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)       # a traceback from validation or the checker
    record_seconds: float = 0.0
    mutate_seconds: float = 0.0


def dotted(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f'["{p}"]' if re.search(r"[^A-Za-z0-9_-]", p) else f".{p}")
    return out.lstrip(".")


# -- recording ---------------------------------------------------------------------------------------
def record(scenario: Scenario, cluster) -> tuple[Subject | None, str]:
    """Run `scenario` under each profile it declares that is expected to pass (not xfail) and keep
    every check point; (None, why) when it cannot run in-process or a run fails."""
    if "embedded" not in scenario.backends:
        return None, f"runs on {', '.join(scenario.backends)} only"
    profiles = [p for p in scenario.profiles if scenario.xfail_reason(p) is None]
    if not profiles:
        return None, "every profile is an xfail"
    last_root = f"steps[{len(scenario.steps) - 1}].expect" if scenario.steps else "expect"
    points: list[Checkpoint] = []
    engine = get_engine("simulated")
    for profile in profiles:
        seen: list[Checkpoint] = []

        def recorder(expect, result, sc=None, root="expect", prof=None, _seen=seen, **kw):
            step = int(root[6:root.index("]")]) if root.startswith("steps[") else None
            snap = result if root == last_root else copy.deepcopy(result)
            # the expectation as the document states it (an exploration checks each run without
            # `outcomes`, and the set with them)
            _seen.append(Checkpoint(root, step, prof, explored_expectation(scenario, prof, root), snap))
            return check(expect, result, sc, root, prof, **kw)

        with mock.patch.object(engine_base, "check", recorder):
            outcome = run_scenario(engine, scenario, profile, cluster)
        runs = len(outcome.exploration.views) if outcome.exploration is not None else 1
        if outcome.passed and len(seen) != runs * (1 + len(scenario.steps)):
            raise RuntimeError(f"the engine made {len(seen)} checks for {runs} x {1 + len(scenario.steps)} check "
                               "points: it no longer checks through harness.runner.engines.base.check (update "
                               "harness/judge/mutation.py record)")
        if not outcome.passed:
            return None, f"fails under {profile}: {outcome.mismatches[0].render()}"
        points += seen
    return Subject(scenario, points, profiles), ""


# -- enumerating mutants --------------------------------------------------------------------------------
def expectation_blocks(data: dict) -> list[tuple]:
    """Paths of every expectation block of a scenario document."""
    out = []
    if isinstance(data.get("expect"), dict):
        out.append(("expect",))
    for p in data.get("expectByProfile") or {}:
        out.append(("expectByProfile", p))
    for i, step in enumerate(data.get("steps") or []):
        if isinstance(step.get("expect"), dict):
            out.append(("steps", i, "expect"))
        for p in step.get("expectByProfile") or {}:
            out.append(("steps", i, "expectByProfile", p))
    return out


def _get(data, path: tuple):
    for p in path:
        data = data[p]
    return data


def _ref(s: dict) -> dict:
    while "$ref" in s or "allOf" in s:
        if "allOf" in s:          # an expectation block with a restriction (`outcomes` entries): the block
            s = s["allOf"][0]
            continue
        s = schema()["$defs"][s["$ref"].rsplit("/", 1)[-1]]
    return s


_BRANCH_VALIDATORS: dict[int, jsonschema.Draft202012Validator] = {}


def _branch(s: dict, value) -> dict:
    """The alternative of a oneOf/anyOf that `value` takes."""
    s = _ref(s)
    for key in ("oneOf", "anyOf"):
        for b in s.get(key) or []:
            v = _BRANCH_VALIDATORS.get(id(b))
            if v is None:
                v = _BRANCH_VALIDATORS[id(b)] = jsonschema.Draft202012Validator({"$defs": schema()["$defs"], **b})
            if v.is_valid(value):
                return _branch(b, value)
    return s


def schema_at(block: dict, rel: tuple) -> dict:
    """The schema of the value at `rel` inside an expectation block."""
    s, node = schema()["$defs"]["expect"], block
    for p in rel:
        s = _branch(s, node)
        if isinstance(p, int):
            s = s.get("items") or {}
        else:
            extra = s.get("additionalProperties")
            s = (s.get("properties") or {}).get(p) or (extra if isinstance(extra, dict) else {})
        node = node[p]
    return _branch(s, node)


def _leaves(node, path: tuple):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, path + (i,))
    else:
        yield path, node


def _in_absent_entry(body: dict, rel: tuple) -> bool:
    """Whether the leaf belongs to an entry that says something does not happen (`absent: true`,
    expect.disruption's events and timeline): a changed field is another absence, no stronger, and the
    flipped flag claims the entry happens somewhere, which a run can hold as well."""
    node = body
    for step in rel[:-1]:
        node = node[step]
        if isinstance(node, dict) and node.get("absent") is True:
            return True
    return False


def mutations(key: str, value, enum: list | None) -> list:
    """The mutated values of one scalar whose key (or, in a list, the list's key) is `key`."""
    if isinstance(value, bool):
        return [] if (key in ONLY_TRUE_CHECKS and value) else [not value]
    if isinstance(value, int):
        if key in STATED_BOUNDS:
            return []
        return [value - 1 if key in UPPER_BOUNDS else value + 1]
    if isinstance(value, float):
        return [value + 1]
    if isinstance(value, str):
        if key in CONTRADICTIONS:
            alt, other = CONTRADICTIONS[key]
            return [alt if value != alt else other]
        if enum and key not in MATCHING_ENUMS:
            others = [e for e in enum if e != value]
            return [others[(enum.index(value) if value in enum else 0) % len(others)]] if others else []
        if key.endswith("Regex"):
            return [f"(?:{value}){SUFFIX}"]
        m = _NUMBER.match(value)
        if key in NUMBERED_STRINGS and m:
            return [f"{int(m[1]) + 1}{m[2]}"]
        return [value + SUFFIX]
    return []


def mutants(scenario: Scenario, data: dict | None = None) -> list[Mutant]:
    """Every mutant of the document's expectations, in document order."""
    data = scenario.doc.data if data is None else data
    out = []
    for block in expectation_blocks(data):
        profile = block[-1] if len(block) > 1 and block[-2] == "expectByProfile" else None
        if profile is not None and scenario.xfail_reason(profile) is not None:
            continue                    # only a run known to fail reads it
        body = _get(data, block)
        never = (body.get("outcomes") or {}).get("never") if isinstance(body.get("outcomes"), dict) else None
        for i, _ in enumerate(never or []):
            outcomes = body["outcomes"]
            flipped = {**outcomes, "never": [e for j, e in enumerate(never) if j != i],
                       "possible": [*(outcomes.get("possible") or []), never[i]]}
            out.append(Mutant(block + ("outcomes",), outcomes, flipped, str(scenario.file),
                              scenario.doc.line(block + ("outcomes", "never", i)),
                              f"{dotted(block + ('outcomes', 'never', i))}: never -> possible"))
        for rel, value in _leaves(body, ()):
            if not rel or rel[:2] == ("outcomes", "never"):
                continue
            in_list = isinstance(rel[-1], int)
            key = next((p for p in reversed(rel) if isinstance(p, str)), "")
            if (in_list and key in WEAKEN_ONLY_LISTS) or key in WEAKEN_ONLY_KEYS:
                continue
            if _in_absent_entry(body, rel):
                continue
            if key == "max" and len(rel) >= 3 and rel[-3] == "skew":
                continue        # a skew entry's max restates core's bound (topology_test.go: ExpectSkew(...)
                                # .ToNot(ContainElements(BeNumerically(">", n)))): a stated bound, as maxSkew
            if key not in NUMBERED_STRINGS and len(rel) > 1 and rel[-2] in NUMBERED_STRINGS:
                key = rel[-2]                        # capacity.cpu: "2" is a quantity
            enum = schema_at(body, rel).get("enum")
            for new in mutations(key, value, enum):
                path = block + rel
                if _another_possible(body, rel, new):
                    continue    # the entry becomes another listed possible outcome: it claims nothing new
                out.append(Mutant(path, value, new, str(scenario.file), scenario.doc.line(path)))
    return out


def _another_possible(body: dict, rel: tuple, new) -> bool:
    """Whether mutating the leaf at `rel` to `new` turns an `outcomes.possible` entry into a copy of another
    entry of that list: a possible outcome says the run may end so, and the mutant would only say again that
    the other outcome is possible (controller-pods: possible launched 2 or 3; 2 -> 3 lists 3 twice)."""
    if len(rel) < 4 or rel[:2] != ("outcomes", "possible"):
        return False
    entries = body["outcomes"]["possible"]
    mutated = copy.deepcopy(entries[rel[2]])
    node = mutated
    for part in rel[3:-1]:
        node = node[part]
    node[rel[-1]] = new
    return any(mutated == e for j, e in enumerate(entries) if j != rel[2])


# -- judging a mutant ---------------------------------------------------------------------------------
def refused(scenario: Scenario, data: dict) -> bool:
    """Whether loading refuses the document with `data`: the checks of `_scenario_from` that read
    expectations (the schema, the profiles named in expectByProfile, the value checks)."""
    doc = copy.copy(scenario.doc)
    doc.data = data
    return bool(schema_errors(doc) or check_semantics(doc, data) or scenario_value_errors(data))


def expectation_at(data: dict, point: Checkpoint, scenario: Scenario) -> dict:
    """The merged expectation the engine checks at `point` for a document with `data`
    (engines.base.execute: `scenario.expect_for(profile[, step expect, step expectByProfile])`)."""
    if point.step is None:
        return scenario.expect_for(point.profile, data.get("expect") or {}, data.get("expectByProfile") or {})
    step = data["steps"][point.step]
    return scenario.expect_for(point.profile, step.get("expect") or {}, step.get("expectByProfile") or {})


def fails(subject: Subject, data: dict) -> bool:
    """Whether any check point of the recorded runs fails for the document with `data`; the runs of
    an exploration (one check point under several seeds) are judged together."""
    groups: dict[tuple, list[Checkpoint]] = {}
    for point in subject.checkpoints:
        groups.setdefault((point.profile, point.root), []).append(point)
    for points in groups.values():
        expect = expectation_at(data, points[0], subject.scenario)
        if len(points) == 1 and "outcomes" not in expect:
            failed = check(expect, points[0].result, None, points[0].root, points[0].profile)
        else:
            failed = check_explored(expect, [p.result for p in points], None, points[0].root, points[0].profile)
        if failed:
            return True
    return False


def judge(subject: Subject, mutant: Mutant, data: dict) -> str:
    """"refused", "killed" or "survived"; `data` (a private copy of the document) is mutated in
    place and restored."""
    parent = _get(data, mutant.path[:-1])
    parent[mutant.path[-1]] = mutant.new
    try:
        if refused(subject.scenario, data):
            return "refused"
        if fails(subject, data):
            return "killed"
        return "equivalent" if same_commands(subject, mutant) or same_timeline(subject, mutant) \
            or selects_none(parent, mutant) else "survived"
    finally:
        parent[mutant.path[-1]] = mutant.old


def selects_none(entry, mutant: Mutant) -> bool:
    """A string selector of a `count: 0` entry renamed (`{pod: w1, nodePool: np1, count: 0}` -> `np1-mutated`):
    the entry says no object matches, which a name no object carries makes true in every run - a mutant no run
    can kill, not a gap in the expectation."""
    return isinstance(entry, dict) and entry.get("count") == 0 and isinstance(mutant.new, str) \
        and mutant.path[-1] != "count"


def same_commands(subject: Subject, mutant: Mutant) -> bool:
    """A `disrupted[i].command` renumbered onto a command that did the same as the original in every run
    (reason, decision, candidates, replacements; the nodes aside): an equivalent mutant, no gap in the
    expectation (emptiness budgets: 30% of ten empty nodes deletes three, then 30% of seven three again)."""
    if mutant.path[-1] != "command" or "disrupted" not in mutant.path:
        return False

    def shape(records, n):
        return sorted(json.dumps({k: v for k, v in d.items() if k in COMMAND_SHAPE}, sort_keys=True, default=str)
                      for d in records if d.get("commandIndex") == n)
    runs = [cp.result.disruptions for cp in subject.checkpoints]
    return bool(runs) and all(shape(r, mutant.old) == shape(r, mutant.new) != [] for r in runs)


def same_timeline(subject: Subject, mutant: Mutant) -> bool:
    """A `timeline[i].node` renumbered onto a node whose timeline was the original's in every run (its actions and
    details in order, at the same instants): two nodes one command took alike (multi-node consolidation
    validates and deletes both), an equivalent mutant, no gap in the expectation."""
    if mutant.path[-1] != "node" or "timeline" not in mutant.path:
        return False

    def actions(result, index):
        node = next((n for n in result.nodes if n.index == index), None)
        if node is None:
            return None
        return [(t["action"], t.get("detail"), t.get("t")) for t in result.timeline
                if t.get("node") == node.name or (node.nodeclaim and t.get("nodeClaim") == node.nodeclaim)]
    runs = [cp.result for cp in subject.checkpoints]
    return bool(runs) and all((a := actions(r, mutant.old)) is not None and a == actions(r, mutant.new)
                              for r in runs)


# what a disruption record says about its command, apart from which nodes it took
COMMAND_SHAPE = ("reason", "decision", "candidates", "method", "replacements", "replacementCount")


def run_mutation(scenarios: list[Scenario], cluster, *, sample: int | None = None, seed: int = 1,
                 progress=None) -> Tally:
    """Record every scenario, then judge its mutants (all, or `sample` of them chosen with `seed`)."""
    tally = Tally()
    subjects = []
    t0 = time.perf_counter()
    for sc in scenarios:
        subject, why = record(sc, cluster)
        if subject is None:
            tally.skipped.append(f"{sc.file}:{sc.line}: {sc.name}: {why}")
            continue
        tally.documents += 1
        tally.runs += len(subject.profiles)
        subjects.append(subject)
    tally.record_seconds = time.perf_counter() - t0
    return judge_all(subjects, sample=sample, seed=seed, progress=progress, tally=tally)


def judge_all(subjects: list[Subject], *, sample: int | None = None, seed: int = 1, progress=None,
              tally: Tally | None = None) -> Tally:
    """Judge the mutants of recorded subjects (all, or `sample` of them chosen with `seed`)."""
    if tally is None:
        tally = Tally(documents=len(subjects), runs=sum(len(s.profiles) for s in subjects))
    work = [(s, m) for s in subjects for m in mutants(s.scenario)]
    if sample is not None and sample < len(work):
        work = random.Random(seed).sample(work, sample)
    t0 = time.perf_counter()
    copies: dict[int, dict] = {}
    for subject, m in work:
        data = copies.setdefault(id(subject), copy.deepcopy(subject.scenario.doc.data))
        tally.mutants += 1
        try:
            verdict = judge(subject, m, data)
        except Exception:  # noqa: BLE001 - a traceback from validation or the checker is a finding
            tally.errors.append(f"{m.describe()}: {traceback.format_exc()}")
            continue
        if verdict == "refused":
            tally.refused += 1
        elif verdict == "equivalent":
            tally.equivalent += 1
        elif verdict == "killed":
            tally.killed += 1
        else:
            tally.survivors.append(m)
        if progress:
            progress(tally)
    tally.mutate_seconds = time.perf_counter() - t0
    return tally


def library(paths: list[str | Path]) -> list[Scenario]:
    from harness.scenario.load import find_scenario_files, load_scenarios
    return [sc for f in find_scenario_files(paths) for sc in load_scenarios(f)]
