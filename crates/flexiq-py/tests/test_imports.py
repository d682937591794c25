"""The package's modules import on their own, and no two of them import each other: the
runtime import graph of ``flexiq`` (imports inside ``if TYPE_CHECKING:`` are for type
checkers only and do not count; imports inside functions do) has no cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set

import pytest

import flexiq

PACKAGE = Path(flexiq.__file__).resolve().parent
CORE = ["flexiq.queue", "flexiq.task", "flexiq.worker", "flexiq.result"]


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> Dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(name: str, path: Path, known: Set[str]) -> Set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: Set[str] = set()

    def add(target: str) -> None:
        # importing a.b.c runs a.b (and a) first; the root package imports everything by design
        parts = target.split(".")
        for i in range(2, len(parts) + 1):
            mod = ".".join(parts[:i])
            if mod in known and mod != name:
                found.add(mod)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            add(module)
            for alias in node.names:
                add(f"{module}.{alias.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(), str(path)))
    return found


def _graph() -> Dict[str, Set[str]]:
    mods = _modules()
    known = set(mods)
    return {name: _runtime_imports(name, path, known) for name, path in mods.items()}


def _cycles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    cycles: List[List[str]] = []
    state: Dict[str, int] = {}
    stack: List[str] = []

    def walk(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m) :] + [m])
            elif m not in state:
                walk(m)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            walk(n)
    return cycles


def test_the_graph_is_read_from_the_sources() -> None:
    graph = _graph()
    assert set(CORE) <= set(graph)
    assert "flexiq.result" in graph["flexiq.task"], "task imports JobResult at run time"
    assert "flexiq.task" in graph["flexiq.queue"] and "flexiq.worker" in graph["flexiq.queue"]


def test_the_cycle_finder_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_in_the_package() -> None:
    assert _cycles(_graph()) == []


def test_queue_task_worker_and_result_do_not_import_each_other_in_a_circle() -> None:
    graph = _graph()

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            n = todo.pop()
            for m in graph.get(n, ()):
                if m == goal:
                    return True
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return False

    for a in CORE:
        for b in CORE:
            if a != b and reaches(a, b):
                assert not reaches(b, a), f"{a} and {b} import each other"


# Registers the package without running its __init__ (which imports everything), so the
# module under test is the first flexiq module to load.
_ALONE = """
import importlib, importlib.util, sys
spec = importlib.util.spec_from_file_location("flexiq", {init!r}, submodule_search_locations=[{pkg!r}])
sys.modules["flexiq"] = importlib.util.module_from_spec(spec)
importlib.import_module({name!r})
"""


@pytest.mark.parametrize("name", sorted(n for n in _modules() if n != "flexiq"))
def test_each_module_imports_alone_in_a_fresh_interpreter(name: str) -> None:
    code = _ALONE.format(init=str(PACKAGE / "__init__.py"), pkg=str(PACKAGE), name=name)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
