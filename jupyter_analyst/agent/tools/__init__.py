"""The tools the model may call: one :class:`ToolSpec` per tool in one registry, and the
:class:`ToolBox` that plans, reuses or runs a call by its spec.

The built-in tools are registered here, in the order the model is shown them.
"""

from .arguments import normalize_arguments, normalize_arguments_verbose
from .clarify import CLARIFY
from .contract import (
    CallHost,
    ToolSpec,
    register,
    registered,
    spec_of,
    tool_schemas,
    tool_states,
    unregister,
)
from .find import FIND
from .metadata import DESCRIBE_TABLE, LIST_ARTIFACTS, LIST_TABLES, READ_CELLS
from .outcome import MODEL_TEXT_CAP, CallContext, StepOutcome, StepPlan, clip
from .plan import PLAN
from .run_python import RUN_PYTHON
from .run_sql import RUN_SQL
from .toolbox import ToolBox

#: The built-in tools, in the order the model is shown them.
BUILTIN: tuple[ToolSpec, ...] = (
    LIST_TABLES, DESCRIBE_TABLE, RUN_SQL, RUN_PYTHON, PLAN, LIST_ARTIFACTS, FIND, READ_CELLS, CLARIFY,
)
for _spec in BUILTIN:
    register(_spec)

#: The built-in tools' names and schemas (what the model is given, with any tool registered later).
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILTIN)
TOOLS: list[dict] = [spec.schema() for spec in BUILTIN]

__all__ = [
    "BUILTIN", "MODEL_TEXT_CAP", "TOOLS", "TOOL_NAMES", "CallContext", "CallHost", "StepOutcome", "StepPlan", "ToolBox", "ToolSpec",
    "clip", "normalize_arguments", "normalize_arguments_verbose", "register", "registered", "spec_of",
    "tool_schemas", "tool_states", "unregister",
]
