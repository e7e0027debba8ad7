"""The faces: the root's names users import from ``jupyter_analyst``, lazily (PEP 562), with
the signatures they had; and every package's ``__init__``, which lists in ``__all__`` exactly
what it gives (in the style of httpx's ``tests/test_exported_members.py``): each name there is
importable, nothing public of the face is missing, and what it takes from its own modules is
what other packages use of it. Other packages import only faces: ``pyproject.toml`` holds
one import-linter contract per package, and the last test holds the faces for the imports
made for type checkers too (the contracts leave those aside, as the layers must).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import subprocess
import sys
import tomllib
from collections import defaultdict
from functools import cache
from pathlib import Path

import grimp
import pytest

import jupyter_analyst

ROOT_NAMES = {"run_turn", "run_sql_step", "TurnRequest", "SqlStepRequest", "SqlStep", "TurnSummary", "AnalystConfig",
              "ModelSettings", "AnalystError", "__version__"}

SOURCE = Path(jupyter_analyst.__file__).parent
PYPROJECT = SOURCE.parent / "pyproject.toml"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(SOURCE.rglob("*.py")) if "__pycache__" not in p.parts}
PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")

#: Public names a face binds and does not export, and why.
NOT_EXPORTED = {
    "jupyter_analyst": {"load_ipython_extension"},  # IPython's hook (``%load_ext jupyter_analyst``), not an API
}
#: Private names a face exports.
INCLUDED_PRIVATE = {"__version__"}
#: Faces whose names are for users, whatever the package itself uses of them.
FOR_USERS = {
    "jupyter_analyst",  # run_turn and the turn API
    "jupyter_analyst.cli",  # main: the console script
    "jupyter_analyst.testing",  # the scripted model, for anyone's tests
    "jupyter_analyst.receipts",  # receipts(answer, evidence): anyone's check of an answer against results
}
#: Names a face exports for code outside the package to plug in, though nothing inside imports them.
EXTENSION_POINTS = {
    "jupyter_analyst.artifacts": {"register_blob_store", "Blobs"},
    "jupyter_analyst.sql": {"register_source", "SourceEngine", "RunningQuery", "BatchQuery", "QueryRun",
                            "ResultBatches"},
    "jupyter_analyst.store": {"register_backend"},
    "jupyter_analyst.agent.spec": {"register", "unregister", "CallHost"},
}


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` in ``module`` names."""
    if not node.level:
        return node.module or ""
    base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _home(module: str | None, attribute: str, name: str) -> str:
    """Where a face's ``name`` comes from, as its lazy map writes it: ``submodule``, or
    ``submodule:attribute`` when the face gives the attribute another name."""
    return f"{module}" if attribute in ("", name) else f"{module}:{attribute}"


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


class Face:
    """What a package's ``__init__`` binds, read from its source: the public names it defines
    or takes from its own modules, the names it imports on first use (its lazy map), those it
    imports for type checkers, and the names its own code reads."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.defined: set[str] = set()
        self.imported: set[str] = set()
        self.type_checking: dict[str, str] = {}
        self.lazy: dict[str, str] = {}
        tree = ast.parse(MODULES[package].read_text())
        assignments: dict[str, ast.expr] = {}
        self._bind(tree.body, assignments)
        self.read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "lazy_names":
                homes = node.args[1]
                lazy = ast.literal_eval(assignments[homes.id] if isinstance(homes, ast.Name) else homes)
                self.lazy = {name: _home(*home.partition(":")[::2], name) for name, home in lazy.items()}

    def _bind(self, body: list[ast.stmt], assignments: dict[str, ast.expr]) -> None:
        for node in body:
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                self.type_checking |= {a.asname or a.name: _home(n.module, a.name, a.asname or a.name) for n in node.body
                                       if isinstance(n, ast.ImportFrom) for a in n.names}
            elif isinstance(node, (ast.If, ast.Try)):
                self._bind(node.body + node.orelse + getattr(node, "finalbody", []), assignments)
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(self.package, node)
                if _inside(source, self.package) and not _private(source.removeprefix("jupyter_analyst")):
                    self.imported |= {a.asname or a.name for a in node.names if f"{source}.{a.name}" not in MODULES}
                elif source.startswith("jupyter_analyst."):
                    self.imported |= {a.asname or a.name for a in node.names} & INCLUDED_PRIVATE
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Name):
                        self.defined.add(target.id)
                        assignments[target.id] = node.value

    @property
    def public(self) -> set[str]:
        """What the face gives: the names a reader of ``__all__`` should find there."""
        names = {n for n in self.defined | self.imported if not n.startswith("_") or n in INCLUDED_PRIVATE}
        return (names | set(self.lazy)) - NOT_EXPORTED.get(self.package, set()) - {"annotations"}

    @property
    def passed_on(self) -> set[str]:
        """The names the face takes from its own modules only to give them on."""
        return (self.imported | set(self.lazy)) - self.read - self.defined


@cache
def used_from_outside() -> dict[str, set[str]]:
    """Per face, the names modules outside its package take from it: imported (late and
    type-checking imports too) or read as attributes of the face imported as a module."""
    used: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        faces_by_alias = {}
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            source = _resolve(module, node)
            for alias in node.names:
                if f"{source}.{alias.name}" in PACKAGES:
                    faces_by_alias[alias.asname or alias.name] = f"{source}.{alias.name}"
                elif source in PACKAGES and not _inside(module, source) and f"{source}.{alias.name}" not in MODULES:
                    used[source].add(alias.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) in faces_by_alias:
                face = faces_by_alias[node.value.id]
                if not _inside(module, face):
                    used[face].add(node.attr)
    return used


def test_the_root_exports_the_turn_api():
    assert set(jupyter_analyst.__all__) == ROOT_NAMES
    for name in ROOT_NAMES:
        assert getattr(jupyter_analyst, name) is not None
    from jupyter_analyst.errors import AnalystError
    from jupyter_analyst.turns import run_turn

    assert jupyter_analyst.AnalystError is AnalystError and jupyter_analyst.run_turn is run_turn


def test_run_turn_keeps_its_signature():
    params = inspect.signature(jupyter_analyst.run_turn).parameters
    assert list(params) == ["request", "config", "model", "on_event", "launcher", "pool", "background", "live", "turn"]
    assert all(p.kind is p.KEYWORD_ONLY for name, p in params.items() if name != "request")
    assert list(jupyter_analyst.TurnRequest.model_fields) == [
        "prompt", "source", "thread_id", "rerun", "user", "notebook", "attached"]


def test_importing_the_root_imports_no_engine():
    out = subprocess.run([sys.executable, "-c", (
        "import json, sys, jupyter_analyst; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('jupyter_analyst.', 'openai', 'duckdb')))))"
    )], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)) <= {"jupyter_analyst._lazy", "jupyter_analyst._version"}


@pytest.mark.parametrize("package", PACKAGES)
def test_a_face_lists_exactly_what_it_gives(package):
    """``__all__`` holds every public name the face binds, defines or imports on first use,
    and nothing else (a name imported from another package is that package's to give)."""
    listed = importlib.import_module(package).__all__
    assert len(listed) == len(set(listed)), f"{package}.__all__ repeats a name"
    public = Face(package).public
    assert not public - set(listed), f"public in {package} but not in its __all__: {sorted(public - set(listed))}"
    assert not set(listed) - public, f"in {package}.__all__ but not its own: {sorted(set(listed) - public)}"


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_a_face_lists_is_importable_from_it(package):
    face = importlib.import_module(package)
    for name in face.__all__:
        namespace: dict = {}
        exec(f"from {package} import {name}", namespace)
        assert namespace[name] is getattr(face, name)
    with pytest.raises(AttributeError):
        face.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", [p for p in PACKAGES if Face(p).lazy])
def test_a_lazy_face_gives_each_name_from_its_home_and_declares_it_for_type_checkers(package):
    face, read = importlib.import_module(package), Face(package)
    assert read.type_checking == read.lazy, f"{package}: its TYPE_CHECKING imports differ from its lazy names"
    for name, home in read.lazy.items():
        module, _, attribute = home.partition(":")
        assert getattr(face, name) is getattr(importlib.import_module(f"{package}.{module}"), attribute or name)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_name_of_a_face_is_also_one_of_its_modules(package):
    """Importing the module would replace the name with the module on the package."""
    modules = {name.rpartition(".")[2] for name in MODULES if name.rpartition(".")[0] == package}
    assert not set(importlib.import_module(package).__all__) & modules


@pytest.mark.parametrize("package", sorted(set(PACKAGES) - FOR_USERS))
def test_a_face_passes_on_what_other_packages_use_and_no_more(package):
    unused = Face(package).passed_on - used_from_outside()[package] - EXTENSION_POINTS.get(package, set())
    assert not unused, f"{package} exports what no other package imports: {sorted(unused)}"


def test_every_package_has_its_face_contract():
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    faces = {c["allowed_importers"][0] for c in config["contracts"] if c["type"] == "protected"
             and c["protected_modules"] == [c["allowed_importers"][0] + ".*"] and len(c["allowed_importers"]) == 1}
    assert faces == set(PACKAGES) - {"jupyter_analyst", "jupyter_analyst.testing.servers"}
    assert {"type": "protected", "name": "Face: jupyter_analyst.testing.servers is imported by tests only",
            "protected_modules": ["jupyter_analyst.testing.servers"],
            "allowed_importers": ["jupyter_analyst.testing.servers"]} in config["contracts"]


def test_other_packages_import_a_face_for_type_checkers_too():
    """The contracts leave ``TYPE_CHECKING`` imports aside; a face holds for them as well."""
    graph = grimp.build_graph("jupyter_analyst", exclude_type_checking_imports=False)
    reaching_in = []
    for package in PACKAGES[1:]:
        inside = graph.find_descendants(package)
        closed = package == "jupyter_analyst.testing.servers"  # the test servers: for tests only
        for module in inside | ({package} if closed else set()):
            reaching_in += [f"{importer} -> {module}" for importer in graph.find_modules_that_directly_import(module)
                            if not _inside(importer, package)]
    assert not reaching_in
