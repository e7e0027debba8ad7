"""What an empty thread offers: the tables of its source and questions to start from.

The tables are read as the model is told of them (the source's ``schema()`` and the
outline of the system message, whose row counts are each read under a time limit), so the
panel shows no table the model is not shown. Blocking: call :func:`source_tables` off the
event loop.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: How many questions an empty thread suggests.
SUGGESTIONS = 3


def source_tables(spec: str, limits: Any) -> tuple[list[dict[str, Any]], int]:
    """The listed tables of the source ``spec`` opens (name, exact row count, or the engine's
    estimate saying so, or ``None``), and how many more it has than the model's outline lists.

    Raises:
        SourceError: the source does not open.
    """
    from ..sql import OUTLINE_TABLES, open_source, source_outline

    source = open_source(spec, limits=limits)
    try:
        names = list(source.schema())
        outline = source_outline(source).tables
    finally:
        source.close()
    listed = names[:OUTLINE_TABLES]
    # A table past a million rows by its engine's estimate is not counted: said as estimated.
    tables = [{"name": n, "rows": outline[n].rows if n in outline else None,
               **({"rows_estimated": True} if n in outline and outline[n].estimated else {})} for n in listed]
    return tables, len(names) - len(listed)


def scripted_questions() -> list[str]:
    """The questions the bundled scripted model (``data/lab_script.json``) answers."""
    script = json.loads((resources.files("jupyter_analyst") / "data" / "lab_script.json").read_text())
    return [str(q) for q in script.get("suggestions", [])][:SUGGESTIONS]


def generic_questions(tables: list[str]) -> list[str]:
    """Questions any model may start from, built from the source's table names.

    >>> generic_questions(["orders", "regions"])
    ['What does the orders table hold?', 'How do orders and regions relate?', 'What stands out in orders?']
    >>> generic_questions([])
    []
    """
    if not tables:
        return []
    first = tables[0]
    questions = [f"What does the {first} table hold?"]
    if len(tables) > 1:
        questions.append(f"How do {first} and {tables[1]} relate?")
    questions.append(f"What stands out in {first}?")
    return questions[:SUGGESTIONS]
