"""Imports only point down: cli -> parity -> why -> report -> judge -> dump -> runner -> scenario -> loop ->
backends -> model, and fakeazure imports nothing from harness; inside model/ and loop/, their sub-packages
in the order SUBORDER names. The pytest plugin (harness/runner/plugin.py, where the pytest11 entry point
names it) is a face like the CLI: it ranks with cli. An upward import is how a
layer starts to depend on the one that uses it; this walk fails on the first one."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("model", "backends", "loop", "scenario", "runner", "dump", "judge", "report", "why", "parity", "cli")
FACES = ("harness.__main__", "harness.runner.plugin")     # rank with cli


def _layer(module: str) -> int | None:
    """The layer's rank, or None for a module outside the ordered layers (harness/heap.py, logs.py, __init__)."""
    parts = module.split(".")
    if parts[0] != "harness" or len(parts) < 2:
        return None
    top = "cli" if module in FACES or module.startswith(tuple(f + "." for f in FACES)) else parts[1]
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


# Inside a layer, the order of its sub-packages (and top-level modules), lowest first; one entry may
# name several, which then rank alike, and "*" stands for every one not named. model/: the values,
# each release's data, the label algebra, Kubernetes' own rules, the CRDs, the Azure side, and the
# commands that derive the data on top. loop/: core's scheduling simulation is the floor the
# controllers (provisioning, lifecycle, disruption, kube) and the run stand on; above it they call
# each other through the one LoopState, so no further order is claimed.
SUBORDER = {
    "model": ("data", "values", "upstream", "labels", "kube", "crd", "azure", "sync coresync corechanges"),
    "loop": ("scheduling", "*"),
}


def _sublayer(module: str) -> tuple[str, int] | None:
    """(layer, rank of the module's sub-package in it), or None where no order is claimed."""
    parts = module.split(".")
    if parts[0] != "harness" or len(parts) < 3 or parts[1] not in SUBORDER:
        return None
    ranks = {name: i for i, entry in enumerate(SUBORDER[parts[1]]) for name in entry.split()}
    rank = ranks.get(parts[2], ranks.get("*"))
    return None if rank is None else (parts[1], rank)


@pytest.mark.parametrize("module,path", [m for m in _modules("harness") if _sublayer(m[0])],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_sub_packages_import_down(module: str, path: Path):
    layer, mine = _sublayer(module)
    upward = [f"{path.relative_to(ROOT)}:{line}: imports {name}" for name, line in _imports(path)
              if (s := _sublayer(name)) and s[0] == layer and s[1] > mine]
    assert not upward, "\n".join(upward)


def test_every_sub_package_is_ranked():
    """A new sub-package of model/ gets its place in SUBORDER (loop/'s "*" takes any)."""
    for layer, order in SUBORDER.items():
        named = {n for entry in order for n in entry.split()}
        here = {p.stem if p.suffix else p.name for p in (ROOT / "harness" / layer).iterdir()
                if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
        assert "*" in named or here <= named, f"harness/{layer}: not in SUBORDER: {sorted(here - named)}"


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
    assert _layer("harness.model.crd.validation") < _layer("harness.backends.base")
    assert _layer("harness.runner.engines.base") < _layer("harness.judge.explore") < _layer("harness.runner.plugin")
    assert (_sublayer("harness.model.values.cron") < _sublayer("harness.model.crd.validation")
            < _sublayer("harness.model.sync"))
    assert (_sublayer("harness.loop.scheduling.pods") < _sublayer("harness.loop.kube.binding")
            == _sublayer("harness.loop.state"))


# -- no cycles, no private reach-ins -------------------------------------------------------------------
# namedtuple's public API is spelled with a leading underscore (https://docs.python.org/3/library/collections.html)
NAMEDTUPLE_API = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes under `if TYPE_CHECKING:`: never imported at run time, so no cycle."""
    out: set[int] = set()
    for n in ast.walk(tree):
        test = getattr(n, "test", None)
        if isinstance(n, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING" or getattr(test, "attr", None) == "TYPE_CHECKING"):
            out.update(id(x) for b in n.body for x in ast.walk(b))
    return out


def _harness_graph() -> tuple[dict[str, set[str]], dict[str, Path]]:
    """Module -> the harness modules it imports, anywhere in the file (in-function imports count)."""
    paths = {_module_name(p): p for p in sorted((ROOT / "harness").rglob("*.py"))}
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for mod, path in paths.items():
        tree = ast.parse(path.read_text(), str(path))
        skip = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("harness"):
                for a in node.names:
                    target = f"{node.module}.{a.name}"
                    graph[mod].add(target if target in paths else node.module)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    name = a.name
                    while name not in paths and "." in name:
                        name = name.rsplit(".", 1)[0]
                    if name in paths:
                        graph[mod].add(name)
    return {m: {t for t in ts if t in paths and t != m} for m, ts in graph.items()}, paths


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_harness():
    """An in-function import hides a cycle from the interpreter, not from the design: the two
    modules are one unit that pretends to be two."""
    graph, _ = _harness_graph()
    assert not _cycles(graph), "\n".join(" <-> ".join(c) for c in _cycles(graph))


def _private_reach_ins(path: Path, harness_modules: set[str], rel: str | None = None) -> list[str]:
    """`from harness.x import _y`, `x._y` on an imported harness module, and `obj._y` / getattr(obj,
    "_y") where this module defines no `_y` (a private name of another module's object)."""
    tree = ast.parse(path.read_text(), str(path))
    rel = rel or path.relative_to(ROOT)
    own: set[str] = set()
    aliases: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("harness"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{rel}:{node.lineno}: from {node.module} import {a.name}")
                elif f"{node.module}.{a.name}" in harness_modules:
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name.startswith("harness"))
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                out.append(f"{rel}:{node.lineno}: {node.value.id}.{node.attr}")
                continue
            name = node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr", "delattr") and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and node.args[1].value.startswith("_") and not node.args[1].value.startswith("__")):
            name = node.args[1].value
        if name and name not in own and name not in NAMEDTUPLE_API:
            out.append(f"{rel}:{node.lineno}: .{name} (defined by another module)")
    return out


def test_no_private_name_crosses_a_module():
    """A leading underscore means "this module's own": no other module imports, reads or assigns it.
    Shared things get a public name in the module that owns them."""
    _, paths = _harness_graph()
    bad = [line for path in paths.values() for line in _private_reach_ins(path, set(paths))]
    assert not bad, "\n".join(bad)


def test_the_guards_see_a_cycle_and_a_reach_in(tmp_path):
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    f = tmp_path / "sample.py"
    f.write_text("from harness.runner import engines\nfrom harness.model.azure.skus import _x\n"
                 "def f(c):\n    c._mine = 1\n    return c._server_version, engines._run, getattr(c, '_y'), c._mine\n")
    found = _private_reach_ins(f, {"harness.runner.engines"}, rel="sample.py")
    assert sorted(line.split(": ", 1)[1] for line in found) == sorted([
        "from harness.model.azure.skus import _x", "engines._run",
        "._server_version (defined by another module)", "._y (defined by another module)"])
