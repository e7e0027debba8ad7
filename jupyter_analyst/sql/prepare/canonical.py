"""The last pass: the canonical text a query's fingerprint is taken of.

Layout, keyword and identifier case, quoting and the names of table aliases do not change
it; anything that changes the result does (a value, a column, an output name, an aggregate).
"""

from __future__ import annotations

from sqlglot import exp

from .preparation import Preparation


def canonicalize(prep: Preparation) -> Preparation:
    """The pass: ``prep.canonical``, the text of ``prep.qualified`` (renamed in place: see
    :func:`canonical_sql`).

    >>> import sqlglot
    >>> tree = sqlglot.parse_one('SELECT "o"."x" FROM "t" AS "o"')
    >>> canonicalize(Preparation("", schema={}, dialect="duckdb", qualified=tree)).canonical
    'SELECT "_t0"."x" FROM "t" AS "_t0"'
    """
    prep.canonical = canonical_sql(prep.qualified, copy=False)
    return prep


def canonical_sql(qualified: exp.Expression, *, copy: bool = True) -> str:
    """Canonical text: table and subquery aliases renamed in order of appearance.

    >>> import sqlglot
    >>> a = canonical_sql(sqlglot.parse_one('SELECT "s"."x" FROM "t" AS "s"'))
    >>> a == canonical_sql(sqlglot.parse_one('select "q"."x" from "t" as "q"'))
    True
    """
    tree = qualified.copy() if copy else qualified  # ``copy=False`` renames in place
    renames: dict[str, str] = {}
    for node in tree.find_all(exp.Table, exp.Subquery):
        alias = node.alias
        if alias and alias not in renames:
            renames[alias] = f"_t{len(renames)}"
    for node in tree.find_all(exp.TableAlias):
        if node.name in renames:
            node.set("this", exp.to_identifier(renames[node.name], quoted=True))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table], quoted=True))
    # The generator changes what it writes out: without a copy only when it is ours to change.
    return tree.sql(dialect="duckdb", normalize=True, pretty=False, copy=copy)
