"""YAML loading that remembers where everything came from, for `file:line: reason` errors.

ruamel.yaml's round-trip loader records the line of each mapping key and sequence item; we turn
the document into plain Python data plus a map from JSON path (a tuple of keys/indices) to line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

Path_ = tuple  # a tuple of str keys and int indices


class SourceError(Exception):
    """A problem in an input file, reported as `file:line: reason`."""

    def __init__(self, file: str | Path, line: int | None, reason: str):
        self.file, self.line, self.reason = str(file), line, reason
        super().__init__(self.render())

    def render(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}" if self.line else f"{self.file}: {self.reason}"


@dataclass
class Document:
    """One YAML document: plain data plus the line of every path in it."""

    file: str
    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)
    start_line: int = 1

    def line(self, path: Path_) -> int:
        """The line of `path`, or of its closest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.start_line

    def error(self, path: Path_, reason: str) -> SourceError:
        return SourceError(self.file, self.line(path), reason)


def _plain(node: Any, path: Path_, lines: dict[Path_, int]) -> Any:
    if isinstance(node, CommentedMap):
        out = {}
        for key in node:
            try:
                lines[path + (str(key),)] = node.lc.key(key)[0] + 1
            except (KeyError, TypeError, AttributeError):
                pass
            out[str(key) if not isinstance(key, (str, int, float, bool)) or isinstance(key, bool) else key] = \
                _plain(node[key], path + (str(key),), lines)
        return out
    if isinstance(node, CommentedSeq):
        out_list = []
        for i, item in enumerate(node):
            try:
                lines[path + (i,)] = node.lc.item(i)[0] + 1
            except (KeyError, TypeError, AttributeError):
                pass
            out_list.append(_plain(item, path + (i,), lines))
        return out_list
    if type(node).__name__ == "ScalarBoolean" or isinstance(node, bool):
        return bool(node)
    for plain in (str, int, float):
        if isinstance(node, plain):
            return plain(node)
    return node


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.allow_duplicate_keys = False
    return y


def load_documents(file: str | Path, text: str | None = None) -> list[Document]:
    """All documents of a YAML file; malformed YAML raises SourceError with the parser's line."""
    file = str(file)
    if text is None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise SourceError(file, None, "file not found") from None
        except UnicodeDecodeError as e:
            raise SourceError(file, None, f"not UTF-8 text ({e.reason})") from None
    docs: list[Document] = []
    try:
        for raw in _yaml().load_all(text):
            lines: dict[Path_, int] = {}
            start = 1
            if isinstance(raw, (CommentedMap, CommentedSeq)) and getattr(raw, "lc", None) is not None:
                start = (raw.lc.line or 0) + 1
            docs.append(Document(file, _plain(raw, (), lines), lines, start))
    except MarkedYAMLError as e:
        # an unclosed flow collection is best reported where it was opened
        opened = (e.context or "").startswith("while parsing a flow") and e.context_mark is not None
        mark = e.context_mark if opened else (e.problem_mark or e.context_mark)
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(x for x in (e.context, e.problem) if x) or "malformed YAML"
        raise SourceError(file, line, f"malformed YAML: {reason}") from None
    except YAMLError as e:
        raise SourceError(file, None, f"malformed YAML: {e}") from None
    return [d for d in docs if d.data is not None]
