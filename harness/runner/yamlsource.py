"""YAML loading that remembers where everything came from, for `file:line: reason` errors.

PyYAML's C composer (libyaml) builds the node tree with a start mark on every node; we turn each
document into plain Python data plus a map from JSON path (a tuple of keys/indices) to line, and
refuse duplicate keys (PyYAML would silently keep the last one).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

try:
    _Loader = yaml.CSafeLoader
except AttributeError:          # libyaml missing: the pure-Python loader gives the same result
    _Loader = yaml.SafeLoader

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


class _Scalars(SafeConstructor):
    """Constructs scalar nodes (int, float, bool, null, timestamps as strings) like safe_load."""


_SCALARS = _Scalars()
_SCALARS.yaml_constructors = dict(SafeConstructor.yaml_constructors)
_SCALARS.yaml_constructors["tag:yaml.org,2002:timestamp"] = SafeConstructor.construct_yaml_str


class DuplicateKey(Exception):
    def __init__(self, line: int, key: str, first: int):
        self.line, self.key, self.first = line, key, first


def _plain(node, path: Path_, lines: dict[Path_, int]) -> Any:
    if isinstance(node, MappingNode):
        out: dict = {}
        seen: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                merged = _plain(value_node, path, {})
                for m in (merged if isinstance(merged, list) else [merged]):
                    for k, v in (m or {}).items():
                        out.setdefault(k, v)
                continue
            key = _plain(key_node, path, {})
            skey = key if isinstance(key, (str, int, float, bool)) and not isinstance(key, bool) else str(key)
            line = key_node.start_mark.line + 1
            if skey in seen:
                raise DuplicateKey(line, str(skey), seen[skey])
            seen[skey] = line
            lines[path + (str(skey),)] = line
            out[skey] = _plain(value_node, path + (str(skey),), lines)
        return out
    if isinstance(node, SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            lines[path + (i,)] = item.start_mark.line + 1
            items.append(_plain(item, path + (i,), lines))
        return items
    if isinstance(node, ScalarNode):
        return _SCALARS.construct_object(node, deep=True)
    return None


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
        for node in yaml.compose_all(text, Loader=_Loader):
            if node is None:
                continue
            lines: dict[Path_, int] = {}
            docs.append(Document(file, _plain(node, (), lines), lines, node.start_mark.line + 1))
    except DuplicateKey as e:
        raise SourceError(file, e.line, f'malformed YAML: duplicate key "{e.key}" (first at line {e.first})') from None
    except yaml.MarkedYAMLError as e:
        # an unclosed flow collection is best reported where it was opened
        opened = (e.context or "").startswith("while parsing a flow") and e.context_mark is not None
        mark = e.context_mark if opened else (e.problem_mark or e.context_mark)
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(x for x in (e.context, e.problem) if x) or "malformed YAML"
        raise SourceError(file, line, f"malformed YAML: {reason}") from None
    except yaml.YAMLError as e:
        raise SourceError(file, None, f"malformed YAML: {e}") from None
    return [d for d in docs if d.data is not None]
