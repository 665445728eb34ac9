"""The package's layering, read from the source with ``ast`` (nothing is imported).

Layers, lowest first; a module never imports one of a higher layer::

    core < games < agents < envs < train, arena < ui < cli

``tabletop_rl/__init__.py`` is the public face: it may import anything below ``cli``. A game package
(``games/<name>/``) never imports another game package, no two modules import each other in a circle,
and imports sit at the top of a module: inside a function only for the optional extras (torch,
openai, fastapi, ...), at the entry points that need them, and for matplotlib, which only the arena's
charts use. Imports under ``if TYPE_CHECKING:`` are not run, so they are left out. Every game package has
the same core files.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "tabletop_rl"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE

#: sub-package -> rank; a module may import modules of its own rank or lower.
LAYERS = {"core": 0, "games": 1, "agents": 2, "envs": 3, "train": 4, "arena": 4, "ui": 5, "cli": 6}
#: ``tabletop_rl/__init__.py``: above every layer but ``cli``.
ROOT_RANK = 5.5
#: Packages of the optional extras ([train], [llm], [llm-local], [serve], [dev], [openspiel], [textarena], [ray]):
#: imported inside the functions that need them, so the default install runs without them.
OPTIONAL = frozenset({"torch", "stable_baselines3", "sb3_contrib", "openai", "fastapi", "uvicorn", "httpx",
                      "pydantic", "yaml", "tensorboard", "moviepy", "pygame", "llama_cpp", "pyspiel", "open_spiel",
                      "textarena", "ray"})
#: Required packages that are slow to import and needed only at the end of a run (the arena's charts): imported
#: where they are used, so that every start (each command, each arena worker) skips them.
HEAVY = frozenset({"matplotlib"})
#: The files every ``games/<name>/`` package has.
GAME_FILES = frozenset({"rules.py", "game.py", "actions.py", "observe.py", "render.py", "baselines.py"})
#: Being rewritten elsewhere: not reported until then. An entry is a module (all of its violations) or
#: ``module:function`` (the function-level imports in that function); remove an entry once it is fixed.
PENDING: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # the module imported: a tabletop_rl module, or a top-level package name
    line: int
    function: str | None  # the enclosing function's name (innermost); None at module or class level

    @property
    def internal(self) -> bool:
        return self.target == PACKAGE or self.target.startswith(PACKAGE + ".")

    @property
    def where(self) -> str:
        return f"{relative(self.source)}:{self.line}"


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(SRC.rglob("*.py"))}


def relative(module: str) -> str:
    return MODULES[module].relative_to(SRC.parent.parent).as_posix()


def is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def resolve_from(module: str, node: ast.ImportFrom) -> list[str]:
    """The modules a ``from X import a, b`` statement in ``module`` loads: ``X.a`` where that is a module,
    else ``X``."""
    if node.level:
        package = module if is_package(module) else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{node.module}" if node.module else package
    else:
        base = node.module or ""
    if not (base == PACKAGE or base.startswith(PACKAGE + ".")):
        return [base.partition(".")[0]]
    targets = []
    for alias in node.names:
        sub = f"{base}.{alias.name}"
        targets.append(sub if sub in MODULES else base)
    return list(dict.fromkeys(targets))


def imports_of(module: str, source: str | None = None) -> list[Import]:
    """Every import statement of ``module`` (its file, or ``source`` in its place) that runs."""
    if source is None:
        source = MODULES[module].read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(MODULES[module]))
    found: list[Import] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, ast.If) and is_type_checking(node.test):
            for child in node.orelse:  # only the else branch runs
                visit(child, function)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                target = name if name.startswith(PACKAGE + ".") or name == PACKAGE else name.partition(".")[0]
                found.append(Import(module, target, node.lineno, function))
        elif isinstance(node, ast.ImportFrom):
            for target in resolve_from(module, node):
                found.append(Import(module, target, node.lineno, function))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            function = getattr(node, "name", "<lambda>")
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, None)
    return found


IMPORTS = {module: imports_of(module) for module in MODULES}


def pending(module: str, function: str | None = None) -> bool:
    return module in PENDING or (function is not None and f"{module}:{function}" in PENDING)


def layer(module: str) -> tuple[str, float]:
    if module == PACKAGE:
        return "the package root", ROOT_RANK
    name = module.split(".")[1]
    return name, LAYERS[name]


def game_package(module: str) -> str | None:
    """The game package (``games/<name>/``) that ``module`` belongs to; None outside one (``games/registry.py``
    is the games layer's own module, not a game)."""
    parts = module.split(".")
    package = ".".join(parts[:3])
    return parts[2] if len(parts) > 2 and parts[1] == "games" and package in MODULES and is_package(package) else None


def runtime_graph() -> dict[str, dict[str, int]]:
    """module -> {imported tabletop_rl module: first line}: every import that runs (function-level ones too)."""
    graph: dict[str, dict[str, int]] = {module: {} for module in MODULES}
    for module, imports in IMPORTS.items():
        for imp in imports:
            if imp.internal and imp.target != module:
                graph[module].setdefault(imp.target, imp.line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                connect(v)
    finally:
        sys.setrecursionlimit(limit)

    found = []
    for component in components:
        members = set(component)
        start = component[0]
        # shortest path back to start within the component (breadth first)
        parent: dict[str, str | None] = {start: None}
        queue = [start]
        end = None
        while queue and end is None:
            v = queue.pop(0)
            for w in sorted(graph[v]):
                if w == start:
                    end = v
                    break
                if w in members and w not in parent:
                    parent[w] = v
                    queue.append(w)
        path = []
        node: str | None = end
        while node is not None:
            path.append(node)
            node = parent[node]
        found.append(path[::-1] + [start])
    return found


def fail_with(title: str, problems: list[str]) -> None:
    if problems:
        pytest.fail(f"{title} ({len(problems)}):\n  " + "\n  ".join(problems), pytrace=False)


def test_the_source_is_found():
    assert f"{PACKAGE}.cli" in MODULES and f"{PACKAGE}.core.game" in MODULES
    for module in MODULES:
        if module != PACKAGE:
            assert module.split(".")[1] in LAYERS, f"{relative(module)} is in no layer; add it to LAYERS"


def test_the_reader_resolves_imports():
    source = """
from typing import TYPE_CHECKING
import numpy as np
import tabletop_rl.core.game
from tabletop_rl.games.space_conquest import observe as O, rules
from tabletop_rl.games import GAMES
from . import actions
if TYPE_CHECKING:
    from tabletop_rl.ui import terminal
else:
    import json
def f():
    import torch
    from tabletop_rl.agents import make_policy
"""
    found = {(imp.target, imp.function) for imp in imports_of("tabletop_rl.games.space_conquest.render", source)}
    game = "tabletop_rl.games.space_conquest"
    assert found == {("typing", None), ("numpy", None), ("tabletop_rl.core.game", None), (f"{game}.observe", None),
                     (f"{game}.rules", None), ("tabletop_rl.games", None), (f"{game}.actions", None), ("json", None),
                     ("torch", "f"), ("tabletop_rl.agents", "f")}
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1, "d": 1}, "d": {}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_cycles():
    graph = runtime_graph()
    problems = []
    for cycle in cycles(graph):
        if any(pending(module) for module in cycle):
            continue
        steps = [f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
        problems.append(" -> ".join(steps + [cycle[-1]]))
    fail_with("import circles", problems)


def test_lower_layers_do_not_import_higher_ones():
    problems = []
    for module, imports in IMPORTS.items():
        if pending(module):
            continue
        name, rank = layer(module)
        for imp in imports:
            if not imp.internal:
                continue
            target_name, target_rank = layer(imp.target)
            if target_rank > rank:
                problems.append(f"{imp.where}: {module} ({name}, layer {rank:g}) imports {imp.target} "
                                f"({target_name}, layer {target_rank:g})")
    fail_with("imports from a lower layer into a higher one", problems)


def test_games_do_not_import_each_other():
    problems = []
    for module, imports in IMPORTS.items():
        own = game_package(module)
        if own is None or pending(module):
            continue
        for imp in imports:
            other = game_package(imp.target) if imp.internal else None
            if other is not None and other != own:
                problems.append(f"{imp.where}: {module} (game {own!r}) imports {imp.target} (game {other!r})")
    fail_with("game packages importing another game package", problems)


def extra_entry_points() -> set[str]:
    """Modules that import an optional extra at their top: each is that extra's entry point."""
    return {module for module, imports in IMPORTS.items()
            if any(imp.function is None and imp.target in OPTIONAL for imp in imports if not imp.internal)}


def test_imports_are_at_module_level():
    """Only an optional extra, or a module of ours that is an extra's entry point, may be imported inside a
    function (where the extra is first needed)."""
    lazy = OPTIONAL | HEAVY | extra_entry_points()
    problems = []
    for module, imports in IMPORTS.items():
        for imp in imports:
            if imp.function is None or pending(module, imp.function):
                continue
            if imp.target not in lazy:
                problems.append(f"{imp.where}: imports {imp.target} inside {imp.function}()")
    fail_with("function-level imports of tabletop_rl modules or non-optional packages (move them to the top; "
              f"only {', '.join(sorted(OPTIONAL | HEAVY))} and modules importing them may load lazily)", problems)


def test_default_install_does_not_need_the_extras():
    """A module importing an optional extra at its top is that extra's entry point: no module imports it
    at its top (the command line loads it by name, on demand)."""
    needs_extra = extra_entry_points()
    problems = []
    for module, imports in IMPORTS.items():
        for imp in imports:
            if imp.function is None and imp.target in needs_extra and not pending(module):
                problems.append(f"{imp.where}: imports {imp.target}, which needs an optional extra")
    fail_with("modules loading an optional extra's entry point at import", problems)


def test_every_game_has_the_core_files():
    games = sorted(path for path in (SRC / "games").iterdir() if (path / "__init__.py").is_file())
    assert games, "no game packages found"
    problems = [f"{game.relative_to(SRC.parent.parent).as_posix()}/ lacks {', '.join(sorted(missing))}"
                for game in games if (missing := GAME_FILES - {p.name for p in game.glob("*.py")})]
    fail_with(f"game packages without the core files ({', '.join(sorted(GAME_FILES))})", problems)


def test_pending_entries_still_exist():
    """Each PENDING entry names a module (and function) that exists, so none outlives its file."""
    for entry in PENDING:
        module, _, function = entry.partition(":")
        assert module in MODULES, f"PENDING names {module}, which is gone: remove it"
        if function:
            assert any(imp.function == function for imp in IMPORTS[module]), (
                f"{entry} has no function-level import left: remove it from PENDING")


# --- the public surface: every module says what it exports ---------------------------------------------------
def bound_names(body: list[ast.stmt]) -> set[str]:
    """The names a module's top level binds: definitions, assignments, imports (also inside ``if``/``try``)."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).partition(".")[0] for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.If) and not is_type_checking(node.test):
            names |= bound_names(node.body) | bound_names(node.orelse)
        elif isinstance(node, ast.Try):
            names |= bound_names(node.body) | bound_names(node.orelse) | bound_names(node.finalbody)
            for handler in node.handlers:
                names |= bound_names(handler.body)
    return names


def literal_strings(node: ast.expr) -> list[str] | None:
    """The strings of a literal list/tuple/set (or a dict's keys), None if it holds anything else."""
    if isinstance(node, ast.Dict):
        items: list[ast.expr | None] = list(node.keys)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = list(node.elts)
    else:
        return None
    if not all(isinstance(i, ast.Constant) and isinstance(i.value, str) for i in items):
        return None
    return [i.value for i in items if isinstance(i, ast.Constant)]


def exported(tree: ast.Module) -> tuple[list[str], set[str]] | None:
    """``(__all__, the names in it provided on first use)`` of a module, None if it has no ``__all__``.

    ``__all__`` is a literal list of strings, which may expand a module-level literal (``*_LAZY``): in a module
    with a ``__getattr__`` those names load on first use, so they need not be bound at import. There a starred
    name may also be computed (the package root's, from the game records): its names are not known here, and
    tests/games/test_registry.py checks them on import."""
    values = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name)}
    values.update({node.target.id: node.value for node in tree.body  # __all__: list[str] = []
                   if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value})
    node = values.get("__all__")
    if node is None:
        return None
    if not isinstance(node, (ast.List, ast.Tuple)):
        raise AssertionError(f"__all__ is not a literal list: {ast.unparse(node)}")
    names: list[str] = []
    lazy: set[str] = set()
    for item in node.elts:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            names.append(item.value)
            continue
        starred = item.value.id if isinstance(item, ast.Starred) and isinstance(item.value, ast.Name) else None
        lazy_module = "__getattr__" in bound_names(tree.body)
        expanded = literal_strings(values[starred]) if starred in values else None
        if expanded is None and starred in values and lazy_module:
            continue  # computed on import
        if expanded is None:
            raise AssertionError(f"__all__ holds {ast.unparse(item)}, which is not a string")
        names += expanded
        if lazy_module:
            lazy |= set(expanded)
    return names, lazy


def test_the_surface_reader():
    tree = ast.parse("import a.b\nfrom c import d as e\nif x:\n    f = 1\n_LAZY = {'g': 'm'}\n"
                     "def __getattr__(name): ...\n__all__ = ['d', 'e', 'f', *_LAZY]\n")
    assert bound_names(tree.body) == {"a", "e", "f", "_LAZY", "__getattr__", "__all__"}
    assert exported(tree) == (["d", "e", "f", "g"], {"g"})
    assert exported(ast.parse("x = 1")) is None
    computed = "_LAZY = dict(f())\ndef __getattr__(name): ...\n__all__ = ['a', *_LAZY]\n"
    assert exported(ast.parse(computed)) == (["a"], set())
    with pytest.raises(AssertionError, match=r"__all__ holds \*_LAZY"):
        exported(ast.parse(computed.replace("def __getattr__", "def other")))


def test_every_module_has_all():
    """Each module (package ``__init__`` files too) lists its public names in ``__all__``; a name it does not
    list is internal (docs/architecture.md, "The public surface")."""
    missing = [relative(module) for module, path in MODULES.items()
               if exported(ast.parse(path.read_text(encoding="utf-8"))) is None]
    fail_with("modules without __all__", missing)


def test_all_names_exist():
    """Every name in a module's ``__all__`` is defined or imported there (once)."""
    problems = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found = exported(tree)
        if found is None:
            continue
        names, lazy = found
        bound = bound_names(tree.body) | lazy
        problems += [f"{relative(module)}: __all__ names {name!r}, which it does not define"
                     for name in dict.fromkeys(names) if name not in bound]
        problems += [f"{relative(module)}: __all__ names {name!r} twice"
                     for name in sorted({n for n in names if names.count(n) > 1})]
    fail_with("__all__ entries that are not there", problems)
