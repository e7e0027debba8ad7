"""Which names a proposed code cell needs that the user's notebook does not define before it.

A proposed cell runs first in the thread's sandboxed kernel, where the conversation's
DataFrames and variables live; once accepted it runs in the user's own kernel, which holds
only what the notebook's cells define (run top to bottom). A name the cell reads that no
code cell before it binds (an assignment, an import, a ``def``, a ``class``, a loop or
``with`` target) raises ``NameError`` there. This reads the cells as IPython would run them
(magics turned into calls first) and finds those names; where a cell before cannot be read
or binds names that cannot be known (``from x import *``), nothing is said rather than
something false.
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections.abc import Sequence
from typing import Any

from .outline import _cell_id, _cells, _text

#: Names an IPython kernel defines before any cell runs.
_IPYTHON_NAMES = frozenset({"get_ipython", "display", "In", "Out", "exit", "quit", "_", "__", "___",
                            "_i", "_ii", "_iii", "_oh", "_ih", "_dh", "__name__", "__file__"})
_KNOWN = frozenset(dir(builtins)) | _IPYTHON_NAMES


def _python(source: str) -> str | None:
    """The cell as IPython runs it (``%magic`` and ``!cmd`` as calls), or ``None`` when it is
    not Python."""
    from IPython.core.inputtransformer2 import TransformerManager

    try:
        code = TransformerManager().transform_cell(source)
        ast.parse(code)
    except (SyntaxError, ValueError, IndexError):
        return None
    return code


def _walk(table: symtable.SymbolTable, top: bool, bound: set[str], used: set[str]) -> None:
    for symbol in table.get_symbols():
        name = symbol.get_name()
        binds = symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()
        if top and binds:
            bound.add(name)
        elif not top and symbol.is_declared_global() and binds:
            bound.add(name)  # `global x` then `x = ...` in a function the cell calls
        if symbol.is_referenced() and (top or symbol.is_global()):
            used.add(name)
    for child in table.get_children():
        _walk(child, False, bound, used)


def cell_names(source: str) -> tuple[set[str], set[str]] | None:
    """The names a code cell binds at the top level, and the names it reads that it does not
    bind itself; ``None`` when it cannot be read or binds unknowable names (a star import).

    >>> bound, free = cell_names("import pandas as pd\\nrev = pd.read_parquet(path)\\nprint([r for r in rev])")
    >>> sorted(bound), sorted(free)
    (['pd', 'rev'], ['path'])
    >>> cell_names("%matplotlib inline\\nx = 1")[0]
    {'x'}
    >>> cell_names("from os import *") is None
    True
    """
    code = _python(source)
    if code is None:
        return None
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(ast.parse(code))):
        return None
    bound: set[str] = set()
    used: set[str] = set()
    _walk(symtable.symtable(code, "<cell>", "exec"), True, bound, used)
    return bound, {n for n in used - bound if n not in _KNOWN}


def cell_needs(nb: dict[str, Any], changes: Sequence[Any]) -> dict[str, tuple[list[str], list[str]]]:
    """For each proposed code cell (by change id), the names it reads that it does not bind
    itself, split in two: those no code cell before it defines (missing in the user's kernel),
    and those the notebook's cells before it define (missing in the sandbox, where the
    notebook's cells never ran). The notebook is ``nb`` with the proposal's earlier changes
    applied; a cell whose names cannot be known is left out. The changes are
    ``ProposedChange``s, already checked against ``nb``.

    >>> from jupyter_analyst.notebooks.proposals import read_changes
    >>> nb = {"cells": [{"id": "a", "cell_type": "code", "source": "import pandas as pd"}]}
    >>> changes = read_changes(nb, [
    ...     {"op": "insert", "after": "a", "source": "print(pd.DataFrame(rev).shape)", "reason": "r"},
    ...     {"op": "insert", "after": "", "source": "pd.options.display.width = 80", "reason": "r"}])
    >>> list(cell_needs(nb, changes).values())
    [(['rev'], ['pd']), (['pd'], [])]
    """
    # The notebook as (id, kind, source, inserted-after) rows, changed in the proposal's order.
    rows: list[tuple[str, str, str, str | None]] = [
        (_cell_id(c, i), str(c.get("cell_type")), _text(c.get("source")), None) for i, c in enumerate(_cells(nb))]
    needs: dict[str, tuple[list[str], list[str]]] = {}
    for change in changes:
        ids = [r[0] for r in rows]
        if change.op == "insert":
            at = 0 if not change.after else ids.index(change.after) + 1
            while at < len(rows) and rows[at][3] == (change.after or ""):
                at += 1  # after the proposal's cells already inserted there, as applying does
            rows.insert(at, (change.change_id, change.cell_type, change.source, change.after or ""))
        elif change.op == "replace":
            at = ids.index(change.cell_id)
            rows[at] = (change.change_id, change.cell_type, change.source, None)
        else:
            del rows[ids.index(change.cell_id)]
            continue
        if change.cell_type != "code":
            continue
        mine = cell_names(change.source)
        if mine is None:
            continue
        defined: set[str] = set()
        for _, kind, source, _ in rows[:at]:
            names = cell_names(source) if kind == "code" else (set(), set())
            if names is None:
                break  # a cell before binds what cannot be known: say nothing
            defined |= names[0]
        else:
            needs[change.change_id] = (sorted(mine[1] - defined), sorted(mine[1] & defined))
    return needs


def undefined_names(nb: dict[str, Any], changes: Sequence[Any]) -> dict[str, list[str]]:
    """For each proposed code cell (by change id), the names it reads that no code cell
    before it defines (see :func:`cell_needs`); a cell with none is left out.

    >>> from jupyter_analyst.notebooks.proposals import read_changes
    >>> nb = {"cells": [{"id": "a", "cell_type": "code", "source": "import pandas as pd"}]}
    >>> changes = read_changes(nb, [
    ...     {"op": "insert", "after": "a", "source": "print(pd.DataFrame(rev).shape)", "reason": "r"},
    ...     {"op": "insert", "after": "", "source": "pd.options.display.width = 80", "reason": "r"}])
    >>> list(undefined_names(nb, changes).values())
    [['rev'], ['pd']]
    """
    return {change_id: absent for change_id, (absent, _) in cell_needs(nb, changes).items() if absent}
