"""A large YAML dump read by rapidyaml (PyPI `rapidyaml`) with PyYAML's meaning, or left to yamlsource.

`kubectl get -o yaml` of a 5,000-node cluster is ~170 MB: libyaml's events alone (yamlsource) cost ~10 CPU-s
of it and building the data from them ~9 more. rapidyaml parses YAML and prints it as JSON, which the json
module reads, in a fifth of that. But it reads YAML 1.2 and the harness YAML 1.1 (PyYAML's resolver: `yes`
and `on` are booleans, `0777` is 511, `1e3` a string), so a text is read here only when nothing in it is
read apart; otherwise `load_documents` returns None and yamlsource reads the text, as it reads every text
below FAST_BYTES. Both give the same data for any text they both read; every error is yamlsource's.

What is read apart, found without walking the data (5 M values):
- a plain scalar YAML 1.1 reads as other than YAML 1.2 does: the text's distinct words (`str.split`, C speed)
  name the candidates (those starting like a number, or one of the booleans and nulls); both readers read
  them as one list each, and a word they read apart is looked for where a plain scalar would stand (after
  `key: `, `- `, at a line's start, in a flow collection). A key YAML 1.1 reads as other than a string is
  read apart too (JSON's keys are strings). kubectl's printer (go-yaml) quotes any string YAML 1.1 would
  read otherwise, so a dump normally has none;
- an anchor, alias, tag, directive, complex or empty key, stray `]` or `}` or reserved character where a node
  starts, a second document, a tab, a CR not before LF, a byte-order mark not at the start, NEL, LS or PS; a
  duplicate key (the json reader's hook finds it); nesting near MAX_DEPTH. Flow collections read alike; their
  scalars are words like any other; CRLF line breaks are LF to both.

The text is read as its top-level mapping without `items`, and the `items` block sequence (at column 0, as
kubectl prints it) in slices of ITEMS_PER_READ entries into one rapidyaml tree used again: its ~80 bytes a
node for the whole dump were ~1 CPU-s of page faults. Lines: each item's (its `- `) and the document's, as
jsonsource gives them; a dump's objects are named by them (harness/dump/new.py read_objects).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from harness.dump.jsonsource import DECODER
from harness.scenario.yamlsource import MAX_DEPTH, Document, load_documents as load_yaml, not_printable

ryml: Any = None               # the module, imported by the first text large enough (11 ms)

# a text this large is read here; below it yamlsource reads it alone (a hand-written dump: lines for every path)
FAST_BYTES = 1024 * 1024
ITEMS_PER_READ = 1000
_WORDS_SLICE = 8 * 1024 * 1024      # the text split into words a slice at a time (cut at a line's end)

# a plain scalar that starts so, or is one of these words, may be read apart (YAML 1.1's int, float, bool,
# null, merge and value forms; YAML 1.2's numbers, booleans and null); other words are strings to both
_NUMERIC_START = frozenset("-+.0123456789~<=")
_WORDS = frozenset("""y Y yes Yes YES n N no No NO on On ON off Off OFF true True TRUE false False FALSE
                      null Null NULL""".split())
# a word holding one of these is a string to both, or not a whole plain scalar: left out of the lists read
_NOT_SCALAR = re.compile(r"[#,\[\]{}'\"&*!|>%@`\\]|:$|^-$")
# a dash within a word, not an exponent's sign: neither reader's number (a uid, a date; a date YAML 1.1 reads
# as a timestamp is a string to the harness, yamlsource)
_INNER_DASH = re.compile(r"[^eEpP]-")
# the first character of an anchor, alias, tag, directive or complex key, or of no node YAML 1.1 has (a
# character it reserves, a flow collection's end or separator, an empty key: rapidyaml reads some of them).
# Flow collections themselves read alike (tests/dump/test_rymlsource.py); their scalars are words as any.
_STRUCTURE = frozenset("&*!%?@`]},:")
# words looked for in the whole text, at most (each a pass over it): more leaves the text to yamlsource
MAX_LOOKS = 64
_FLOW = "[]{},"
# line breaks to YAML 1.1 (PyYAML folds them in a quoted scalar), characters to YAML 1.2: NEL, LS, PS
_YAML_1_1_BREAKS = "\x85\u2028\u2029"
# a line at column 0 that ends the `items` block: not an entry, an indented line, a comment or blank
_BLOCK_END = re.compile(r"\n[^ \n#-]")


class _Apart(Exception):
    """The text holds what rapidyaml and PyYAML read apart: yamlsource reads it."""


def load_documents(file: str, text: str) -> list[Document] | None:
    """The text's documents as yamlsource reads them, with each List item's line; None where this reader
    does not read the text (small, rapidyaml missing, something the two read apart, or an error)."""
    if len(text) < FAST_BYTES or not _imported():
        return None
    try:
        return _documents(file, text)
    except _Apart:
        return None


def _documents(file: str, text: str) -> list[Document]:
    if text.startswith("\ufeff"):
        text = text[1:]               # a byte-order mark opening the stream: both readers drop it
    if "\r" in text:
        text = text.replace("\r\n", "\n")   # CRLF line breaks (a dump saved on Windows): both read them as LF
    if ("\t" in text or "\r" in text or not_printable(text)
            or not text.isascii() and any(c in text for c in _YAML_1_1_BREAKS + "\ufeff")):
        raise _Apart
    _check_words(text, _words(text))
    reader = _Reader()
    block = _items_block(text)
    if block is None:
        data = reader.read(text)
        lines: dict = {}
        if isinstance(data, dict) and data.get("items"):
            raise _Apart                        # items whose lines are not found (a quoted key, a flow sequence)
    else:
        at, end, entries = block
        data = reader.read(text[:at] + "items: []\n" + text[end:])
        if not isinstance(data, dict) or data.get("items") != []:
            raise _Apart
        items: list = []
        bounds = entries[::ITEMS_PER_READ] + [end]
        for a, b in zip(bounds, bounds[1:]):
            part = reader.read(text[a:b])
            if not isinstance(part, list):
                raise _Apart
            items += part
        if len(items) != len(entries):
            raise _Apart
        data["items"] = items
        lines = _lines(text, entries)
    if not isinstance(data, dict):
        raise _Apart
    return [Document(file, data, lines, _first_line(text))]


def _imported() -> bool:
    """Whether rapidyaml is imported (once; not installed: every text is yamlsource's)."""
    global ryml
    if ryml is None:
        try:
            import ryml as module
        except ImportError:
            return False
        ryml = module
    return True


class _Reader:
    """YAML texts read by rapidyaml into one tree, used again, and printed as JSON for the json module."""

    def __init__(self) -> None:
        if not _imported():
            raise _Apart
        self.tree = ryml.Tree()

    def read(self, text: str) -> Any:
        tree = self.tree
        tree.clear()
        tree.clear_arena()
        with _quiet_stderr():
            try:
                ryml.parse_in_arena(text.encode(), tree)
            except Exception:        # noqa: BLE001 - a parse error is yamlsource's to report, with its line
                raise _Apart from None
            try:
                out = ryml.emit_json_malloc(tree, tree.root_id())
            except Exception:        # noqa: BLE001 - (nesting rapidyaml will not print)
                raise _Apart from None
        # nesting near MAX_DEPTH (the JSON is printed two spaces a level): yamlsource's to refuse or read
        if out.find("\n" + " " * (2 * MAX_DEPTH - 4)) >= 0:
            raise _Apart
        try:
            return DECODER.decode(out)
        except (ValueError, RecursionError):     # a duplicate key, a number JSON has not
            raise _Apart from None


def _words(text: str) -> set[str]:
    """The text's distinct words (split at white space), a slice at a time: the whole text's list of words
    was ~12 M strings at once."""
    words: set[str] = set()
    start = 0
    while start < len(text):
        cut = text.find("\n", start + _WORDS_SLICE)
        end = len(text) if cut < 0 else cut
        words.update(text[start:end].split())
        start = end
    return words


def _check_words(text: str, words: set[str]) -> None:
    """Raise _Apart where a word the two readers read apart stands for a node."""
    values: set[str] = set()
    keys: set[str] = set()
    looks = 0
    for w in words:
        if w.lstrip("[{")[:1] in _STRUCTURE and w.rstrip(",") not in ("&", "*", "{}", "[]"):
            looks += 1
            if looks > MAX_LOOKS or _at_node(text, w, False):
                raise _Apart
        elif w in ("---", "...") and _at_line_start(text, w):
            raise _Apart
        s = w.strip(_FLOW)
        if not s:
            continue
        key = s.endswith(":")
        if key:
            s = s[:-1]
        if s and (s[0] in _NUMERIC_START and not _INNER_DASH.search(s) or s in _WORDS) and not _NOT_SCALAR.search(s):
            (keys if key else values).add(s)
    listed = sorted(values | keys)
    if not listed:
        return
    batch = "".join(f"- {w}\n" for w in listed)
    try:
        exact = load_yaml("(words)", batch)[0].data
        fast = _Reader().read(batch)
    except Exception:            # noqa: BLE001 - a word that breaks the list: the text is yamlsource's
        raise _Apart from None
    if not (isinstance(exact, list) and isinstance(fast, list) and len(exact) == len(fast) == len(listed)):
        raise _Apart
    for w, a, b in zip(listed, exact, fast):
        if (w in values and not (type(a) is type(b) and (a == b or (a != a and b != b)))
                or w in keys and (type(a) is not str or w == "<<")):      # (`<<` a key: YAML 1.1's merge)
            looks += 1
            if looks > MAX_LOOKS or _at_node(text, w, True):
                raise _Apart


def _at_node(text: str, word: str, whole: bool) -> bool:
    """Whether `word` stands somewhere in the text where a node starts (after a line's indent and its `- `,
    `? ` or `: `, or after a flow collection's `[`, `{` or `,`) and, when `whole`, is all of the plain scalar
    there (what follows is the line's end, a comment, `: ` or a flow indicator). One pass over the text a word."""
    at = text.find(word)
    while at >= 0:
        left = text[text.rfind("\n", 0, at) + 1:at]
        s = left.rstrip(" ")
        if not s or s[-1] in "[{," or (s[-1] in "-?:" and len(s) < len(left)):
            if not whole:
                return True
            end = at + len(word)
            nl = text.find("\n", end)
            after = text[end:nl if nl >= 0 else len(text)]
            a = after.lstrip(" ")
            if (not a or a[0] in ",]}" or (a[0] == "#" and a is not after)
                    or (a[0] == ":" and (len(a) == 1 or a[1] == " "))):
                return True
        at = text.find(word, at + 1)
    return False


def _at_line_start(text: str, word: str) -> bool:
    return text.startswith(word) or text.find("\n" + word) >= 0


def _items_block(text: str) -> tuple[int, int, list[int]] | None:
    """The top-level `items:` key's offset, where its block ends (the newline before the next top-level key,
    or the text's end) and the offset of each entry's `-`; None without one. A block sequence written
    otherwise than kubectl writes it (entries at column 0, each node on its dash's line) is yamlsource's."""
    at = 0 if text.startswith("items:") else text.find("\nitems:") + 1
    if at == 0 and not text.startswith("items:"):
        return None
    body = text.find("\n", at) + 1
    rest = text[at + 6:body].split(" #")[0].strip()
    if rest == "[]":
        return None
    if body == 0 or rest and not rest.startswith("#"):        # a flow sequence, or a node on the line
        raise _Apart
    m = _BLOCK_END.search(text, body - 1)
    end = m.start() + 1 if m else len(text)
    entries: list[int] = []
    pos = text.find("\n-", body - 1, end)
    while pos >= 0:
        if not text.startswith(" ", pos + 2) or text.startswith((" ", "#", "\n"), pos + 3):
            raise _Apart
        entries.append(pos + 1)
        pos = text.find("\n-", pos + 2, end)
    if not entries or any(ln.strip() and not ln.lstrip().startswith("#")
                          for ln in text[body:entries[0]].split("\n")):
        raise _Apart                                    # (no entry at column 0, or a node before the first)
    return at, end, entries


def _lines(text: str, offsets: list[int]) -> dict:
    """("items", j) -> the line of offsets[j], counting newlines once over the text."""
    lines: dict = {}
    prev, line = 0, 1
    for j, off in enumerate(offsets):
        line += text.count("\n", prev, off)
        prev = off
        lines[("items", j)] = line
    return lines


def _first_line(text: str) -> int:
    """The line of the document's first node (after comments and blank lines)."""
    line, pos = 1, 0
    while pos < len(text):
        nl = text.find("\n", pos)
        stripped = text[pos:nl if nl >= 0 else len(text)].strip()
        if stripped and not stripped.startswith("#"):
            return line
        if nl < 0:
            break
        pos, line = nl + 1, line + 1
    return 1


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml prints a parse error to the process's stderr before it raises: the error is yamlsource's to
    report, so the print goes nowhere."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
