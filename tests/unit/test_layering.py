"""The import graph of ``src/fabline`` has no cycles and no upward edges (docs/architecture.md).

The graph is read from the source with :mod:`ast`: every ``import`` and ``from ... import`` of a
``fabline`` module counts, at module level, inside functions (lazy imports) and under
``TYPE_CHECKING`` alike, since each is a dependency of the importing module. The rules below are
about layers (which package may depend on which), not a list of today's imports, so a new module
is checked without editing this file.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "fabline"

#: (importer prefix, imported prefixes it must not depend on, why).
RULES: list[tuple[str, tuple[str, ...], str]] = [
    (
        "fabline.checks",
        ("fabline.engine", "fabline.runner", "fabline.reports", "fabline.history", "fabline.collect"),
        "checks see only the check interface and its helpers",
    ),
    (
        "fabline.reports",
        (
            "fabline.history",
            "fabline.inventory",
            "fabline.snapshot",
            "fabline.runner",
            "fabline.engine",
            "fabline.collect",
        ),
        "reporters render the run record and the context they are given",
    ),
    (
        "fabline.record",
        (
            "fabline.engine",
            "fabline.runner",
            "fabline.reports",
            "fabline.history",
            "fabline.inventory",
            "fabline.snapshot",
            "fabline.collect",
        ),
        "the run record is the results layer",
    ),
    (
        "fabline.results",
        ("fabline.engine", "fabline.runner", "fabline.reports", "fabline.history", "fabline.record"),
        "results are below the run record",
    ),
    (
        "fabline.engine",
        ("fabline.runner", "fabline.reports", "fabline.history"),
        "the engine returns results",
    ),
    ("fabline.history", ("fabline.runner",), "history stores and compares runs; the runner uses it"),
]
#: Packages whose modules read no file and no database (pure functions of what they are given).
PURE_PACKAGES = ("fabline.reports",)
#: Names a pure module must not call or import: they read files or databases.
_IO_CALLS = {"open", "read_text", "read_bytes", "connect", "iterdir", "glob", "rglob"}
_IO_MODULES = {"sqlite3", "shelve", "dbm"}


def _modules() -> dict[str, Path]:
    mods = {}
    for f in SRC.rglob("*.py"):
        parts = list(f.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    return mods


def _is_cli(module: str) -> bool:
    """CLI modules (``fabline.cli``, as ANTA's ``cli/``) sit on top of everything: they may import the runner."""
    return _under(module, "fabline.cli") or module == "fabline.__main__"


@functools.cache
def _graph() -> dict[str, set[str]]:
    mods = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {}
    for module, path in mods.items():
        out: set[str | None] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                out.update(resolve(a.name) for a in node.names if a.name.split(".")[0] == "fabline")
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module.split(".")[0] != "fabline":
                    continue
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    out.add(full if full in mods else resolve(node.module))
        out.discard(None)
        out.discard(module)
        edges[module] = {m for m in out if m is not None}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = set()
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.add(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    found.append(frozenset(comp))
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def test_the_graph_is_read() -> None:
    edges = _graph()
    assert "fabline.engine.core" in edges and "fabline.checks" in edges["fabline.engine.core"]
    assert "fabline.record" in edges["fabline.reports"]


def test_no_import_cycles() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles: " + "; ".join(" <-> ".join(sorted(c)) for c in cycles)


@pytest.mark.parametrize(("importer", "forbidden", "why"), RULES, ids=[r[0] for r in RULES])
def test_no_upward_edges(importer: str, forbidden: tuple[str, ...], why: str) -> None:
    edges = _graph()
    bad = sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        if _under(a, importer) and not _is_cli(a)
        for b in targets
        if any(_under(b, f) for f in forbidden)
    )
    assert bad == [], f"{why}: {bad}"


def test_only_cli_modules_import_the_runner_or_a_cli_module() -> None:
    edges = _graph()
    bad = sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        if not _is_cli(a) and a != "fabline.runner"
        for b in targets
        if b == "fabline.runner" or _is_cli(b)
    )
    assert bad == [], f"feature packages do not import the runner or the CLI: {bad}"


def test_reporters_read_no_file_or_database() -> None:
    bad = []
    for module, path in _modules().items():
        if not any(_under(module, p) for p in PURE_PACKAGES):
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                bad += [f"{module} imports {n}" for n in names if n.split(".")[0] in _IO_MODULES]
            elif isinstance(node, ast.Call):
                fn = node.func
                name = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
                if name in _IO_CALLS:
                    bad.append(f"{module}:{node.lineno} calls {name}")
    # The writer registry writes the finished files (reports/__init__: tmp.write_bytes); reading is
    # what is forbidden.
    assert bad == [], bad


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The checker itself: a cycle in a made-up graph is found, an edge into it is not one."""
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [frozenset({"a", "b", "c"})]
    assert _is_cli("fabline.cli.history") and not _is_cli("fabline.history.store")
    assert not _is_cli("fabline.history.cli") and not _is_cli("fabline.client")


def test_every_module_can_be_imported_first() -> None:
    """No partially initialised module at run time: each module imported first, in a fresh interpreter.

    The graph above follows names; Python also runs a package's ``__init__`` before any of its
    modules (``fabline.state`` importing ``fabline.platforms.spec`` runs ``fabline/platforms/__init__``).
    One interpreter imports every module in turn, each after forgetting every fabline module.
    """
    import subprocess
    import sys

    mods = sorted(m for m in _modules() if m != "fabline.__main__")
    script = (
        "import importlib, sys\n"
        "bad = []\n"
        f"for name in {mods!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'fabline' or m.startswith('fabline.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as exc:\n"
        "        bad.append(f'{name}: {exc}')\n"
        "print('\\n'.join(bad))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True
    )
    assert out.stdout.strip() == "", out.stdout


#: Where worker processes are started: one module owns the fork pool and its thresholds.
PROCESS_OWNER = "fabline.perf"
#: Modules and names that start processes running Python (subprocess runs other programs: not listed).
_PROCESS_MODULES = {"multiprocessing", "concurrent.futures.process"}
_PROCESS_NAMES = {"fork", "forkpty", "ProcessPoolExecutor", "Pool", "Process"}


def _process_starts(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "multiprocessing"]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] == "multiprocessing" or (
                node.module in _PROCESS_MODULES | {"concurrent.futures"}
                and any(a.name in _PROCESS_NAMES for a in node.names)
            ):
                found.append(f"from {node.module} import {', '.join(a.name for a in node.names)}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _PROCESS_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id in {"os", "multiprocessing", "pty"}
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_only_perf_starts_worker_processes() -> None:
    """One fork pool (issue 12): the check, diff, re-parse, renderer, report writers and finisher use perf's."""
    bad = {
        module: starts
        for module, path in _modules().items()
        if module != PROCESS_OWNER and (starts := _process_starts(path))
    }
    assert bad == {}, f"only {PROCESS_OWNER} starts worker processes: {bad}"
    assert _process_starts(_modules()[PROCESS_OWNER]), "the rule reads nothing: perf itself starts none?"


def test_only_perf_switches_the_garbage_collector() -> None:
    """One garbage-collector helper (issue 12): pauses, batched passes and freezes live in fabline.perf."""
    switches = {"disable", "enable", "freeze", "unfreeze"}
    bad = sorted(
        f"{module}: gc.{node.attr}"
        for module, path in _modules().items()
        if module != PROCESS_OWNER
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in switches
        and isinstance(node.value, ast.Name)
        and node.value.id == "gc"
    )
    assert bad == [], f"only {PROCESS_OWNER} switches the garbage collector: {bad}"
