"""What a tool is and what its result means: one :class:`ToolSpec` per tool in one registry,
a call's outcome (:class:`StepOutcome`) and how a result is shown to the model.

The room sits below the guards, the context and the memory, so each of them asks a tool's
spec what its result means instead of naming the tool; the tools themselves (``agent/tools/``)
are registered from above.
"""

from .cited import printed, shown_table
from .contract import CallHost, ToolSpec, expect_schema, register, registered, spec_of, tool_schemas, unregister
from .meaning import Observed, StateChange, StepSeen, entity, failed_mark
from .outcome import MODEL_TEXT_CAP, CallContext, StepOutcome, StepPlan, clip, without_verdict
from .shown import rows_shown, shown_line, table_rows

__all__ = [
    "MODEL_TEXT_CAP", "CallContext", "CallHost", "Observed", "StateChange", "StepOutcome", "StepPlan", "StepSeen",
    "ToolSpec", "clip", "entity", "expect_schema", "failed_mark", "printed", "shown_table",
    "register", "registered", "rows_shown", "shown_line", "spec_of", "table_rows", "tool_schemas", "unregister",
    "without_verdict",
]
