"""`harness parity` on the command line: options are checked before any probe runs, progress goes
to stderr, and each output names the command that regenerates it on its first line."""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from harness.model.upstream.provisionmodes import PROVISION_MODES
from harness.parity.checkdoc import check_doc
from harness.parity.diff import diff_rows, render_diff_markdown
from harness.parity.labels import ParityUsageError, load_labels, select_labels
from harness.parity.probes import run_matrix
from harness.parity.render import render_markdown, render_png, render_svg, row_json
from harness.parity.text import md_cell, shorten

FORMATS = ("markdown", "json", "svg", "png")
DIFF_FORMATS = CHECK_DOC_FORMATS = ("markdown", "json")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "parity", help="design 0006's label table regenerated from behavior (one profile, or a diff of two)",
        description=sys.modules["harness.parity"].__doc__.split("\n\n")[0])   # the package's own summary
    p.add_argument("--profile", default="upstream", help="label profile (default: upstream)")
    p.add_argument("--provision-mode", default=None, metavar="MODE",
                   choices=PROVISION_MODES,
                   help="the probes' given.cluster.provisionMode (default: the cluster's, aksscriptless)")
    p.add_argument("--diff", metavar="OTHER", default=None,
                   help="compare with another profile: only the cells whose behavior differs")
    p.add_argument("--all", action="store_true", help="with --diff: every cell, changed or not")
    p.add_argument("--check-doc", action="store_true",
                   help="list every cell where behavior and design 0006's Karpenter columns disagree, with sources")
    p.add_argument("--format", choices=FORMATS, default="markdown")
    p.add_argument("-o", "--output", default=None, help="write to a file (required for png)")
    p.add_argument("--label", action="append", default=[], metavar="KEY", help="only these labels (repeatable)")
    p.add_argument("--family", action="append", default=[], help="only these label families (repeatable)")
    p.add_argument("--data", default=None, help="label table file (default: harness/data/design-0006-labels.yaml)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(fn=main)


def command_line(args) -> str:
    parts = ["harness parity", f"--profile {args.profile}"]
    if getattr(args, "provision_mode", None):
        parts.append(f"--provision-mode {args.provision_mode}")
    if args.diff:
        parts.append(f"--diff {args.diff}")
    if getattr(args, "all", False):
        parts.append("--all")
    if args.check_doc:
        parts.append("--check-doc")
    if args.format != "markdown":
        parts.append(f"--format {args.format}")
    for k in args.label:
        parts.append(f"--label {k}")
    for f in args.family:
        parts.append(f"--family {f}")
    if args.output:
        parts.append(f"-o {args.output}")
    return " ".join(parts)


def check_options(args) -> None:
    """Everything that can be wrong with the options, said before a minute of probing."""
    from harness.model.upstream.profile import ProfileError, available_profiles
    from harness.model.upstream.releases import resolve
    from harness.scenario.selection import unknown_profile
    for flag, p in (("--profile", args.profile), ("--diff", args.diff)):
        if p is None:
            continue
        try:
            resolve(p)
        except ProfileError:
            raise ParityUsageError(unknown_profile(p, available_profiles(), flag)) from None
    if args.diff and args.check_doc:
        raise ParityUsageError("--diff and --check-doc are separate reports: give one")
    if args.diff and args.format not in DIFF_FORMATS:
        raise ParityUsageError(f"--diff supports --format {' or '.join(DIFF_FORMATS)}, not {args.format}")
    if args.check_doc and args.format not in CHECK_DOC_FORMATS:
        raise ParityUsageError(f"--check-doc supports --format {' or '.join(CHECK_DOC_FORMATS)}, not {args.format}")
    if getattr(args, "all", False) and not args.diff:
        raise ParityUsageError("--all applies to --diff only")
    if args.format == "png":
        if not args.output:
            raise ParityUsageError("--format png needs -o FILE")
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:
            raise ParityUsageError("--format png needs matplotlib, which is not installed; use --format svg")


def progress_printer(quiet: bool) -> Callable[[str], Callable[[int, int, str], None] | None]:
    """A per-profile progress printer on stderr: one updating line on a terminal, a line every 10
    labels (and the last) in a log."""
    def for_profile(profile: str):
        if quiet:
            return None
        tty = sys.stderr.isatty()

        def report(done: int, total: int, key: str) -> None:
            text = f"harness parity: {profile}: {done}/{total} labels ({key})"
            if tty:
                sys.stderr.write("\r\033[K" + text + ("\n" if done == total else ""))
            elif done % 10 == 0 or done == total:
                sys.stderr.write(text + "\n")
            sys.stderr.flush()
        return report
    return for_profile


def check_doc_markdown(found, profile: str, command: str) -> str:
    lines = [f"<!-- generated by `{command}` -->",
             f"# Design 0006 vs behavior under `{profile}`: {sum(d.kind == 'disagree' for d in found)} "
             f"disagreement(s), {sum(d.kind == 'qualification' for d in found)} qualification(s)", "",
             "Sources: the upstream code whose behavior the row reports (module version, file:line, function), "
             "then the label's reference note.", "",
             "| Label | Context | Column | Doc | Behavior | Kind | Reason | Sources |", "|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(md_cell(x) for x in (d.key, d.variant or "main", d.column, d.doc, d.behavior,
                                                     d.kind, shorten(d.reason), "; ".join(d.sources))) + " |"
              for d in found]
    return "\n".join(lines) + "\n"


def render(args, matrix: Callable[[str], tuple]) -> str | None:
    """The output text for `args` (None for png, written directly); `matrix(profile)` gives rows."""
    command = command_line(args)
    rows, stats = matrix(args.profile)
    if args.diff:
        rows_b, stats_b = matrix(args.diff)
        diffs = diff_rows(rows, rows_b, include_unchanged=args.all)
        if args.format == "json":
            return json.dumps({"from": args.profile, "to": args.diff, "differences": diffs,
                               "stats": [stats, stats_b]}, indent=2, ensure_ascii=False) + "\n"
        return render_diff_markdown(args.profile, args.diff, diffs, rows, command, show_all=args.all)
    if args.check_doc:
        found = check_doc(rows)
        if args.format == "json":
            return json.dumps([asdict(d) for d in found], indent=2, ensure_ascii=False) + "\n"
        return check_doc_markdown(found, args.profile, command)
    if args.format == "json":
        return json.dumps({"profile": args.profile, "stats": stats, "rows": [row_json(r) for r in rows]},
                          indent=2, ensure_ascii=False) + "\n"
    if args.format == "svg":
        return render_svg(rows, stats, command)
    if args.format == "png":
        render_png(rows, stats, command, args.output)
        return None
    return render_markdown(rows, stats, command) + "\n"


def emit(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)


def main(args) -> int:
    try:
        check_options(args)
        entries = select_labels(load_labels(args.data), args.label, args.family)
    except ParityUsageError as e:
        print(f"harness parity: {e}", file=sys.stderr)
        return 2
    progress = progress_printer(args.quiet)
    cache: dict[str, tuple] = {}

    def matrix(profile: str):
        if profile not in cache:
            cache[profile] = run_matrix(profile, entries, progress=progress(profile),
                                        mode=getattr(args, "provision_mode", None))
        return cache[profile]
    text = render(args, matrix)
    if text is not None:
        emit(text, args.output)
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    """`harness parity ARGS` as a namespace (for regenerating documents in one process)."""
    parser = argparse.ArgumentParser(prog="harness")
    add_parser(parser.add_subparsers(dest="cmd"))
    return parser.parse_args(["parity", *argv])
