"""Every reference-note citation in harness/, fakeazure/ and tests/ comes with one a reader outside can follow.

A `§N` section mark points into notes that live beside the repository (../shared/reference/*.md) or
into docs/research; a reader with only a clone cannot open the first kind. So wherever a comment,
docstring or data-file comment cites a section, the same block must also name the upstream source:
a public URL, or a repository path of a source file (`pkg/scheduling/requirements.go`,
`azure/core/polling/base_polling.py`) together with a version (`v1.14.0`, `39.0.0`, `@v0.0.24`) or a
commit (`@82140dfe`).

A "block" is, simply:
- in Python: one string literal (a docstring or any other string), or a run of `#` comments on
  consecutive lines, where a comment after code on its line starts a new run;
- in YAML: the same runs of `#` comments.
YAML values (e.g. the `refs:` column of design-0006-labels.yaml, printed by `harness parity`) are
data, not comments, and are not checked here.

A `STYLE.md §N` mark names one of the project's own conventions (layering, imports), not a modeled
upstream behavior: there is nothing upstream to cite, so such a mark alone does not call for a source.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "fakeazure", "tests")
# Files not checked, each with its reason:
# tests/test_citations.py: its self-test writes deliberately uncited samples as string literals.
# tests/broken/not-utf8.yaml: a fixture that is not UTF-8 on purpose (the loader's decode error); no text
# to check.
EXEMPT: set[str] = {"tests/test_citations.py", "tests/broken/not-utf8.yaml"}

SECTION = re.compile(r"§\s*\d")
# the project's style guide (../shared/STYLE.md), cited for our own conventions: not a reference note
OWN_CONVENTION = re.compile(r"STYLE\.md\s*§\s*\d+(?:\.\d+)*")
URL = re.compile(r"https?://[\w.-]+\.[a-z]{2,}")
# a path with a folder in it, naming a source/data file of another repository (not one of ours)
SOURCE_PATH = re.compile(r"(?<![\w./-])(?!(?:harness|fakeazure|tests|docs|scenarios|bench|tools)/)"
                         r"[\w.@!+-]+(?:/[\w.@!+-]+)+(?:\.(?:go|ya?ml|py|json|proto|sh|toml|gtpl)\b|/Dockerfile\b)")
VERSION = re.compile(r"\bv\d+\.\d+|@v\d|\b\d+\.\d+\.\d+\b|@[0-9a-f]{7,40}\b")   # a tag, a release, a commit


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


def _yaml_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each run of `#` comments on consecutive lines (full-line or trailing)."""
    blocks: list[tuple[int, str]] = []
    run: list[tuple[int, str]] = []
    for n, line in enumerate(text.splitlines(), 1):
        comment = _yaml_comment(line)
        if comment is None or (run and not line.lstrip().startswith("#")):
            if run:
                blocks.append((run[0][0], "\n".join(t for _, t in run)))
                run = []
            if comment is None:
                continue
        run.append((n, comment))
    if run:
        blocks.append((run[0][0], "\n".join(t for _, t in run)))
    return blocks


def _yaml_comment(line: str) -> str | None:
    """The comment part of a YAML line: from a `#` at the start or after a space, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"" and (i == 0 or line[i - 1] in " :[{,-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i:]
    return None


def followable(block: str) -> bool:
    """A public URL, or an upstream source path and a version, in the block."""
    return bool(URL.search(block)) or bool(SOURCE_PATH.search(block) and VERSION.search(block))


def uncited(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line: text` for each block of `path` that cites a `§` section and nothing followable."""
    text = path.read_text()
    blocks = _python_blocks(text) if path.suffix == ".py" else _yaml_blocks(text)
    rel = path.relative_to(root)
    out = []
    for line, block in blocks:
        notes = OWN_CONVENTION.sub("", block)
        if SECTION.search(notes) and not followable(block):
            first = next(s for s in notes.splitlines() if SECTION.search(s)).strip()
            out.append(f"{rel}:{line}: {first[:110]}")
    return out


def _files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*")
                  if p.suffix in (".py", ".yaml", ".yml") and "__pycache__" not in p.parts
                  and p.relative_to(ROOT).as_posix() not in EXEMPT)


def test_every_section_citation_has_an_upstream_source():
    missing = [m for p in _files() for m in uncited(p)]
    assert not missing, (f"{len(missing)} block(s) cite a reference note (§) without an upstream path + "
                         f"version or a URL in the same block:\n" + "\n".join(missing))


def test_the_checker_tells_followable_from_not(tmp_path):
    src = tmp_path / "x.py"
    src.write_text(
        '"""core Requirements.Compatible (requirements.go; karpenter-core.md §2.4)."""\n'
        '# core Requirements.Compatible (sigs.k8s.io/karpenter v1.14.0\n'
        '# pkg/scheduling/requirements.go; karpenter-core.md §2.4)\n'
        'X = 1  # ARM envelope (https://learn.microsoft.com/azure/azure-resource-manager/; fake-azure.md §4.1)\n'
        'Y = 2  # fake-azure.md §0\n'
        '\n'
        '# harness/model/labels.py v1.0.0 (ours, not upstream; azure-provider.md §1)\n'
        '"""Imports only point down (../shared/STYLE.md §1)."""\n'
        '"""Layers (STYLE.md §2) and the quota rule (fake-azure.md §6)."""\n')
    got = uncited(src, tmp_path)
    assert sorted((g.split(":")[1] for g in got), key=int) == ["1", "5", "7", "9"], got
    yml = tmp_path / "x.yaml"
    yml.write_text("a: 1  # azure-provider.md §1.2\n"
                   "\n"
                   "# provider pkg/providers/labels/labels.go Get (karpenter-provider-azure v1.14.0;\n"
                   "# azure-provider.md §4.1)\n"
                   "b: 'x # §1 inside quotes is a value'\n")
    got = uncited(yml, tmp_path)
    assert [g.split(":")[1] for g in got] == ["1"], got
