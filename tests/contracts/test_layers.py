"""The package's layers hold: the import contract in pyproject.toml, and no module cycles.

The contract is import-linter's (``[tool.importlinter]``); every import counts, those inside
functions and those only for type checkers (``if TYPE_CHECKING:``) too, so neither a layer's
breach nor a cycle can hide behind a late import or an annotation: a room that needs a type
from above states what it reads as a ``Protocol`` of its own.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Module cycles still to be removed (each one's modules, sorted); the list only shrinks.
KNOWN_CYCLES: set[tuple[str, ...]] = set()


def _lint(root: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package found at ``root`` (its own pyproject's contract)."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
         "sys.exit(lint_imports_command())", "--no-cache"],
        cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
        timeout=300,
    )


def test_the_layers_contract_is_kept():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "BROKEN" not in result.stdout


def _copy(tmp_path: Path) -> Path:
    """The package and its contract, copied under ``tmp_path`` to be broken there."""
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    shutil.copytree(ROOT / "jupyter_analyst", copy / "jupyter_analyst",
                    ignore=shutil.ignore_patterns("__pycache__", "labextension", "*.pyc"))
    return copy


def test_an_upward_import_breaks_the_contract(tmp_path):
    """The contract catches what it is for: the store importing the server, in a copy."""
    copy = _copy(tmp_path)
    store = copy / "jupyter_analyst" / "store.py"
    if not store.exists():
        store = copy / "jupyter_analyst" / "store" / "__init__.py"
    store.write_text(store.read_text() + "\n\ndef _upward():\n    from jupyter_analyst.server import app  # noqa: F401\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "jupyter_analyst.server.app" in result.stdout and "BROKEN" in result.stdout


def test_an_upward_import_for_type_checkers_only_breaks_the_contract(tmp_path):
    """An annotation's import counts as any other: the guards naming the tools' ``ToolSpec``
    under ``if TYPE_CHECKING:`` (as they did) breaks the agent's rooms, in a copy."""
    copy = _copy(tmp_path)
    refusals = copy / "jupyter_analyst" / "agent" / "guards" / "refusals.py"
    refusals.write_text(refusals.read_text().replace(
        "if TYPE_CHECKING:\n", "if TYPE_CHECKING:\n    from ..tools import ToolBox  # noqa: F401\n", 1))
    result = _lint(copy)
    assert result.returncode != 0
    assert "jupyter_analyst.agent.guards.refusals -> jupyter_analyst.agent.tools" in result.stdout


def test_importing_a_module_of_sql_from_outside_breaks_its_face(tmp_path):
    """Other packages import ``jupyter_analyst.sql``'s names from its ``__init__``: a layer
    above reaching one of its modules breaks the face contract, in a copy."""
    copy = _copy(tmp_path)
    workspace = copy / "jupyter_analyst" / "workspace.py"
    workspace.write_text(workspace.read_text()
                         + "\n\ndef _deep():\n    from jupyter_analyst.sql.sources import open_source  # noqa: F401\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "Face: jupyter_analyst.sql is imported through its __init__ BROKEN" in result.stdout
    assert "jupyter_analyst.workspace -> jupyter_analyst.sql.sources" in result.stdout


@pytest.mark.parametrize(("module", "line", "broken"), [
    # A sibling reaching into a nested package: the kernel's session, past the sandbox's face.
    ("kernel/session.py", "from .sandbox.kernelspec import kernels_dir",
     "Face: jupyter_analyst.kernel.sandbox is imported through its __init__ BROKEN"),
    # The throwaway test services, imported by the package at all (even through their face).
    ("testing/in_process.py", "from .servers import jupyter", "Face: jupyter_analyst.testing.servers is imported by tests only BROKEN"),
])
def test_reaching_past_a_nested_face_breaks_its_contract(tmp_path, module, line, broken):
    copy = _copy(tmp_path)
    path = copy / "jupyter_analyst" / module
    path.write_text(path.read_text() + f"\n\ndef _deep():\n    {line}  # noqa: F401\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert broken in " ".join(result.stdout.split())  # the report wraps long names


def module_cycles(package: str = "jupyter_analyst") -> set[tuple[str, ...]]:
    """Each set of modules that import one another in a cycle (Tarjan's strongly connected
    components over every import, late ones and ``TYPE_CHECKING`` ones included)."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & set(modules)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for start in modules:
        if start in index:
            continue
        # Iterative Tarjan: (module, position in its edge list).
        work = [(start, 0)]
        while work:
            module, i = work.pop()
            if i == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            if i < len(edges[module]):
                work.append((module, i + 1))
                nxt = edges[module][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[module] = min(low[module], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.add(tuple(sorted(component)))
    return found


def test_no_new_module_cycle():
    cycles = module_cycles()
    assert cycles <= KNOWN_CYCLES, f"new import cycles: {sorted(cycles - KNOWN_CYCLES)}"
    gone = KNOWN_CYCLES - cycles
    assert not gone, f"cycles removed: take them off KNOWN_CYCLES: {sorted(gone)}"


# ------------------------------------------------------------------ rooms a newcomer can read

#: The most modules a package holds directly before its concerns go into rooms (subpackages).
ROOM_MODULES = 8


@pytest.mark.parametrize("package", ["agent"])
def test_a_package_of_rooms_keeps_few_modules_beside_them(package):
    here = ROOT / "jupyter_analyst" / package
    modules = sorted(p.stem for p in here.glob("*.py") if p.stem != "__init__")
    assert len(modules) <= ROOM_MODULES, f"{package}/ holds {len(modules)} modules: {modules}; give a concern a room"


def test_no_two_modules_of_the_agent_share_a_name():
    stems: dict[str, list[str]] = {}
    for path in (ROOT / "jupyter_analyst" / "agent").rglob("*.py"):
        if path.stem != "__init__":
            stems.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    assert not {stem: paths for stem, paths in stems.items() if len(paths) > 1}


#: The longest a function of the package may be (lines, its docstring included).
FUNCTION_LINES = 80


def test_no_function_is_longer_than_a_screen():
    long = []
    for path in sorted((ROOT / "jupyter_analyst").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
