"""The mutation test of the library's expectations (issue 29), sampled; the whole library runs
nightly (tools/mutate_expectations.py). Also the proof that re-checking recorded results gives the
verdict a full load-and-run of the mutated file gives (harness/judge/mutation.py, points 1-3)."""
from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.backends.embedded import EmbeddedBackend
from harness.judge import mutation
from harness.runner.engines import get_engine
from harness.scenario.expect.match import check
from harness.judge.explore import declared, run_scenario
from harness.scenario.load import load_scenarios_text
from harness.scenario.yamlsource import SourceError

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("HARNESS_MUTATION_SEED", "29"))
SAMPLE_DOCUMENTS = 30
SAMPLE_MUTANTS = 240  # documents are added (same seeded order) until the sample states this many mutants


@pytest.fixture(scope="module")
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


@pytest.fixture(scope="module")
def library():
    return mutation.library([ROOT / "scenarios"])


@pytest.fixture(scope="module")
def subjects(library, cluster) -> list:
    """The sampled documents, each recorded once for every test here."""
    out = []
    for sc in _sample(library, SAMPLE_DOCUMENTS):
        subject, _ = mutation.record(sc, cluster)
        if subject is not None:
            out.append(subject)
    return out


def _sample(library, n: int, min_mutants: int = SAMPLE_MUTANTS) -> list:
    """At least `n` documents chosen with SEED, always including ones with steps and with per-profile
    overrides; more are taken in the same seeded order until they state `min_mutants` mutants (how
    many a document has varies tenfold, so a fixed count of documents would make the size of the
    test depend on which ones the seed draws)."""
    rng = random.Random(SEED)
    with_steps = [sc for sc in library if sc.steps and "embedded" in sc.backends]
    with_overrides = [sc for sc in library if sc.expect_by_profile and not sc.steps]
    picked = rng.sample(with_steps, 3) + rng.sample(with_overrides, 3)
    rest = [sc for sc in library if sc not in picked]
    order = rng.sample(rest, len(rest))
    take = max(0, n - len(picked))
    out = picked + order[:take]
    stated = sum(len(mutation.mutants(sc)) for sc in out)
    for sc in order[take:]:
        if stated >= min_mutants:
            break
        out.append(sc)
        stated += len(mutation.mutants(sc))
    return out


def _plain(obj):
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj) if f.name != "timings"}
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)


def digest(result) -> str:
    return hashlib.sha256(json.dumps(_plain(result), sort_keys=True, default=repr).encode()).hexdigest()


# -- the sampled mutation test -------------------------------------------------------------------------
def test_sampled_library_mutants_fail_or_are_refused(subjects, capsys):
    t = mutation.judge_all(subjects)
    with capsys.disabled():
        print(f"\nmutation (seed {SEED}): {t.documents} documents, {t.runs} runs, {t.mutants} mutants: {t.killed} killed, "
              f"{t.refused} refused, {t.equivalent} equivalent, {len(t.survivors)} survived, {len(t.errors)} tracebacks")
    # the sample is drawn from the whole library, so its size moves whenever a scenario file is added
    # (30 documents gave 167-221 mutants): the floor is per sampled document, not a fixed count
    assert t.mutants >= 5 * t.documents
    assert not t.errors, t.errors[0]
    assert not t.survivors, "\n".join(f"{m.describe()}: survived" for m in t.survivors)


def test_a_vacuous_expectation_survives_and_is_named(cluster, tmp_path):
    """The tool finds what the issue found: an override that every profile replaces is refused at
    load now, so the vacuous case here is a selector-only entry whose index does not matter."""
    text = (ROOT / "scenarios" / "loop" / "nodepool-limits.scenario.yaml").read_text()
    stated = "  nodeCount: 2\n  pods:\n    a: {scheduled: true}\n    b: {scheduled: true}\n"
    assert stated in text
    text = text.replace(stated, stated + "  nodes:\n    - {index: 0, taintsAbsent: [example.com/none]}\n")
    scenarios = load_scenarios_text(text, "vacuous.scenario.yaml", ROOT / "scenarios" / "loop")
    t = mutation.run_mutation([sc for sc in scenarios if sc.name == "limits-nodes-same-pass-overshoots"], cluster)
    assert [mutation.dotted(m.path) for m in t.survivors] == ["expect.nodes[0].index"]
    assert t.survivors[0].describe().startswith(f"{ROOT / 'scenarios' / 'loop' / 'vacuous.scenario.yaml'}:")


def test_operators_never_only_weaken():
    assert mutation.mutations("runaway", True, None) == [False]
    assert mutation.mutations("offeringsExactly", True, None) == []          # false only relaxes
    assert mutation.mutations("offeringsExactly", False, None) == [True]
    assert mutation.mutations("maxLaunched", 3, None) == [2]
    assert mutation.mutations("minLaunched", 3, None) == [4]
    assert mutation.mutations("capacityType", "spot", ["on-demand", "spot"]) == ["on-demand"]
    assert mutation.mutations("writers", "kubelet", ["kubelet", "karpenter-core"]) == ["kubelet-mutated"]
    assert mutation.mutations("messageRegex", "a|b", None) == ["(?:a|b)-mutated"]
    assert mutation.mutations("ttl", "3m", None) == ["4m"]
    assert mutation.mutations("capacity", "7Gi", None) == ["8Gi"]
    assert mutation.mutations("zone", "1", None) == ["1-mutated"]


def test_weaken_only_lists_are_not_mutated(library):
    sc = next(s for s in library if "labelsAbsent" in json.dumps(s.doc.data.get("expect") or {}))
    assert not [m for m in mutation.mutants(sc) if any(p in mutation.WEAKEN_ONLY_LISTS for p in m.path)]


# -- the shortcut is equivalent ----------------------------------------------------------------------------
def _strip_expectations(data: dict) -> dict:
    data = copy.deepcopy(data)
    data.pop("expect", None)
    data.pop("expectByProfile", None)
    for s in data.get("steps") or []:
        s.pop("expect", None)
        s.pop("expectByProfile", None)
    return data


def test_1_results_do_not_depend_on_expectations(subjects, cluster):
    """A run of the document without any expectation produces the same results, step by step."""
    for subject in subjects[:8]:
        sc = subject.scenario
        bare = load_scenarios_text(yaml.safe_dump(_strip_expectations(sc.doc.data), sort_keys=False),
                                   f"bare-{sc.name}.scenario.yaml", sc.file.parent)[0]
        for profile in subject.profiles:
            seen = []
            with mutation.mock.patch.object(mutation.engine_base, "check",
                                            lambda e, r, *a, **k: seen.append(digest(r)) or []):
                # an exploration runs the bare document under the same seeds
                run_scenario(get_engine("simulated"), bare, profile, cluster, explore_seeds=declared(sc))
            recorded = [digest(p.result) for p in subject.checkpoints if p.profile == profile]
            assert seen == recorded, f"{sc.file}: {sc.name} [{profile}]"


def test_2_checking_leaves_the_result_unchanged(subjects):
    for subject in subjects[:8]:
        sc = subject.scenario
        for point in subject.checkpoints:
            before = digest(point.result)
            check(point.expect, point.result, sc, point.root, point.profile)
            for m in mutation.mutants(sc)[:20]:
                data = copy.deepcopy(sc.doc.data)
                mutation.judge(subject, m, data)
            assert digest(point.result) == before


def test_2_the_recorded_expectation_is_the_one_recomputed(subjects):
    for subject in subjects:
        sc = subject.scenario
        for point in subject.checkpoints:
            assert mutation.expectation_at(sc.doc.data, point, sc) == point.expect


def _as_run(verdict: str) -> str:
    """The fast verdict as a run can tell it: an `equivalent` mutant survives (the judge only adds that its
    mutated expectation says what the original does)."""
    return "survived" if verdict == "equivalent" else verdict


def _full_verdict(sc, subject, m: mutation.Mutant, cluster) -> str:
    """Write the mutated document out, load it as a file would be, and run every profile."""
    data = copy.deepcopy(sc.doc.data)
    parent = mutation._get(data, m.path[:-1])
    parent[m.path[-1]] = m.new
    try:
        mutated = load_scenarios_text(yaml.safe_dump(data, sort_keys=False), f"mutant-{sc.name}.scenario.yaml",
                                      sc.file.parent)[0]
    except SourceError:
        return "refused"
    return "killed" if any(run_scenario(get_engine("simulated"), mutated, p, cluster).mismatches
                           for p in subject.profiles) else "survived"


def test_3_fast_verdict_equals_a_full_load_and_run(subjects, cluster):
    rng = random.Random(SEED)
    compared = {"killed": 0, "refused": 0, "survived": 0}
    for subject in subjects[:9]:
        sc = subject.scenario
        ms = mutation.mutants(sc)
        chosen = rng.sample(ms, min(4, len(ms)))
        chosen += [m for m in ms if isinstance(m.old, str) and m.new == m.old + mutation.SUFFIX and
                   any(p in mutation.MATCHING_ENUMS for p in m.path if isinstance(p, str))][:2]
        # one the schema refuses (a scalar of the wrong type), and one that survives (a weakening
        # change the enumeration leaves out)
        typed = [m for m in ms if isinstance(m.old, (bool, int))][:1]
        chosen += [dataclasses.replace(m, new="wrong-type") for m in typed]
        for m in chosen:
            fast = _as_run(mutation.judge(subject, m, copy.deepcopy(sc.doc.data)))
            assert fast == _full_verdict(sc, subject, m, cluster), m.describe()
            compared[fast] += 1
    # one that survives: a weakening change the enumeration leaves out, in the first sampled document
    # that has a weaken-only list
    for subject in subjects:
        sc = subject.scenario
        paths = [p for block in mutation.expectation_blocks(sc.doc.data)
                 for p, v in mutation._leaves(mutation._get(sc.doc.data, block), block)
                 if isinstance(p[-1], int) and p[-2] in mutation.WEAKEN_ONLY_LISTS]
        if paths:
            m = mutation.Mutant(paths[0], mutation._get(sc.doc.data, paths[0]), "absent-mutated", str(sc.file), 0)
            fast = _as_run(mutation.judge(subject, m, copy.deepcopy(sc.doc.data)))
            assert fast == _full_verdict(sc, subject, m, cluster), m.describe()
            compared[fast] += 1
            break
    assert compared["killed"] >= 20 and compared["refused"] >= 1 and compared["survived"] >= 1, compared


def test_the_nightly_script_runs_and_reports(tmp_path):
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "mutate_expectations.py"),
                           str(ROOT / "scenarios" / "loop" / "nodepool-weight.scenario.yaml")],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 survived, 0 tracebacks" in proc.stdout, proc.stdout


def test_a_command_renumbered_onto_one_that_did_the_same_is_an_equivalent_mutant():
    """emptiness budgets (30% of ten empty nodes: three, then three again): `command: 1 -> 2` passes
    because the second command did what the first did; a command that did otherwise is no excuse."""
    from types import SimpleNamespace
    recs = [{"commandIndex": 1, "reason": "Empty", "decision": "delete", "candidates": 3, "node": f"n{i}"} for i in range(3)]
    recs += [{"commandIndex": 2, "reason": "Empty", "decision": "delete", "candidates": 3, "node": f"m{i}"} for i in range(3)]
    recs += [{"commandIndex": 3, "reason": "Empty", "decision": "delete", "candidates": 2, "node": f"k{i}"} for i in range(2)]
    subject = SimpleNamespace(checkpoints=[SimpleNamespace(result=SimpleNamespace(disruptions=recs))])
    path = ("expect", "disruption", "disrupted", 0, "command")
    assert mutation.same_commands(subject, mutation.Mutant(path, 1, 2, "f", 1))
    assert not mutation.same_commands(subject, mutation.Mutant(path, 2, 3, "f", 1))
    assert not mutation.same_commands(subject, mutation.Mutant(path, 3, 4, "f", 1))       # no command 4
    assert not mutation.same_commands(subject, mutation.Mutant(("expect", "nodeCount"), 1, 2, "f", 1))


def test_a_renamed_selector_of_a_count_zero_entry_is_equivalent():
    from harness.judge.mutation import Mutant, selects_none
    entry = {"pod": "w1-mutated", "nodePool": "np1", "count": 0}
    mutant = Mutant(path=("expect", "nodes", 1, "pod"), old="w1", new="w1-mutated", file="f", line=1, note="")
    assert selects_none(entry, mutant)
    assert not selects_none({**entry, "count": 1}, mutant)
    assert not selects_none(entry, Mutant(path=("expect", "nodes", 1, "count"), old=0, new=1, file="f", line=1, note=""))
