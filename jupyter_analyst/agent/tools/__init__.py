"""The tools the model may call, each a :class:`~..spec.ToolSpec` in the registry of
``agent/spec/``, and the :class:`ToolBox` that plans, reuses or runs a call by its spec.

The built-in tools are registered here, in the order the model is shown them; a tool is
added by registering its spec (:func:`register`).
"""

from . import clarify, find, metadata, plan, run_python, run_sql
from .arguments import MAX_ARGUMENT_DEPTH, nested_deeper_than, normalize_arguments_verbose, strip_fence
from ..spec import ToolSpec, register
from .result_models import ToolError, result_models_by_tool
from .toolbox import ToolBox

#: The built-in tools, in the order the model is shown them.
BUILTIN: tuple[ToolSpec, ...] = (
    metadata.LIST_TABLES, metadata.DESCRIBE_TABLE, run_sql.RUN_SQL, run_python.RUN_PYTHON, plan.PLAN,
    metadata.LIST_ARTIFACTS, find.FIND, metadata.READ_CELLS, clarify.CLARIFY,
)
for _spec in BUILTIN:
    register(_spec)

#: The built-in tools' names and schemas (what the model is given, with any tool registered later).
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILTIN)
TOOLS: list[dict] = [spec.schema() for spec in BUILTIN]

__all__ = [
    "BUILTIN", "MAX_ARGUMENT_DEPTH", "TOOLS", "TOOL_NAMES", "ToolBox", "ToolError", "nested_deeper_than",
    "normalize_arguments_verbose", "result_models_by_tool", "strip_fence",
]
