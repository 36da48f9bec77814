"""Core's behaviour switches per provider release, derived from sigs.k8s.io/karpenter's history
(`python -m harness.model.coresync --core-git DIR`).

harness/data/core-behaviour.yaml holds one probe per switch (release-probes.yaml's language, `module: core`).
For every release profile of harness/data/releases/index.yaml this evaluates them on the core source the
release builds with (its `core:` tag, or the commit of a go.mod `replace` pseudo-version), read straight
from a kubernetes-sigs/karpenter git directory, and writes `core.behaviour` into that release's
provider-facts.yaml, the one place profiles read derived facts from. The full provider sync
(harness.model.upstream.releasesync) evaluates the same probes the same way; this is the fast path that needs no
provider checkout and no module proxy; it also sets the `switch: <name>` verdict of each PR a switch names in
harness/data/core-changes.yaml. `--check` compares each switch's derived values with its `since`,
core-changes.yaml with core's history (harness.model.corechanges), the switch names harness/ reads with
the file's, each entry's keys, and that no pair is still as `--new-pair` wrote it; `--changes` rewrites
core-changes.yaml's list from the history, keeping its verdicts; `--new-pair SWITCH` writes a switch's
scenario pair to edit.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import functools
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.model import corechanges
from harness.model.upstream.corespec import CORE_FILE, core_probes, core_spec, entry_problems
from harness.model.data import DATA_DIR, load_yaml
from harness.model.upstream.gosource import SyncError
from harness.model.upstream.releasesync import evaluate_probe, git, git_dir_of, is_ancestor

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


def source_reads(root: Path = DATA_DIR.parent) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What harness/'s source names of core-behaviour.yaml: switch -> where it is read (each `core["<name>"]`,
    a string subscript of a name or attribute called `core`, outside harness/model, whose `core` is a profile's
    facts; and Profile's `_core_behaviour("<name>")`), and scope -> where a controller touches it (each
    `touch_scope("<scope>")`), as `path:line`."""
    reads: dict[str, list[str]] = {}
    touches: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root.parent).as_posix()
        in_model = path.relative_to(root).parts[0] == "model"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Subscript) and not in_model and isinstance(node.slice, ast.Constant) and \
                    isinstance(node.slice.value, str) and \
                    (getattr(node.value, "id", None) == "core" or getattr(node.value, "attr", None) == "core"):
                reads.setdefault(node.slice.value, []).append(f"{where}:{node.lineno}")
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "_core_behaviour" and node.args \
                    and isinstance(node.args[0], ast.Constant):
                reads.setdefault(str(node.args[0].value), []).append(f"{where}:{node.lineno}")
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "touch_scope" and node.args and \
                    isinstance(node.args[0], ast.Constant):
                touches.setdefault(str(node.args[0].value), []).append(f"{where}:{node.lineno}")
    return reads, touches


def source_problems(data_dir: Path = DATA_DIR, root: Path = DATA_DIR.parent) -> list[str]:
    """Where harness/'s source and core-behaviour.yaml disagree: a switch read that the file lacks (a misspelt
    name), an implemented switch nothing reads, a scope touched or named by a switch that `scopes` lacks."""
    spec = core_spec(str(data_dir))
    names = {s["name"] for s in spec["switches"]}
    scopes = set(spec["scopes"])
    reads, touches = source_reads(root)
    out = [f"{w}: reads switch {n!r}, which {CORE_FILE} lacks" for n, ws in sorted(reads.items()) if n not in names
           for w in ws]
    out += [f"{w}: touches scope {n!r}, which {CORE_FILE} `scopes` lacks" for n, ws in sorted(touches.items())
            if n not in scopes for w in ws]
    for s in spec["switches"]:
        if s.get("implemented") and s["name"] not in reads:
            out.append(f"{s['name']}: implemented, but nothing in harness/ reads core[{s['name']!r}]")
        out += [f"{s['name']}: scope {sc!r} is not in {CORE_FILE} `scopes`" for sc in s.get("scope") or ()
                if sc not in scopes]
    return out


PAIR_DIR = Path("scenarios") / "releases" / "core"
# the first line of the comment --new-pair writes: `--check` fails while a pair holds it
PAIR_MARK = "# Written by `python -m harness.model.coresync --new-pair"

_PAIR = """\
# yaml-language-server: $schema=../../../harness/data/scenario.schema.json
# Karpenter core's behaviour at the core version each provider release pins (harness/data/core-behaviour.yaml,
# docs/core-releases.md): the same input before and after a core change, each outcome read from core's source.
# Written by `python -m harness.model.coresync --new-pair {name}`:
# `coresync --check` fails while this comment is here. It runs as it stands (a pod scheduled at both releases):
# make the input reach the situation the switch decides (the fields: docs/reference/scenario-format.md;
# given.existingNodes seeds nodes, a Node without `nodePool` is one Karpenter does not manage; `steps` change the
# cluster later; the pairs beside this one show events, disruption and steps), put each side's outcome under
# expectByProfile, read from core's source at both tags ({before}: {before_core}, {after}: {after_core}), say in
# the description what the input does and what each side shows, and delete this comment.
# Run it: python -m harness run <this file>
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata:
  name: core-{stem}
  labels: [releases, core]
description: >-
{description}
given:
  profiles: [{before}, {after}]
  skus: [Standard_D2s_v3]
manifests:
  - {{apiVersion: karpenter.azure.com/v1alpha2, kind: AKSNodeClass, metadata: {{name: default}}, spec: {{imageFamily: Ubuntu2204}}}}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: default}}
    spec:
      template:
        spec:
          nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}
          requirements:
            - {{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}}
  - apiVersion: v1
    kind: Pod
    metadata: {{name: web}}
    spec:
      containers: [{{name: app, image: nginx, resources: {{requests: {{cpu: 100m}}}}}}]
expect:
  pods: {{web: {{scheduled: true}}}}
expectByProfile:
  {before}:              # {name}: {before_value}
    nodeClaims: {{launched: 1}}
  {after}:               # {name}: {after_value}
    nodeClaims: {{launched: 1}}
"""


def pair_problems(root: Path = DATA_DIR.parent.parent) -> list[str]:
    """The pairs of scenarios/releases/core/ still as `--new-pair` wrote them (its comment kept), as
    `path:line`: a pair that runs as written shows nothing of its switch."""
    out = []
    for path in sorted((root / PAIR_DIR).glob("*.scenario.yaml")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith(PAIR_MARK):
                out.append(f"{(PAIR_DIR / path.name).as_posix()}:{i}: still as `--new-pair` wrote it: make its "
                           "input reach the switch, give each side's outcome under expectByProfile and the "
                           "description, then delete the comment")
    return out


def pair_sides(name: str, data_dir: Path = DATA_DIR) -> tuple[tuple[str, str, Any], tuple[str, str, Any]]:
    """The two release profiles a switch's pair runs at, as (profile, core, value): the newest release whose
    value is not v1.14.0's, and the last patch of the next line that has v1.14.0's."""
    from harness.model.upstream.profile import raw_profile
    cores = {p: c for p, c in release_cores(data_dir).items() if modeled(c, data_dir)}
    idx = load_yaml((data_dir / "releases" / "index.yaml").read_text())["profiles"]
    values = {p: ((raw_profile(p).get("core") or {}).get("behaviour") or {}).get(name) for p in cores}
    newest = values[max(cores, key=lambda p: list(idx).index(p))]
    order = [p for p in idx if p in cores]
    old = [p for p in order if values[p] != newest]
    if not old:
        raise SyncError(f"{name}: every modeled release has v1.14.0's value {newest!r}: "
                        "no release shows the other side")
    before = old[-1]
    later = [p for p in order[order.index(before) + 1:] if values[p] == newest]
    line = idx[later[0]]["line"]
    after = [p for p in later if idx[p]["line"] == line][-1]
    return ((before, cores[before].split(" ", 1)[0], values[before]), (after, cores[after].split(" ", 1)[0], newest))


def new_pair(name: str, root: Path = Path("."), data_dir: Path = DATA_DIR) -> Path:
    """`--new-pair NAME`: the scenario pair of switch NAME, from its entry, at scenarios/releases/core/."""
    s = next((s for s in core_spec(str(data_dir))["switches"] if s["name"] == name), None)
    if s is None:
        raise SyncError(f"{name}: not a switch of {CORE_FILE} (add its entry first)")
    stem = re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()
    path = root / PAIR_DIR / f"{stem}.scenario.yaml"
    if path.exists():
        raise SyncError(f"{path}: exists already")
    (before, before_core, before_value), (after, after_core, after_value) = pair_sides(name, data_dir)
    about = " ".join(str(s.get("about", "")).split())
    text = (f"Switch {name}. {about[:1].upper() + about[1:]}. Core {before_core} (provider {before}; "
            f"sigs.k8s.io/karpenter {before_core} {s['before']}) does one thing; from core {s['since']} (#{s['pr']}; "
            f"provider {after}; {s['after']}) the other.")
    path.write_text(_PAIR.format(name=name, stem=stem, before=before, before_core=before_core, after=after,
                                 after_core=after_core, before_value=before_value, after_value=after_value,
                                 description=textwrap.fill(text, 110, initial_indent="  ", subsequent_indent="  ")))
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.model.coresync", description=__doc__.split("\n\n")[0])
    ap.add_argument("--core-git", default=os.environ.get(ENV_CORE_GIT),
                    help=f"a git directory or checkout of kubernetes-sigs/karpenter (default: ${ENV_CORE_GIT})")
    ap.add_argument("--check", action="store_true",
                    help="only compare the derived values with each switch's `since`, core-changes.yaml with the "
                         "history, and the switch names harness/ reads with core-behaviour.yaml's; check each "
                         "entry's keys and that no pair is still as --new-pair wrote it; say what it checked")
    ap.add_argument("--changes", action="store_true",
                    help="rewrite core-changes.yaml's list from core's history (verdicts kept; a new PR's by rule, "
                         "else `unjudged`)")
    ap.add_argument("--new-pair", metavar="SWITCH",
                    help="write the scenario pair of a switch of core-behaviour.yaml, to edit: "
                         "scenarios/releases/core/<switch-name>.scenario.yaml at the releases just before and after it")
    args = ap.parse_args(argv)
    if args.new_pair:
        try:
            path = new_pair(args.new_pair)
        except SyncError as e:
            print(f"coresync: {e}", file=sys.stderr)
            return 1
        print(f"{path} written: make its input reach the switch and give each side's outcome")
        return 0
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
    problems = entry_problems() + check(git_dir, values, cores)
    reads, touches = source_reads()
    problems += source_problems()
    if args.check:
        changes = corechanges.load()
        try:
            change_problems = (corechanges.check_history(git_dir) + corechanges.missing_switch_prs(git_dir)
                               + corechanges.consistency())
        except SyncError as e:
            print(f"coresync: {e}", file=sys.stderr)
            return 1
        problems += [f"{corechanges.CHANGES_FILE}: {p}" for p in change_problems]
        pairs = sorted((DATA_DIR.parent.parent / PAIR_DIR).glob("*.scenario.yaml"))
        problems += pair_problems()
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
              f"{len(changes.paths)} modeled path(s) ({tally}), {len(reads)} switch name(s) read and "
              f"{len(touches)} scope(s) touched in harness/, {len(pairs)} pair(s) of {PAIR_DIR.as_posix()}: "
              f"{len(problems)} problem(s), {len(stale)} file(s) stale")
        return 1 if problems or stale else 0
    verdicts = corechanges.with_switch_verdicts()
    print(f"{switches} switch(es) at {len(values)} release(s) over {len(by_rev)} core revision(s); "
          f"{len(stale)} provider-facts.yaml written; {len(verdicts)} switch verdict(s) of "
          f"{corechanges.CHANGES_FILE} set{' (' + ', '.join(verdicts) + ')' if verdicts else ''}")
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
