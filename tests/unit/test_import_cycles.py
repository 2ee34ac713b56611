"""No two modules of tuiperf import each other, not even through the imports that
`lint-imports` lets pass inside one floor: imports inside functions and under
`if TYPE_CHECKING:` count as much as the ones at the top of a module.

Every module under tuiperf/ is parsed with `ast` (nothing is imported); each `import
tuiperf...` / `from tuiperf... import ...` wherever it stands is an edge to the module it
names (`from tuiperf.load.ncu import rep` names the module `tuiperf.load.ncu.rep`; a name
that is no module, the package or module defining it). A strongly connected component of
more than one module is a cycle, and the test prints one path around it with the line of
each import. Dynamic imports (`importlib.import_module(f"...{name}")`) are not seen.
"""

from __future__ import annotations

import ast
import itertools
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "tuiperf"

#: Cycles known today, each the exact set of modules of one strongly connected component.
#: Empty since analysis/'s was broken (trace_ctx.TraceCtx below steps and step_budget,
#: context.Ctx above them): a test below fails on an entry that no longer matches. Never
#: add one.
ALLOWED: tuple[frozenset[str], ...] = ()


@dataclass(frozen=True)
class Edge:
    line: int
    where: str  # "module", "function" or "TYPE_CHECKING"


Graph = dict[str, dict[str, Edge]]


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(name: str, modules: set[str]) -> str | None:
    """The module `name` is, or the closest enclosing one (a name defined in a module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module, package: str) -> list[tuple[str, int, str]]:
    """(dotted name, line, where) of every import in the tree, at any depth."""
    out: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, where: str) -> None:
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno, where) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, `level - 1` floors up
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            out.extend((f"{base}.{a.name}", node.lineno, where) for a in node.names)
        for child in ast.iter_child_nodes(node):
            if isinstance(node, ast.If) and _is_type_checking(node) and child in node.body:
                visit(child, "TYPE_CHECKING")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                visit(child, "function" if where == "module" else where)
            else:
                visit(child, where)

    visit(tree, "module")
    return out


def import_graph(root: Path = PACKAGE) -> Graph:
    files = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    modules = set(files)
    graph: Graph = {m: {} for m in modules}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for name, line, where in _imports(ast.parse(path.read_text(), str(path)), package):
            if name.split(".")[0] != root.name:
                continue
            target = _resolve(name, modules)
            if target is not None and target != mod:
                graph[mod].setdefault(target, Edge(line, where))
    return graph


def components(graph: Graph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp.add(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        found.append(frozenset(comp))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return found


def cycle_path(graph: Graph, comp: frozenset[str]) -> list[str]:
    """One shortest way around the component, from its first module back to it."""
    start = min(comp)
    came: dict[str, str] = {}
    todo = deque([start])
    while todo:
        v = todo.popleft()
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came[path[-1]])
                return [*reversed(path), start]
            if w in comp and w not in came:
                came[w] = v
                todo.append(w)
    raise AssertionError(f"no cycle through {start}")  # a component always has one


def describe(graph: Graph, comp: frozenset[str]) -> str:
    path = cycle_path(graph, comp)
    head = f"{len(comp)} modules import each other: {', '.join(sorted(comp))}"
    steps = [
        f"  {a} -> {b}  (line {graph[a][b].line}, {graph[a][b].where})"
        for a, b in itertools.pairwise(path)
    ]
    return "\n".join([head, "for example:", *steps])


def test_no_import_cycles() -> None:
    graph = import_graph()
    new = [c for c in components(graph) if c not in ALLOWED]
    report = "\n\n".join(describe(graph, c) for c in new)
    print(report)
    assert not new, f"import cycles (break them; never allow-list them):\n\n{report}"


def test_the_allow_list_holds_only_cycles_that_exist() -> None:
    found = set(components(import_graph()))
    stale = [sorted(c) for c in ALLOWED if c not in found]
    assert not stale, f"no longer a cycle as listed: update or remove ALLOWED entries {stale}"


# --- the checker itself, on small packages written here -----------------------------------


def _package(tmp: Path, files: dict[str, str]) -> Path:
    root = tmp / "pkg"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("b_text", "where"),
    [
        ("from pkg.a import X\n", "module"),
        ("def f():\n    from pkg import a\n", "function"),
        ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n",
         "TYPE_CHECKING"),
        ("class C:\n    def m(self):\n        from . import a\n", "function"),
    ],
)  # fmt: skip
def test_every_kind_of_import_closes_a_cycle(tmp_path: Path, b_text: str, where: str) -> None:
    files = {"a.py": "from pkg.b import f\nX = 1\n", "b.py": b_text, "c.py": "import pkg.a\n"}
    root = _package(tmp_path, {"__init__.py": "", **files})
    graph = import_graph(root)
    assert components(graph) == [frozenset({"pkg.a", "pkg.b"})]
    text = describe(graph, components(graph)[0])
    assert "pkg.a -> pkg.b  (line 1, module)" in text
    assert "pkg.b -> pkg.a  (line " in text and f", {where})" in text


def test_a_chain_is_no_cycle(tmp_path: Path) -> None:
    files = {"a.py": "from pkg import b\n", "b.py": "def f():\n    import pkg.c\n"}
    root = _package(tmp_path, {"__init__.py": "", "c.py": "import os\n", **files})
    assert components(import_graph(root)) == []


def test_a_long_cycle_is_printed_as_a_path(tmp_path: Path) -> None:
    files = {
        "sub/a.py": "from pkg.sub.b import x\n",
        "sub/b.py": "from pkg.sub import c\nx = 1\n",
        "sub/c.py": "def f():\n    from pkg.sub.a import y\n",
    }
    root = _package(tmp_path, {"__init__.py": "", "sub/__init__.py": "", **files})
    graph = import_graph(root)
    (comp,) = components(graph)
    assert cycle_path(graph, comp) == ["pkg.sub.a", "pkg.sub.b", "pkg.sub.c", "pkg.sub.a"]
