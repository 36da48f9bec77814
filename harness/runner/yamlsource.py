"""YAML loading that remembers where everything came from, for `file:line: reason` errors.

PyYAML's C parser (libyaml) streams events with a start mark on each; we build each document into
plain Python data plus a map from JSON path (a tuple of keys/indices) to line, without recursion,
and refuse what a hostile or broken file could do to the process: duplicate keys (PyYAML would
silently keep the last one), nesting beyond MAX_DEPTH, aliases that expand beyond
MAX_ALIAS_NODES or refer to themselves, files beyond MAX_FILE_BYTES, scalars that cannot be built
for their tag, mappings and sequences with a tag other than their own, and text that is not UTF-8
or holds control characters (with the line).
"""
from __future__ import annotations

import copy
import mmap
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

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
    lines: Mapping[Path_, int] = field(default_factory=dict)   # a dict, or the writer's (dumpwriter.WrittenLines)
    start_line: int = 1

    def line(self, path: Path_) -> int:
        """The line of `path`, or of its closest ancestor that has one."""
        p = tuple(path)
        while p:
            line = self.lines.get(p)
            if line is not None:
                return line
            p = p[:-1]
        return self.start_line

    def error(self, path: Path_, reason: str) -> SourceError:
        return SourceError(self.file, self.line(path), reason)


# Bounds on what one input file may ask of the loader. A scenario file in the library is < 40 KB
# and < 20 levels deep; these leave ample room while keeping a hostile file (a "billion laughs"
# alias bomb, 30 000 nested brackets, /dev/zero) to a fast, clear error. The size bound is a customer's
# dump and the scenario `harness new` makes of it: 5,000 nodes and 50,000 pods are ~110 MB of
# `kubectl get -o yaml` and a ~60 MB scenario (bench/gen_cluster_dump.py). A `{file: ...}` reference
# has its own, smaller bound (harness/runner/references.py); a dump its own, larger one (`kubectl get -o json`
# indents by four spaces: ~340 MB at 5,000 nodes and 50,000 pods).
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_DUMP_BYTES = 1024 * 1024 * 1024
MAX_DEPTH = 100
# a file this large is decoded from its map, not read into a copy first (a 342 MB dump: 0.39 -> 0.22 CPU-s)
MAP_BYTES = 16 * 1024 * 1024
MAX_ALIAS_NODES = 100_000        # nodes copied through aliases, per document
# characters libyaml refuses (YAML 1.1 section 5.1 printable set, https://yaml.org/spec/1.1/),
# found up front to report their line
_NOT_PRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_STR = "tag:yaml.org,2002:str"
_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"


class _Scalars(SafeConstructor):
    """Builds scalars (int, float, bool, null, timestamps as strings) as safe_load does. Called
    per scalar node, not through construct_object, so it keeps no reference to what it built
    (construct_object's memo held every node of every file loaded in the process)."""


_SCALARS = _Scalars()
_CONSTRUCTORS = dict(SafeConstructor.yaml_constructors)
_CONSTRUCTORS["tag:yaml.org,2002:timestamp"] = SafeConstructor.construct_yaml_str
_CONSTRUCTORS[_VALUE] = SafeConstructor.construct_yaml_str
_RESOLVER = Resolver()


class DuplicateKey(Exception):
    def __init__(self, line: int, key: str, first: int):
        self.line, self.key, self.first = line, key, first


class _Refused(Exception):
    """An input the loader will not build, at a line."""

    def __init__(self, line: int, reason: str):
        self.line, self.reason = line, reason


_IMPLICIT_FIRST = frozenset(k for k in _RESOLVER.yaml_implicit_resolvers if k)   # first characters of int, bool, null...
_PLAIN: dict[str, tuple[Any, str]] = {}     # short plain scalars already built ("true", "500m", "1"): value, tag
_PLAIN_MAX = 4096


def _scalar(event) -> tuple[Any, str]:
    """A scalar event's value and resolved tag. Most scalars of a dump are strings the resolver
    would only confirm (quoted, or plain and starting with a letter no implicit tag starts with),
    and short plain ones repeat (`true`, `500m`): both answered without the resolver's regexes."""
    tag = event.tag
    if tag is None or tag == "!":
        value = event.value
        if not event.implicit[0] or (value and value[0] not in _IMPLICIT_FIRST):
            return value, _STR
        hit = _PLAIN.get(value)
        if hit is not None:
            return hit
        tag = _RESOLVER.resolve(ScalarNode, value, event.implicit)
        built = _built(event, tag)
        if len(_PLAIN) < _PLAIN_MAX and len(value) <= 32:
            _PLAIN[value] = built
        return built
    return _built(event, tag)


def _built(event, tag: str) -> tuple[Any, str]:
    """A scalar built for its tag, as safe_load builds it."""
    if tag in (_STR, _MERGE):
        return event.value, tag
    fn = _CONSTRUCTORS.get(tag)
    line = event.start_mark.line + 1
    if fn is None:
        raise _Refused(line, f"unsupported YAML tag {tag!r}")
    try:
        return fn(_SCALARS, ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)), tag
    except Exception:  # noqa: BLE001 - any constructor failure is a bad scalar at this line
        short = tag.replace("tag:yaml.org,2002:", "!!")
        raise _Refused(line, f"cannot read {event.value[:40]!r} as {short}") from None


def _collection_tag(event, plain: str) -> None:
    """A mapping or sequence may carry only its own plain tag (`!!map`, `!!seq`): any other tag
    (`!!python/object:os.system`, `!!set`, `!!omap`, `!foo`) asks for a type the loader does not
    build, and is refused at its line rather than dropped (the builder makes plain dicts and lists)."""
    if event.tag is None or event.implicit or event.tag in ("!", plain):
        return
    raise _Refused(event.start_mark.line + 1, f"unsupported YAML tag {event.tag!r}")


def _skey(key: Any) -> Any:
    return key if isinstance(key, (str, int, float)) and not isinstance(key, bool) else str(key)


class _Frame:
    """An open collection while its events stream in (a slotted class: one per mapping and sequence
    of a dump that may hold millions)."""

    __slots__ = ("value", "is_list", "path", "anchor", "size", "log_start", "key", "has_key", "key_is_merge",
                 "merges", "seen")

    def __init__(self, value: Any, path: Path_ | None, anchor: str | None, log_start: int) -> None:
        self.value = value                  # dict or list
        self.is_list = isinstance(value, list)
        self.path = path                    # None inside a mapping key (no lines recorded there)
        self.anchor = anchor
        self.size = 1                       # nodes in this subtree, aliases expanded
        self.log_start = log_start          # where this subtree's lines begin in _Builder.log
        self.key: Any = None
        self.has_key = False
        self.key_is_merge = False
        self.merges: list = []
        self.seen: dict = {}


class _Builder:
    """Turns one document's parse events into plain data and a path -> line map without
    recursion, bounding depth and alias expansion (PyYAML's composer recurses per level and
    expands an alias each time it is used)."""

    def __init__(self) -> None:
        self.lines: dict[Path_, int] = {}
        self.log: list[tuple[Path_, int]] = []     # lines in the order recorded (subtrees are slices)
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int, list]] = {}    # value, size, lines relative to it
        self.start_line: int | None = None
        self.open_anchors: set[str] = set()
        self.alias_nodes = 0
        self.root: Any = None
        self.done = False

    def _child_path(self, line: int) -> Path_ | None:
        """The path of a node starting now (recording its line), or None inside a key."""
        if not self.stack:
            self.start_line = line
            return ()
        top = self.stack[-1]
        if top.path is None:
            return None
        if top.is_list:
            p = top.path + (len(top.value),)
            self._record(p, line)
            return p
        if not top.has_key:
            return None
        return top.path + (str(top.key),)

    def start(self, event, value) -> None:
        line = event.start_mark.line + 1
        if len(self.stack) >= MAX_DEPTH:
            raise _Refused(line, f"nesting deeper than {MAX_DEPTH} levels")
        path = self._child_path(line)
        if event.anchor:
            self.open_anchors.add(event.anchor)
        self.stack.append(_Frame(value, path, event.anchor, len(self.log)))

    def end(self, event) -> None:
        f = self.stack.pop()
        if isinstance(f.value, dict):
            for m in f.merges:
                for k, v in m.items():
                    f.value.setdefault(k, v)
        if f.anchor:
            self.open_anchors.discard(f.anchor)
            n = len(f.path) if f.path is not None else 0
            rel = [(p[n:], ln) for p, ln in self.log[f.log_start:]] if f.path is not None else []
            self.anchors[f.anchor] = (f.value, f.size, rel)
        self._finish(f.value, f.size, event.start_mark.line + 1)

    def scalar(self, event) -> None:
        line = event.start_mark.line + 1
        stack = self.stack
        if not stack:
            self.start_line = line
        else:                             # _child_path's one effect for a scalar: a list item's line
            top = stack[-1]
            if top.is_list and top.path is not None:
                self._record(top.path + (len(top.value),), line)
        value, tag = _scalar(event)
        if event.anchor:
            self.anchors[event.anchor] = (value, 1, [])
        self._finish(value, 1, line, is_merge=tag == _MERGE)

    def alias(self, event) -> None:
        line = event.start_mark.line + 1
        name = event.anchor
        if name in self.open_anchors:
            raise _Refused(line, f"alias *{name} refers to its own anchor (a recursive structure)")
        if name not in self.anchors:
            raise _Refused(line, f"alias *{name} has no anchor &{name} before it")
        value, size, rel = self.anchors[name]
        self.alias_nodes += size
        if self.alias_nodes > MAX_ALIAS_NODES:
            raise _Refused(line, f"aliases expand to more than {MAX_ALIAS_NODES} nodes")
        path = self._child_path(line)
        if path is not None:                  # the aliased subtree's lines, at its new place
            for sub, ln in rel:
                self._record(path + sub, ln)
        self._finish(copy.deepcopy(value), size, line)

    def _record(self, path: Path_, line: int) -> None:
        self.lines[path] = line
        self.log.append((path, line))

    def _finish(self, value: Any, size: int, line: int, is_merge: bool = False) -> None:
        if not self.stack:
            self.root, self.done = value, True
            return
        top = self.stack[-1]
        top.size += size
        if top.is_list:
            top.value.append(value)
            return
        if not top.has_key:
            top.key, top.has_key, top.key_is_merge = (value if type(value) is str else _skey(value)), True, is_merge
            if is_merge:
                return
            if top.key in top.seen:
                raise DuplicateKey(line, str(top.key), top.seen[top.key])
            top.seen[top.key] = line
            if top.path is not None:
                self._record(top.path + (str(top.key),), line)
            return
        if top.key_is_merge:
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(m, dict) for m in merged):
                raise _Refused(line, "merge key << needs a mapping or a list of mappings")
            top.merges += merged
        else:
            top.value[top.key] = value
        top.key, top.has_key, top.key_is_merge = None, False, False


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def read_text(file: str | Path, limit: int | None = None) -> str:
    """A file's UTF-8 text, at most `limit` bytes (MAX_FILE_BYTES unless given); errors say which line is not
    text."""
    limit = MAX_FILE_BYTES if limit is None else limit
    file = str(file)
    try:
        with open(file, "rb") as fh:
            st = os.fstat(fh.fileno())
            if stat.S_ISREG(st.st_mode) and MAP_BYTES <= st.st_size <= limit:
                try:
                    mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):       # a file system that maps no files: read as any other
                    pass
                else:
                    with mapped:
                        if len(mapped) <= limit:
                            return _decoded(file, mapped)
            data = fh.read(limit + 1)
    except FileNotFoundError:
        raise SourceError(file, None, "file not found") from None
    except IsADirectoryError:
        raise SourceError(file, None, "is a directory, not a file") from None
    except OSError as e:
        raise SourceError(file, None, f"cannot read: {e.strerror or e}") from None
    if len(data) > limit:               # the whole file is refused: its first line stands for it
        raise SourceError(file, 1, f"file larger than {limit // (1024 * 1024)} MiB")
    return _decoded(file, data)


def _decoded(file: str, data) -> str:
    """`data` (bytes, or a file's map) as UTF-8 text; an error names the line that is not text."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise SourceError(file, line, f"not UTF-8 text (byte 0x{data[e.start]:02x}: {e.reason})") from None


def load_documents(file: str | Path, text: str | None = None, limit: int | None = None) -> list[Document]:
    """All documents of a YAML file; malformed YAML raises SourceError with the parser's line."""
    file = str(file)
    limit = MAX_FILE_BYTES if limit is None else limit
    if text is None:
        text = read_text(file, limit)
    elif len(text) > limit:
        raise SourceError(file, 1, f"text larger than {limit // (1024 * 1024)} MiB")
    bad = _NOT_PRINTABLE.search(text)
    if bad:
        ch = bad.group()
        what = "a NUL byte" if ch == "\x00" else f"the control character U+{ord(ch):04X}"
        raise SourceError(file, _line_at(text, bad.start()), f"malformed YAML: {what} is not allowed in YAML text")
    docs: list[Document] = []
    loader = _Loader(text)
    try:
        builder: _Builder | None = None
        check, get = loader.check_event, loader.get_event
        scalar_event = yaml.ScalarEvent
        while check():
            event = get()
            if type(event) is scalar_event:
                builder.scalar(event)
            elif isinstance(event, yaml.MappingStartEvent):
                _collection_tag(event, _MAP)
                builder.start(event, {})
            elif isinstance(event, yaml.SequenceStartEvent):
                _collection_tag(event, _SEQ)
                builder.start(event, [])
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                builder.end(event)
            elif isinstance(event, yaml.AliasEvent):
                builder.alias(event)
            elif isinstance(event, yaml.DocumentStartEvent):
                builder = _Builder()
            elif isinstance(event, yaml.DocumentEndEvent):
                if builder is not None and builder.done:
                    docs.append(Document(file, builder.root, builder.lines, builder.start_line or 1))
                builder = None
    except DuplicateKey as e:
        raise SourceError(file, e.line, f'malformed YAML: duplicate key "{e.key}" (first at line {e.first})') from None
    except _Refused as e:
        raise SourceError(file, e.line, f"malformed YAML: {e.reason}") from None
    except yaml.MarkedYAMLError as e:
        # an unclosed flow collection is best reported where it was opened
        opened = (e.context or "").startswith("while parsing a flow") and e.context_mark is not None
        mark = e.context_mark if opened else (e.problem_mark or e.context_mark)
        line = mark.line + 1 if mark is not None else None
        reason = " ".join(x for x in (e.context, e.problem) if x) or "malformed YAML"
        raise SourceError(file, line, f"malformed YAML: {reason}") from None
    except yaml.YAMLError as e:
        raise SourceError(file, 1, f"malformed YAML: {e}") from None
    finally:
        loader.dispose()
    return [d for d in docs if d.data is not None]
