"""The conformance report: per scenario, the simulation's verdict next to the real controller's,
every observed field where the two runs differ, and the VM/NIC bodies each side sent to the fake.

Why it is built this way: docs/architecture/runner.md."""
from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import os
import re
import sys
from pathlib import Path

from harness.backends.embedded import EmbeddedBackend
from harness.loop import races as loop_races
from harness.model.upstream.knobrelease import knob_release
from harness.model.upstream.provisionmodes import DEFAULT_MODE, mode_for
from harness.scenario.catalogs import scenario_catalog
from harness.runner.engines.base import verdict
from harness.judge.outcome import (TERMINATION_LABELS, TERMINATION_TAINTS, counts_view, digest,  # noqa: F401
                                    node_view, noise_reason, outcome_view, paired, summary)       # (re-exported)
from harness.scenario.load import load_scenarios
from harness.judge.zonesym import canonical_digest, symmetric_zones

REPORT_PROFILE = "upstream"        # the real engine runs one controller: the profile that models it
VOLATILE = re.compile(r"(^|\.)(id|vmId|timeCreated|provisioningState|instanceView|resourceGuid|etag|"
                      r"macAddress|privateIPAddress|computerName|customData|adminPassword|name)$")


def simulate(scenario, profile: str, kubernetes_version: str | None = None, explore: int | None = None,
             races: bool = False):
    """The simulated engine's outcome (embedded backend), with the VM/NIC bodies its fake stored.
    `kubernetes_version`: the real engine's API server version, given to the simulation unless the
    scenario sets its own (labels such as network-stateless-cni depend on it: provider v1.14.0
    pkg/providers/labels/labels.go). `explore`: run it under that many seeds (the outcome of the
    first, with the others in its `exploration`); `races`: the runs also vary the timing races the
    scenario leaves open (harness/loop/races.py)."""
    profile = answering_profile(scenario, profile)
    if kubernetes_version and not (scenario.given.get("cluster") or {}).get("kubernetesVersion"):
        given = copy.deepcopy(scenario.given)
        given.setdefault("cluster", {})["kubernetesVersion"] = kubernetes_version.lstrip("v")
        scenario = dataclasses.replace(scenario, given=given)
    cluster = EmbeddedBackend().start()
    try:
        from harness.runner.engines import get_engine
        from harness.judge.explore import run_scenario
        # a scenario that declares an outcome set is explored, as its own run is (harness/judge/explore.py)
        return run_scenario(get_engine("simulated"), scenario, profile, cluster, explore_seeds=explore,
                            races=races, record_bodies=True)
    finally:
        cluster.close()


def _flatten(obj, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_flatten(v, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def _normalized(body: dict, names: list[str]) -> dict[str, object]:
    flat = {}
    for k, v in _flatten(body).items():
        if VOLATILE.search(k):
            continue
        if isinstance(v, str):
            for n in filter(None, names):
                v = re.sub(rf"(?<![\w-]){re.escape(n)}(?![\w-])", "<name>", v, flags=re.I)
            v = re.sub(r"/subscriptions/[0-9a-f-]+/resourceGroups/[^/]+", "/subscriptions/<sub>/resourceGroups/<rg>", v, flags=re.I)
        flat[k] = v
    return flat


def body_diff(sim: dict | None, real: dict | None, sim_names: list[str], real_names: list[str]) -> list[dict]:
    """The differing fields of one node's VM or NIC bodies; none when neither side sent one (a node seeded
    from `given.existingNodes` is created by no PUT on either engine)."""
    if sim is None and real is None:
        return []
    if sim is None or real is None:
        return [{"field": "(body)", "simulated": "present" if sim else None, "real": "present" if real else None}]
    a, b = _normalized(sim, sim_names), _normalized(real, real_names)
    return [{"field": k, "simulated": a.get(k), "real": b.get(k)} for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _dict_diff(a, b, path: str, out: list[dict]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _dict_diff(a.get(k), b.get(k), f"{path}.{k}" if path else k, out)
    elif a != b:
        out.append({"field": path, "simulated": a, "real": b})


def sim_digest(sim) -> str:
    """What the staleness check recomputes: the simulated verdict and outcome."""
    return digest({"verdict": verdict(sim), **outcome_view(sim.final)})


def _pair(sim, real) -> dict:
    """The differing fields of one simulated run and the real run (noise apart), with the VM/NIC
    body differences of each pair of nodes."""
    out = {"differences": [], "noise": [], "vmBodies": [], "nicBodies": []}
    diffs = out["differences"]
    _dict_diff(summary(sim.final), summary(real.final), "", diffs)
    sim_nodes, real_nodes = paired(sim.final), paired(real.final)
    for i in range(max(len(sim_nodes), len(real_nodes))):
        a = node_view(sim_nodes[i]) if i < len(sim_nodes) else None
        b = node_view(real_nodes[i]) if i < len(real_nodes) else None
        if a is None or b is None:
            diffs.append({"field": f"nodes[{i}]", "simulated": a and a["instanceType"], "real": b and b["instanceType"]})
            continue
        node_diffs: list[dict] = []
        _dict_diff(a, b, f"nodes[{i}]", node_diffs)
        for d in node_diffs:
            why = noise_reason(d["field"], sim_nodes[i], real_nodes[i])
            if why:
                out["noise"].append({**d, "why": why})
            else:
                diffs.append(d)
        # both sides as the fake stored them (the same normalization applies to both)
        sv, rv = sim_nodes[i].vm_name, real_nodes[i].vm_name
        out["vmBodies"].append({"node": i, "differences": body_diff(
            sim.vm_bodies.get(sv), real.vm_bodies.get(rv), [sv], [rv])})
        snic = next((n for n in sim.nic_bodies if sv.lower() in n.lower()), None)
        rnic = next((n for n in real.nic_bodies if rv.lower() in n.lower()), None)
        out["nicBodies"].append({"node": i, "differences": body_diff(
            sim.nic_bodies.get(snic), real.nic_bodies.get(rnic), [sv, snic or ""], [rv, rnic or ""])})
    retrying = max(_retrying_launches(sim.final), _retrying_launches(real.final))
    nics = next((d for d in diffs if d["field"] == "nics"), None)
    same_vms = not any(d["field"] == "vms" for d in diffs)
    if nics is not None and retrying and same_vms and abs(int(nics["simulated"] or 0) - int(nics["real"] or 0)) <= retrying:
        # a launch being retried has its NIC (and no VM) while an attempt runs: the provider creates it before
        # the VM PUT and BeginCreate's cleanup deletes it after the failure (provider v1.14.0 pkg/providers/
        # instance/vminstance.go beginLaunchInstance, BeginCreate); the simulation's attempts take no time
        out["noise"].append({**nics, "why": f"{retrying} launch(es) being retried: whether an attempt's NIC "
                                            "is there says when the run was read"})
        diffs.remove(nics)
    if sim.final.runaway and real.final.runaway:
        # both ran away: how many NodeClaims each launched is how long it ran before it was stopped
        # (the simulation at `loop.runawayThreshold` idle NodeClaims, the real engine once that many
        # have held through its quiet window while the controller went on launching)
        counted = [d for d in diffs if d["field"] in RUNAWAY_COUNTS or re.fullmatch(r"nodes\[\d+\]", d["field"])]
        out["noise"] += [{**d, "why": "both runs ran away: the counts say when each was stopped"} for d in counted]
        # ... and so do the termination marks of a node disruption had begun taking when the run was stopped
        # (the real controller consolidates the runaway's empty nodes while it goes on launching)
        marked = [d for d in diffs if d not in counted and _termination_marks_only(d)]
        out["noise"] += [{**d, "why": "both runs ran away: whether disruption had begun taking this node says "
                                      "when each was stopped"} for d in marked]
        out["differences"] = [d for d in diffs if d not in counted and d not in marked]
    return out


RUNAWAY_COUNTS = ("nodes", "nodeClaimsLaunched", "vms", "nics")


def _retrying_launches(r) -> int:
    """NodeClaims whose launch failed and is being retried: not launched, not deleted."""
    return sum(1 for c in r.nodeclaims if not c.launched and not c.deleted and not c.rejected and c.failures)


def _termination_marks_only(d: dict) -> bool:
    """A node field that differs only by the marks a Node on its way out carries (outcome.py
    TERMINATION_TAINTS, TERMINATION_LABELS)."""
    m = re.fullmatch(r"nodes\[\d+\]\.(taints|labels\.(.+))", d["field"])
    if m is None:
        return False
    if m.group(2) is not None:
        return m.group(2) in TERMINATION_LABELS
    keep = lambda taints: sorted(t for t in taints or [] if t.split("=", 1)[0] not in TERMINATION_TAINTS)  # noqa: E731
    return keep(d["simulated"]) == keep(d["real"])


def compare(sim, real, alternatives=(), as_counts: bool = False) -> dict:
    """Everything the report says about one scenario x profile. `sim` is the simulation's run under the
    scenario's seed; `alternatives` its runs under other seeds (sim.exploration's, when it explored):
    the real outcome agrees when it is any of them ("agree (one of N outcomes)"); otherwise the report
    shows the differences from the closest. `as_counts` (the judge's last resort): where the runs' node-by-node
    outcomes were too many to sample, the outcomes are compared as counts (COUNTS_WHEN_UNSEEN)."""
    entry = {"scenario": sim.scenario.name, "file": os.path.relpath(sim.scenario.file), "profile": real.profile,
             "simulated": verdict(sim), "real": verdict(real), "realSkipped": real.skipped,
             "realMismatches": [m.render() for m in real.mismatches],
             "notApplicable": [n.render() for n in real.not_applicable],
             "seconds": {"simulated": round(sim.seconds, 3), "real": round(real.seconds, 1)},
             "differences": [], "noise": [], "vmBodies": [], "nicBodies": []}
    entry["scenarioDigest"] = digest(sim.scenario.doc.data)
    # the version the simulation emulated (the real engine's API server's, unless the scenario set one)
    entry["kubernetesVersion"] = (sim.scenario.given.get("cluster") or {}).get("kubernetesVersion")
    entry["simDigest"] = sim_digest(sim)
    entry["explanation"] = sim.scenario.xfail.get(real.profile)
    if sim.profile != real.profile:     # a given.knobs replay: both sides at the release holding the knobs
        entry["simProfile"] = sim.profile
    if real.skipped:
        entry["status"] = "skipped"
        return entry
    # each sample as one run (an exploration's runs keep their own verdicts)
    samples = samples_of(sim)
    samples += list(alternatives)
    pairs = [(s, _pair(s, real)) for s in samples]
    agreeing = [(s, p) for s, p in pairs if not p["differences"] and verdict(s) == verdict(real)]
    relabeled = counted = False
    views = [digest(outcome_view(s.final)) for s in samples]
    if not agreeing:
        agreeing, relabeled = _agreeing_up_to_zones(sim.scenario, pairs, real), True
    if (as_counts and not agreeing and not entry["explanation"] and len(samples) > 1
            and unseen_share(views) >= COUNTS_WHEN_UNSEEN):
        agreeing, relabeled, counted = _agreeing_as_counts(pairs, real), False, True
    chosen, pair = agreeing[0] if agreeing else min(pairs, key=lambda sp: len(sp[1]["differences"]))
    if agreeing and relabeled:
        # the same outcome with the zones the scenario treats alike drawn the other way round
        pair = {**pair, "differences": [], "noise": pair["noise"] + [
            {**d, "why": "zones the scenario cannot tell apart, relabeled (harness/judge/zonesym.py)"}
            for d in pair["differences"]]}
        entry["zonesRelabeled"] = True
    if counted:
        entry["comparedAs"] = "counts"
        entry["countOutcomes"] = len({digest(counts_view(s.final)) for s in samples})
        if agreeing:
            pair = {**pair, "differences": [], "noise": pair["noise"] + [{**d, "why": COUNTS_WHY} for d in pair["differences"]]}
    entry.update(pair)
    entry["simRuns"], entry["simOutcomes"] = len(samples), len(set(views))
    if len(samples) > 1:
        entry["simUnseen"] = unseen_share(views)
    entry["simSeed"] = chosen.result.seed
    # the timing races the chosen run turned on (harness/loop/races.py): the scenario's replay adds them
    own = sim.scenario.given.get("loop") or {}
    added = {k: v for k, v in (chosen.scenario.given.get("loop") or {}).items() if own.get(k) != v}
    if added:
        entry["simRaces"] = added
    entry["status"] = "agree" if agreeing else ("explained" if entry["explanation"] else "unexplained")
    return entry


def unseen_share(views: list[str]) -> float:
    """How likely one more run's outcome is one the runs did not meet: the share of runs whose outcome
    they met exactly once (the Good-Turing estimate of the unseen mass). Near 1 the outcome set is far
    from complete: a real outcome outside it says little about the model (docs/engines/fuzzer.md)."""
    counts: dict[str, int] = {}
    for v in views:
        counts[v] = counts.get(v, 0) + 1
    return round(sum(1 for c in counts.values() if c == 1) / len(views), 2)


# Where the simulation's node-by-node outcomes are too many to sample (at least this share of its runs reached
# an outcome no other run reached), a real outcome outside them says little: the judge compares the runs as
# counts instead (outcome.py counts_view), and says so. Only for a scenario that declares no disagreement.
COUNTS_WHEN_UNSEEN = 0.5
COUNTS_WHY = ("which of equal nodes went, carries which pods, sits in which zone: ties upstream breaks at random "
              "(compared as counts: harness/judge/outcome.py counts_view)")


def _agreeing_as_counts(pairs, real) -> list:
    """The samples whose outcome as counts is the real one's."""
    want = digest(counts_view(real.final))
    return [(s, p) for s, p in pairs if verdict(s) == verdict(real) and digest(counts_view(s.final)) == want]


def _agreeing_up_to_zones(scenario, pairs, real) -> list:
    """The samples whose outcome is the real one's up to a relabeling of the zones the scenario cannot tell
    apart (harness/judge/zonesym.py); none when it can tell them apart."""
    zones = symmetric_zones(scenario, scenario_catalog(scenario).skus)
    if not zones:
        return []
    want = canonical_digest(real.final, zones)
    return [(s, p) for s, p in pairs if verdict(s) == verdict(real) and canonical_digest(s.final, zones) == want]


def status_text(e: dict) -> str:
    """`agree (one of 3 outcomes)` where the simulation has several and the real one is among them."""
    s = e.get("status", "")
    at = f" at the real run's horizon ({e['horizon']} s, not settled)" if e.get("horizon") else ""
    if e.get("comparedAs") == "counts":
        return (f"{s} as counts ({'one' if s == 'agree' else 'none'} of {e['countOutcomes']} outcomes as counts; "
                f"node by node {e['simOutcomes']} outcomes in {e['simRuns']} runs){at}")
    if s == "agree" and e.get("simOutcomes", 1) > 1:
        return f"agree (one of {e['simOutcomes']} outcomes){at}"
    if s == "agree" and at:
        return f"agree{at}"
    if s in ("explained", "unexplained") and e.get("simRuns", 1) > 1:
        unseen = (f"; {e['simUnseen']:.0%} of the runs reached an outcome no other run reached"
                  if e.get("simUnseen") is not None else "")
        return f"{s} (none of {e['simOutcomes']} outcomes in {e['simRuns']} runs{unseen})"
    return s


# seeds the simulation is explored under when a real run differs from its own seed's outcome: a run with
# several nodes over several domains has more outcomes than a few seeds sample
# (zonal-spread-includes-regional-domain: 12 distinct in 16 seeds); only differing runs pay for it
def answering_profile(scenario, profile: str) -> str:
    """The release profile the real engine's run answers at: a `given.knobs` scenario runs on the
    controller of the release whose own facts hold its knobs (harness/model/upstream/knobrelease.py), so its
    simulation runs at that release too, core behaviour and labels included; any other scenario, and
    one no release replays (the real engine skips it), at `profile`."""
    knobs = scenario.given.get("knobs")
    if not knobs:
        return profile
    return knob_release(profile, knobs, scenario.api_versions).release or profile


EXPLORE_ON_DIFFERENCE = 32
# ... and then, when no seed's outcome is the real one, that many times as many runs that also vary the
# timing races the scenario leaves open (harness/loop/races.py): five races on and off on top of the seed
RACES_FACTOR = 2


def judge(scenario, profile: str, real, kubernetes_version: str | None = None,
          explore: int = EXPLORE_ON_DIFFERENCE) -> dict:
    """The report's entry for a real run: compared with the simulation under the scenario's seed and,
    when that differs, with its outcome set under `explore` seeds (harness/judge/explore.py), then
    under `explore * RACES_FACTOR` runs that also vary the timing races (harness/loop/races.py), then
    with each race's `alone` value set (nodesReady: staggered) under as many seeds. Both
    sides are compared where the real run ended: after its last step, or, when it stopped early (a
    step it cannot play), with the simulation of the steps it played (`compared` says which). A step the
    run's state did not allow (StepFailed: the simulation meets it too) is no early stop."""
    sim = simulate(scenario, profile, kubernetes_version)
    played = len(real.step_results)
    same = compared_as(scenario, real)
    base = sim if same is scenario else simulate(same, profile, kubernetes_version)
    entry = compare(base, real)
    horizon = _at_real_horizon(same, real) if entry["status"] not in ("agree", "skipped") else None
    if horizon is not None:
        # the real run stopped watching before it settled (its 150 s limit): the simulation then ran on
        # its own clock past what the real run saw, so both are compared where the real run stopped
        same = horizon
        base = simulate(same, profile, kubernetes_version)
        entry = compare(base, real)
        entry["horizon"] = same.given["loop"]["horizon"]
    if entry["status"] not in ("agree", "skipped") and explore > 1:
        # a scenario that declares an outcome set was explored under its own seeds already
        explored = base if base.exploration is not None else simulate(same, profile, kubernetes_version, explore=explore)
        entry = compare(explored, real)
        if entry["status"] != "agree":
            # the real cluster's timings are its own: a launch's Nodes turn Ready one by one while Karpenter
            # plans again, VMs register after its next round, pods arrive after its first, a Deployment's pods
            # after the bare Pods applied with it. Their outcomes are the real run's to reach too
            raced = simulate(same, profile, kubernetes_version, explore=explore * RACES_FACTOR, races=True)
            alternatives = samples_of(raced)
            entry = compare(explored, real, alternatives=alternatives)
            # each race's `alone` value with every other race calm, under as many seeds
            for loop in loop_races.alone(same.given.get("loop") or {}):
                if entry["status"] == "agree":
                    break
                given = {**same.given, "loop": {**(same.given.get("loop") or {}), **loop}}
                alternatives += samples_of(simulate(dataclasses.replace(same, given=given), profile,
                                                    kubernetes_version, explore=explore * RACES_FACTOR))
                entry = compare(explored, real, alternatives=alternatives)
            if entry["status"] == "unexplained":
                entry = compare(explored, real, alternatives=alternatives, as_counts=True)
    entry["simulated"], entry["simDigest"] = verdict(sim), sim_digest(sim)     # the whole scenario's
    # the provider's provision mode both sides ran in (the scenario's, or the harness option's: provisionmode.py)
    entry["provisionMode"] = mode_for(scenario.given.get("cluster") or {}) or DEFAULT_MODE
    if same is not scenario:
        entry["compared"] = f"after steps[{played - 1}]" if played else "before steps[0]"
    return entry


def samples_of(sim) -> list:
    """An exploration's runs, or the one run."""
    return list(sim.exploration.outcomes) if sim.exploration is not None else [sim]


def _at_real_horizon(scenario, real):
    """The scenario watched for as long as the real run watched its last settle (given.loop.horizon),
    when that run ended without settling; None when it settled, or the scenario sets its own horizon."""
    last = real.final
    seconds = last.timings.get("settle")
    if real.skipped or last.steady or "horizon" in (scenario.given.get("loop") or {}) or not seconds:
        return None
    given = copy.deepcopy(scenario.given)
    given.setdefault("loop", {})["horizon"] = round(seconds, 1)
    return dataclasses.replace(scenario, given=given)


def compared_as(scenario, real):
    """The scenario the simulation is compared as: the whole of it, or, when the real run stopped at a
    step it cannot play (`skipped_steps`), the steps it played. A step the run's state did not allow
    (StepFailed, a mismatch) stops the simulation there too."""
    played = len(real.step_results)
    if played >= len(scenario.steps) or real.skipped or not real.skipped_steps:
        return scenario
    return played_only(scenario, played)


def played_only(scenario, steps: int):
    """The scenario with its first `steps` steps only."""
    return dataclasses.replace(scenario, steps=scenario.steps[:steps], step_manifests=scenario.step_manifests[:steps])


def write_report(pairs, out_dir: Path, seconds: float = 0.0) -> tuple[Path, Path]:
    """The report of (simulated, real) outcome pairs, as conformance.{md,json} in `out_dir`."""
    return write_entries([compare(s, r) for s, r in pairs], out_dir, seconds)


def write_entries(entries: list[dict], out_dir: Path, seconds: float = 0.0) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    entries = sorted(entries, key=lambda e: (e["file"], e["scenario"], e["profile"]))
    ran = [e for e in entries if not e["realSkipped"]]
    count = {k: sum(1 for e in ran if e.get("status") == k) for k in ("agree", "explained", "unexplained")}
    totals = {"runs": len(entries), "ranOnReal": len(ran), "skippedOnReal": len(entries) - len(ran),
              "agree": count["agree"], "differ": len(ran) - count["agree"], "explained": count["explained"],
              "unexplained": count["unexplained"],
              "realPass": sum(1 for e in ran if e["real"] == "pass"),
              "realFail": sum(1 for e in ran if e["real"] == "FAIL"), "seconds": round(seconds, 1),
              "generated": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    js = out_dir / "conformance.json"
    js.write_text(json.dumps({"totals": totals, "entries": entries}, indent=2, default=str) + "\n")
    md = out_dir / "conformance.md"
    md.write_text(render_markdown(totals, entries))
    return md, js


# -- entries written one per run (pytest --harness-conformance DIR), joined afterwards ------------------
ENTRIES = "entries"


def write_entry(out_dir: Path, entry: dict) -> Path:
    """One run's entry, under a name unique to the scenario x profile x provision mode (xdist workers write in
    parallel)."""
    d = out_dir / ENTRIES
    d.mkdir(parents=True, exist_ok=True)
    key = [entry["file"], entry["scenario"], entry["profile"]]
    if entry.get("provisionMode", DEFAULT_MODE) != DEFAULT_MODE:       # a mode's report may share the directory
        key.append(entry["provisionMode"])
    f = d / f"{digest(key)}.json"
    f.write_text(json.dumps(entry, default=str))
    return f


def assemble(out_dir: Path) -> tuple[Path, Path] | None:
    """Join the entries in out_dir/entries into conformance.{md,json}; the entries are removed."""
    d = out_dir / ENTRIES
    files = sorted(d.glob("*.json")) if d.is_dir() else []
    if not files:
        return None
    entries = [json.loads(f.read_text()) for f in files]
    seconds = sum(e["seconds"]["real"] for e in entries)
    out = write_entries(entries, out_dir, seconds)
    for f in files:
        f.unlink()
    d.rmdir()
    return out


def merge(new_dir: Path, out_dir: Path) -> tuple[Path, Path] | None:
    """Replace the entries of out_dir's report with those of the report in new_dir (same scenario x
    profile), keeping the rest: a partial rerun (`regen-conformance.sh --stale`) without remaking all."""
    made = json.loads((new_dir / "conformance.json").read_text()) if (new_dir / "conformance.json").is_file() else None
    if made is None:
        return None
    key = lambda e: (e["file"], e["scenario"], e["profile"])    # noqa: E731
    old = json.loads((out_dir / "conformance.json").read_text())["entries"] if (out_dir / "conformance.json").is_file() else []
    entries = {key(e): e for e in old} | {key(e): e for e in made["entries"]}
    # a scenario since removed from the library leaves the report
    library = {(os.path.relpath(sc.file), sc.name) for sc in covered_scenarios({"entries": list(entries.values())})}
    entries = {k: e for k, e in entries.items() if k[:2] in library}
    return write_entries(list(entries.values()), out_dir, sum(e["seconds"]["real"] for e in entries.values()))


def report_drift(checked_in: dict, fresh: dict) -> list[str]:
    """Where a checked-in report and a fresh run of the same library disagree: a run one holds and the
    other not (over the folders both cover), or another real verdict or status. Empty when the checked-in
    report says what the fresh run says."""
    key = lambda e: (e["file"], e["scenario"], e["profile"])    # noqa: E731
    old, new = {key(e): e for e in checked_in["entries"]}, {key(e): e for e in fresh["entries"]}
    both = set(map(str, covered_folders(checked_in))) & set(map(str, covered_folders(fresh)))
    inside = lambda k: str(Path(k[0]).parent) in both      # noqa: E731
    out = [f"{k[0]}::{k[1]} [{k[2]}]: only in the fresh run" for k in sorted(set(new) - set(old)) if inside(k)]
    out += [f"{k[0]}::{k[1]} [{k[2]}]: only in the checked-in report" for k in sorted(set(old) - set(new)) if inside(k)]
    out += [f"{k[0]}::{k[1]} [{k[2]}]: checked in real {old[k]['real']} ({old[k]['status']}), "
            f"now real {new[k]['real']} ({new[k]['status']})"
            for k in sorted(set(old) & set(new))
            if (old[k]["real"], old[k]["status"]) != (new[k]["real"], new[k]["status"])]
    uncovered = sorted(set(map(str, covered_folders(fresh))) - both)
    out += [f"{folder}: in the fresh run, not covered by the checked-in report" for folder in uncovered]
    return out


def unexplained(report: dict) -> list[dict]:
    return [e for e in report["entries"] if e.get("status") == "unexplained"]


def covered_folders(report: dict) -> list[Path]:
    """The library folders the report was made over (relative to the repository root): each entry's
    directory, so a report may hold some of the ported core suites (scenarios/upstream-core/<suite>)
    and not the others."""
    return sorted({Path(e["file"]).parent for e in report["entries"]})


def covered_scenarios(report: dict) -> list:
    """Every scenario of the report's folders as the library holds them now (run from the repository root)."""
    return [sc for folder in covered_folders(report) for f in sorted(folder.glob("*.scenario.yaml"))
            for sc in load_scenarios(str(f))]


# the report is made on the default controller (regen-conformance.sh builds it), whose fast timing moves the
# controller's clock (controller-timing.yaml): its runs play an advance of any length at once
REPORT_CLOCKED = True
UNPLAYED = re.compile(r"^(steps\[\d+\]): not applicable on the real engine \((.*)\)$", re.S)


def unplayed(entry: dict) -> str | None:
    """`steps[i]: why` for the step the entry's real run could not play (base.py stops there), or None."""
    for n in entry.get("notApplicable") or ():
        if m := UNPLAYED.match(n):
            return f"{m.group(1)}: {m.group(2)}"
    return None


def report_profile(report: dict) -> str:
    """The profile a report's runs were made under (regen-conformance.sh --harness-profile): REPORT_PROFILE, or
    the one release profile its PROFILE= forced on every scenario (a provision mode's report at an earlier
    release, made with that release's controller)."""
    profiles = {e["profile"] for e in report["entries"]}
    return profiles.pop() if len(profiles) == 1 else REPORT_PROFILE


def stale(report: dict, scenarios: list, run_sim=None) -> list[str]:
    """Why the report no longer describes the library: a scenario x profile the report lacks or
    holds in excess, whose document or simulated outcome changed, or whose steps the real engine now plays
    to another point (a step it could not play it now plays, or the other way). `run_sim(scenario, profile,
    kubernetes_version)` gives the simulated outcome (default: `simulate`)."""
    from harness.runner.engines.real.engine import UNPLAYABLE_INPUTS, first_unplayable, unplayable_input
    from harness.scenario.selection import profiles_for
    run_sim = run_sim or simulate
    have = {(e["file"], e["scenario"], e["profile"]): e for e in report["entries"]}
    profile = report_profile(report)
    want = {(os.path.relpath(sc.file), sc.name, p): sc for sc in scenarios for p in profiles_for(sc.profiles, [profile])
            if p == profile}
    out = [f"{k[0]}::{k[1]} [{k[2]}]: not in the report" for k in sorted(set(want) - set(have))]
    out += [f"{k[0]}::{k[1]} [{k[2]}]: in the report, not in the library" for k in sorted(set(have) - set(want))]
    for k in sorted(set(want) & set(have)):
        sc, e = want[k], have[k]
        if e.get("scenarioDigest") != digest(sc.doc.data):
            out.append(f"{k[0]}::{k[1]} [{k[2]}]: the scenario changed")
        elif e.get("simDigest") != sim_digest(run_sim(sc, k[2], e.get("kubernetesVersion"))):
            out.append(f"{k[0]}::{k[1]} [{k[2]}]: the simulated outcome changed")
        elif (skip := _input_skip_changed(e.get("realSkipped"), unplayable_input(sc), UNPLAYABLE_INPUTS)):
            out.append(f"{k[0]}::{k[1]} [{k[2]}]: {skip}")
        elif not e.get("realSkipped") and (was := unplayed(e)) != (now := first_unplayable(sc, REPORT_CLOCKED)):
            out.append(f"{k[0]}::{k[1]} [{k[2]}]: the real engine now "
                       + (f"stops at {now}" if now else "plays every step") + f" (the report: {was or 'every step'})")
    return out


def _input_skip_changed(was: str | None, now: str | None, kinds: tuple[str, ...]) -> str | None:
    """How the real engine's judgment of the scenario's own input moved since the report (None: it did not):
    a run the report holds as skipped for its input that the engine now plays, or the other way. Skips that
    depend on the build or the cluster (the clock, the API server's version) are not judged here."""
    if was and was.startswith(kinds) and now != was:
        return "the real engine now " + (f"skips it otherwise: {now}" if now else "plays it") + \
            f" (the report: skipped: {was[:80]})"
    if now and not was:
        return f"the real engine now skips it: {now[:80]}"
    return None


def _cell(v) -> str:
    s = json.dumps(v, default=str) if not isinstance(v, str) else v
    return s.replace("|", "\\|")[:160]


def render_markdown(totals: dict, entries: list[dict]) -> str:
    lines = ["# Conformance: simulated loop vs the real Karpenter-on-Azure controller", "",
             "Regenerate with `bash scripts/regen-conformance.sh` (harness/judge/conformance.py).", "",
             f"{totals['runs']} run(s): {totals['ranOnReal']} on the real engine ({totals['skippedOnReal']} skipped), "
             f"{totals['agree']} agree, {totals['differ']} differ ({totals.get('explained', 0)} explained by a "
             f"strict xfail naming the wrong side, {totals.get('unexplained', 0)} unexplained); real verdicts: "
             f"{totals['realPass']} pass, {totals['realFail']} fail. Generated {totals['generated']}, "
             f"{totals['seconds']:.0f} s of real-engine runs.", "",
             *([f"Provision mode: {', '.join(modes)} (the harness's --provision-mode; "
                "[Provision modes](../../../engines/real-engine.md#provision-modes)).", ""]
               if (modes := sorted({e.get("provisionMode") or DEFAULT_MODE for e in entries})) != [DEFAULT_MODE]
               else []),
             "Fields that differ by construction (random names, unpinned zones) are listed under `noise` in the JSON, not here.", "",
             "| scenario | profile | simulated | real | status | differing fields | real s |", "|---|---|---|---|---|---|---|"]
    for e in entries:
        real = e["real"] + (f" ({e['realSkipped']})" if e["realSkipped"] else "")
        profile = e["profile"] + (f" (as {e['simProfile']})" if e.get("simProfile") else "")
        lines.append(f"| {e['scenario']} | {profile} | {e['simulated']} | {_cell(real)} | {status_text(e)} | "
                     f"{len(e['differences'])} | {e['seconds']['real']} |")
    for e in entries:
        if not (e["differences"] or e["realMismatches"] or e["simulated"] != e["real"]
                or any(b["differences"] for b in e["vmBodies"] + e["nicBodies"])) or e["realSkipped"]:
            continue
        lines += ["", f"## {e['scenario']} [{e['profile']}]", "", f"`{e['file']}` - {status_text(e)}", ""]
        if e.get("compared"):
            lines += [f"Compared {e['compared']}: the real run could not play the next step "
                      "(its not-applicable reasons are in the JSON).", ""]
        if e.get("explanation"):
            lines += [f"Explained (the scenario's xfail): {e['explanation']}", ""]
        if e["realMismatches"]:
            lines += ["Real-engine expectation failures:", ""] + [f"- {m}" for m in e["realMismatches"]] + [""]
        if e["differences"]:
            lines += ["| field | simulated | real |", "|---|---|---|"]
            lines += [f"| {d['field']} | {_cell(d['simulated'])} | {_cell(d['real'])} |" for d in e["differences"]]
        for kind in ("vmBodies", "nicBodies"):
            for b in e[kind]:
                if b["differences"]:
                    lines += ["", f"{'VM' if kind == 'vmBodies' else 'NIC'} body of node {b['node']}:", "",
                              "| field | simulated | real |", "|---|---|---|"]
                    lines += [f"| {d['field']} | {_cell(d['simulated'])} | {_cell(d['real'])} |" for d in b["differences"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """`assemble DIR`: join a run's entries; `check DIR`: exit 1 on an unexplained difference;
    `stale DIR`: print `file::scenario` of each run the report no longer describes; `merge NEW DIR`:
    put a partial rerun's entries into DIR's report; `compare CHECKED_IN FRESH`: exit 1 where they
    disagree (report_drift())."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"] and len(argv) == 3:
        reports = [json.loads((Path(d) / "conformance.json").read_text()) for d in argv[1:]]
        drift = report_drift(*reports)
        for line in drift:
            print(f"{argv[1]} vs {argv[2]}: {line}", file=sys.stderr)
        return 1 if drift else 0
    if argv[:1] == ["merge"] and len(argv) == 3:
        made = merge(Path(argv[1]), Path(argv[2]))
        print(f"conformance report: {made[0]} {made[1]}" if made else f"{argv[1]}: no report to merge", file=sys.stderr)
        return 0 if made else 1
    if len(argv) != 2 or argv[0] not in ("assemble", "check", "stale"):
        print("usage: python -m harness.judge.conformance assemble|check|stale DIR | merge NEW_DIR DIR | "
              "compare CHECKED_IN_DIR FRESH_DIR", file=sys.stderr)
        return 2
    out_dir = Path(argv[1])
    if argv[0] == "stale":
        report = json.loads((out_dir / "conformance.json").read_text())
        for line in stale(report, covered_scenarios(report)):
            print(line)
        return 0
    if argv[0] == "assemble":
        made = assemble(out_dir)
        print(f"conformance report: {made[0]} {made[1]}" if made else f"{out_dir}: no entries to assemble",
              file=sys.stderr)
        return 0 if made else 1
    report = json.loads((out_dir / "conformance.json").read_text())
    bad = unexplained(report)
    for e in bad:
        print(f"{e['file']}: {e['scenario']} [{e['profile']}]: simulated {e['simulated']}, real {e['real']}, "
              f"{len(e['differences'])} differing field(s) and no xfail naming the wrong side", file=sys.stderr)
    t = report["totals"]
    print(f"{t['runs']} runs: {t['agree']} agree, {t.get('explained', 0)} explained, {len(bad)} unexplained",
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
