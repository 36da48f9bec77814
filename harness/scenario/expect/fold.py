"""Repeated lines folded with a count, so a retry loop's sixty identical launch failures read as one
line: `fold_trace` folds consecutive trace lines that differ only in their `[t=Ns]` time,
`fold_counts` folds identical entries of a list wherever they are (first occurrence keeps its place)."""
from __future__ import annotations

import re
from collections import Counter

_TIME = re.compile(r"^\[t=(?P<t>[0-9.]+)s\] ")


def fold_trace(lines: list[str]) -> list[str]:
    """`[t=10s] x`, `[t=20s] x`, `[t=30s] x` -> `[t=10s..30s] x  (x3)`."""
    out: list[str] = []
    run: list[tuple[str | None, str]] = []

    def flush() -> None:
        if not run:
            return
        first, text = run[0]
        last = run[-1][0]
        if len(run) == 1:
            out.append(f"[t={first}s] {text}" if first is not None else text)
        else:
            span = f"[t={first}s..{last}s] " if first is not None else ""
            out.append(f"{span}{text}  (x{len(run)})")
        run.clear()
    for line in lines:
        m = _TIME.match(line)
        t, text = (m.group("t"), line[m.end():]) if m else (None, line)
        if run and run[-1][1] != text:
            flush()
        run.append((t, text))
    flush()
    return out


def fold_counts(items: list[str]) -> list[str]:
    """Identical entries once, in first-seen order, with `(xN)` when repeated."""
    counts = Counter(items)
    seen: set[str] = set()
    out = []
    for it in items:
        if it in seen:
            continue
        seen.add(it)
        out.append(it if counts[it] == 1 else f"{it}  (x{counts[it]})")
    return out
