"""One error root for the whole package.

Two families hang off :class:`AnalystError`:

* :class:`ToolRetry` and its children are *signals*, not failures: the tool call was
  refused or could not run as asked, and the model is told why (with suggestions) so it
  can try again. The turn goes on.
* Everything else is a real failure of the product or of its input (a missing data
  source, an unreachable model, a broken store). The CLI turns these into one clear line
  and a hint.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class AnalystError(Exception):
    """Root of every error raised by jupyter-analyst.

    Args:
        message: one readable sentence saying what went wrong.
        reason: a stable, machine-readable reason code (``snake_case``).
        hint: what the user can do about it, shown after the message.
        context: anything that locates the error (the step, the SQL, the code...).
    """

    reason: str = "error"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        hint: str | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        if reason is not None:
            self.reason = reason
        self.hint = hint
        self.context = context

    def to_dict(self) -> dict[str, Any]:
        """The error as JSON-safe data, for tool results, events and API bodies."""
        out: dict[str, Any] = {"reason": self.reason, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        for key, value in self.context.items():
            if value is not None:
                out[key] = value
        return out

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} (hint: {self.hint})"


# ---------------------------------------------------------------- user input / set-up


class ConfigError(AnalystError):
    """The user's input or set-up is wrong: no model configured, unknown thread..."""

    reason = "config_error"


class SourceError(AnalystError):
    """A data source is missing, unreadable or of an unknown kind."""

    reason = "source_error"


class StorageError(AnalystError):
    """The workspace (store, inventory, blobs) could not be read or written."""

    reason = "storage_error"


class DiskUnavailable(StorageError):
    """A file system we must write to is read-only or full: the turn cannot go on.

    Reason codes: ``workspace_read_only`` and ``workspace_full`` for the workspace,
    ``read_only`` and ``disk_full`` for a file written elsewhere (an export, ``--output``).
    The CLI exits with status 2, as for other problems of the set-up.
    """

    reason = "disk_unavailable"


class ModelError(AnalystError):
    """The language model endpoint failed or answered with something unusable."""

    reason = "model_error"


class BudgetExhausted(AnalystError):
    """A spending budget (tokens or cost, per user, thread or server) is reached: no model
    call is sent. The message says what was spent, the limit and when it resets."""

    reason = "budget_exhausted"


class KernelError(AnalystError):
    """The kernel could not be started, or died and could not be recovered."""

    reason = "kernel_error"


# ---------------------------------------------------------------- signals to the model


class ToolRetry(AnalystError):
    """A tool call the model should correct and retry; never a crash of the turn.

    Args:
        suggestions: the nearest real names when the model named something unknown.
    """

    reason = "tool_retry"

    def __init__(
        self,
        message: str,
        *,
        reason: str | None = None,
        hint: str | None = None,
        suggestions: Sequence[str] = (),
        **context: Any,
    ) -> None:
        super().__init__(message, reason=reason, hint=hint, **context)
        self.suggestions = list(suggestions)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        if self.suggestions:
            out["suggestions"] = self.suggestions
        return out


class InvalidArguments(ToolRetry):
    """Tool arguments that could not be understood, even after normalisation.

    Reason codes: ``invalid_arguments``, ``unknown_tool``, ``empty_payload``,
    ``arguments_too_large``, ``arguments_too_deep``, ``argument_too_long``,
    ``invalid_unicode``, ``invalid_name``, ``reserved_name``, ``python_too_large``,
    ``python_too_complex``, ``invalid_code``.
    """

    reason = "invalid_arguments"


class SqlRejected(ToolRetry):
    """SQL refused before execution: unparsable, not read-only, or naming unknown things.

    Reason codes: ``sql_parse_error``, ``sql_not_read_only``, ``sql_function_not_allowed`` (a
    function not on the dialect's allow-list, wherever it is called), ``sql_multiple_statements``,
    ``unknown_table``, ``unknown_column``, ``sql_too_large``, ``sql_too_complex`` (nested
    too deeply, or past the preparation's time or memory limit), ``sql_value_too_large`` (a
    call would build a value past the cap: ``sql/prepare/sizes.py``), ``sql_unsupported`` (what
    the checker cannot handle, and time travel: ``sql/prepare/guard.py``), ``invalid_unicode``.
    """

    reason = "sql_rejected"


class QueryFailed(ToolRetry):
    """SQL that passed the guard but failed in the engine (or timed out).

    Reason codes: ``query_failed`` (an engine error, or its engine worker died under it),
    ``query_timeout``, ``query_memory`` (past the memory its engine worker may use:
    ``sql/engine_process.py``), ``engine_busy`` (a SQLAlchemy source with as many calls set
    aside as it may have: ``sql/parking.py``).
    """

    reason = "query_failed"
