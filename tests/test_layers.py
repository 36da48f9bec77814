"""Imports only point down: cli -> parity -> runner -> loop -> backends -> model, and fakeazure
imports nothing from harness (../shared/STYLE.md §1). An upward import is how a layer starts to
depend on the one that uses it; this walk fails on the first one."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("model", "backends", "loop", "runner", "parity", "cli")


def _layer(module: str) -> int | None:
    """The layer's rank, or None for a module outside the ordered layers (data helpers, __init__)."""
    parts = module.split(".")
    if parts[0] != "harness" or len(parts) < 2:
        return None
    top = "cli" if parts[1] == "__main__" else parts[1]
    return ORDER.index(top) if top in ORDER else None


def _imports(path: Path) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names)
    return out


def _modules(package: str) -> list[tuple[str, Path]]:
    return [(".".join(p.relative_to(ROOT).with_suffix("").parts), p) for p in sorted((ROOT / package).rglob("*.py"))]


@pytest.mark.parametrize("module,path", _modules("harness"), ids=lambda x: x if isinstance(x, str) else "")
def test_harness_imports_point_down(module: str, path: Path):
    mine = _layer(module)
    if mine is None:
        return
    upward = [f"{path.relative_to(ROOT)}:{line}: imports {name}" for name, line in _imports(path)
              if (rank := _layer(name)) is not None and rank > mine]
    assert not upward, "\n".join(upward)


@pytest.mark.parametrize("module,path", _modules("fakeazure"), ids=lambda x: x if isinstance(x, str) else "")
def test_fakeazure_imports_nothing_from_harness(module: str, path: Path):
    bad = [f"{path.relative_to(ROOT)}:{line}: imports {name}" for name, line in _imports(path)
           if name == "harness" or name.startswith("harness.")]
    assert not bad, "\n".join(bad)


def test_the_walk_sees_an_upward_import(tmp_path):
    """The check itself: a model module importing a backend is caught."""
    f = tmp_path / "m.py"
    f.write_text("from harness.backends.base import Cluster\n")
    assert [(n, _layer(n)) for n, _ in _imports(f)] == [("harness.backends.base", ORDER.index("backends"))]
    assert _layer("harness.model.validation") < _layer("harness.backends.base")
