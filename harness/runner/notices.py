"""Warnings about a scenario that do not stop it from running: a synthesized SKU, a borrowed price, a
manifest field the simulation does not model. Each names its source line, like a SourceError."""
from __future__ import annotations

import warnings
from dataclasses import dataclass


class HarnessWarning(UserWarning):
    """What pytest shows for a scenario notice (`-W error::harness.runner.notices.HarnessWarning`
    turns them into failures)."""


@dataclass(frozen=True)
class Notice:
    file: str
    line: int
    message: str
    kind: str = "unmodeled"          # unmodeled | synthesized | catalog | version | cluster (dumpcatalog.py)

    def render(self) -> str:
        return f"{self.file}:{self.line}: warning: {self.message}"


def emit(notices: list[Notice]) -> None:
    """Each notice as a Python warning (pytest collects and prints them in its summary)."""
    for n in notices:
        # attributed to the scenario line, so pytest's summary points there and not at the plugin
        warnings.warn_explicit(HarnessWarning(n.message), HarnessWarning, n.file, n.line)


def print_notices(scenarios, file) -> int:
    """Print each scenario's notices once (scenarios of one file share most of them); the count."""
    seen: set[str] = set()
    for sc in scenarios:
        for n in getattr(sc, "warnings", []):
            text = n.render()
            if text not in seen:
                seen.add(text)
                print(text, file=file)
    return len(seen)
