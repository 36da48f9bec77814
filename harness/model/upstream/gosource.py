"""Reading Go declarations out of upstream source, for `python -m harness.model.sync`.

Matches the specific declarations sync needs (string constants, `sets.New(...)` lists, map
assignments) in a package's .go files, resolving identifiers across the provider, core and
k8s.io/api modules; a declaration of an unexpected shape is a SyncError naming the file.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path


class SyncError(Exception):
    """A source file is missing or a declaration has an unexpected shape (printed as `file: reason`)."""


def read_source(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise SyncError(f"{path}: {e.strerror or e}") from None


STRING_LITERAL = r'"(?:[^"\\]|\\.)*"|`[^`]*`'
_LINE_COMMENT = re.compile(r"//[^\n]*")


def strip_comments(src: str) -> str:
    """Go source without comments (string literals containing `//` are kept intact)."""
    out, i = [], 0
    pattern = re.compile(rf"({STRING_LITERAL})|//[^\n]*|/\*.*?\*/", re.S)
    for m in pattern.finditer(src):
        out.append(src[i:m.start()])
        out.append(m.group(1) or ("\n" * m.group(0).count("\n")))
        i = m.end()
    out.append(src[i:])
    return "".join(out)


def unquote(lit: str) -> str:
    if lit.startswith("`"):
        return lit[1:-1]
    return json.loads(lit)


@dataclass
class GoPackage:
    """The string-valued constants and variables of one Go package, resolved on demand."""

    dir: Path
    resolver: "GoResolver"
    decls: dict[str, tuple[str, Path]] = field(default_factory=dict)   # name -> (expression, file)
    imports: dict[str, str] = field(default_factory=dict)              # alias -> import path

    def load(self) -> "GoPackage":
        files = sorted(p for p in self.dir.glob("*.go") if not p.name.endswith("_test.go"))
        if not files:
            raise SyncError(f"{self.dir}: no Go files")
        for path in files:
            src = strip_comments(read_source(path))
            for block in re.finditer(r"^import\s*\((.*?)^\)", src, re.S | re.M):
                for m in re.finditer(rf"^\s*(\w+)?\s*({STRING_LITERAL})", block.group(1), re.M):
                    ipath = unquote(m.group(2))
                    self.imports[m.group(1) or _default_alias(ipath)] = ipath
            for m in re.finditer(rf'^import\s+(\w+)?\s*({STRING_LITERAL})', src, re.M):
                ipath = unquote(m.group(2))
                self.imports[m.group(1) or _default_alias(ipath)] = ipath
            # `Name [Type] = expr` inside const/var blocks or single declarations, one per line
            for m in re.finditer(r"^\s*(?:const\s+|var\s+)?([A-Za-z_]\w*)(?:\s+[\w.\[\]*]+)?\s*=\s*(.+)$",
                                 src, re.M):
                self.decls.setdefault(m.group(1), (m.group(2).strip(), path))
        return self

    def source(self, name: str) -> str:
        """The comment-free text of the file that declares `name`."""
        if name not in self.decls:
            raise SyncError(f"{self.dir}: no declaration of {name}")
        return strip_comments(read_source(self.decls[name][1]))

    def string(self, name: str) -> str:
        """The value of a string constant built from literals, constants and `+`."""
        if name not in self.decls:
            raise SyncError(f"{self.dir}: no string declaration {name}")
        expr, path = self.decls[name]
        return self.expr(expr, path)

    def expr(self, expr: str, path: Path) -> str:
        parts = [p.strip() for p in re.findall(rf"{STRING_LITERAL}|[^+]+", expr) if p.strip()]
        out = []
        for part in parts:
            if part[0] in "\"`":
                out.append(unquote(part))
            elif re.fullmatch(r"string\((.+)\)", part):
                out.append(self.expr(part[7:-1], path))
            elif re.fullmatch(r"[A-Za-z_]\w*", part):
                out.append(self.string(part))
            elif re.fullmatch(r"[A-Za-z_]\w*\.[A-Za-z_]\w*", part):
                alias, ident = part.split(".")
                if alias not in self.imports:
                    raise SyncError(f"{path}: unknown package {alias} in {expr!r}")
                out.append(self.resolver.package(self.imports[alias]).string(ident))
            else:
                raise SyncError(f"{path}: cannot evaluate {expr!r} as a string constant")
        return "".join(out)

    def call_args(self, name: str, opener: str) -> list[str]:
        """The resolved arguments of `name = <opener>( ... )`, e.g. opener `sets.New` or `sets.New[string]`."""
        src = self.source(name)
        m = re.search(rf"\b{re.escape(name)}\s*=\s*{re.escape(opener)}\(", src)
        if m is None:
            raise SyncError(f"{self.decls[name][1]}: {name} is not declared as {opener}(...)")
        body = balanced(src, m.end() - 1, self.decls[name][1])
        return [self.expr(a, self.decls[name][1]) for a in split_args(body)]


def _default_alias(import_path: str) -> str:
    last = import_path.rstrip("/").split("/")[-1]
    return last if not re.fullmatch(r"v\d+", last) or "/" not in import_path else last


def balanced(src: str, open_at: int, path: Path) -> str:
    """The text between the parenthesis at `open_at` and its match (string literals skipped)."""
    depth, i = 0, open_at
    pattern = re.compile(rf"{STRING_LITERAL}|[()]")
    for m in pattern.finditer(src, open_at):
        if m.group(0) == "(":
            depth += 1
        elif m.group(0) == ")":
            depth -= 1
            if depth == 0:
                return src[open_at + 1:m.start()]
        i = m.end()
    raise SyncError(f"{path}: unbalanced parentheses at offset {i}")


def split_args(body: str) -> list[str]:
    args, depth, cur = [], 0, []
    for tok in re.findall(rf"{STRING_LITERAL}|[(),]|[^\"`(),]+", body):
        if tok == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            continue
        depth += tok == "("
        depth -= tok == ")"
        cur.append(tok)
    args.append("".join(cur).strip())
    return [a for a in args if a]


class GoResolver:
    """Packages by import path, across the provider, core and k8s.io/api modules."""

    def __init__(self, modules: dict[str, Path]):
        self.modules = modules
        self._packages: dict[str, GoPackage] = {}

    def package(self, import_path: str) -> GoPackage:
        pkg = self._packages.get(import_path)
        if pkg is None:
            module = max((m for m in self.modules if import_path == m or import_path.startswith(m + "/")),
                         key=len, default=None)
            if module is None:
                raise SyncError(f"{import_path}: not in the modules read ({', '.join(sorted(self.modules))})")
            rest = import_path[len(module):].lstrip("/")
            pkg = self._packages[import_path] = GoPackage(self.modules[module] / rest, self).load()
        return pkg
