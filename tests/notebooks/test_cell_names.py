"""The names a proposed code cell reads that the user's notebook does not define before it:
the user's kernel has only what the notebook's cells define, not the sandbox's variables."""

from __future__ import annotations

import pytest

from jupyter_analyst.notebooks import read_changes
from jupyter_analyst.notebooks.cell_names import undefined_names


def notebook(*sources: str) -> dict:
    return {"cells": [{"id": f"c{i}", "cell_type": "code", "source": s} for i, s in enumerate(sources, 1)]}


def missing(nb: dict, *changes: dict) -> list[list[str]]:
    return list(undefined_names(nb, read_changes(nb, list(changes))).values())


def insert(after: str, source: str) -> dict:
    return {"op": "insert", "after": after, "source": source, "reason": "r"}


@pytest.mark.parametrize("source, names", [
    ("print(rev.shape)", ["rev"]),
    ("pd.concat([rev, rev])", ["pd", "rev"]),  # pd is the sandbox's, not the user's
    ("import pandas as pd\nrev = pd.DataFrame({'a': [1]})\nprint(rev)", []),
    ("def f(x):\n    return x * scale\nprint([f(v) for v in range(3)])", ["scale"]),
    ("for row in rows:\n    print(row)", ["rows"]),
    ("%matplotlib inline\nprint(len([1]))", []),
    ("x = !ls\nprint(x)", []),
    ("try:\n    1 / 0\nexcept ZeroDivisionError as err:\n    print(err)", []),
    ("display(get_ipython())", []),  # what every IPython kernel has
])
def test_a_cell_alone_needs_what_it_reads_and_does_not_bind(source, names):
    assert missing(notebook("y = 1"), insert("c1", source)) == ([names] if names else [])


def test_only_cells_before_the_change_count_in_the_proposals_order():
    nb = notebook("import pandas as pd", "rev = pd.read_csv('r.csv')")
    # After c2, both names exist; at the top, neither; a replaced c2 no longer defines rev.
    assert missing(nb, insert("c2", "print(pd, rev)")) == []
    assert missing(nb, insert("", "print(pd, rev)")) == [["pd", "rev"]]
    assert missing(nb, {"op": "replace", "cell_id": "c2", "source": "rev2 = 1", "reason": "r"},
                   insert("c2", "print(rev)")) == [["rev"]]
    # A cell the same proposal inserts earlier defines names for the ones after it.
    assert missing(nb, insert("", "import numpy as np"), insert("", "print(np.pi)")) == []
    # A deleted cell defines nothing any more.
    assert missing(nb, {"op": "delete", "cell_id": "c1", "reason": "r"}, insert("c2", "print(pd)")) == [["pd"]]


def test_nothing_is_said_where_the_names_cannot_be_known():
    assert missing(notebook("from helpers import *"), insert("c1", "print(rev)")) == []
    assert missing(notebook("y = 1"), insert("c1", "print(rev")) == []  # not Python: the sandbox says why
    assert missing(notebook("y = 1"), {"op": "insert", "after": "c1", "cell_type": "markdown",
                                       "source": "uses rev", "reason": "r"}) == []
