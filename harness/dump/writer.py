"""The scenario text `harness new` writes: the same bytes as `yaml.dump(doc, Dumper=CSafeDumper,
sort_keys=False, allow_unicode=True)`, without PyYAML's representer and serializer (Python, per node: 22%
of `harness new` at 500 nodes). Block mappings and sequences are written here; a scalar is written here
when its text is a short run of safe characters (names, quantities, times: plain, or single-quoted when
YAML would read it as another type), and any other scalar is written by libyaml itself at the same column
(a small document that puts it there), so folding and quoting stay libyaml's. A document this writer does
not cover (a shared object, a list directly in a list, a key that is not a plain string) is written by
`yaml.dump`. `dump_with_lines` also gives the line of every path, as the scenario loader records them
(harness/scenario/yamlsource.py: a key's line, a list item's first line), so the scenario can be checked
without parsing the text it was written as.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

import yaml
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_STR = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()
# characters a scalar may hold to be written here: no space (libyaml folds at spaces), no indicator,
# ASCII; the first character a letter, digit or slash; a colon inside, not last (`image: acr.io/app:1.0`:
# plain as a value, quoted as a key, libyaml yaml_emitter_analyze_scalar)
_SAFE = re.compile(r"[A-Za-z0-9/](?:[A-Za-z0-9._/-]|:(?!\Z))*\Z")
# simple keys are at most 128 characters (libyaml yaml_emitter_check_simple_key)
_MAX_KEY = 128


class _Fallback(Exception):
    """The document has something this writer does not write like libyaml: yaml.dump writes it all."""


def dump(doc: Any) -> str:
    """`doc` as yaml.dump(..., Dumper=CSafeDumper, sort_keys=False, allow_unicode=True) writes it."""
    return dump_with_lines(doc)[0]


def dump_with_lines(doc: Any, first_line: int = 1) -> tuple[str, Mapping[tuple, int] | None]:
    """dump's text, and the line of each path in it as yamlsource's loader records them, the text's first
    line being `first_line` (after a head the caller writes above it); None when yaml.dump wrote the text (a
    document this writer does not cover)."""
    if isinstance(doc, dict) and doc:
        try:
            w = _Writer(first_line)
            return w.document(doc), WrittenLines(doc, w.at, frozenset(w.keys))
        except _Fallback:
            pass
    return yaml.dump(doc, Dumper=_DUMPER, sort_keys=False, allow_unicode=True), None


class WrittenLines(Mapping):
    """The line of each path of a written document, read as a dict of path -> line: for each mapping and
    sequence the lines of its entries in order, found by walking the document along the path. A scenario of
    5,000 nodes has 2.1 million paths: a tuple and a dict entry each were a third of a GB and a tenth of
    `harness new`.
    The document is read as it was written (`harness new` checks it, changing nothing); `mapping_keys` holds
    every key of its mappings."""

    def __init__(self, doc: dict, at: dict[int, list[int]], mapping_keys: frozenset[str] = frozenset()) -> None:
        self.doc, self.at = doc, at                     # at: id(container) -> its entries' lines
        self.mapping_keys = mapping_keys
        self.keys_at: dict[int, dict] = {}              # id(mapping) -> key -> index, made on first look

    def _line(self, path: tuple) -> int | None:
        node: Any = self.doc
        line = None
        for step in path:
            lines = self.at.get(id(node))
            if lines is None:
                return None
            if type(node) is dict:
                index = self.keys_at.get(id(node))
                if index is None:
                    index = self.keys_at[id(node)] = {k: i for i, k in enumerate(node)}
                i = index.get(step) if isinstance(step, str) else None
            else:
                i = step if type(step) is int and 0 <= step < len(node) else None
            if i is None or i >= len(lines):
                return None
            node, line = node[step], lines[i]
        return line

    def __getitem__(self, path: tuple) -> int:
        line = self._line(tuple(path)) if path else None
        if line is None:
            raise KeyError(path)
        return line

    def __contains__(self, path: object) -> bool:
        return isinstance(path, tuple) and bool(path) and self._line(path) is not None

    def __iter__(self) -> Iterator[tuple]:
        stack: list[tuple[Any, tuple]] = [(self.doc, ())]
        while stack:
            node, path = stack.pop()
            if id(node) in self.at:
                steps = list(node) if type(node) is dict else range(len(node))
                yield from (path + (step,) for step in steps)
                stack += [(node[step], path + (step,)) for step in reversed(steps)]

    def __len__(self) -> int:
        return sum(len(lines) for lines in self.at.values())


class _Writer:
    def __init__(self, first_line: int) -> None:
        self.out: list[str] = []
        self.plain: dict[str, str | None] = {}          # a safe string -> its text (plain or quoted)
        self.keys: dict[str, str] = {}                  # a mapping key -> its text
        self.stubs: dict[tuple, str] = {}               # (value, column, key length or -1) -> libyaml's text
        self.at: dict[int, list[int]] = {}              # id(container) -> its entries' lines (WrittenLines)
        self.first_line = first_line

    def document(self, doc: dict) -> str:
        self.mapping(doc, 0, self.first_line)
        return "".join(self.out)

    def scalar_text(self, v: Any, key: bool) -> str | None:
        """A scalar's text when this writer knows it without libyaml, else None."""
        if isinstance(v, str):
            hit = self.plain.get(v, False)
            if hit is False:
                hit = None
                if _SAFE.match(v):
                    tag = _STR if v[0].isalpha() and v not in _WORDS else \
                        _RESOLVER.resolve(ScalarNode, v, (True, False))
                    hit = v if tag == _STR else f"'{v}'"
                elif v == "":
                    hit = "''"
                self.plain[v] = hit
            if hit is not None and key and (len(v) > _MAX_KEY or ":" in v):
                return None
            return hit
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if type(v) is int:
            return str(v)
        return None

    def stub(self, v: Any, column: int, key_len: int) -> str:
        """libyaml's text for scalar `v` as a mapping value after a key of `key_len` characters at
        `column` (or, key_len -1, as a sequence item whose dash is at `column`)."""
        ck = (type(v), v, column, key_len)
        hit = self.stubs.get(ck)
        if hit is not None:
            return hit
        if column % 2:
            raise _Fallback
        inner: Any = {"k" * key_len: v} if key_len >= 0 else {"k": [v]}
        for _ in range(column // 2):
            inner = {"k": inner}
        text = yaml.dump(inner, Dumper=_DUMPER, sort_keys=False, allow_unicode=True)
        lead = "k" * key_len + ":" if key_len >= 0 else "-"
        start = text.index("\n" + " " * column + lead) + 1 + column + len(lead) if column else len(lead)
        hit = text[start:]
        if not hit.startswith(" ") or not hit.endswith("\n"):
            raise _Fallback
        hit = hit[1:-1]
        self.stubs[ck] = hit
        return hit

    def _container(self, v: Any) -> list[int]:
        """The lines of `v`'s entries, to be filled as they are written (a list: made faster than an array, and
        the lines are kept only while the scenario is checked, after the dump is dropped)."""
        at = self.at
        n = len(at)
        lines = at.setdefault(id(v), [])
        if len(at) == n:                  # an alias (&id001) in yaml.dump's text
            raise _Fallback
        return lines

    def key_text(self, k: Any) -> str:
        """A mapping key's text, kept for the next mapping with that key."""
        kt = self.scalar_text(k, True) if type(k) is str else None
        if kt is None:
            raise _Fallback
        self.keys[k] = kt
        return kt

    def mapping(self, m: dict, col: int, ln: int, first_inline: bool = False) -> int:
        """A non-empty block mapping whose keys are at `col`, its first key on line `ln` (on the current line when
        `first_inline`: a sequence item's `- `); the line after it. A key and a string value written before are
        looked up here, not through scalar_text, and the line is counted in a local (most of the 2.1 million
        entries of the 5,000-node scenario)."""
        lines = self._container(m)
        out, keys, plain = self.out, self.keys, self.plain
        pad = " " * col
        lead = "" if first_inline else pad
        for k, v in m.items():
            kt = keys.get(k)              # (only strings are there: another key is found by key_text)
            if kt is None:
                kt = self.key_text(k)
            lines.append(ln)
            t = plain.get(v) if type(v) is str else None
            if t is not None:
                out.append(f"{lead}{kt}: {t}\n")
                ln += 1
            else:
                ln = self.value(v, col, kt, lead, ln)
            lead = pad
        return ln

    def value(self, v: Any, col: int, kt: str, lead: str, ln: int) -> int:
        """A mapping's value after its key `kt` on line `ln`, the key's line starting with `lead`; the line after."""
        out = self.out
        if isinstance(v, dict):
            if v:
                out.append(f"{lead}{kt}:\n")
                return self.mapping(v, col + 2, ln + 1)
            out.append(f"{lead}{kt}: {{}}\n")
            return ln + 1
        if isinstance(v, list):
            if v:
                out.append(f"{lead}{kt}:\n")
                return self.sequence(v, col, ln + 1)
            out.append(f"{lead}{kt}: []\n")
            return ln + 1
        t = self.scalar_text(v, False)
        if t is None:
            if not isinstance(v, (str, float)):
                raise _Fallback
            t = self.stub(v, col, len(kt))
            ln += t.count("\n")
        out.append(f"{lead}{kt}: {t}\n")
        return ln + 1

    def sequence(self, s: list, col: int, ln: int) -> int:
        """A non-empty block sequence whose dashes are at `col`, from line `ln` (libyaml writes a mapping's
        sequence without indenting it); the line after it."""
        lines = self._container(s)
        out = self.out
        pad = " " * col + "- "
        for v in s:
            out.append(pad)
            lines.append(ln)
            if isinstance(v, dict):
                if v:
                    ln = self.mapping(v, col + 2, ln, first_inline=True)
                else:
                    out.append("{}\n")
                    ln += 1
            elif isinstance(v, list):
                if v:
                    raise _Fallback
                out.append("[]\n")
                ln += 1
            else:
                t = self.scalar_text(v, False)
                if t is None:
                    if not isinstance(v, (str, float)):
                        raise _Fallback
                    t = self.stub(v, col, -1)
                    ln += t.count("\n")
                out.append(t + "\n")
                ln += 1
        return ln


# the words YAML 1.1 reads as booleans or null that start with a letter (PyYAML's resolver)
_WORDS = frozenset("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF null Null NULL".split())
