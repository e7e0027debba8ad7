"""What an answer may cite: the values each step result showed, as the caller hands them.

The receipts package reads no dataset, Parquet file or kernel: the caller (the loop at a
turn's end) knows which results the model saw (a dataset's preview, a computed result, a
printed value) and passes them as cells. So this stays pure and fast, and a value is cited
only if the model was shown it.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Self

from pydantic import BaseModel, Field, model_validator

#: One value a result showed. ``bool`` is listed so that pydantic keeps a boolean a boolean
#: (it would otherwise read ``True`` as the integer 1, which would then support "1").
Cell = bool | int | float | str | datetime | date | None


class Evidence(BaseModel, frozen=True, extra="forbid"):
    """One step's result, as the values it showed: a table and/or named values.

    >>> Evidence(call_id="call_1", tool="run_sql", columns=["carrier", "flights"], rows=[["AA", 1620]]).rows
    [['AA', 1620]]
    """

    call_id: str
    """The tool call whose result this is."""
    tool: str
    """The tool's name (``run_sql``, ``run_python``, ...)."""
    artifact_id: str | None = None
    """The artifact the result made or showed, if any."""
    columns: list[str] = Field(default_factory=list)
    """The table's column names."""
    rows: list[list[Cell]] = Field(default_factory=list)
    """The table's rows as shown (a preview, a sample or a whole small result), one cell per column."""
    scalars: dict[str, Cell] = Field(default_factory=dict)
    """Named values the result showed (``row_count``, a printed mean)."""

    @model_validator(mode="after")
    def _rows_fit_columns(self) -> Self:
        for index, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {index} has {len(row)} cells for {len(self.columns)} columns")
        return self
