"""Verified queries: ``queries/*.sql`` files whose header says which questions each answers,
who verified it and when.

The header is the file's leading ``--`` comment lines::

    -- question: What was revenue last quarter?
    -- question: Revenue by quarter
    -- verified_by: Ana Lopez
    -- verified_at: 2026-11-20
    SELECT ...

A file without questions, a verifier or a date (ISO, ``YYYY-MM-DD``) is a problem naming
its line, and is left out. The SQL is not run here: a model that uses it runs it with
``run_sql``, behind the same check as its own.
"""

from __future__ import annotations

import datetime as dt
import re

from .definitions import ContextProblem, VerifiedQuery
from .context_files import FolderFile

_FIELD = re.compile(r"^--\s*([A-Za-z][A-Za-z _-]*?)\s*:\s*(.*)$")
_KEYS = {"question": "question", "questions": "question", "verified_by": "verified_by",
         "verified_at": "verified_at", "verified_on": "verified_at"}
EXAMPLE = "-- question: ... / -- verified_by: ... / -- verified_at: YYYY-MM-DD"


class _Invalid(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line, self.message = line, message


def parse_verified(file: FolderFile) -> VerifiedQuery:
    """A verified query from its file.

    >>> q = parse_verified(FolderFile("queries/r.sql", "-- question: revenue?\\n-- verified_by: ana\\n"
    ...                                                 "-- verified_at: 2026-11-20\\nSELECT 1"))
    >>> q.questions, q.verified_by, q.sql
    (['revenue?'], 'ana', 'SELECT 1')
    """
    fields: dict[str, list[tuple[int, str]]] = {}
    body_start = 0
    lines = file.text.splitlines()
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if not line.startswith("--"):
            body_start = number
            break
        match = _FIELD.match(line)
        key = _KEYS.get(re.sub(r"[\s-]+", "_", match.group(1).lower())) if match else None
        if match and key:
            fields.setdefault(key, []).append((number, match.group(2).strip()))
    header_end = body_start - 1 if body_start else len(lines)
    questions = [q.strip() for _, value in fields.get("question", []) for q in value.split("|") if q.strip()]
    if not questions:
        raise _Invalid(1, f"a verified query's header names the questions it answers ({EXAMPLE})")
    for key in ("verified_by", "verified_at"):
        if not any(value for _, value in fields.get(key, [])):
            raise _Invalid(max(header_end, 1), f"a verified query's header says {key.replace('_', ' ')} ({EXAMPLE})")
    at_line, at = fields["verified_at"][-1]
    try:
        dt.date.fromisoformat(at[:10])
    except ValueError:
        raise _Invalid(at_line, f"verified_at is not a date (YYYY-MM-DD): {at[:40]!r}") from None
    sql = "\n".join(lines[body_start - 1:]).strip() if body_start else ""
    if not sql:
        raise _Invalid(max(header_end, 1), "no SQL after the header")
    return VerifiedQuery(file=file.path, questions=questions, verified_by=fields["verified_by"][-1][1],
                         verified_at=at[:10], sql=sql)


def read_verified(files: list[FolderFile]) -> tuple[list[VerifiedQuery], list[ContextProblem]]:
    """The folder's verified queries, and the files left out."""
    queries, problems = [], []
    for file in files:
        if not file.is_query:
            continue
        try:
            queries.append(parse_verified(file))
        except _Invalid as exc:
            problems.append(ContextProblem(file=file.path, line=exc.line, message=exc.message))
    return queries, problems
