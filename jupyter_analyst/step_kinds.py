"""What a recorded step is, told by the tool that made it: a query or a code step.

The inventory's step records, the events and the notebooks keep a step's tool as a string,
and the layers below the agent (the notebook export, ``verify``, a thread's bindings, the
surfaces that show a step) read those records long after the tool ran, without its spec.
Each of them needs the same few facts: which argument holds the step's text, what language
its notebook cell is in, what name it binds. They are said here, once, for the two kinds of
step a thread records; the agent's ``run_sql`` and ``run_python`` specs say they record
these kinds (their ``recorded_as``), and ``tests/contracts/test_step_kinds.py`` holds the
two to agree.

>>> step_kind("run_sql").payload, step_kind("run_python").language
('sql', 'python')
>>> step_kind("list_tables") is None, step_kind(["run_sql"]) is None
(True, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

#: The tools whose calls are recorded steps: notebook cells, bindings, a plan's steps.
StepTool = Literal["run_sql", "run_python"]
#: The tool of a query step, and of a code step.
QUERY_TOOL: Final = "run_sql"
CODE_TOOL: Final = "run_python"


@dataclass(frozen=True)
class StepKind:
    """What a recorded step of one tool is: the argument its text is in, its cell's language,
    and what it binds."""

    tool: StepTool
    """The tool whose calls are steps of this kind."""
    name: Literal["query", "code"]
    payload: str
    """The argument that holds the step's text (its SQL or its code)."""
    language: Literal["sql", "python"]
    """The language of the step's text, and of its notebook cell."""
    dataset_argument: str | None = None
    """The argument naming the dataset the step binds (its first artifact, a table); ``None``:
    it binds the names its code assigns."""

    @property
    def is_query(self) -> bool:
        """A query: it binds a dataset, made by the source's engine (not the kernel)."""
        return self.name == "query"

    def text(self, arguments: Mapping[str, Any]) -> str:
        """The step's SQL or code in ``arguments`` (empty when there is none).

        >>> QUERY_STEP.text({"sql": "SELECT 1", "name": "one"}), CODE_STEP.text({"code": 3})
        ('SELECT 1', '')
        """
        value = arguments.get(self.payload)
        return value if isinstance(value, str) else ""

    def dataset(self, arguments: Mapping[str, Any]) -> str | None:
        """The name of the dataset a query step binds, from its ``arguments``; ``None`` for a
        code step.

        >>> QUERY_STEP.dataset({"sql": "SELECT 1", "name": "one"}), CODE_STEP.dataset({"code": "x = 1"})
        ('one', None)
        """
        return None if self.dataset_argument is None else arguments.get(self.dataset_argument)


#: A query: its SQL under ``sql``, run by the source's engine into the dataset ``name``.
QUERY_STEP: Final = StepKind(tool=QUERY_TOOL, name="query", payload="sql", language="sql", dataset_argument="name")
#: A code step: its Python under ``code``, run in the thread's kernel.
CODE_STEP: Final = StepKind(tool=CODE_TOOL, name="code", payload="code", language="python")

#: Every kind of recorded step, by its tool.
STEP_KINDS: Final[Mapping[str, StepKind]] = {kind.tool: kind for kind in (QUERY_STEP, CODE_STEP)}
#: The tools whose calls are recorded steps, queries first.
STEP_TOOLS: Final[tuple[str, ...]] = tuple(STEP_KINDS)


def step_kind(tool: object) -> StepKind | None:
    """The kind of step a call of ``tool`` records; ``None`` for a tool that records none (and
    for anything not a tool name: a notebook's metadata is read as given)."""
    return STEP_KINDS.get(tool) if isinstance(tool, str) else None


def is_query_step(tool: object) -> bool:
    """Whether a call of ``tool`` is recorded as a query (it binds a dataset).

    >>> is_query_step("run_sql"), is_query_step("run_python"), is_query_step("find")
    (True, False, False)
    """
    kind = step_kind(tool)
    return kind is not None and kind.is_query


def is_code_step(tool: object) -> bool:
    """Whether a call of ``tool`` is recorded as a code step (it binds what its code assigns).

    >>> is_code_step("run_python"), is_code_step("run_sql"), is_code_step(None)
    (True, False, False)
    """
    kind = step_kind(tool)
    return kind is not None and not kind.is_query
