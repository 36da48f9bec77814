"""Core's behaviour switches per provider release, derived from sigs.k8s.io/karpenter's history
(`python -m harness.model.coresync --core-git DIR`).

harness/data/core-behaviour.yaml holds one probe per switch (release-probes.yaml's language, `module: core`).
For every release profile of harness/data/releases/index.yaml this evaluates them on the core source the
release builds with (its `core:` tag, or the commit of a go.mod `replace` pseudo-version), read straight
from a kubernetes-sigs/karpenter git directory, and writes `core.behaviour` into that release's
provider-facts.yaml, the one place profiles read derived facts from. The full provider sync
(harness.model.releasesync) evaluates the same probes the same way; this is the fast path that needs no
provider checkout and no module proxy. `--check` compares each switch's derived values with its `since`, and
harness/data/core-changes.yaml with core's history (harness.model.corechanges); `--changes` rewrites that
file's list from the history, keeping its verdicts.
"""
from __future__ import annotations

import argparse
import fnmatch
import functools
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.model import corechanges
from harness.model.corespec import core_probes, core_spec
from harness.model.data import DATA_DIR, load_yaml
from harness.model.gosource import SyncError
from harness.model.releasesync import evaluate_probe, git, git_dir_of, is_ancestor

FACTS_FILE = "provider-facts.yaml"
ENV_CORE_GIT = "HARNESS_CORE_GIT"
_PSEUDO = re.compile(r"^v\d+\.\d+\.\d+-[\d.]*\d{14}-([0-9a-f]{12,40})$")


def core_rev(core: str) -> str:
    """The git revision of a release's `core:` value: the tag, or a pseudo-version's commit."""
    version = core.split(" ", 1)[0]
    m = _PSEUDO.match(version)
    return m.group(1) if m else version


def git_reader(git_dir: Path, rev: str, globs: tuple[str, ...]) -> Callable[[str], list[tuple[str, str]]]:
    """A `read(module)` for evaluate_probe over core at `rev`: the files matching `globs` only."""

    @functools.lru_cache(maxsize=None)
    def read(module: str) -> list[tuple[str, str]]:
        if module != "core":
            return []
        names = git(git_dir, "ls-tree", "-r", "--name-only", rev, "pkg").split()
        out = []
        for name in sorted(names):
            if name.endswith((".go", ".yaml")) and any(fnmatch.fnmatch(name, g) for g in globs):
                out.append((name, git(git_dir, "show", f"{rev}:{name}")))
        return out
    return read


def evaluate(git_dir: Path, rev: str, data_dir: Path = DATA_DIR) -> dict[str, Any]:
    """switch name -> its value at core `rev`."""
    probes = core_probes(str(data_dir))
    globs = tuple(sorted({g for p in probes for g in p["files"]}))
    read = git_reader(git_dir, rev, globs)
    return {p["name"]: evaluate_probe(p, read) for p in probes}


def release_cores(data_dir: Path = DATA_DIR) -> dict[str, str]:
    """release profile -> its core description (harness/data/releases/index.yaml)."""
    idx = load_yaml((data_dir / "releases" / "index.yaml").read_text())
    return {name: str(entry["core"]) for name, entry in idx["profiles"].items()}


def with_behaviour(text: str, values: dict[str, Any]) -> str:
    """provider-facts.yaml's text with `core.behaviour` set to `values` (header comments kept; the body is
    written as the sync writes it, so an unchanged value is an unchanged file)."""
    head = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))
    facts = load_yaml(text[len(head):]) or {}
    core = facts.setdefault("core", {})
    core["behaviour"] = dict(values)
    return head + yaml.safe_dump(facts, sort_keys=False, width=200, allow_unicode=True)


def core_version(core: str) -> tuple[int, int, int] | None:
    """(major, minor, patch) of a core description; a pseudo-version counts as its base tag's."""
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)", core)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def modeled(core: str, data_dir: Path = DATA_DIR) -> bool:
    """Whether the loop models this core at all (at or after core-behaviour.yaml's `oldestModeled`)."""
    v, oldest = core_version(core), core_version(core_spec(str(data_dir))["oldestModeled"])
    return v is not None and oldest is not None and v >= oldest


def check(git_dir: Path, values: dict[str, dict[str, Any]], cores: dict[str, str],
          data_dir: Path = DATA_DIR) -> list[str]:
    """Where a switch's derived value disagrees with its history: a release must have v1.14.0's value
    exactly when its core contains the switch's `commit` or one of its `backports`' commits, or (a
    `regression: true` introducedBy) lacks the change that brought the other value."""
    out = []
    newest = evaluate(git_dir, core_spec(str(data_dir))["newest"], data_dir)
    for s in core_probes(str(data_dir)):
        commits = [str(s["commit"])] + [str(b["commit"]) for b in s.get("backports") or ()]
        intro = s.get("introducedBy") or {}
        for name, core in cores.items():
            if not modeled(core, data_dir):
                continue
            rev = core_rev(core)
            expect_new = any(is_ancestor(git_dir, c, rev) for c in commits) or \
                bool(intro.get("regression") and not is_ancestor(git_dir, str(intro["commit"]), rev))
            has_new = values[name].get(s["name"]) == newest.get(s["name"])
            if expect_new != has_new:
                out.append(f"{s['name']}: {name} (core {core.split(' ', 1)[0]}) derives {values[name].get(s['name'])!r}, "
                           f"but its core {'has' if expect_new else 'lacks'} {s['commit']} (#{s['pr']})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.model.coresync", description=__doc__.split("\n\n")[0])
    ap.add_argument("--core-git", default=os.environ.get(ENV_CORE_GIT),
                    help=f"a git directory or checkout of kubernetes-sigs/karpenter (default: ${ENV_CORE_GIT})")
    ap.add_argument("--check", action="store_true",
                    help="only compare the derived values with each switch's `since`, and core-changes.yaml with the "
                         "history")
    ap.add_argument("--changes", action="store_true",
                    help="rewrite core-changes.yaml's list from core's history (verdicts kept; a new PR's by rule, "
                         "else `unjudged`)")
    args = ap.parse_args(argv)
    if not args.core_git:
        ap.error(f"--core-git DIR (or ${ENV_CORE_GIT}) is required")
    if args.changes:
        return _changes(Path(args.core_git))
    try:
        git_dir = git_dir_of(args.core_git)
        cores = release_cores()
        by_rev: dict[str, dict[str, Any]] = {}
        values = {}
        for name, core in cores.items():
            rev = core_rev(core)
            if rev not in by_rev:
                by_rev[rev] = evaluate(git_dir, rev)
            values[name] = by_rev[rev]
    except SyncError as e:
        print(f"coresync: {e}", file=sys.stderr)
        return 1
    problems = check(git_dir, values, cores)
    if args.check:
        changes = corechanges.load()
        try:
            change_problems = (corechanges.check_history(git_dir) + corechanges.missing_switch_prs(git_dir)
                               + corechanges.consistency())
        except SyncError as e:
            print(f"coresync: {e}", file=sys.stderr)
            return 1
        problems += [f"{corechanges.CHANGES_FILE}: {p}" for p in change_problems]
    for p in problems:
        print(f"coresync: {p}", file=sys.stderr)
    stale = []
    for name, v in values.items():
        path = DATA_DIR / "releases" / name / FACTS_FILE
        old = path.read_text()
        new = with_behaviour(old, v)
        if new != old:
            stale.append(name)
            if not args.check:
                path.write_text(new)
    switches = len(core_probes(str(DATA_DIR)))
    if args.check:
        for name in stale:
            print(f"coresync: releases/{name}/{FACTS_FILE} is not what core derives: run without --check",
                  file=sys.stderr)
        tally = ", ".join(f"{n} {k}" for k, n in sorted(corechanges.counts(changes).items()))
        print(f"coresync --check: {switches} switch(es) at {len(values)} release(s) over {len(by_rev)} core "
              f"revision(s), {len(changes.changes)} PR(s) of git log {changes.since}..{changes.until} in "
              f"{len(changes.paths)} modeled path(s) ({tally}): {len(problems)} problem(s), "
              f"{len(stale)} file(s) stale")
        return 1 if problems or stale else 0
    print(f"{switches} switch(es) at {len(values)} release(s) over {len(by_rev)} core revision(s); "
          f"{len(stale)} provider-facts.yaml written")
    return 1 if problems else 0


def _changes(core_git: Path) -> int:
    """`--changes`: core-changes.yaml's list rewritten from the history."""
    try:
        spec, gone = corechanges.skeleton(git_dir_of(core_git))
    except SyncError as e:
        print(f"coresync: {e}", file=sys.stderr)
        return 1
    written = corechanges.write(spec)
    for key in gone:
        print(f"coresync: {key} dropped: not in git log {spec.since}..{spec.until} of the modeled paths", file=sys.stderr)
    unjudged = [c for c in spec.changes if c.verdict == corechanges.UNJUDGED]
    for c in unjudged:
        print(f"coresync: {c.key} ({c.tag}, {c.title!r}): unjudged: give it a verdict in {corechanges.CHANGES_FILE}",
              file=sys.stderr)
    print(f"{len(spec.changes)} PR(s) of git log {spec.since}..{spec.until} in {len(spec.paths)} modeled path(s); "
          f"{corechanges.CHANGES_FILE} {'written' if written else 'unchanged'}; {len(unjudged)} unjudged")
    return 1 if unjudged else 0


if __name__ == "__main__":
    sys.exit(main())
