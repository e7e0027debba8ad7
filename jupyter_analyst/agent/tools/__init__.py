"""The tools the model may call, each a :class:`~..spec.ToolSpec` in the registry of
``agent/spec/``, and the :class:`ToolBox` that plans, reuses or runs a call by its spec.

The built-in tools are registered here, in the order the model is shown them; a tool is
added by registering its spec (:func:`register`).
"""

from . import clarify, find, metadata, plan, propose_cells, run_python, run_sql
from .arguments import MAX_ARGUMENT_DEPTH, nested_deeper_than, normalize_arguments_verbose, strip_fence
from ..spec import ToolSpec, register, registered, spec_of
from .result_models import ToolError, result_models_by_tool
from .toolbox import ToolBox

#: The built-in tools, in the order the model is shown them.
BUILTIN: tuple[ToolSpec, ...] = (
    metadata.LIST_TABLES, metadata.DESCRIBE_TABLE, run_sql.RUN_SQL, run_python.RUN_PYTHON, plan.PLAN,
    metadata.LIST_ARTIFACTS, find.FIND, metadata.READ_CELLS, propose_cells.PROPOSE_CELLS, clarify.CLARIFY,
)
for _spec in BUILTIN:
    register(_spec)

#: The built-in tools' names and schemas (what the model is given, with any tool registered later).
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILTIN)
TOOLS: list[dict] = [spec.schema() for spec in BUILTIN]


def user_steps() -> list[str]:
    """The tools a user or a client agent may ask one call of by name (their specs'
    ``user_step``), in the order the model is shown them."""
    return [spec.name for spec in registered() if spec.user_step]


def looks_only(tool: str) -> bool:
    """Whether ``tool`` reads only the source's schema and the store (its spec's ``looks_only``).

    >>> looks_only("describe_table"), looks_only("run_python"), looks_only("no_such_tool")
    (True, False, False)
    """
    spec = spec_of(tool)
    return spec is not None and spec.looks_only

__all__ = [
    "BUILTIN", "MAX_ARGUMENT_DEPTH", "TOOLS", "TOOL_NAMES", "ToolBox", "ToolError", "nested_deeper_than",
    "looks_only", "normalize_arguments_verbose", "result_models_by_tool", "strip_fence", "user_steps",
]
