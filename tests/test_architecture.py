"""The library's import graph is a DAG of concept packages, and the library never imports the CLI.

Every import counts, at module level and inside functions (a cycle hidden in a function is still a
cycle), read from the source with ast so nothing has to be importable.
"""

from __future__ import annotations

import ast
from pathlib import Path

import semrel

SRC = Path(semrel.__file__).resolve().parent
# Lowest first: a package may import itself and those before it, never one after it.
LAYERS = ["core", "formats", "evaluation", "encoding", "retrieval", "judging", "golden", "analysis", "review",
          "report", "doctor", "cli", "api"]
CORE = {"cjk", "errors", "interrupts", "records", "progress", "resources", "terminal"}


def module_name(path: Path) -> str:
    parts = ("semrel",) + path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in SRC.rglob("*.py")}


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The semrel modules `name` imports (a name imported from a package counts as that submodule when it is one)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "semrel"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "semrel":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    return found - {name}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "api"  # semrel/__init__: the public API, loaded lazily, on top of the packages it names
    if parts[1] == "__main__":
        return "cli"
    return "core" if parts[1] in CORE else parts[1]


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (as a path), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_every_package_is_placed_in_a_layer():
    assert {layer(m) for m in modules()} <= set(LAYERS)


def test_no_module_imports_in_a_cycle():
    assert cycle(graph()) is None


def test_no_package_imports_one_above_it_and_the_library_never_imports_the_cli():
    upward = sorted(f"{m} -> {t}" for m, targets in graph().items() for t in targets
                    if LAYERS.index(layer(t)) > LAYERS.index(layer(m)))
    assert upward == []


def test_docs_architecture_names_every_core_module_and_package():
    """docs/architecture.md's table is where a reader looks a module up: cjk and interrupts were core but not in it."""
    rows = [line.split("|")[1:3] for line in (SRC.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `")]
    cells = {first.strip().split("`")[1].rstrip("/"): what for first, what in rows}
    assert sorted(m for m in CORE if f"`{m}`" not in cells["semrel"]) == []
    assert sorted(set(LAYERS) - {"core", "api"} - set(cells)) == []


def test_the_checker_finds_a_hidden_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
