"""The package's imports point one way: down the layers, no cycles, the SDK only behind
llm/client.py, the terminal libraries only in the UI. Read from the source with `ast`, so an
import under TYPE_CHECKING or inside a function counts as much as one at the top of a file."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "mini_claude"
PACKAGE = PACKAGE_DIR.name
SDK = "anthropic"
SDK_MODULE = f"{PACKAGE}.llm.client"
TERMINAL_LIBRARIES = ("rich", "prompt_toolkit")
FRONT_ENDS = (f"{PACKAGE}.ui", f"{PACKAGE}.cli")  # the only places that draw on the terminal
DYNAMIC_IMPORTERS = ("import_module", "__import__")
# Bottom to top: a module imports only from its own layer and the layers below it
# (docs/architecture.md draws them).
LAYERS = ("core", "llm", "safety", "sessions", "memory", "tools", "extensions", "agent", "app", "ui", "cli")
TOP_LEVEL_MODULES = {PACKAGE: "core", f"{PACKAGE}.__main__": "cli"}
# Loops someone is taking apart now; each must go from here once it is gone from the code.
KNOWN_CYCLES: list[list[str]] = []


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE_DIR.rglob("*.py"))}


def imports_in(source: str, name: str, *, is_package: bool = False) -> Iterator[str]:
    """Every module the source of module `name` imports, wherever the import stands (top level,
    TYPE_CHECKING, a function), plus `importlib.import_module("…")` and `__import__("…")` of a literal."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `.x` in mini_claude.a.b is mini_claude.a.x
                parts = name.split(".")
                base = ".".join([*parts[: len(parts) - node.level + is_package], *([base] if base else [])])
            yield base
            # `from package import module` imports the module as well as the package.
            yield from (f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in DYNAMIC_IMPORTERS
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            yield node.args[0].value


@functools.cache  # each module parsed once for all the rules below, not once per rule
def imported_names(name: str) -> frozenset[str]:
    path = MODULES[name]
    return frozenset(
        imports_in(path.read_text(encoding="utf-8"), name, is_package=path.name == "__init__.py")
    )


def is_within(module: str, top: str) -> bool:
    return module == top or module.startswith(top + ".")


def own_imports(name: str) -> set[str]:
    return {imported for imported in imported_names(name) if imported in MODULES and imported != name}


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for neighbour in sorted(graph[node]):
            if neighbour not in index:
                visit(neighbour)
                low[node] = min(low[node], low[neighbour])
            elif neighbour in on_stack:
                low[node] = min(low[node], index[neighbour])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


HIDDEN_IMPORTS = """
from typing import TYPE_CHECKING
import importlib

if TYPE_CHECKING:
    from pkg.typing_only import Thing

def later():
    import pkg.lazy
    from . import sibling
    from ..up import other
    return importlib.import_module("pkg.dynamic"), __import__("pkg.dunder")
"""


def test_the_checker_sees_every_kind_of_import() -> None:
    """The rules below are only as good as what `imports_in` finds: the places an import hides."""
    found = set(imports_in(HIDDEN_IMPORTS, "pkg.sub.mod"))
    assert {
        "pkg.typing_only",
        "pkg.lazy",
        "pkg.sub.sibling",
        "pkg.up.other",
        "pkg.dynamic",
        "pkg.dunder",
    } <= found
    assert "pkg.sub.sibling" in set(imports_in("from . import sibling", "pkg.sub", is_package=True))
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def describe_cycle(group: list[str], graph: dict[str, set[str]]) -> str:
    edges = "; ".join(f"{m} → {', '.join(sorted(graph[m] & set(group)))}" for m in group)
    return f"{' ↔ '.join(group)}  ({edges})"


def test_no_import_cycles() -> None:
    graph = {name: own_imports(name) for name in MODULES}
    cycles = import_cycles(graph)
    described = [describe_cycle(group, graph) for group in cycles if group not in KNOWN_CYCLES]
    assert not described, "modules that import each other, directly or round a loop:\n" + "\n".join(described)
    gone = [group for group in KNOWN_CYCLES if group not in cycles]
    assert not gone, f"no longer a loop, so take it out of KNOWN_CYCLES: {gone}"


@pytest.mark.parametrize("name", [name for name in MODULES if MODULES[name].name == "__init__.py"])
def test_package_inits_import_nothing_of_ours(name: str) -> None:
    """Importing any module runs its package's __init__ first: one that imports siblings is how a
    loop (and a lazy `__getattr__` to dodge it) starts."""
    assert not own_imports(name), f"{name} imports {sorted(own_imports(name))}"


def test_only_llm_imports_the_sdk() -> None:
    importers = sorted(
        name
        for name in MODULES
        if name != SDK_MODULE and any(is_within(m, SDK) for m in imported_names(name))
    )
    assert not importers, f"{SDK} imported outside {SDK_MODULE}: {importers}"


def test_the_agent_core_never_imports_terminal_libraries() -> None:
    importers = sorted(
        f"{name} → {imported}"
        for name in MODULES
        if not any(is_within(name, front_end) for front_end in FRONT_ENDS)
        for imported in imported_names(name)
        if any(is_within(imported, library) for library in TERMINAL_LIBRARIES)
    )
    assert not importers, f"terminal libraries imported outside {', '.join(FRONT_ENDS)}: {importers}"


def layer_of(module: str) -> int:
    """The index in LAYERS of a module's layer: its first package below `mini_claude`."""
    if module in TOP_LEVEL_MODULES:
        return LAYERS.index(TOP_LEVEL_MODULES[module])
    return LAYERS.index(module.split(".")[1])


def test_every_module_sits_in_a_layer() -> None:
    strays = [name for name in MODULES if name not in TOP_LEVEL_MODULES and name.split(".")[1] not in LAYERS]
    assert not strays, f"modules outside the layers {LAYERS}: {strays}"


def test_layers_import_only_downwards() -> None:
    upward = sorted(
        f"{name} ({LAYERS[layer_of(name)]}) → {imported} ({LAYERS[layer_of(imported)]})"
        for name in MODULES
        for imported in own_imports(name)
        if imported != PACKAGE and layer_of(imported) > layer_of(name)
    )
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def test_the_layer_rule_sees_an_upward_import() -> None:
    core, agent, ui = (layer_of(f"{PACKAGE}.{name}") for name in ("core.events", "agent.loop", "ui.repl"))
    assert core < agent < ui
    assert layer_of(f"{PACKAGE}.__main__") == LAYERS.index("cli")
