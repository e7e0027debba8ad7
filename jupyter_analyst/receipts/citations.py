"""What the receipts of an answer say: each claim cited, derived, or unsupported.

These are the models later stages carry (the turn's event, the panel's marks, the audit
notebook's table), so each field says what it holds and nothing needs the evidence again to
be shown: a citation names its step's call id, its artifact, and the row and column of the
cell where there is one.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field

from .claims import ClaimKind

#: How a derived number follows from two numbers ``a`` and ``b`` (``of`` or ``cells`` in that
#: order): ``a - b``, ``a + b``, ``a / b``, ``(a - b) / b`` as a percentage (the change from
#: ``b`` to ``a``), and ``a / b`` as a percentage (``a``'s share of ``b``); or a column's
#: ``total``, the sum of its cells (``cells``, every one).
Operation = Literal["difference", "sum", "ratio", "percent_change", "share", "total"]


class OperandCell(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """A cell of a result a derived number was computed from, where the answer cites it not."""

    call_id: str
    """The tool call whose result holds the cell."""
    artifact_id: str | None = None
    """The artifact that result made or showed, if any."""
    row: int
    """The row of the result's table (from 0)."""
    column: str
    """The column."""


class Derivation(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """How a number the answer computed follows from numbers it cited, or from cells of one
    result it was shown."""

    operation: Operation
    """The one arithmetic operation (see :data:`Operation`)."""
    of: tuple[int, int] | None = None
    """The indexes in :attr:`Receipts.citations` of ``a`` and ``b``, in the operation's order,
    when both are cited; otherwise None and ``cells`` says what it was computed from."""
    cells: list[OperandCell] = Field(default_factory=list)
    """The result's cells operated on, in the operation's order, when they are not cited (a
    column's total: every cell of the column)."""


class Citation(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """A span of the answer and the value of a result that supports it."""

    start: int
    """Where the cited text starts in the answer (a character index)."""
    end: int
    """Where it ends (exclusive)."""
    text: str
    """The answer's text: ``answer[start:end]``."""
    kind: ClaimKind | Literal["name"]
    """What the answer states there; ``name`` for a text value (a carrier's name) cited
    because it stands on the same line as a number cited from its row."""
    value: int | float | str | datetime | date
    """The supporting value as the result held it; for a derived number, the value computed.
    In JSON a date or time travels as its ISO text (and is read back as text)."""
    call_id: str | None
    """The tool call whose result holds the value; None for a derived number (see ``derived``)."""
    artifact_id: str | None = None
    """The artifact that result made or showed, if any."""
    row: int | None = None
    """The row of the result's table holding the value (from 0), if it is a table's cell."""
    column: str | None = None
    """The column holding the value, or the name of a named value (``row_count``)."""
    derived: Derivation | None = None
    """How the number follows from two other citations, when no result holds it itself."""


class UnsupportedClaim(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """A number or date the answer states that no result it was shown supports."""

    start: int
    """Where the claim starts in the answer."""
    end: int
    """Where it ends (exclusive)."""
    text: str
    """The answer's text of it."""
    kind: ClaimKind
    """What it states."""
    value: float | date
    """The value as written, units applied (``1.2M`` is 1200000.0)."""


class DefinitionCitation(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """A definition of the team's context folder the answer's steps followed: a metric its SQL
    computed as defined (its aggregate, expression, table and every filter), or a verified
    query it ran."""

    kind: Literal["definition"] = "definition"
    """Always ``definition``: what the answer rests on besides its numbers' cells."""
    name: str
    """The metric's name, or the verified query's file name (``revenue_by_month.sql``)."""
    definition: Literal["metric", "verified_query"]
    """What the folder defines there."""
    file: str
    """Where it is written: the folder's name, its file and line (``context/models/orders.yml:46``)."""
    call_id: str
    """The query step that followed it."""


class Receipts(BaseModel, frozen=True, extra="forbid", use_attribute_docstrings=True):
    """An answer's claims matched against the results of its thread, in the answer's order."""

    citations: list[Citation] = Field(default_factory=list)
    """The spans supported by a result, or derived from two that are."""
    unsupported: list[UnsupportedClaim] = Field(default_factory=list)
    """The claims nothing supports. A year in prose is never listed (see ``claims.py``)."""
    definitions: list[DefinitionCitation] = Field(default_factory=list)
    """The team's definitions (metrics, verified queries) the answer's queries followed."""
    truncated: bool = False
    """Not everything was read: the answer held more claims than are matched, was longer
    than is read, or the results held more cells than are indexed. What was read is right;
    what was not is neither cited nor unsupported."""
