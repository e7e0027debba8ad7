"""A tool's meaning lives in its own module: no other module of the package names a tool.

What a tool's result adds to the agent state, what its ``expect`` is checked against, how
the summarizer and the next turn name its calls, what a user-driven turn answers with it,
what it refuses as invented: each is a hook of its :class:`ToolSpec`, read by the guards,
the memory and the context without naming the tool. So a tool-name string in another
module is a branch on one tool that a new tool would have to find and copy.

A step's tool is also a string in what outlives the call (the inventory's step records, the
events, the notebooks), read below the agent where no spec is at hand. What such a recorded
step is (a query or a code step: the argument its text is in, its cell's language, what it
binds) is said once in the vocabulary layer, ``step_kinds.py``, which is so the second home
of the two step tools' names: their specs say they record those kinds (``recorded_as``), and
``test_step_kinds.py`` holds the two to agree.

``STILL_NAMING`` lists the modules that still branch on a tool by name, each with what it
reads; it is empty, and may only stay so (a module that stops naming tools must leave it).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import registered

PACKAGE = Path(__file__).resolve().parents[2] / "jupyter_analyst"

#: Modules that still name tools, and why; emptied as their branches become hooks.
STILL_NAMING: dict[str, str] = {
}

#: Modules where a tool's name is no branch on the tool.
NOT_A_BRANCH: dict[str, str] = {
    "testing/script.py": "the scripted model writes calls by name, as a model does",
    "notebooks/__init__.py": "read_cells: the name of the face's function the tool calls",
    "sql/intent.py": "find: the tool a shortened description's hint tells the model to call",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the nodes that are docstrings (their examples name tools as a reader would)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _type_tags(tree: ast.AST) -> set[int]:
    """The ids of the strings of a model's ``type`` tag (``type: Literal["plan"] = "plan"``):
    they name the kind of event, which may share a tool's name (the ``plan`` event)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for field in node.body:
                tag = isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and field.target.id == "type"
                if tag:
                    found |= {id(n) for n in ast.walk(field) if isinstance(n, ast.Constant)}
    return found


def naming(root: Path, names: set[str]) -> dict[str, set[str]]:
    """Which modules under ``root`` hold a string that is one of ``names``: ``{module: names}``
    (docstrings and events' type tags left aside)."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(root.rglob("*.py")):
        if "labextension" in path.parts:
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        docs = _docstrings(tree) | _type_tags(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names \
                    and id(node) not in docs:
                found[str(path.relative_to(root))].add(node.value)
    return dict(found)


def _path(module: str) -> str:
    return module.removeprefix("jupyter_analyst.").replace(".", "/") + ".py"


def _homes() -> dict[str, set[str]]:
    """Each built-in tool's homes: its own module, where its spec is made; and, for a tool
    whose calls are recorded steps, the module saying what those steps are."""
    homes = {}
    for spec in registered():
        module = spec.run.__module__ if spec.run is not None else spec.drive.__module__  # type: ignore[union-attr]
        homes[spec.name] = {_path(module)}
        if spec.recorded_as is not None:
            homes[spec.name].add(_path(type(spec.recorded_as).__module__))
    return homes


def test_no_module_but_a_tools_own_names_it():
    homes = _homes()
    assert {"run_sql", "run_python", "clarify", "plan"} <= set(homes)
    strays = {}
    for module, names in naming(PACKAGE, set(homes)).items():
        foreign = {n for n in names if module not in homes[n]}
        if foreign and module not in STILL_NAMING and module not in NOT_A_BRANCH:
            strays[module] = sorted(foreign)
    assert not strays, f"modules naming tools not their own (give the tool's spec a hook instead): {strays}"


def test_the_list_of_modules_still_naming_tools_only_shrinks():
    homes = _homes()
    still = {m for m, names in naming(PACKAGE, set(homes)).items() if any(m not in homes[n] for n in names)}
    gone = sorted(set(STILL_NAMING) - still)
    assert not gone, f"these modules name no tool any more: take them off STILL_NAMING: {gone}"


def test_the_finder_sees_a_name_outside_a_docstring(tmp_path):
    (tmp_path / "memory.py").write_text('"""Reads run_sql."""\n\ndef f(tool):\n    """>>> f("run_sql")"""\n'
                                        '    return tool == "run_sql"\n')
    (tmp_path / "quiet.py").write_text('"""Only "run_sql" in prose."""\n')
    assert naming(tmp_path, {"run_sql"}) == {"memory.py": {"run_sql"}}


def test_an_events_type_tag_is_no_tools_name_but_its_other_fields_are(tmp_path):
    (tmp_path / "events.py").write_text('class PlanMade:\n    type: Literal["plan"] = "plan"\n'
                                        'class Step:\n    tool: Literal["plan"] = "plan"\n')
    (tmp_path / "tags.py").write_text('class PlanMade:\n    type: Literal["plan"] = "plan"\n')
    assert naming(tmp_path, {"plan"}) == {"events.py": {"plan"}}
