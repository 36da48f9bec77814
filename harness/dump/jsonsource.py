"""`kubectl get -o json` output read with the json module, for `file:line: reason` errors like YAML's.

A dump is one object (a `List` with `items`, or any other), several objects one after another, or a JSON
array of them. The C scanner builds each; the top level is walked here, one value at a time, so every
`List` item's and every object's first line is known from its offset (a count of newlines, once over the
text). The text is JSON when its first character other than white space is `{` or `[`; a text that starts so
but is not JSON (a YAML flow mapping) is read as YAML (harness/scenario/yamlsource.py), and when neither
reads it the JSON error is the one reported. Refused as the YAML loader refuses them: duplicate keys,
`NaN`/`Infinity` (not JSON), nesting deeper than MAX_DEPTH where it exhausts the interpreter's recursion
(here, or in `harness new`, which then finds the line with `deep_line`).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness.scenario.yamlsource import MAX_DEPTH, Document, SourceError

_WS = re.compile(r"[ \t\n\r]*")
# a JSON string or a bracket: the tokens that change the nesting (read only to place a nesting error)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


class _Syntax(SourceError):
    """Not JSON's grammar (what a YAML flow document may be); other refusals are of JSON that parsed."""


class _Duplicate(ValueError):
    def __init__(self, key: str):
        self.key = key


def _pairs(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        for k, _ in pairs:
            if k in seen:
                raise _Duplicate(k)
            seen.add(k)
    return d


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


# JSON's grammar refusing what the YAML loader refuses (a duplicate key, NaN): also rymlsource's, for the JSON
# rapidyaml prints
DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)
_KEY = json.JSONDecoder()          # a key at the top level: a plain string


def looks_like_json(text: str) -> bool:
    """JSON by content: the first character other than white space opens an object or an array."""
    i = _WS.match(text, 1 if text.startswith("\ufeff") else 0).end()
    return text.startswith(("{", "["), i)


class _Lines:
    """Offsets to lines for offsets that only grow: the newlines counted once over the text."""

    def __init__(self, text: str) -> None:
        self.text, self.at, self.line = text, 0, 1

    def __call__(self, offset: int) -> int:
        if offset < self.at:                      # (not expected: offsets are read in order)
            self.at, self.line = 0, 1
        self.line += self.text.count("\n", self.at, offset)
        self.at = offset
        return self.line


def load_documents(file: str | Path, text: str) -> list[Document]:
    """The JSON text's objects as Documents: each top-level object or array element one, a `List`'s items
    with their lines (`("items", j)`); a text that is not JSON but reads as YAML is read as YAML."""
    file = str(file)
    try:
        return _documents(file, text)
    except _Syntax as e:
        from harness.scenario.yamlsource import MAX_DUMP_BYTES, load_documents as load_yaml
        try:
            return load_yaml(file, text, MAX_DUMP_BYTES)
        except SourceError:
            raise SourceError(e.file, e.line, e.reason) from None


def _documents(file: str, text: str) -> list[Document]:
    lines = _Lines(text)
    docs: list[Document] = []
    pos = _WS.match(text, 1 if text.startswith("\ufeff") else 0).end()
    try:
        while pos < len(text):
            if text[pos] == "[":              # an array of objects: each its own document
                pos = _WS.match(text, pos + 1).end()
                if text.startswith("]", pos):
                    pos += 1
                else:
                    while True:
                        doc, end = _value(file, text, pos, lines)
                        docs.append(doc)
                        pos = _after(text, end, ",]")
                        if text[pos - 1] == "]":
                            break
                        pos = _WS.match(text, pos).end()
            else:
                doc, pos = _value(file, text, pos, lines)
                docs.append(doc)
            pos = _WS.match(text, pos).end()
    except json.JSONDecodeError as e:
        raise _Syntax(file, e.lineno, f"malformed JSON: {e.msg} (column {e.colno})") from None
    except _Duplicate as e:       # the scanner does not say where: found again, only on this error
        raise SourceError(file, _duplicate_line(text, e.key), f'malformed JSON: duplicate key "{e.key}"') from None
    except ValueError as e:       # NaN, Infinity
        raise SourceError(file, _constant_line(text, str(e)), f"malformed JSON: {e}") from None
    except RecursionError:
        raise SourceError(file, deep_line(text), f"malformed JSON: nesting deeper than {MAX_DEPTH} levels") from None
    return [d for d in docs if d.data is not None]


def _value(file: str, text: str, pos: int, lines: _Lines) -> tuple[Document, int]:
    """One top-level value at `pos` and the offset past it; an object's `items` array is read item by
    item, each with its line."""
    doc = Document(file, None, {}, lines(pos))
    if text[pos] != "{":
        doc.data, end = DECODER.raw_decode(text, pos)
        return doc, end
    obj: dict = {}
    i = _WS.match(text, pos + 1).end()
    if text.startswith("}", i):
        doc.data = obj
        return doc, i + 1
    while True:
        if not text.startswith('"', i):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
        key, i = _KEY.raw_decode(text, i)
        i = _WS.match(text, i).end()
        if not text.startswith(":", i):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
        i = _WS.match(text, i + 1).end()
        if key in obj:
            raise _Duplicate(key)
        if key == "items" and text.startswith("[", i):
            items: list = []
            i = _WS.match(text, i + 1).end()
            if text.startswith("]", i):
                i += 1
            else:
                while True:
                    doc.lines[("items", len(items))] = lines(i)
                    item, i = DECODER.raw_decode(text, i)
                    items.append(item)
                    i = _after(text, i, ",]")
                    if text[i - 1] == "]":
                        break
                    i = _WS.match(text, i).end()
            obj[key] = items
        else:
            obj[key], i = DECODER.raw_decode(text, i)
        i = _after(text, i, ",}")
        if text[i - 1] == "}":
            break
        i = _WS.match(text, i).end()
    doc.data = obj
    return doc, i


def _after(text: str, i: int, expect: str) -> int:
    """The offset past the delimiter after a value: `,` or the closing bracket."""
    i = _WS.match(text, i).end()
    if i >= len(text) or text[i] not in expect:
        raise json.JSONDecodeError(f"Expecting '{expect[0]}' delimiter", text, i)
    return i + 1


def _duplicate_line(text: str, key: str) -> int | None:
    """The line where `key` appears a second time within one object."""
    stack: list[set | None] = []
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in ("{", "["):
            stack.append(set() if tok == "{" else None)
        elif tok in ("}", "]"):
            if stack:
                stack.pop()
        elif stack and stack[-1] is not None and text.startswith(":", _WS.match(text, m.end()).end()):
            if json.loads(tok) == key:
                if key in stack[-1]:
                    return text.count("\n", 0, m.start()) + 1
                stack[-1].add(key)
    return None


def _constant_line(text: str, reason: str) -> int | None:
    name = reason.split(" ", 1)[0]
    for m in re.finditer(rf'"(?:[^"\\]|\\.)*"|{re.escape(name)}', text, re.S):
        if not m.group().startswith('"'):
            return text.count("\n", 0, m.start()) + 1
    return None


def deep_line(text: str) -> int | None:
    """The line where the JSON text first nests deeper than MAX_DEPTH, or None."""
    depth = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in "{[":
            depth += 1
            if depth > MAX_DEPTH:
                return text.count("\n", 0, m.start()) + 1
        elif tok in "}]":
            depth -= 1
    return None
