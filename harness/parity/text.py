"""Text helpers shared by the parity renderings: Go-list shortening and table cell escaping."""
from __future__ import annotations

import re

CHECK = "✅"
CROSS = "❌"
_LIST_RE = re.compile(r"\[[^\[\]]{100,}\]")


def shorten(message: str | None) -> str:
    """Long Go `[a b c ...]` lists (the well-known label list) are abbreviated for tables."""
    if message is None:
        return ""
    return _LIST_RE.sub(lambda m: f"[… {len(m.group(0)[1:-1].split())} keys]", message)


def yes_no(v: bool | None) -> str:
    return "" if v is None else (CHECK if v else CROSS)


def md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
