"""`harness` / `python -m harness`: run, explain, validate and scaffold scenarios.

Exit codes: 0 success, 1 a scenario failed, 2 bad input (`file:line: reason`).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from harness.backends.registry import BACKEND_NAMES
from harness.why.explain import ExplainError, requirement_view
from harness.model.upstream.provisionmodes import PROVISION_MODES
from harness.scenario.selection import select_jobs
from harness.scenario.yamlsource import SourceError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
WIDE_COLUMNS = 400        # a piped table's width: wide enough for any label key and value
DETAILS_UP_TO = 10        # `harness run` shows what happened in each passing run up to this many runs


def _console(wide: bool = False):
    """stdout console; `wide` when stdout is not a terminal, so piped tables are never cut to 80 columns.
    Emoji codes off: `file.yaml:100: reason` must not print as `file.yaml💯 reason` (rich reads `:100:`
    as an emoji code even with markup off); data goes in as `Text`, so `[...]` is never read as markup."""
    from rich.console import Console
    return Console(stderr=False, highlight=False, soft_wrap=True, emoji=False,
                   width=WIDE_COLUMNS if wide else None)


# -- validate -------------------------------------------------------------------------------------
def cmd_validate(args) -> int:
    from harness.scenario.load import find_scenario_files, load_scenarios
    files = find_scenario_files(args.paths)
    if not files:
        print("no scenario files found", file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.scenario.notices import print_notices
    bad = 0
    count = 0
    warned = 0
    from harness.model.upstream.provisionmodes import refusal as mode_refusal
    from harness.scenario.admitcheck import unexpected_refusals
    for f in files:
        try:
            loaded = load_scenarios(f)
            count += len(loaded)
            warned += print_notices(loaded, sys.stderr)       # unmodeled fields, synthesized SKUs
        except SourceError as e:
            bad += 1
            print(e.render(), file=sys.stderr)
            continue
        for sc in loaded:                                     # what the release's API server would refuse
            for line in unexpected_refusals(sc):
                bad += 1
                print(line, file=sys.stderr)
            for line in dict.fromkeys(filter(None, (mode_refusal(sc, p) for p in sc.profiles))):
                bad += 1                                      # ... and its controller, a mode it lacks
                print(line, file=sys.stderr)
    if bad:
        return EXIT_BAD_INPUT
    print(f"{count} scenario(s) in {len(files)} file(s) are valid" + (f", {warned} warning(s)" if warned else ""))
    return EXIT_OK


# -- run ------------------------------------------------------------------------------------------
def _release_span(result) -> str:
    """The release column: the provider tags the profile covers and the core version they pin (ERROR rows
    included: harness.runner.engines.base.new_outcome fills it before the run starts)."""
    rel = getattr(result, "release", None) or {}
    covers = rel.get("covers") or []
    span = covers[0] if len(covers) == 1 else (f"{covers[0]}-{covers[-1]}" if covers else rel.get("release", ""))
    core = str(rel.get("core") or "").split(" ", 1)[0]
    core = f", core {core}" if core else ""
    if rel.get("policy"):
        return f"policy (~{rel.get('release', '')}{core})"
    if rel.get("answeredBy") and not rel.get("exact"):
        return f"{span} (nearest{core})"
    return f"{span} ({core[2:]})" if core else span


def _print_core_notices(outcomes) -> None:
    """Every core behaviour a run answered with v1.14.0's although its release's core differs (by name), and the
    timings a run assumed that its outcome may depend on (harness/loop/assumed.py): once per distinct text, with
    the runs that said it, on stderr like the other warnings."""
    seen: dict[str, list[str]] = {}
    for o in outcomes:
        for text in [*o.final.core_notices, *o.final.assumed]:
            seen.setdefault(text, []).append(f"{o.scenario.name} [{o.profile}]")
    for text, runs in seen.items():
        more = f" +{len(runs) - 2}" if len(runs) > 2 else ""
        print(f"WARNING: {text} ({', '.join(runs[:2])}{more})", file=sys.stderr)


def _print_across_releases(con, outcomes, verdict) -> None:
    """Per scenario run under several profiles: one row per profile with what happened, marking each row
    whose outcome differs from the row above (oldest release first)."""
    from rich.table import Table
    from rich.text import Text

    from harness.why.deciding import changed_by
    from harness.report.console import outcome_summary, unserved_apis
    by_scenario: dict = {}
    for o in outcomes:
        by_scenario.setdefault((str(o.scenario.file), o.scenario.name), []).append(o)
    for (file, name), runs in by_scenario.items():
        if len(runs) < 2:
            continue
        # consecutive releases that cannot serve the file's API versions alike are one row: their API
        # server refuses the same manifests, and the refusal is all each run says
        rows: list[list] = []
        for o in runs:
            apis = unserved_apis(o) if o.error is None else ()
            summary = f"cannot serve {', '.join(apis)}" if apis else outcome_summary(o.final)
            if apis and rows and rows[-1][3] == summary and rows[-1][2] == verdict(o):
                rows[-1][0].append(o)
            else:
                rows.append([[o], None, verdict(o), summary])
        table = Table(title=f"{name} across {len(runs)} profiles: where the outcome changes", title_justify="left")
        for col in ("profile", "release", "result", "outcome", "changed"):
            table.add_column(col, overflow="fold")
        prev, prev_o = None, None
        for group, _, result, summary in rows:
            changed = "" if prev is None or summary == prev else "<- changed"
            if changed:
                by = changed_by(prev_o, group[0])
                changed += f" ({', '.join(by)})" if by else ""
            if len(group) == 1:
                profile, release = group[0].profile, _release_span(group[0].final)
            else:
                first, last = ((g.final.release.get("covers") or [g.profile]) for g in (group[0], group[-1]))
                cores = {str(g.final.release.get("core") or "").split(" ", 1)[0] for g in group}
                profile = f"{group[0].profile} .. {group[-1].profile} ({len(group)})"
                release = f"{first[0]}-{last[-1]}" + (f" (core {cores.pop()})" if len(cores) == 1 and "" not in cores else "")
            table.add_row(Text(profile), Text(release), Text(result), Text(summary), Text(changed))
            prev, prev_o = summary, group[-1]
        con.print(table)


def _print_unserved(con, failed) -> set[int]:
    """Per scenario, one line naming the releases whose API server refused its manifests for their API
    versions, grouped by what they cannot serve; the ids of those runs, whose reports the line stands for
    (each would repeat the same refusal)."""
    from harness.report.console import unserved_apis
    groups: dict = {}
    for o in failed:
        apis = unserved_apis(o) if o.error is None and not o.skipped else ()
        if apis:
            groups.setdefault((f"{o.scenario.file}:{o.scenario.line}", o.scenario.name), {}).setdefault(apis, []).append(o)
    stood_for: set[int] = set()
    for (where, name), by_apis in groups.items():
        n = sum(len(runs) for runs in by_apis.values())
        parts = [f"{', '.join(o.profile for o in runs)} do not serve {', '.join(apis)}" for apis, runs in by_apis.items()]
        con.print(f"{where}: {name}: {n} release(s) refuse the file's manifests for their API versions: "
                  + "; ".join(parts) + " (write them at a release's API version to run them there)", markup=False)
        stood_for.update(id(o) for runs in by_apis.values() for o in runs)
    return stood_for


def _print_why(con, outcomes, names: list[str]) -> None:
    """`harness run --why NAME`: per run, the view of every object each name names (harness/why/objects.py),
    a pending pod's eliminations per NodePool (harness/loop/scheduling/why.py) with it."""
    from harness.report.console import assumed
    from harness.why.objects import why_lines
    for o in outcomes:
        con.print(f"--- {o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] ---", markup=False)
        if assumed(o):
            con.print(f"  assumed: {assumed(o)}", markup=False)
        shown: set[str] = set()
        for name in names:
            seeded = o.scenario.given.get("existingNodes")
            con.print("\n".join("  " + line for line in why_lines(o.final, name, seeded)), markup=False)
            for key, w in o.why.items():
                p = o.final.pods.get(key)
                if key not in shown and p is not None and name in (key, p.name, p.owner_name):
                    shown.add(key)
                    con.print("\n".join(w.render("    ")), markup=False)


def _print_deciding(con, outcomes) -> None:
    """Per run at a release: the switches and facts that decided its outcome (harness/why/deciding.py)."""
    for o in outcomes:
        lines = o.deciding.render(o.final.started) if o.deciding is not None else []
        if lines:
            con.print(f"--- {o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}]: what the release "
                      f"decided ---", markup=False)
            con.print("\n".join("  " + line for line in lines), markup=False)


def _choose_provider(args) -> str | None:
    """--provider-git / --provider-ref as the environment the real engine finds its controllers by
    (harness/backends/binaries/controller.py): a release profile's own controller is built from the history, and
    a ref is the one controller of every run; a usage error as text."""
    from harness.backends.binaries.controller import ENV_GIT, ENV_REF, provider_git
    if args.engine != "real":
        return "--provider-git / --provider-ref choose the real engine's controller: add --engine real"
    if args.provider_git:
        os.environ[ENV_GIT] = args.provider_git
    if args.provider_ref:
        if provider_git() is None:
            return (f"--provider-ref {args.provider_ref}: needs --provider-git DIR (or {ENV_GIT} / HARNESS_PROVIDER_GIT), "
                    "a karpenter-provider-azure clone with its tags")
        os.environ[ENV_REF] = args.provider_ref
        os.environ.setdefault("HARNESS_BUILD_CONTROLLER", "1")     # the ref asked for is built on first use
        from harness.model.upstream import releases
        if not args.profile and args.provider_ref in releases.release_profiles():
            args.profile = [args.provider_ref]       # a release tag runs under its own profile
    return None


def cmd_run(args) -> int:
    if args.explore is not None:
        return cmd_explore(args)
    from harness.backends.binaries.controlplane import BinariesError
    from harness.backends.registry import close_shared, shared_cluster
    from harness.loop.scheduling.why import EVERY_PENDING
    from harness.runner.engines import engine_backends, get_engine
    from harness.runner.engines.base import errored, verdict
    from harness.judge.explore import run_scenario
    from harness.heap import exit_follows
    from harness.report.console import (SHOWN, assumed_tag, failure_text, happened, happened_lines, node_count,
                                       not_created, outcome_json, over_time_lines, pending_pods, restart_lines,
                                       restarts_note, said_verdict, shown_verdict, unsettled)
    from harness.report.runpage import clear, write_run, write_site
    from harness.scenario.load import load_all
    try:
        scenarios = load_all(args.paths)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.provider_git or args.provider_ref:    # (before the selection: a release ref picks its profile)
        why = _choose_provider(args)
        if why:
            print(f"harness run: {why}", file=sys.stderr)
            return EXIT_BAD_INPUT
    jobs, why_empty = select_jobs(scenarios, args.profile, args.k, args.paths)
    if not jobs:
        print(f"harness run: {why_empty}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.scenario.notices import print_notices
    # what the results below do not account for: the selected scenarios' notices, not every loaded file's
    print_notices(list({id(sc): sc for sc, _ in jobs}.values()), sys.stderr)
    from harness.scenario.selection import version_notices
    for text in version_notices(args.profile):      # a version the harness has no profile for: say so, loudly
        print(f"WARNING: {text}", file=sys.stderr)
    if args.real_timing:
        os.environ["KARPENTER_CONTROLLER_TIMING"] = args.real_timing
    if args.provision_mode:
        from harness.model.upstream.provisionmodes import MODE_ENV
        os.environ[MODE_ENV] = args.provision_mode
    against = _against(args)
    if isinstance(against, str):
        print(f"harness run: {against}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.karpenter_log or args.against_log:      # the real engine keeps its controller's whole log
        os.environ["HARNESS_REAL_CONTROLLER_LOG"] = "1"
    engine = get_engine(args.engine)
    backend = engine_backends(args.engine, [args.backend])[0]
    ok, why = engine.available(backend)
    if not ok:
        print(f"{args.engine} engine on backend {backend} unavailable: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.engine == "simulated":            # the loaded library and the SDK out of the collector's walks
        from harness.runner.engines.simulated import prepare_process
        prepare_process()
    outcomes, entries = [], []
    if args.report:
        clear(Path(args.report))
    if args.deciding and args.engine != "simulated":
        print("WARNING: --deciding is not looked for on the real engine (a real controller's switches cannot be "
              "set one by one; harness bisect finds the commit)", file=sys.stderr)
    deciding = args.engine == "simulated" and (args.deciding if args.deciding is not None
                                               else (len(jobs) <= DETAILS_UP_TO or bool(args.why)))
    t0 = time.monotonic()
    live = args.engine == "real"               # minutes, not milliseconds: a line per run as it ends
    progress = None
    try:
        if not live and not args.json and len(jobs) > 20 and sys.stdout.isatty():
            from rich.progress import Progress
            progress = Progress(transient=True)
            progress.start()
            task = progress.add_task("scenarios", total=len(jobs))
        for i, (sc, p) in enumerate(jobs):
            # one cluster per set of options (the real engine: per Kubernetes version a scenario names),
            # started on first use, all closed by close_shared below
            try:
                cluster = shared_cluster(backend, **engine.cluster_options_for(sc, p, backend))
            except BinariesError as e:      # that Kubernetes version's build failed: this run's ERROR, go on
                cluster, o = None, errored(engine.name, sc, p, backend, e, 0.0)
            else:
                # explored if it declares outcomes; a run that raises: ERROR, go on. After the last, the process
                # ends: what its runs leave is not walked by the collector (harness/heap.py exit_follows)
                with exit_follows() if i == len(jobs) - 1 else contextlib.nullcontext():
                    o = run_scenario(engine, sc, p, cluster,
                                     why=args.why or ([EVERY_PENDING] if args.report else None))
                    if deciding:
                        from harness.why.deciding import AUTO_UP_TO_SECONDS, Deciding, decide, estimate
                        if args.deciding or o.seconds <= AUTO_UP_TO_SECONDS:
                            cost = estimate(engine, sc, p, o) if o.seconds > AUTO_UP_TO_SECONDS else None
                            if cost:        # a long run, asked for: what it will cost, before it is spent
                                print(f"WARNING: --deciding {sc.name} [{p}]: {cost}", file=sys.stderr, flush=True)
                            o.deciding = decide(engine, sc, p, cluster, o)
                        else:        # a long run: as many again per suspect; asked for by --deciding
                            o.deciding = Deciding(p, skipped=f"the run took {o.seconds:.0f}s: --deciding runs it "
                                                              "anyway")
            outcomes.append(o)
            if args.report:
                write_run(Path(args.report), o)
            if args.conformance:
                from harness.judge.conformance import judge
                entries.append(judge(sc, p, o, getattr(cluster, "server_version", None)))
            if progress is not None:
                progress.advance(task)
            if live:
                print(f"{shown_verdict(o):8} {o.seconds:6.1f}s  {sc.name} [{p}]" + (f"  ({o.skipped})" if o.skipped else "")
                      + assumed_tag(o) + restarts_note(o),
                      file=sys.stderr if args.json else sys.stdout, flush=True)
    except KeyboardInterrupt:
        if live:
            print("interrupted: controller, fake and cluster are being torn down", file=sys.stderr)
        raise
    finally:
        if progress is not None:
            progress.stop()
        close_shared()
    failed = [o for o in outcomes if verdict(o) in ("FAIL", "XPASS", "ERROR")]
    if args.conformance:
        from harness.judge.conformance import write_entries
        md, js = write_entries(entries, Path(args.conformance), seconds=time.monotonic() - t0)
        print(f"conformance report: {md} {js}", file=sys.stderr)
    if args.report:
        index = write_site(Path(args.report), Path(args.conformance) / "conformance.json" if args.conformance else None)
        print(f"run report: {index}", file=sys.stderr)
    klog: list[str] = []
    if args.karpenter_log or args.against_log:     # Karpenter's log: written, compared (printed last)
        from harness.runner.karpenterlog import report
        klog = report(outcomes, args.karpenter_log, against)
    if args.json:
        if klog:
            print("\n".join(klog), file=sys.stderr)
        print(json.dumps([outcome_json(o, labels=args.labels) for o in outcomes], indent=2))
        return EXIT_FAILED if failed else EXIT_OK
    con = _console(wide=not sys.stdout.isatty())
    counts = {v: sum(1 for o in outcomes if verdict(o) == v)
              for v in ("pass", "FAIL", "ERROR", "xfail", "XPASS", "skipped")}
    moved = sum(1 for o in outcomes if shown_verdict(o) == "moved on")     # FAILs that are the dump's answer
    missed = sum(1 for o in outcomes if shown_verdict(o) == "not reproduced")   # ... the log's
    if live:
        con.print(f"{len(outcomes)} run(s) on the real engine: "
                  + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
                  + (f" ({moved} moved on from the dump)" if moved else "")
                  + (f" ({missed} did not reproduce the log)" if missed else "") + f" in {time.monotonic() - t0:.0f}s",
                  markup=False)
    else:
        from rich.table import Table
        from rich.text import Text
        table = Table(title=f"{len(outcomes)} run(s) on {backend}: {counts['pass']} passed, "
                            f"{counts['xfail']} xfailed, {len(failed) - counts['ERROR'] - moved - missed} failed"
                            + (f", {moved} moved on from the dump" if moved else "")
                            + (f", {missed} did not reproduce the log" if missed else "")
                            + (f", {counts['ERROR']} error(s)" if counts["ERROR"] else ""))
        for col in ("scenario", "profile", "release", "result", "nodes", "pods pending", "ms"):
            table.add_column(col)
        for o in outcomes:
            pending = len(pending_pods(o.final))
            colour = {"pass": "green", "reproduced": "green", "xfail": "yellow", "moved on": "yellow",
                      "not reproduced": "yellow"}.get(shown_verdict(o), "red")
            table.add_row(Text(o.scenario.name), Text(o.profile), Text(_release_span(o.result)),
                          Text(shown_verdict(o) + (", not steady" if unsettled(o) else "")
                               + assumed_tag(o) + restarts_note(o), style=colour),
                          node_count(o.final).replace(" node(s)", "") + (" (runaway)" if o.final.runaway else ""),
                          str(pending) + (f" ({', '.join(refused)}: FailedCreate)"
                                           if (refused := not_created(o.final)) else ""),
                          f"{o.seconds * 1000:.0f}")
        con.print(table)
        _print_across_releases(con, outcomes, lambda o: shown_verdict(o) + assumed_tag(o))
    for o in outcomes:       # a run that never settled passed or failed on a state the loop stopped in
        why = unsettled(o)
        if why:
            con.print(f"WARNING: {o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] did not settle: "
                      f"{why}; its outcome is where the run stopped, not a steady state", markup=False)
    _print_core_notices(outcomes)
    if args.details or args.labels or len(outcomes) <= DETAILS_UP_TO:
        # what happened in the runs that passed (a failure's report below holds the same view)
        for o in outcomes:
            if o in failed or o.skipped:
                continue
            con.print(f"--- {o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] "
                      f"{said_verdict(o)}: "
                      "what happened ---", markup=False)
            lines = restart_lines(o.final) + happened_lines(happened(o.final, labels=args.labels),
                                                            None if args.details or args.trace or args.labels else SHOWN)
            if args.details or args.trace:          # what happened when: NodeClaims' lives, disruption steps, events
                lines += over_time_lines(o.final)
            con.print("\n".join("  " + line for line in lines), markup=False)
    refused = _print_unserved(con, failed)
    for o in failed:          # declared or asked on the command line alike (--profile v1.6.2, all)
        if id(o) in refused:
            continue
        if verdict(o) == "XPASS":
            con.print(f"{o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] passed but is "
                      f"declared xfail: {o.scenario.xfail[o.profile]}", markup=False)
            continue
        con.print(failure_text(o, trace=args.trace, labels=args.labels, over_time=args.details or args.trace),
                  markup=False)
        if o.error is None and o.profile not in o.scenario.profiles:
            con.print(f"  (profile {o.profile} was asked with --profile; the file declares "
                      f"{', '.join(o.scenario.profiles)}: its expectations are judged as written)", markup=False)
    _print_deciding(con, outcomes)
    if args.why:
        _print_why(con, outcomes, args.why)
    if klog:
        con.print("\n".join(klog), markup=False)
    return EXIT_FAILED if failed else EXIT_OK


def _against(args):
    """`--against-log` with `--log-from` and `--log-tolerance` (karpenterlog.Against), None without it, or
    why the options are wrong."""
    from harness.runner.karpenterlog import TOLERANCE, Against
    if not args.against_log:
        extra = [o for o, v in (("--log-from", args.log_from), ("--log-tolerance", args.log_tolerance)) if v]
        return f"{', '.join(extra)} without --against-log" if extra else None
    since = tolerance = None
    if args.log_from:
        from harness.model.kube.kubetime import parse_rfc3339
        try:
            since = parse_rfc3339(args.log_from)
        except ValueError:
            return f"--log-from {args.log_from!r} is not an RFC 3339 time (e.g. 2026-11-20T14:05:00Z)"
    if args.log_tolerance:
        from harness.model.values.durations import go_duration
        try:
            tolerance = go_duration(args.log_tolerance)
        except ValueError as e:
            return f"--log-tolerance: {e}"
    return Against(args.against_log, since, TOLERANCE if tolerance is None else tolerance)


def cmd_explore(args) -> int:
    """`harness run PATHS --explore N`: each selected scenario x profile under N seeds on the simulated
    engine; the distinct outcomes with their counts ("4 NodeClaims in 7 of 10, 5 in 3 of 10"), and the
    expectations judged over the set (`expect` in every run, `outcomes` over all: harness/judge/explore.py).
    Each run after the first also varies the races the scenario leaves open and draws the timings it does not
    give (node boot, VM deletion: harness/loop/races.py), unless `--calm`."""
    ignored = [o for o, v in (("--karpenter-log", args.karpenter_log), ("--against-log", args.against_log),
                              ("--deciding", args.deciding)) if v]
    if ignored:
        print(f"WARNING: --explore ignores {', '.join(ignored)} (run without --explore for them)", file=sys.stderr)
    from harness.backends.registry import close_shared, shared_cluster
    from harness.runner.engines import get_engine
    from harness.runner.engines.base import verdict
    from harness.judge.explore import render, run_scenario, to_json
    from harness.report.console import failure_text
    if args.engine != "simulated":
        print("harness run: --explore runs the simulated engine (the real controller's choices are its own; "
              "compare a real run with the simulated set with --conformance DIR)", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.explore < 1:
        print("harness run: --explore needs a number of seeds of at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.scenario.load import load_all
    try:
        scenarios = load_all(args.paths)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    jobs, why_empty = select_jobs(scenarios, args.profile, args.k, args.paths)
    if not jobs:
        print(f"harness run: {why_empty}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.report.runpage import clear, write_run, write_site
    engine = get_engine("simulated")
    explored = []
    if args.report:
        clear(Path(args.report))
    try:
        cluster = shared_cluster(args.backend)
        for sc, p in jobs:
            calm = getattr(args, "calm", False)
            explored.append(run_scenario(engine, sc, p, cluster, explore_seeds=args.explore,     # raised: ERROR
                                         races=not calm, timings=not calm))
            if args.report:
                write_run(Path(args.report), explored[-1])
    finally:
        close_shared()
    if args.report:
        print(f"run report: {write_site(Path(args.report))}", file=sys.stderr)
    failed = [o for o in explored if verdict(o) in ("FAIL", "XPASS", "ERROR")]
    if args.json:
        print(json.dumps([to_json(o) if o.exploration is not None else
                          {"scenario": o.scenario.name, "profile": o.profile, "skipped": o.skipped, "error": o.error,
                           "mismatches": [m.render() for m in o.mismatches]} for o in explored], indent=2))
        return EXIT_FAILED if failed else EXIT_OK
    for o in explored:
        lines = render(o) if o.exploration is not None else [f"{o.scenario.name} [{o.profile}]: {o.skipped or 'no run'}"]
        print("\n".join(lines))
        print(f"  expectations over the {len(o.exploration.views) if o.exploration else 0} run(s): {verdict(o)}")
        if verdict(o) in ("FAIL", "ERROR"):
            print(failure_text(o, trace=args.trace))
        elif verdict(o) == "XPASS":
            print(f"{o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] passed but is declared "
                  f"xfail: {o.scenario.xfail[o.profile]}")
    several = sum(1 for o in explored if o.exploration is not None and len(o.exploration.distinct()) > 1)
    print(f"{len(explored)} run(s) explored under {args.explore} seed(s): {several} with more than one outcome, "
          f"{len(failed)} failed")
    return EXIT_FAILED if failed else EXIT_OK


def cmd_bisect(args) -> int:
    """`harness bisect PATH... [--scenario NAME] [-k TEXT] --good REF --bad REF --provider-git DIR`."""
    from harness.backends.binaries.controlplane import BinariesError
    from harness.backends.binaries.controller import ENV_GIT
    from harness.backends.registry import close_shared
    from harness.judge.bisect import bisect, jobs_of
    git_dir = args.provider_git or os.environ.get(ENV_GIT)
    if not git_dir:
        print(f"harness bisect: --provider-git DIR (or {ENV_GIT}): a karpenter-provider-azure clone with its tags",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    from harness.scenario.load import load_all
    try:
        scenarios = load_all(args.paths)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    pairs, why_empty = select_jobs(scenarios, args.profile or ["upstream"], args.k, args.paths, args.scenario)
    if not pairs:
        print(f"harness bisect: {why_empty}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        res = bisect(Path(git_dir), args.good, args.bad, jobs_of(pairs), args.on,
                     out=sys.stderr if args.json else sys.stdout)
    except BinariesError as e:
        print(f"harness bisect: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        close_shared()
    if args.json:
        print(json.dumps(res, indent=2))
    elif "error" in res:
        print(f"harness bisect: {res['error']}", file=sys.stderr)
    else:
        print(f"first commit whose outcome of {', '.join(res['changed'])} differs from {res['good']}'s: "
              f"{res['culprit']} ({res['described']}) {res['subject']}")
    return EXIT_OK if "culprit" in res else EXIT_FAILED


# -- explain --------------------------------------------------------------------------------------
EXPLAIN_TEMPLATE = """
apiVersion: {api_version}
kind: Scenario
metadata: {{name: explain}}
given:
  profiles: [{profile}]
  region: {region}
  catalog: {catalog}
  skus: [{sku}]
manifests: []
"""
# which command-line option each templated scenario line came from: an error in the in-memory
# scenario is reported against the option the user typed, not a line of a file that does not exist
EXPLAIN_OPTION_OF_LINE = {6: "profile", 7: "region", 8: "catalog", 9: "sku"}


def _explain_option(args, name: str) -> str:
    value = getattr(args, name) if name != "catalog" or args.catalog else args.region
    flag = name if name != "catalog" or args.catalog else "region"
    return f"harness explain --{flag.replace('_', '-')} {value}"


def _key_values(args, option: str) -> dict[str, str]:
    out = {}
    for kv in getattr(args, option):
        if "=" not in kv:
            raise ExplainError(f"harness explain --{option} {kv}: expected KEY=VALUE")
        k, v = kv.split("=", 1)
        out[k] = v
    return out


def _explain_nodeclass(path: str) -> dict:
    import yaml
    try:
        docs = [d for d in yaml.safe_load_all(Path(path).read_text()) if d]
    except OSError as e:
        raise ExplainError(f"harness explain --nodeclass {path}: {e.strerror or e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise ExplainError(f"{path}:{mark.line + 1 if mark else 1}: {getattr(e, 'problem', None) or e}") from None
    found = [d for d in docs if isinstance(d, dict) and d.get("kind") == "AKSNodeClass"]
    if not found:
        raise ExplainError(f"{path}:1: no AKSNodeClass in file")
    nodeclass = found[0]
    nodeclass.setdefault("metadata", {})["name"] = "default"
    return nodeclass


def _requirement_text(view: dict) -> str:
    text = view["operator"] + (f" [{' '.join(view['values'])}]" if view["values"] else "")
    for name, sign in (("gte", ">="), ("lte", "<=")):
        if name in view:
            text += f" {sign}{view[name]}"
    return text + (f" minValues {view['minValues']}" if "minValues" in view else "")


def explain_report(args) -> dict:
    """Run the explain probe and describe the SKU, its offerings and the Node's labels."""
    from harness.backends.embedded import EmbeddedBackend
    from harness.model.azure.params import ClusterParams
    from harness.model.upstream.profile import load_profile
    from harness.parity import Probe, nodeclass_manifest, nodepool_manifest, pod_manifest
    from harness.runner.engines import run
    from harness.why.explain import DEFAULT_IMAGE_FAMILY, admit_nodeclass, held_back
    from harness.scenario.load import API_VERSION, Manifest, load_scenarios_text
    # the probes `harness parity` runs, pinned to the SKU and capacity type, in the versions the release serves
    probe = Probe(value="", skus=[args.sku], nodeclass={"imageFamily": args.image_family or DEFAULT_IMAGE_FAMILY},
                  capacity_types=[args.capacity_type])
    nodeclass = _explain_nodeclass(args.nodeclass) if args.nodeclass else None
    if nodeclass is not None and args.image_family:
        nodeclass.setdefault("spec", {})["imageFamily"] = args.image_family
    cluster_settings = _key_values(args, "cluster")
    extra_labels = _key_values(args, "label")
    catalog = args.catalog or args.region
    if getattr(args, "catalog_file", None):     # the customer's `az vm list-skus` output (and prices)
        catalog = json.dumps({"file": str(Path(args.catalog_file).resolve()),
                              **({"prices": str(Path(args.prices_file).resolve())} if args.prices_file else {})})
    text = EXPLAIN_TEMPLATE.format(api_version=API_VERSION, profile=args.profile, region=args.region,
                                   catalog=catalog, sku=args.sku)
    if args.catalog_file and args.region == "southcentralus":
        text = text.replace("  region: southcentralus\n", "  # region: the file's own\n")    # keeps line numbers
    if not args.catalog and not args.catalog_file:
        # an unknown region synthesizes the SKU; a comment keeps EXPLAIN_OPTION_OF_LINE's line numbers
        text = text.replace(f"  catalog: {catalog}\n", "  # catalog: the region's own\n")
    try:
        sc = load_scenarios_text(text, "<explain>")[0]
    except SourceError as e:
        option = EXPLAIN_OPTION_OF_LINE.get(e.line or 0)
        where = _explain_option(args, option) if option else "harness explain"
        raise ExplainError(f"{where}: {e.reason}") from None
    for n in sc.warnings:                          # a synthesized SKU says so
        print(f"warning: {n.message}", file=sys.stderr)
    args.region = sc.region
    sc.given["cluster"] = cluster_settings
    if nodeclass is None:                       # the profile is known now: its release's AKSNodeClass version
        nodeclass = nodeclass_manifest(probe, args.profile)
    report: dict = {"sku": args.sku, "profile": args.profile, "region": args.region}
    # the release's API server first (of the run's Kubernetes version): a refused AKSNodeClass leaves the
    # provider no instance type at all
    try:
        kubernetes_version = ClusterParams.from_dict(cluster_settings).kubernetes_version
    except (TypeError, ValueError) as e:            # ClusterParams.from_dict: an unknown --cluster key
        raise ExplainError(f"harness explain --cluster {' --cluster '.join(args.cluster)}: {e}") from None
    prof = load_profile(args.profile)
    stored, refusal = admit_nodeclass(nodeclass, prof, kubernetes_version)
    if refusal is not None:
        report["refused"] = {"outcome": refusal.outcome, "message": refusal.detail, "source": refusal.source}
        return report
    held = held_back(stored, prof, ClusterParams.from_dict(cluster_settings))
    if held is not None:            # never Ready: no NodePool of it is ever read for instance types
        report["notReady"] = {"outcome": held.outcome, "message": held.detail}
        return report
    nodepool = nodepool_manifest(probe, extra_labels, name="explain", instance_types=[args.sku], profile=args.profile)
    pod = pod_manifest("probe", cpu="10m")
    sc.manifests = [Manifest(nodeclass, args.nodeclass or "<explain>", 1), Manifest(nodepool, "<explain>", 1),
                    Manifest(pod, "<explain>", 1)]
    cluster = EmbeddedBackend().start()
    try:
        r = run(sc, args.profile, cluster).result
    except ValueError as e:                 # ClusterParams.from_dict: an unknown --cluster key
        raise ExplainError(f"harness explain --cluster {' --cluster '.join(args.cluster)}: {e}") from None
    finally:
        cluster.close()
    it = r.instance_types.get(args.sku)
    if it is None:
        pools = ", ".join(f"{n}: {np.message}" for n, np in r.nodepools.items() if np.rejected)
        report["dropped"] = r.dropped_skus.get(args.sku) or (
            f"no instance type recorded: NodePool refused ({pools})" if pools else "not in the catalog")
    else:
        report["requirements"] = {k: requirement_view(it.requirements[k]) for k in sorted(it.requirements)}
        report["offerings"] = [{"zone": o.zone, "capacityType": o.capacity_type, "price": o.price,
                                "available": o.available} for o in it.offerings]
    # whether the NodeClass's image family keeps the SKU, from the release's own GPU table
    from harness.model.azure.imagefamily import image_family_verdict
    from harness.model.upstream.releases import modeled
    stored = (r.nodeclasses.get("default").spec if r.nodeclasses.get("default") else None) or {}
    rel = modeled(args.profile)
    covers = rel.get("covers") or []
    span = (covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}") if covers else rel.get("release", "")
    report["imageFamily"] = image_family_verdict(args.sku, stored.get("imageFamily") or nodeclass["spec"].get("imageFamily"),
                                                 args.profile, f"provider {span}" if span else "")
    if r.nodes:
        n = r.nodes[0]
        report["node"] = {"name": n.name, "zone": n.zone, "capacityType": n.capacity_type}
        report["labels"] = {k: {"value": v, "writer": n.writer(k),
                                "writes": [{"writer": w.writer, "value": w.value, "accepted": w.accepted}
                                           for w in n.provenance.get(k, [])]}
                            for k, v in sorted(n.labels.items())}
        report["kubeletNodeLabels"] = n.kubelet_node_labels
        report["droppedFromKubelet"] = n.kubelet_dropped
        if n.kubelet_refused:
            report["kubeletRefused"] = n.kubelet_refused
    elif r.pods:
        report["pending"] = next(iter(r.pods.values())).reason
    return report


def _write_text(w: dict) -> str:
    return f"{w['writer']}={w['value']}" + ("" if w["accepted"] else " (refused)")


def _explain_matrix(args, skus: list[str], profiles: list[str], families: list[str]) -> int:
    """Several sizes, image families or releases: one cell per combination, then the distinct outcomes."""
    from rich.table import Table
    from rich.text import Text

    from harness.why.explain import Request, explain_matrix, layout, matrix_json, releases_text, sources_text
    req = Request(skus, profiles, families, region=args.region, catalog=args.catalog, catalog_file=args.catalog_file,
                  prices_file=args.prices_file, nodeclass=_explain_nodeclass(args.nodeclass) if args.nodeclass else None,
                  cluster=_key_values(args, "cluster"))
    m = explain_matrix(req)
    for n in m.notices:
        print(f"warning: {n}", file=sys.stderr)
    if args.label or args.capacity_type != "on-demand":
        # a cell is the instance type (both capacity types' offerings); no Node is launched to carry labels
        print("warning: --label and --capacity-type shape the Node of a single-size explain; the matrix ignores them",
              file=sys.stderr)
    data = matrix_json(m)
    if args.json:
        print(json.dumps(data, indent=2))
        return EXIT_OK
    note = {(c["sku"], c["imageFamily"], c["profile"]): c["note"] for c in data["cells"]}
    con = _console(wide=not sys.stdout.isatty())
    con.print(Text(f"{len(m.skus)} size(s) x {len(m.image_families)} image family(ies) x {len(m.profiles)} "
                   f"release(s) in {m.region} (catalog {m.catalog})", style="bold"))
    shape = layout(m)
    t = Table()
    for col in shape.row_names:
        t.add_column(col, no_wrap=True)
    for col in shape.columns:
        t.add_column(col + (" *" if col.split(" / ")[0] in m.synthesized else ""), overflow="fold")
    for heads, keys in shape.rows:
        cells = [Text(f"{m.cell(*k).short} [{note[k]}]") for k in keys]
        t.add_row(*(Text(h + (" *" if h in m.synthesized else "")) for h in heads), *cells)
    con.print(t)
    for o in data["outcomes"]:
        con.print(Text(f"[{o['note']}] {o['outcome']} ({o['cells']} cell(s); {releases_text(o['profiles'], m.profiles)}): "
                       f"{o['detail']}"))
        for src in sources_text(o["sources"]):
            con.print(Text(f"    source: {src}"))
    for size, why in m.synthesized.items():
        con.print(Text(f"* not in catalog {m.catalog}: {why}"))
    return EXIT_OK


def cmd_explain(args) -> int:
    from rich.table import Table
    from rich.text import Text

    from harness.why.explain import expand_profiles, split_values
    skus, families = split_values(args.sku), split_values(args.image_family)
    profiles = expand_profiles(split_values(args.profile) or ["upstream"])
    try:
        if len(skus) > 1 or len(profiles) > 1 or len(families) > 1:
            return _explain_matrix(args, skus, profiles, families)
        args.sku, args.profile, args.image_family = skus[0], profiles[0], (families[0] if families else None)
        report = explain_report(args)
    except ExplainError as e:
        print(e, file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    # every value is printed as plain Text: `In [on-demand spot]` is data, not rich markup; columns
    # fold instead of cutting a label name, and a pipe gets the full width (no terminal to fit)
    con = _console(wide=not sys.stdout.isatty())
    con.print(Text(f"{args.sku} under profile {args.profile} in {args.region}", style="bold"))
    if "refused" in report:
        con.print(Text(report["refused"]["message"]))
        if report["refused"]["source"]:
            con.print(Text(f"  source: {report['refused']['source']}"))
        return EXIT_OK
    if "notReady" in report:
        con.print(Text(report["notReady"]["message"]))
        return EXIT_OK
    fam = report.get("imageFamily")
    if fam:
        con.print(Text(f"{fam['imageFamily']} {'keeps' if fam['keeps'] else 'drops'} it: {fam['why']}"))
        con.print(Text(f"  source: {fam['source']}"))
    if "dropped" in report:
        con.print(Text(f"  dropped: {report['dropped']}"))
        return EXIT_OK

    def table(title: str, columns: tuple[str, ...], keys) -> Table:
        """The first column (label keys) keeps its full width where the terminal allows; the others fold."""
        t = Table(title=title)
        t.add_column(columns[0], overflow="fold", min_width=min(max((len(k) for k in keys), default=10), 60))
        for col in columns[1:]:
            t.add_column(col, overflow="fold")
        return t
    t = table("instance-type requirements (computeRequirements)", ("key", "requirement"), report["requirements"])
    for k, v in report["requirements"].items():
        t.add_row(Text(k), Text(_requirement_text(v)))
    con.print(t)
    con.print(Text("offerings: " + ", ".join(
        f"{o['zone']}/{o['capacityType']} price={o['price']} {'available' if o['available'] else 'unavailable'}"
        for o in report["offerings"])))
    if "labels" in report:
        t = table(f"labels on Node {report['node']['name']} and who wrote them", ("label", "value", "winner", "writes"),
                  report["labels"])
        for k, v in report["labels"].items():
            t.add_row(Text(k), Text(v["value"]), Text(v["writer"] or ""), Text("; ".join(map(_write_text, v["writes"]))))
        con.print(t)
        if report["droppedFromKubelet"]:
            con.print(Text("dropped from --node-labels by the provider: " + ", ".join(report["droppedFromKubelet"])))
    if report.get("kubeletRefused"):
        con.print(Text.assemble(("kubelet refused to start: ", "red"), report["kubeletRefused"]))
    if report.get("pending"):
        con.print(Text(f"no node: {report['pending']}"))
    return EXIT_OK


# -- new ------------------------------------------------------------------------------------------
def cmd_new(args) -> int:
    """Scaffold a scenario from manifests or a cluster dump (harness/dump/new.py)."""
    from harness.dump.new import NewOptions, new_scenario, write
    from harness.scenario.notices import group_notes
    if not args.manifests and not args.log:
        print("harness new: give manifest or dump files, or a Karpenter log (--log)", file=sys.stderr)
        return EXIT_BAD_INPUT
    out, text, notes = new_scenario(NewOptions(
        paths=args.manifests, name=args.name, output=args.output, profiles=args.profile, region=args.region,
        catalog_file=args.catalog_file, prices_file=args.prices_file, force=args.force, replay=args.replay,
        provider_version=args.provider_version, at=args.at, log=args.log, until=args.until,
        complete=args.complete, provision_mode=args.provision_mode))
    write(out, text)
    for n in group_notes(notes):
        print(n, file=sys.stderr)
    print(f"wrote {out}; run it with: pytest {out}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="harness", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run scenarios and print a summary")
    r.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or directories")
    r.add_argument("--profile", action="append", default=[],
                   help="a label policy or upstream (filters each scenario's given.profiles), or a provider "
                        "release (v1.6.2), any version (the nearest release answers, with a warning) or `all` "
                        "(every release profile): runs each selected scenario under it (repeatable)")
    r.add_argument("--backend", default="embedded", choices=list(BACKEND_NAMES),
                   help="the cluster the scenarios run against (docs/engines/backends.md)")
    r.add_argument("--engine", default="simulated", choices=["simulated", "real"],
                   help="real: the Karpenter-on-Azure controller on the local backend, or on kind with "
                        "--backend kind (docs/engines/real-engine.md)")
    r.add_argument("--conformance", default=None, metavar="DIR",
                   help="also run the simulation on the embedded backend and write DIR/conformance.{md,json} "
                        "(with --engine real)")
    r.add_argument("--real-timing", default=None, choices=["fast", "upstream"],
                   help="with --engine real: fast (the default): a disruption pass on request, two of core's waits divided by ten; "
                        "upstream runs the release as is (harness/data/controller-timing.yaml)")
    r.add_argument("--provision-mode", default=None, choices=PROVISION_MODES,
                   help="the provider's PROVISION_MODE for every scenario whose given.cluster names none, on both engines "
                        "(harness/model/upstream/provisionmodes.py; a release without the mode refuses the run)")
    r.add_argument("--provider-git", default=None, metavar="DIR",
                   help="with --engine real: the provider's git history (a karpenter-provider-azure clone with its "
                        "tags; also HARNESS_PROVIDER_GIT): a release profile runs that release's own controller, "
                        "built on first use and cached per commit (docs/real-controller-releases.md)")
    r.add_argument("--provider-ref", default=None, metavar="REF",
                   help="with --engine real --provider-git: run every scenario on the controller of this tag, "
                        "branch or commit")
    r.add_argument("-k", default=None, help="only scenarios whose name contains this text")
    r.add_argument("--explore", type=int, default=None, metavar="N",
                   help="run each scenario under N seeds (simulated engine) and report its distinct outcomes "
                        "with their counts; expectations are judged over the set. Runs after the first also vary "
                        "the timing races the scenario leaves open in given.loop and draw the timings it does not "
                        "give (nodeBoot, vmDelete) from a range (docs/races.md)")
    r.add_argument("--calm", action="store_true",
                   help="with --explore: vary the seed only, each run with the scenario's given.loop as written")
    r.add_argument("--json", action="store_true")
    r.add_argument("--trace", action="store_true",
                   help="print the loop trace of failures, and what happened when (NodeClaims, disruption steps, "
                        "events; offset from the start and UTC)")
    r.add_argument("--details", action="store_true",
                   help=f"what happened in every run, passing ones too (default with up to {DETAILS_UP_TO} runs), "
                        "with the NodeClaims' lives, the disruption steps and the events over time, and every "
                        "NodeClaim and bound pod (without it, a large run lists the first ones and counts the rest)")
    r.add_argument("--report", default=None, metavar="DIR",
                   help="write the runs as self-contained HTML pages to DIR (index.html, one page per run: "
                        "timeline, why, labels by writer, expectations; docs/report.md)")
    r.add_argument("--labels", action="store_true",
                   help="with what happened: every Node's labels, the writer whose value is on the Node and every "
                        "writer (in --json too)")
    r.add_argument("--why", action="append", default=[], metavar="NAME",
                   help="why for this object (repeatable): a pod (name, namespace/name or Deployment: where it "
                        "landed and why, or which requirement or resource eliminated how many instance types per "
                        "NodePool; its host ports), a NodeClaim or Node (why launched, kept or disrupted, pass by "
                        "pass; seeded drift), a NodePool (why chosen or skipped; its budgets and their windows in UTC), "
                        "an AKSNodeClass (what the release reads of it, its readiness, hash and drift)")
    r.add_argument("--deciding", action=argparse.BooleanOptionalAction, default=None,
                   help="at a release profile, name the core switches and provider facts whose value at that release "
                        "decided the outcome, each at the decision where it acted (counterfactual runs with each set "
                        "to the newest release's value; docs/why.md). Default: on when at most "
                        f"{DETAILS_UP_TO} runs are selected or --why is given, for runs of at most 5 s; asked for after "
                        "a longer run, it says what it will cost first")
    r.add_argument("--karpenter-log", default=None, metavar="OUT",
                   help="write each run's Karpenter log to OUT (a directory with several runs): the decisions as "
                        "the controller of the run's core release logs them (JSON lines, that core's messages and "
                        "keys); on the real engine the controller's own log (docs/karpenter-log.md)")
    r.add_argument("--against-log", default=None, metavar="LOG",
                   help="compare each run's Karpenter log with LOG (a customer's `kubectl logs` of the controller) "
                        "and show where they first part, both sides; names both hold pair with themselves, times "
                        "must agree within --log-tolerance; a log worded by another core release than the run's "
                        "is said (docs/karpenter-log.md)")
    r.add_argument("--log-from", default=None, metavar="TIME",
                   help="with --against-log: compare LOG from TIME on (RFC 3339), the run from its start (default: "
                        "the scenario's given.startTime where LOG has lines from then on, else each side's first line)")
    r.add_argument("--log-tolerance", default=None, metavar="DURATION",
                   help="with --against-log: how far apart (from each side's start) two lines may be and still be "
                        "the same decision (a Go duration; default 2m)")
    r.set_defaults(fn=cmd_run)
    bi = sub.add_parser("bisect", help="the first provider commit whose outcome of a scenario changed (real engine)")
    bi.add_argument("paths", nargs="+", metavar="PATH", help="scenario files or directories")
    bi.add_argument("--scenario", action="append", default=[], metavar="NAME",
                    help="only the scenario of this name (repeatable)")
    bi.add_argument("-k", default=None, help="only scenarios whose name contains this text")
    bi.add_argument("--good", required=True, help="a release tag or commit with the old outcome")
    bi.add_argument("--bad", required=True, help="a later tag or commit with the new outcome")
    bi.add_argument("--provider-git", default=None, metavar="DIR",
                    help="a karpenter-provider-azure clone with its tags (or KARPENTER_PROVIDER_GIT)")
    bi.add_argument("--profile", action="append", default=[],
                    help="the profile the expectations are read under (default upstream; repeatable, as for run)")
    bi.add_argument("--on", choices=["outcome", "verdict"], default="outcome",
                    help="what a commit is judged by: the whole outcome (default) or the scenario's verdict")
    bi.add_argument("--json", action="store_true", help="print the result as JSON")
    bi.set_defaults(fn=cmd_bisect)
    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("paths", nargs="*", default=["scenarios"], help="scenario files or directories")
    v.set_defaults(fn=cmd_validate)
    e = sub.add_parser("explain", help="requirements of one SKU and the labels each writer puts on its Node; "
                                        "several sizes, image families or releases: a matrix of outcomes")
    e.add_argument("--sku", action="append", required=True,
                   help="the VM size, e.g. Standard_D2s_v3 (repeatable, or a comma list)")
    e.add_argument("--profile", action="append", default=[],
                   help="the profile, release or version to answer under (default upstream; repeatable, or a comma "
                        "list; `all-releases`: every release profile)")
    e.add_argument("--region", default="southcentralus", help="the region whose catalog and prices are read")
    e.add_argument("--catalog", default=None, help="a bundled catalog name (default: the region's)")
    e.add_argument("--catalog-file", default=None, metavar="SKUS.json",
                   help="`az vm list-skus --location R --all --output json` output or an ARM resourceSkus response")
    e.add_argument("--prices-file", default=None, metavar="PRICES.json", help="Azure Retail Prices API JSON")
    e.add_argument("--image-family", action="append", default=[],
                   help="the AKSNodeClass's imageFamily (default Ubuntu2204, or the --nodeclass file's; repeatable, "
                        "or a comma list)")
    e.add_argument("--nodeclass", default=None, help="a file with an AKSNodeClass (--image-family replaces its imageFamily)")
    e.add_argument("--capacity-type", default="on-demand", choices=["on-demand", "spot"],
                   help="the capacity type the Node is launched with")
    e.add_argument("--cluster", action="append", default=[], metavar="KEY=VALUE",
                   help="cluster setting, e.g. networkDataplane=cilium, kubernetesVersion=1.34.0")
    e.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="a NodePool template label")
    e.add_argument("--json", action="store_true", help="print the report (or the matrix) as JSON")
    e.set_defaults(fn=cmd_explain)
    n = sub.add_parser("new", help="scaffold a scenario from manifest files (bug reproduction)")
    n.add_argument("manifests", nargs="*", help="manifest files, `kubectl get -o yaml|json` dumps, `kubectl get events` "
                                                "as printed; none with --log (the log alone)")
    n.add_argument("--name", required=True, help="the scenario's metadata.name")
    n.add_argument("-o", "--output", default=None, help="the scenario file to write (default: NAME.scenario.yaml here)")
    n.add_argument("--profile", action="append", default=[],
                   help="default: the label policies and upstream (or the --provider-version's release)")
    n.add_argument("--provider-version", default=None, metavar="VERSION",
                   help="the customer's Karpenter provider version (e.g. v1.6.2): its release profile answers "
                        "(harness.model.upstream.releases.resolve; the nearest release, with a warning, when none covers it)")
    n.add_argument("--provision-mode", default=None, choices=PROVISION_MODES,
                   help="the PROVISION_MODE the customer's Karpenter ran in, where a dump cannot tell it: "
                        "bootstrappingclient (Node Auto Provisioning's today) looks like aksscriptless in a dump, "
                        "aksmachineapiheaderbatch like aksmachineapi; refused where the dump shows the other path "
                        "(default: read from the dump, what it leaves open said in given.assumed)")
    n.add_argument("--region", default=None,
                   help="default: what the Nodes, NodeClaims, the AKSNodeClass or the SKU file say; never guessed "
                        "(an error says how to give it)")
    n.add_argument("--catalog-file", default=None, metavar="SKUS.json",
                   help="`az vm list-skus --location R --all --output json` output or an ARM resourceSkus response; "
                        "anywhere on disk (copied beside the scenario when outside its tree)")
    n.add_argument("--prices-file", default=None, metavar="PRICES.json", help="Azure Retail Prices API JSON")
    n.add_argument("--at", default=None, metavar="TIME",
                   help="where the scenario's clock starts (RFC 3339, e.g. 2026-11-20T14:05:00Z; default: the dump's "
                        "clock, the newest timestamp in the input). Before the dump: the cluster as it stood then "
                        "(objects created later left out, later deletions undone), later pods and objects applied "
                        "as steps at their creation, and the dump's expectations checked at a step at its time")
    n.add_argument("--until", default=None, metavar="TIME",
                   help="carry the run on past the dump to TIME (RFC 3339): an advance step after the dump's time")
    n.add_argument("--log", default=None, metavar="KARPENTER.log",
                   help="the customer's Karpenter controller log (JSON lines, any core's wording, error lines "
                        "too). Without NodeClaims or Nodes in the input it gives the scenario's region, zones, nodes, "
                        "pods, clock (from just before the incident) and expectations (its end), naming what it "
                        "assumed; beside a dump, the clock and an advance step (docs/karpenter-log.md)")
    n.add_argument("--complete", action="store_true",
                   help="the input holds every pod: a NodeClaim asking for more than its pods and the DaemonSets "
                        "explain is taken as emptied since, not held busy by a stand-in pod (docs/reproduce-a-ticket.md)")
    n.add_argument("--force", action="store_true", help="overwrite an existing output file")
    n.add_argument("--replay", action="store_true",
                   help="start from an empty cluster and expect the dump's nodes (default: the dump's Nodes and "
                        "their running pods are given.existingNodes)")
    n.set_defaults(fn=cmd_new)
    from harness.parity import add_parser as add_parity
    add_parity(sub)
    from harness import __version__, logs
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    logs.add_verbose(p)
    for command in sub.choices.values():
        logs.add_verbose(command, sub=True)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from harness import logs
    logs.setup(args.verbose)
    try:
        return args.fn(args)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
