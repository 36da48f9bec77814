"""The repository stands alone: its citations point at upstream source or at our own docs, never at notes
kept beside a checkout.

A clone with nothing next to it is all a reader (or CI) has. So no tracked text file may
- name a path outside the repository (`../shared`, the notes directory beside the main checkout),
- name one of those notes (`karpenter-core.md`, `azure-provider.md`, ...), or
- cite a `§N` section mark, also escaped as `\\u00a7` in JSON or YAML (the notes' numbering; our own pages
  are cited as `docs/... section N`).
Cite upstream as `(sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go Compatible)`, a public URL,
or an upstream issue `Azure/karpenter-provider-azure#1604`.

What stays from the older check: a comment or docstring that cites an upstream source file names its
version too (a path alone points at a moving target). It is checked where such citations are densest, the
blocks that name a core or provider module path (`sigs.k8s.io/karpenter`, `karpenter-provider-azure`).
"""
from __future__ import annotations

import io
import re
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTES = ("anchors", "azure-provider", "cluster-backends", "fake-azure", "karpenter-core", "kind-airgapped",
         "real-controller", "reported-bugs")
FORBIDDEN = re.compile(r"§\s*\d|\\u00a7\s*\d|\.\./shared\b|(?<![\w/-])(?:" + "|".join(NOTES) + r")\.md\b")
# this file spells the forbidden forms to find them; a non-UTF-8 fixture has no text to check
EXEMPT = {"tests/test_citations.py", "tests/broken/not-utf8.yaml"}
MODULE = re.compile(r"sigs\.k8s\.io/karpenter\b|karpenter-provider-azure\b")
SOURCE_PATH = re.compile(r"(?<![\w./-])(?!(?:harness|fakeazure|tests|docs|scenarios|bench|tools)/)"
                         r"[\w.@!+-]+(?:/[\w.@!+-]+)+\.(?:go|ya?ml|sh)\b")
VERSION = re.compile(r"\bv\d+\.\d+|@v\d|\b\d+\.\d+\.\d+\b|@[0-9a-f]{7,40}\b|https?://")


def _tracked() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / f for f in out.split("\0") if f and f not in EXEMPT and (ROOT / f).is_file()]


def offending_lines(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: text` for each line that names ../shared, a note, or a `§N` section."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return []
    rel = path.relative_to(root)
    return [f"{rel}:{n}: {line.strip()[:110]}" for n, line in enumerate(text.splitlines(), 1)
            if FORBIDDEN.search(line)]


def _python_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each string literal and each run of comments on consecutive lines."""
    blocks: list[tuple[int, str]] = []
    run: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            trailing = bool(tok.line[:tok.start[1]].strip())
            if run and (trailing or tok.start[0] != run[-1][0] + 1):
                blocks.append((run[0][0], "\n".join(t for _, t in run)))
                run = []
            run.append((tok.start[0], tok.string))
        elif tok.type == tokenize.STRING:
            blocks.append((tok.start[0], tok.string))
    if run:
        blocks.append((run[0][0], "\n".join(t for _, t in run)))
    return blocks


def unversioned(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: text` for each Python block naming a core/provider module and a source path, but no version."""
    out = []
    for line, block in _python_blocks(path.read_text()):
        if MODULE.search(block) and SOURCE_PATH.search(block) and not VERSION.search(block):
            out.append(f"{path.relative_to(root)}:{line}: {block.strip().splitlines()[0][:110]}")
    return out


def test_no_file_names_notes_outside_the_repository():
    bad = [m for p in _tracked() for m in offending_lines(p)]
    assert not bad, (f"{len(bad)} line(s) cite notes outside the repository (../shared, a note's name or a § "
                     f"section); cite the upstream source instead:\n" + "\n".join(bad))


def test_module_citations_name_a_version():
    files = [p for p in _tracked() if p.suffix == ".py" and p.parts[len(ROOT.parts)] in ("harness", "fakeazure", "tests")]
    bad = [m for p in files for m in unversioned(p)]
    assert not bad, f"{len(bad)} block(s) cite an upstream source file without a version:\n" + "\n".join(bad)


def test_the_checkers_tell_good_from_bad(tmp_path):
    src = tmp_path / "x.py"
    src.write_text(
        '"""core Requirements.Compatible (sigs.k8s.io/karpenter v1.14.0 pkg/scheduling/requirements.go)."""\n'
        '# the same without a version (sigs.k8s.io/karpenter pkg/scheduling/requirements.go)\n'
        'X = 1  # ARM envelope (https://learn.microsoft.com/azure/azure-resource-manager/)\n'
        'Y = 2  # fake-azure.md\n'
        '"""Imports only point down (../shared/STYLE.md)."""\n'
        '"""A section (docs/research/before-0006.md section 4.2) and one of a note (\u00a74.1)."""\n'
        'Z = "docs: see the provider\'s karpenter-provider-azure-notes.md"\n')
    assert [g.split(":")[1] for g in offending_lines(src, tmp_path)] == ["4", "5", "6"]
    assert [g.split(":")[1] for g in unversioned(src, tmp_path)] == ["2"]
