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
# has its own, smaller bound (harness/scenario/references.py); a dump its own, larger one (`kubectl get -o json`
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
# an ASCII text is printable when deleting these bytes from it leaves none (a 58 MB scenario: 0.04 CPU-s,
# the expression 0.15)
_PRINTABLE_ASCII = bytes([9, 10, 13, *range(0x20, 0x7f)])

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
    and short plain ones repeat (`true`, `500m`): both answered without the resolver's regexes
    (by _build itself, before it calls this)."""
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


# What the innermost open collection takes next (`kind` in _build): the document's root, a mapping's key,
# the value of the key just read, the value of a merge key `<<`, a sequence's item
_AT_ROOT, _AT_KEY, _AT_VALUE, _AT_MERGE, _AT_ITEM = range(5)


def _build(file: str, events) -> list[Document]:
    """The documents of a stream of parse events: plain data and a path -> line map, without recursion,
    bounding depth and alias expansion (PyYAML's composer recurses per level and expands an alias each
    time it is used).

    One loop, with no call for the common events (a 5,000-node scenario is 4.65 M of them): the
    innermost open collection is held in locals (`cur`, `kind`, `path`, `key`, `seen`, `merges`,
    `anc`), its parents as tuples on `stack`. A node's line is recorded where it starts as a list item
    or where its key is; `path` is None inside a mapping key, where none is recorded. Lines are kept in
    order in `paths` and `plines` (a dict at the document's end), so an anchored collection's lines are
    the slice from where it opened, recorded again at each alias of it. `nodes` counts nodes, aliases
    expanded, for an anchor's share of MAX_ALIAS_NODES."""
    docs: list[Document] = []
    max_depth, max_alias_nodes = MAX_DEPTH, MAX_ALIAS_NODES
    first, plain_get, deepcopy = _IMPLICIT_FIRST, _PLAIN.get, copy.deepcopy
    Scalar, Alias = yaml.ScalarEvent, yaml.AliasEvent
    MapStart, MapEnd = yaml.MappingStartEvent, yaml.MappingEndEvent
    SeqStart, SeqEnd = yaml.SequenceStartEvent, yaml.SequenceEndEvent
    DocStart, DocEnd = yaml.DocumentStartEvent, yaml.DocumentEndEvent
    ROOT, KEY, VALUE, MERGE, ITEM = _AT_ROOT, _AT_KEY, _AT_VALUE, _AT_MERGE, _AT_ITEM
    paths: list[Path_] = []
    plines: list[int] = []
    stack: list[tuple] = []
    anchors: dict[str, tuple[Any, int, list]] = {}       # value, size, lines relative to it
    open_anchors: set[str] = set()
    cur: Any = None
    kind, path, key, seen, merges, anc = ROOT, None, None, None, None, None
    nodes = alias_nodes = 0
    root, done, start_line = None, False, None
    for event in events:
        t = type(event)
        if t is Scalar:
            value = event.value
            tag = event.tag
            if tag is None and (not event.implicit[0] or (value and value[0] not in first)):
                is_merge = False                    # a string the resolver would only confirm
            else:
                hit = plain_get(value) if tag is None else None
                value, tag = hit if hit is not None else _scalar(event)
                is_merge = tag == _MERGE
            if event.anchor:
                anchors[event.anchor] = (value, 1, [])
            nodes += 1
        elif t is MapEnd or t is SeqEnd:
            if merges:
                for m in merges:
                    for k, v in m.items():
                        cur.setdefault(k, v)
            if anc is not None:
                name, before, since = anc
                open_anchors.discard(name)
                if path is None:
                    rel = []
                else:
                    n = len(path)
                    rel = [(p[n:], ln) for p, ln in zip(paths[since:], plines[since:])]
                anchors[name] = (cur, nodes - before, rel)
            value, is_merge = cur, False
            cur, kind, path, key, seen, merges, anc = stack.pop()
        elif t is MapStart or t is SeqStart:
            if event.tag is not None:
                _collection_tag(event, _MAP if t is MapStart else _SEQ)
            if len(stack) >= max_depth:
                raise _Refused(event.start_mark.line + 1, f"nesting deeper than {max_depth} levels")
            if kind == VALUE or kind == MERGE:
                child = None if path is None else path + (key if type(key) is str else str(key),)
            elif kind == ITEM:
                if path is None:
                    child = None
                else:
                    child = path + (len(cur),)
                    paths.append(child)
                    plines.append(event.start_mark.line + 1)
            elif kind == KEY:
                child = None
            else:
                start_line, child = event.start_mark.line + 1, ()
            stack.append((cur, kind, path, key, seen, merges, anc))
            if t is MapStart:
                cur, kind, seen = {}, KEY, {}
            else:
                cur, kind, seen = [], ITEM, None
            path, key, merges, anc = child, None, None, None
            if event.anchor:
                open_anchors.add(event.anchor)
                anc = (event.anchor, nodes, len(paths))
            nodes += 1
            continue
        elif t is Alias:
            line = event.start_mark.line + 1
            name = event.anchor
            if name in open_anchors:
                raise _Refused(line, f"alias *{name} refers to its own anchor (a recursive structure)")
            if name not in anchors:
                raise _Refused(line, f"alias *{name} has no anchor &{name} before it")
            value, size, rel = anchors[name]
            alias_nodes += size
            if alias_nodes > max_alias_nodes:
                raise _Refused(line, f"aliases expand to more than {max_alias_nodes} nodes")
            nodes += size
            if kind == VALUE or kind == MERGE:
                at = None if path is None else path + (key if type(key) is str else str(key),)
            elif kind == ITEM:
                if path is None:
                    at = None
                else:
                    at = path + (len(cur),)
                    paths.append(at)
                    plines.append(line)
            elif kind == KEY:
                at = None
            else:
                start_line, at = line, ()
            if at is not None:                      # the aliased subtree's lines, at its new place
                for sub, ln in rel:
                    paths.append(at + sub)
                    plines.append(ln)
            value, is_merge = deepcopy(value), False
        elif t is DocStart:
            paths, plines, stack, anchors, open_anchors = [], [], [], {}, set()
            cur, kind, path, key, seen, merges, anc = None, ROOT, None, None, None, None, None
            nodes = alias_nodes = 0
            root, done, start_line = None, False, None
            continue
        elif t is DocEnd:
            if done:
                docs.append(Document(file, root, dict(zip(paths, plines)), start_line or 1))
            done = False
            continue
        else:                                       # the stream's start and end
            continue
        # `value` is a finished node (scalar, collection or alias): it joins the innermost open collection
        if kind == VALUE:
            cur[key] = value
            kind = KEY
        elif kind == KEY:
            line = event.start_mark.line + 1
            key = value if type(value) is str else _skey(value)
            if is_merge:
                kind = MERGE
                continue
            if key in seen:
                raise DuplicateKey(line, str(key), seen[key])
            seen[key] = line
            if path is not None:
                paths.append(path + (key if type(key) is str else str(key),))
                plines.append(line)
            kind = VALUE
        elif kind == ITEM:
            if t is Scalar and path is not None:    # a collection's or an alias's line is recorded above
                paths.append(path + (len(cur),))
                plines.append(event.start_mark.line + 1)
            cur.append(value)
        elif kind == MERGE:
            merged = value if isinstance(value, list) else [value]
            if not all(isinstance(m, dict) for m in merged):
                raise _Refused(event.start_mark.line + 1, "merge key << needs a mapping or a list of mappings")
            if merges is None:
                merges = []
            merges += merged
            kind = KEY
        else:
            if t is Scalar:
                start_line = event.start_mark.line + 1
            root, done = value, True
    return docs


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


def not_printable(text: str) -> re.Match | None:
    """The first character libyaml refuses in YAML text, or None."""
    if text.isascii() and not text.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return None
    return _NOT_PRINTABLE.search(text)


def load_documents(file: str | Path, text: str | None = None, limit: int | None = None) -> list[Document]:
    """All documents of a YAML file; malformed YAML raises SourceError with the parser's line."""
    file = str(file)
    limit = MAX_FILE_BYTES if limit is None else limit
    if text is None:
        text = read_text(file, limit)
    elif len(text) > limit:
        raise SourceError(file, 1, f"text larger than {limit // (1024 * 1024)} MiB")
    bad = not_printable(text)
    if bad:
        ch = bad.group()
        what = "a NUL byte" if ch == "\x00" else f"the control character U+{ord(ch):04X}"
        raise SourceError(file, _line_at(text, bad.start()), f"malformed YAML: {what} is not allowed in YAML text")
    loader = _Loader(text)
    try:
        # the collector is the caller's to pause (harness/heap.py no_collections): a large file's trees
        # hold no cycle, and full collections while they grow walked them again and again
        docs = _build(file, iter(loader.get_event, None))
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
