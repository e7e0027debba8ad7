"""Which functions the model's SQL may call: an allow-list per dialect, judged everywhere.

A function can read files (``read_text``), reveal the host (``getenv``, ``duckdb_settings``),
run SQL given as text (``json_execute_serialized_sql``, ``query``, ``query_to_xml``) or change
state (``setval``, ``enable_logging``). A deny-list misses the next one, and a check of one
position (``FROM f()``) misses the others (``LATERAL f()``, a subquery, a join, a scalar
call, ``schema.f()``, ``x.f()``). So every function call anywhere in the tree is judged
against a list of the functions that only compute on values (``sql/allowed/<dialect>.txt``);
anything else is refused, and a function a later engine adds is refused until reviewed.

A call is judged by the name the engine will run, not the name the model wrote: sqlglot
turns many calls into typed nodes (``APPROX_DISTINCT`` -> ``ApproxDistinct``) and writes each
back in the source's dialect by its own rules. The names a typed node becomes are read off
the SQL it generates for that node alone, its operands replaced by placeholders (memoised per
node shape, so the cost is paid once per kind of call). Calls in a table position (``FROM``,
``JOIN``, ``LATERAL``) must also be one of the dialect's table functions.
"""

from __future__ import annotations

import functools
from importlib import resources

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel
from sqlglot.parser import Parser
from sqlglot.tokens import TokenType

from ...errors import SqlRejected

#: Dialects with their own list; any other uses the functions DuckDB's and PostgreSQL's share.
_LISTED = ("duckdb", "postgres", "sqlite", "trino", "bigquery", "snowflake", "databricks", "spark")
#: The package whose ``allowed/`` folder holds the lists (the SQL package's data: the engine's
#: walls in ``sealed.py`` read them too).
_LISTS = "jupyter_analyst.sql"

#: Words of generated SQL that are syntax, not functions: keywords (``CAST(x AS INT)``,
#: ``CASE WHEN``), date parts, and names of types. Everything else a node's SQL names, called
#: or bare (``CURRENT_USER``, ``NEXT VALUE FOR``), is a function and must be allowed.
_SYNTAX = frozenset("""
    cast try_cast extract exists in any all some array struct map row values filter over within interval
    coalesce nullif if case when then else end columns grouping left right replace trim position overlay
    substring collate unnest range not and or xor is as alias lambda distinct on using group order partition
    ignore respect nulls default select from where with join ordinality between by asc desc first last
    current rows groups unbounded preceding following exclude ties others no list union similar escape glob
    regexp rlike ilike like null true false unknown for to at zone leading trailing both separator local
    year years quarter quarters month months week weeks day days hour hours minute minutes second seconds
    millisecond milliseconds microsecond microseconds nanosecond nanoseconds epoch dow doy isodow isoyear
    yearweek decade century millennium dayofweek dayofyear dayofmonth weekday weekofyear julian timezone
    timezone_hour timezone_minute era ms us ns s m h d y mon value error empty keep without wrapper quotes
    omit conditional unconditional passing returning format json encoding utf8 strict lax object key keys
    unique absent symmetric asymmetric name
""".split())

@functools.cache
def allowed(dialect: str) -> tuple[frozenset[str], frozenset[str]]:
    """The functions ``dialect``'s SQL may call anywhere, and those it may call as tables.

    >>> scalar, table = allowed("duckdb")
    >>> "sum" in scalar, "read_text" in scalar, "range" in table, "read_csv" in table
    (True, False, True, False)
    """
    if dialect not in _LISTED:
        duck, duck_tables = allowed("duckdb")
        pg, pg_tables = allowed("postgres")
        return duck & pg, duck_tables & pg_tables
    text = resources.files(_LISTS).joinpath("allowed", f"{dialect}.txt").read_text(encoding="utf-8")
    sections: dict[str, set[str]] = {"scalar": set(), "table": set()}
    current = sections["scalar"]
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().lower()
        if line.startswith("[") and line.endswith("]"):
            current = sections[line[1:-1]]
        elif line:
            current.add(line)
    return frozenset(sections["scalar"] | sections["table"]), frozenset(sections["table"])


def _refuse(message: str) -> SqlRejected:
    return SqlRejected(
        message,
        reason="sql_function_not_allowed",
        hint="only functions that compute on values are available: no reading files, settings, the "
             "catalogue or the session, no running SQL given as text; query the source's tables",
    )


def check_functions(tree: exp.Expression, dialect: str) -> None:
    """Refuse any call, anywhere in ``tree``, of a function ``dialect``'s list does not allow.

    >>> check_functions(sqlglot.parse_one("SELECT SUM(x), approx_count_distinct(y) FROM t"), "duckdb")
    >>> check_functions(sqlglot.parse_one("SELECT * FROM t, LATERAL read_text('/etc/passwd') s"), "duckdb")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: function read_text() is not allowed (hint: only functions that compute on values are available: no reading files, settings, the catalogue or the session, no running SQL given as text; query the source's tables)
    """
    for node in tree.find_all(exp.Func):
        check_call(node, dialect)


def check_call(node: exp.Func, dialect: str) -> None:
    """Refuse the one call ``node`` (not its operands) unless ``dialect`` allows it there."""
    scalar, table = allowed(dialect)
    names = called_names(node, dialect)
    for name in names:
        if name not in scalar:
            raise _refuse(f"function {name}() is not allowed")
    if _in_table_position(node):
        for name in names:
            if name not in table:
                raise _refuse(f"table function {name}() is not allowed")


def _in_table_position(node: exp.Func) -> bool:
    """Whether ``node`` is called as a table (``FROM f()``, ``JOIN f()``, ``LATERAL f()``)."""
    parent = node.parent
    while isinstance(parent, exp.Dot):  # FROM schema.f()
        parent = parent.parent
    return isinstance(parent, exp.Table | exp.Lateral | exp.From | exp.Join)


def called_names(node: exp.Func, dialect: str) -> tuple[str, ...]:
    """The function names the engine is asked to call for ``node`` (operands aside).

    >>> called_names(sqlglot.parse_one("SELECT APPROX_DISTINCT(x)").find(exp.Func), "duckdb")
    ('approx_count_distinct',)
    >>> called_names(sqlglot.parse_one("SELECT main.GetEnv('HOME')").find(exp.Func), "duckdb")
    ('getenv',)
    """
    if isinstance(node, exp.Anonymous):
        return (str(node.name).lower(),)
    key = (type(node), dialect, _shape(node))
    names = _TYPED.get(key)
    if names is None:
        names = _TYPED[key] = _generated_names(node, dialect)
        if len(_TYPED) > _TYPED_KEPT:
            _TYPED.pop(next(iter(_TYPED)))
    return names


#: The names each shape of typed node becomes, per dialect (oldest first, bounded).
_TYPED: dict[tuple, tuple[str, ...]] = {}
_TYPED_KEPT = 4096
#: Arguments kept as they are when a node is written back alone: they shape what it becomes.
_LEAVES = (exp.DataType, exp.Var, exp.Literal, exp.Boolean, exp.Null)


def _shape(node: exp.Expression) -> tuple:
    """What of ``node``'s arguments its generated SQL may depend on beyond their being operands:
    kept leaves (types, keywords, literals' kinds), and how many operands a list holds."""
    return tuple(
        (key, tuple(_leaf(v) for v in value) if isinstance(value, list) else _leaf(value))
        for key, value in node.args.items()
    )


def _leaf(value: object) -> object:
    if isinstance(value, exp.Literal):
        return ("literal", value.is_string)
    if isinstance(value, exp.Var):
        return ("var", value.name)
    if isinstance(value, exp.DataType):  # nested types' field names are never calls
        return ("type", value.this, len(value.expressions))
    if isinstance(value, exp.Boolean | exp.Null):
        return (type(value).__name__, value.this)
    if isinstance(value, exp.Star):  # ``*`` (its EXCLUDE/REPLACE lists are operands)
        return "star"
    if isinstance(value, exp.Expression):
        return "operand"
    return value if isinstance(value, str | int | float | bool | type(None)) else repr(value)


def _stand_in(value: object) -> object:
    """An argument for the node written back alone: operands become placeholders."""
    if isinstance(value, list):
        return [_stand_in(v) for v in value]
    if isinstance(value, _LEAVES):
        return value.copy()
    if isinstance(value, exp.Star):
        return exp.Star()
    if isinstance(value, exp.Expression):
        return exp.Placeholder()
    return value


def _generated_names(node: exp.Func, dialect: str) -> tuple[str, ...]:
    alone = type(node)(**{key: _stand_in(value) for key, value in node.args.items()})
    try:
        text = alone.sql(dialect=dialect, unsupported_level=ErrorLevel.IGNORE)
    except Exception as exc:  # noqa: BLE001 - a node sqlglot cannot write back is not run either
        raise _refuse(f"function {type(node).__name__}() could not be checked ({type(exc).__name__})") from None
    return _names_in(text, dialect)


def _names_in(text: str, dialect: str) -> tuple[str, ...]:
    """The function names a snippet of generated SQL calls or names bare, syntax aside.

    >>> _names_in("DATE_PART(?, ?) + CAST(? AS DECIMAL(10, 2))", "duckdb")
    ('date_part',)
    >>> _names_in("NEXT VALUE FOR ?", "duckdb")
    ('next',)
    >>> _names_in("CURRENT_USER", "postgres")
    ('current_user',)
    """
    tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    names: list[str] = []
    for i, token in enumerate(tokens):
        word = token.text.lower()
        if token.token_type in _NOT_NAMES or word in _SYNTAX or token.token_type in Parser.TYPE_TOKENS:
            continue
        called = i + 1 < len(tokens) and tokens[i + 1].token_type == TokenType.L_PAREN
        named = token.token_type == TokenType.IDENTIFIER or word.isidentifier()
        # A call of any name; or a keyword that is a function without parentheses
        # (``CURRENT_USER``, ``NEXT VALUE FOR``). Other bare names are columns or struct fields.
        if named and (called or token.token_type not in (TokenType.VAR, TokenType.IDENTIFIER)):
            names.append(word)
    return tuple(dict.fromkeys(names))


_NOT_NAMES = frozenset({TokenType.STRING, TokenType.NUMBER, TokenType.PLACEHOLDER, TokenType.PARAMETER})
