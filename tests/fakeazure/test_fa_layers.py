"""The fake's layering: transports -> state -> dispatch -> handlers -> models.

Nothing below the dispatcher imports ``fakeazure.state``, fakeazure imports nothing from
``harness``, and no module calls another object's underscore attribute."""
from __future__ import annotations

import ast
import pathlib

PKG = pathlib.Path(__file__).resolve().parents[2] / "fakeazure"
# The modules above the dispatcher: they build or serve a FakeAzure.
ABOVE_DISPATCH = {"state.py", "__init__.py", "__main__.py", "mock.py", "server.py", "clients.py"}
# Underscore names that are public API of their owners (namedtuple, the responses library).
ALLOWED_PRIVATE = {"_asdict", "_real_send"}


def _modules():
    for p in sorted(PKG.rglob("*.py")):
        yield p, ast.parse(p.read_text(), str(p))


def _imports(tree: ast.AST, path: pathlib.Path) -> set[str]:
    pkg_parts = ["fakeazure"] + list(path.relative_to(PKG).parent.parts)
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            base = pkg_parts[: len(pkg_parts) - n.level + 1] if n.level else []
            mod = ".".join(base + ([n.module] if n.module else []))
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in n.names}
    return out


def test_nothing_below_dispatch_imports_state():
    offenders = [str(p.relative_to(PKG)) for p, tree in _modules()
                 if p.name not in ABOVE_DISPATCH or p.parent != PKG
                 if "fakeazure.state" in _imports(tree, p)]
    assert offenders == []


def test_fakeazure_imports_nothing_from_harness():
    offenders = [str(p.relative_to(PKG)) for p, tree in _modules()
                 if any(m == "harness" or m.startswith("harness.") for m in _imports(tree, p))]
    assert offenders == []


def test_no_module_reaches_into_another_objects_underscore_attributes():
    offenders = []
    for p, tree in _modules():
        for n in ast.walk(tree):
            if (isinstance(n, ast.Attribute) and n.attr.startswith("_") and not n.attr.startswith("__")
                    and n.attr not in ALLOWED_PRIVATE
                    and not (isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"))):
                offenders.append(f"{p.relative_to(PKG)}:{n.lineno}: {ast.unparse(n)}")
    assert offenders == []


def test_handlers_take_a_context_not_the_state():
    """Every ARM/prices handler's first parameter is ``ctx``."""
    from fakeazure.dispatch import ROUTES
    bad = [f"{h.__module__}.{h.__name__}" for _m, _rx, h, _op, service in ROUTES
           if service != "control" and h.__code__.co_varnames[0] != "ctx"]
    assert bad == []
