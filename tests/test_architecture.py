"""The packages depend one way: no import cycle between modules, a pure core, judges resolved once.

Imports are read from the source (module level and inside functions alike), so a cycle hidden
behind a function-level import fails here too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGES = ("gd_assets", "corpora_build")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((REPO / package).rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """First-party modules `name` imports; `from pkg import sub` counts as importing `pkg.sub`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(name, path, set(mods)) for name, path in mods.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_finds_a_planted_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycle_between_modules():
    edges = graph()
    assert len(edges) > 50 and sum(map(len, edges.values())) > 100   # the graph was really read
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_the_core_imports_only_the_core():
    outside = {(name, dep) for name, deps in graph().items() if name.startswith("gd_assets.core")
               for dep in deps if not dep.startswith("gd_assets.core")}
    assert outside == set()


def test_the_corpus_builder_reads_only_the_core_and_the_data_home():
    """`corpora_build` writes what `gd_assets.core.corpus` reads; it never reaches the analysis shell."""
    allowed = ("gd_assets.core", "gd_assets.home")
    reached = {(name, dep) for name, deps in graph().items() if name.startswith("corpora_build")
               for dep in deps if dep.startswith("gd_assets") and not dep.startswith(allowed)}
    assert reached == set()


def test_judge_names_resolve_in_one_registry():
    from gd_assets.cli import parser
    from gd_assets.core.judges import judge_names

    assert judge_names() == ["evidence", "openai", "vllm"]
    analyze = parser()._subparsers._group_actions[0].choices["analyze"]
    [judge] = [a for a in analyze._actions if a.dest == "judge"]
    assert list(judge.choices) == judge_names()
    sources = "\n".join(p.read_text() for p in modules().values())
    assert sources.count('"vllm"') <= 2   # its own class, and nowhere else by name
