"""Every change of Karpenter core's history in the packages the loop models, with its verdict.

harness/data/core-changes.yaml lists, once each, every PR of `git log <since>..<until> -- <paths>` in
sigs.k8s.io/karpenter (a commit whose subject ends "(#NNNN)"; a merge commit's commits are its PR's; a commit
naming no PR stands for itself): the first release tag holding it, its title and a verdict (VERDICTS). The
entries are written by `python -m harness.model.coresync --core-git DIR --changes` from core's history (a new PR
gets the verdict rule_verdict gives it, or `unjudged`), and `--check` fails on a PR of the history the file
lacks, on one it lists the history has not, and on an unjudged one. Without a core clone, `consistency` holds
the file to itself and to core-behaviour.yaml. `python -m harness.model.corechanges 2430` answers "is this core
change known?".
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from harness.model.upstream.corespec import core_spec
from harness.model.data import DATA_DIR, load_yaml
from harness.model.upstream.releasesync import git

CHANGES_FILE = "core-changes.yaml"
# switch: a core-behaviour.yaml switch (its pr, foldedIn or introducedBy); fact: a derived `module: core`
# probe of release-probes.yaml; words: the wording of an event or log the harness has; no-outcome and outside:
# why no simulated outcome depends on it; unmodeled-outcome: it changes an outcome and no switch models it yet.
VERDICTS = ("switch", "fact", "words", "no-outcome", "outside", "unmodeled-outcome")
UNJUDGED = "unjudged"
_PR = re.compile(r"\(#(\d+)\)\s*$")
_TAG = re.compile(r"^v1\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Change:
    """One PR of core's history (or one commit naming no PR) and what the harness does with it."""
    pr: int | None
    commit: str
    tag: str
    title: str
    verdict: str

    @property
    def key(self) -> str:
        return f"#{self.pr}" if self.pr is not None else self.commit

    @property
    def kind(self) -> str:
        return self.verdict.split(":", 1)[0].strip()

    @property
    def reason(self) -> str:
        return self.verdict.split(":", 1)[1].strip() if ":" in self.verdict else ""


@dataclass(frozen=True)
class CoreChanges:
    """core-changes.yaml: the history range, the modeled paths and the changes."""
    since: str
    until: str
    paths: tuple[str, ...]
    changes: tuple[Change, ...]


def load(data_dir: Path = DATA_DIR) -> CoreChanges:
    raw = load_yaml((Path(data_dir) / CHANGES_FILE).read_text())
    changes = tuple(Change(pr=c.get("pr"), commit=str(c["commit"]), tag=str(c["tag"]), title=str(c["title"]),
                           verdict=str(c["verdict"])) for c in raw["changes"] or ())
    return CoreChanges(since=str(raw["since"]), until=str(raw["until"]), paths=tuple(raw["paths"]), changes=changes)


# -- the history ---------------------------------------------------------------------------------------------

def _tag_key(tag: str) -> tuple[int, int]:
    m = _TAG.match(tag)
    return (int(m.group(1)), int(m.group(2))) if m else (10**6, 0)


def history(git_dir: Path, spec: CoreChanges) -> list[tuple[int | None, str, str, list[str]]]:
    """(pr, commit, subject, files in the modeled paths) of every commit of the range that touches them, oldest
    first."""
    out = git(git_dir, "log", "--reverse", "--format=%x00%h%x01%s", "--name-only", f"{spec.since}..{spec.until}",
              "--", *spec.paths)
    merged = _merged_prs(git_dir, spec)
    rows = []
    for block in out.split("\0")[1:]:
        head, _, rest = block.partition("\n")
        commit, subject = head.split("\x01", 1)
        m = _PR.search(subject)
        pr, subject = (int(m.group(1)), subject) if m else merged.get(commit[:9], (None, subject))
        rows.append((pr, commit, subject, [f for f in rest.split() if f]))
    return rows


def _merged_prs(git_dir: Path, spec: CoreChanges) -> dict[str, tuple[int, str]]:
    """short commit -> (PR, its title) of the merge commit ("Merge pull request #N from ...", the title its
    body's first line) that brought it in."""
    out: dict[str, tuple[int, str]] = {}
    merges = git(git_dir, "log", "--merges", "--format=%x00%H %s%n%b", f"{spec.since}..{spec.until}")
    for block in merges.split("\0")[1:]:
        head, _, body = block.partition("\n")
        sha, _, subject = head.partition(" ")
        m = re.match(r"Merge pull request #(\d+) ", subject)
        if m:
            title = (body.strip().splitlines() or [subject])[0].strip()
            for c in git(git_dir, "rev-list", "--abbrev-commit", "--abbrev=9", f"{sha}^1..{sha}^2").split():
                out[c] = (int(m.group(1)), title)
    return out


def first_tags(git_dir: Path, spec: CoreChanges) -> dict[str, str]:
    """short commit -> the first release tag (v1.x.y, in version order, up to `until`) whose history holds it."""
    tags = sorted((t for t in git(git_dir, "tag", "--list", "v1.*").split()
                   if _TAG.match(t) and _tag_key(t) <= _tag_key(spec.until)), key=_tag_key)
    seen: dict[str, str] = {}
    for tag in tags:
        for c in git(git_dir, "rev-list", "--abbrev-commit", "--abbrev=9", f"{spec.since}..{tag}").split():
            seen.setdefault(c, tag)
    return seen


def _is_test(f: str) -> bool:
    return f.endswith(("_test.go", "/testing.go")) or "/testdata/" in f or "/test/" in f


def rule_verdict(subject: str, files: list[str]) -> str | None:
    """The verdict a PR gets by rule, from its subject and the modeled files it touches (None: read it)."""
    if all(_is_test(f) for f in files):
        return "no-outcome: tests only"
    if re.match(r"^(chore|build)\(deps\)|^chore: (bump|upgrade|update) .*(go|k8s|dependenc|version)", subject, re.I):
        return "no-outcome: dependencies"
    code = [f for f in files if not _is_test(f)]
    if all(f.endswith(("metrics.go", ".md")) for f in code):
        return "no-outcome: metrics only"
    if all(f.endswith("zz_generated.deepcopy.go") for f in code):
        return "no-outcome: generated deep copies"
    return None


def skeleton(git_dir: Path, data_dir: Path = DATA_DIR) -> tuple[CoreChanges, list[str]]:
    """The file's changes as the history has them: each PR once (its oldest commit of the range), its tag and
    title from the history, its verdict `switch: <name>` when a switch names it, else kept from the file, else by
    rule, else `unjudged`. Also returns the keys
    the file listed that the history no longer has."""
    spec = load(data_dir)
    old = {c.key: c for c in spec.changes}
    by_switch = switch_prs(data_dir)
    tags = first_tags(git_dir, spec)
    out: dict[str, Change] = {}
    for pr, commit, subject, files in history(git_dir, spec):
        key = f"#{pr}" if pr is not None else commit
        if key in out:
            continue
        title = _PR.sub("", subject).strip()
        kept = old.get(key)
        verdict = kept.verdict if kept and kept.verdict != UNJUDGED else (rule_verdict(subject, files) or UNJUDGED)
        if pr is not None and pr in by_switch:
            verdict = f"switch: {by_switch[pr]}"
        out[key] = Change(pr=pr, commit=commit, tag=tags.get(commit[:9], tags.get(commit, "?")), title=title,
                          verdict=verdict)
    gone = [k for k in old if k not in out]
    return CoreChanges(spec.since, spec.until, spec.paths, tuple(out.values())), gone


def write(spec: CoreChanges, data_dir: Path = DATA_DIR) -> bool:
    """Rewrite the `changes:` list of the file (its header and paths kept); True when the text changed."""
    path = Path(data_dir) / CHANGES_FILE
    text = path.read_text()
    head = text[:text.index("\nchanges:") + len("\nchanges:\n")]
    body = "".join(_line(c) for c in spec.changes)
    new = head + body
    if new != text:
        path.write_text(new)
        return True
    return False


def with_switch_verdicts(data_dir: Path = DATA_DIR) -> list[str]:
    """The file with `switch: <name>` as the verdict of each listed PR a switch of core-behaviour.yaml names (its
    `pr`, `foldedIn`, `introducedBy`), so a new switch's PRs need no hand edit here; the keys it changed."""
    spec = load(data_dir)
    by_switch = switch_prs(data_dir)
    changed = [c.key for c in spec.changes if c.pr in by_switch and c.verdict != f"switch: {by_switch[c.pr]}"]
    if changed:
        write(replace(spec, changes=tuple(replace(c, verdict=f"switch: {by_switch[c.pr]}") if c.pr in by_switch else c
                                          for c in spec.changes)), data_dir)
    return changed


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _line(c: Change) -> str:
    pr = f"pr: {c.pr}, " if c.pr is not None else ""
    return f"  - {{{pr}tag: {c.tag}, commit: {c.commit}, title: {_quote(c.title)},\n     verdict: {_quote(c.verdict)}}}\n"


def check_history(git_dir: Path, data_dir: Path = DATA_DIR) -> list[str]:
    """Where the file and core's history disagree: a PR missing, one listed that the history lacks, a tag or
    title that differs, an unjudged verdict."""
    spec = load(data_dir)
    want, gone = skeleton(git_dir, data_dir)
    have = {c.key: c for c in spec.changes}
    out = [f"{k}: listed in {CHANGES_FILE} but not in git log {spec.since}..{spec.until} of the modeled paths"
           for k in gone]
    for c in want.changes:
        got = have.get(c.key)
        if got is None:
            out.append(f"{c.key} ({c.tag}, {c.title!r}): in the modeled paths but not in {CHANGES_FILE}")
        elif (got.tag, got.title, got.commit) != (c.tag, c.title, c.commit):
            out.append(f"{c.key}: {CHANGES_FILE} says {got.tag} {got.commit} {got.title!r}, "
                       f"the history {c.tag} {c.commit} {c.title!r}")
    return out


# -- the file's own consistency ------------------------------------------------------------------------------

def switch_prs(data_dir: Path = DATA_DIR) -> dict[int, str]:
    """PR -> the switch of core-behaviour.yaml that names it (`pr`, `foldedIn`, `introducedBy`)."""
    out: dict[int, str] = {}
    for s in core_spec(str(data_dir))["switches"]:
        intro = s.get("introducedBy") or {}
        for pr in [s.get("pr"), *(s.get("foldedIn") or ()), intro.get("pr"), *(intro.get("foldedIn") or ())]:
            if pr is not None:
                out.setdefault(int(pr), s["name"])
    return out


def consistency(data_dir: Path = DATA_DIR) -> list[str]:
    """What is wrong with the file on its own: a verdict of no known kind or without its why, a key listed
    twice, a `switch:` naming no switch of core-behaviour.yaml (or a switch that does not name that PR), a
    `fact:` naming no core probe of release-probes.yaml, and a switch's PR in the range that is not listed as
    that switch. An `unjudged` verdict is said too."""
    spec = load(data_dir)
    switches = {s["name"] for s in core_spec(str(data_dir))["switches"]}
    probes = load_yaml((Path(data_dir) / "release-probes.yaml").read_text())
    facts = {p["fact"] for p in probes["probes"] if str(p.get("fact", "")).startswith("core.")}
    by_pr = switch_prs(data_dir)
    out, seen = [], set()
    for c in spec.changes:
        if c.key in seen:
            out.append(f"{c.key}: listed twice")
        seen.add(c.key)
        if c.verdict == UNJUDGED:
            out.append(f"{c.key} ({c.tag}, {c.title!r}): unjudged")
            continue
        if c.kind not in VERDICTS or not c.reason:
            out.append(f"{c.key}: verdict {c.verdict!r} is not `<{'|'.join(VERDICTS)}>: <what or why>`")
        elif c.kind == "switch":
            if c.reason not in switches:
                out.append(f"{c.key}: switch {c.reason!r} is not in core-behaviour.yaml")
            elif c.pr is None or by_pr.get(c.pr) != c.reason:
                out.append(f"{c.key}: switch {c.reason} does not name it (pr, foldedIn or introducedBy)")
        elif c.kind == "fact" and c.reason not in facts:
            out.append(f"{c.key}: fact {c.reason!r} is not a core probe of release-probes.yaml")
    listed = {c.pr: c for c in spec.changes if c.pr is not None}
    for pr, name in sorted(by_pr.items()):
        c = listed.get(pr)
        if c is not None and c.verdict != f"switch: {name}":
            out.append(f"#{pr}: switch {name} names it, {CHANGES_FILE} says {c.verdict!r}")
    return out


def missing_switch_prs(git_dir: Path, data_dir: Path = DATA_DIR) -> list[str]:
    """A switch's PR that is in the range's history (any path) but not listed in the file."""
    spec = load(data_dir)
    listed = {c.pr for c in spec.changes}
    subjects = git(git_dir, "log", "--format=%s", f"{spec.since}..{spec.until}")
    in_range = {int(m.group(1)) for s in subjects.splitlines() if (m := _PR.search(s))}
    return [f"#{pr} (switch {name}): in git log {spec.since}..{spec.until} but not in {CHANGES_FILE}"
            for pr, name in sorted(switch_prs(data_dir).items()) if pr in in_range and pr not in listed]


def counts(spec: CoreChanges) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in spec.changes:
        out[c.kind] = out.get(c.kind, 0) + 1
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m harness.model.corechanges PR|COMMIT ...`: each one's entry, or that it is not listed."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m harness.model.corechanges PR|COMMIT ... (e.g. 2430 or #2430)", file=sys.stderr)
        return 2
    spec = load()
    by = {c.key: c for c in spec.changes}
    rc = 0
    for a in args:
        key = f"#{a.lstrip('#')}" if a.lstrip("#").isdigit() else a
        c = by.get(key) or next((c for c in spec.changes if c.commit.startswith(a)), None)
        if c is None:
            rc = 1
            print(f"{key}: not in {CHANGES_FILE} (not in git log {spec.since}..{spec.until} -- the modeled paths)")
        else:
            print(f"{c.key} {c.tag} {c.commit} {c.title}\n  {c.verdict}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
