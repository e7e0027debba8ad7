"""A query on its way through the passes: the SQL, the schema it is checked against, and
what each pass has read off it so far."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..query_model import ClearedQuery, PreparedQuery, QueryShape

if TYPE_CHECKING:
    from sqlglot import exp
    from sqlglot.schema import MappingSchema


@dataclass(slots=True)
class Preparation:
    """The model's SQL, the source's ``schema`` and ``dialect``, and what the passes found.

    Each pass, like a rule of sqlglot's optimizer, takes the query as read so far and returns
    it with what it found set; the syntax tree is handed on, not copied, and a pass may change
    it in place (qualifying does: copying a large tree costs as much as qualifying it).
    """

    sql: str
    schema: dict[str, dict[str, str]]
    dialect: str
    mapping: MappingSchema | None = None
    """The schema as the qualifier reads it, when the caller built it once for many queries."""
    on_cleared: Callable[[ClearedQuery], None] | None = None
    """Told once the query is cleared to start running (see ``cleared.py``)."""
    tree: exp.Expression | None = None
    """The one statement (``parse``), changed in place by qualifying."""
    size_checks: list[exp.Func] = field(default_factory=list)
    """Calls whose value's size only the running query knows, checked as it runs (``bound_sizes``)."""
    tables: list[str] | None = None
    """The source's tables it names, in order (``qualify_tables``)."""
    executable: str = ""
    """The text the source runs, in its dialect (``clear``)."""
    has_order: bool = False
    shape: QueryShape | None = None
    """Measures, dimensions and filters for the data-intent note (``shape``)."""
    qualified: exp.Expression | None = None
    """Every column resolved, identifiers quoted (``pivot_columns`` or ``qualify_columns``)."""
    canonical: str = ""
    """The text its fingerprint is taken of (``canonicalize``)."""
    reads_clock: bool = False
    """Whether its result depends on the day it runs (``canonicalize``)."""

    def prepared(self) -> PreparedQuery:
        """The finished query, once every pass has run."""
        return PreparedQuery(
            original=self.sql,
            canonical=self.canonical,
            executable=self.executable,
            tables=self.tables or [],
            has_order=self.has_order,
            shape=self.shape if self.shape is not None else QueryShape(),
            reads_clock=self.reads_clock,
        )
