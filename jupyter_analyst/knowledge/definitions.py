"""What a team's context folder defines, as the engine keeps it: rules, metrics, dimensions
and verified queries, each with the file and line it came from.

These are plain pydantic models of our own, made once from dbt's semantic-layer objects
(semantic.py) and the verified queries' headers (verified.py), and kept as a digest
(loading.py): a turn whose folder has not changed reads the digest, never the YAML or the
library that parses it.
"""

from __future__ import annotations

from pydantic import BaseModel

#: The most characters of ``rules.md`` the prompt carries.
RULES_CHARS = 2_000
#: The most names of each kind the prompt's one-line index lists.
INDEX_NAMES = 12


class Origin(BaseModel):
    """Where a definition is written: a file of the folder (relative to it) and its line."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


#: MetricFlow's aggregation types as SQL.
AGGREGATES = {
    "sum": "SUM({})", "count": "COUNT({})", "count_distinct": "COUNT(DISTINCT {})", "average": "AVG({})",
    "min": "MIN({})", "max": "MAX({})", "median": "MEDIAN({})", "sum_boolean": "SUM(CAST({} AS INTEGER))",
    "percentile": "PERCENTILE({})",
}


def aggregate_sql(agg: str, expr: str) -> str:
    """A measure's aggregate as SQL.

    >>> aggregate_sql("count_distinct", "customer_id")
    'COUNT(DISTINCT customer_id)'
    """
    return AGGREGATES.get(agg, agg.upper() + "({})").format(expr)


class Metric(BaseModel):
    """A metric of dbt's semantic layer, as far as the engine reads it."""

    name: str
    label: str = ""
    description: str = ""
    synonyms: list[str] = []
    """Other words the team uses for it (``config.meta.synonyms`` in the YAML)."""
    type: str
    """``simple``, ``ratio``, ``cumulative``, ``derived`` or ``conversion``."""
    table: str = ""
    """The table its measure is read from (the semantic model's ``model: ref('...')``)."""
    agg: str = ""
    """Its measure's aggregate (``sum``, ``count_distinct``...), for a simple metric."""
    expr: str = ""
    """What its measure aggregates: a column or an SQL expression."""
    filters: list[str] = []
    """Its filters (the metric's and its measure input's), as SQL on the table's columns."""
    origin: Origin

    def formula(self) -> str:
        """The definition in one line of SQL terms.

        >>> m = Metric(name="revenue", type="simple", table="orders", agg="sum", expr="amount",
        ...            filters=["status = 'completed'"], origin=Origin(file="m.yml", line=3))
        >>> m.formula()
        "SUM(amount) FROM orders WHERE status = 'completed'"
        """
        if not self.agg:
            return f"a {self.type} metric"
        where = f" WHERE {' AND '.join(self.filters)}" if self.filters else ""
        return f"{aggregate_sql(self.agg, self.expr)} FROM {self.table}{where}"


class Dimension(BaseModel):
    """A dimension of a semantic model: a column (or expression) of its table to group by."""

    name: str
    table: str
    expr: str
    type: str
    """``categorical`` or ``time``."""
    description: str = ""
    label: str = ""
    synonyms: list[str] = []
    origin: Origin

    @property
    def meaningful(self) -> bool:
        """Whether it says more than its column does: an expression, a description or synonyms.

        >>> o = Origin(file="m.yml", line=1)
        >>> Dimension(name="quantity", table="orders", expr="quantity", type="categorical", origin=o).meaningful
        False
        >>> Dimension(name="region", table="regions", expr="region", type="categorical", synonyms=["area"], origin=o).meaningful
        True
        """
        plain = self.expr.strip().strip('"').lower() in ("", self.name.lower())
        return not plain or bool(self.description.strip() or self.synonyms)


class VerifiedQuery(BaseModel):
    """A query the team verified: the questions it answers, who verified it and when."""

    file: str
    questions: list[str]
    verified_by: str
    verified_at: str
    """An ISO date."""
    sql: str


class ContextProblem(BaseModel):
    """A file of the folder that was not read, and why: one line, naming file and line."""

    file: str
    line: int | None = None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.message}"


class TeamContext(BaseModel):
    """Everything a context folder defines that could be read, and what could not."""

    folder: str
    """The folder's name as the model and the user are told it (never its full path)."""
    rules: str = ""
    metrics: list[Metric] = []
    dimensions: list[Dimension] = []
    queries: list[VerifiedQuery] = []
    problems: list[ContextProblem] = []
    digest: str = ""
    """The sha256 of the folder's files as read (loading.py's key): what was read of a query
    against this folder holds while it is unchanged."""

    @property
    def empty(self) -> bool:
        return not (self.rules or self.metrics or self.dimensions or self.queries)

    def metric(self, name: str) -> Metric | None:
        return next((m for m in self.metrics if m.name == name), None)

    def index_line(self) -> str:
        """What the folder defines, in one line (names, not definitions: ``find`` has those):
        the metrics, and the dimensions that mean more than their column (a dimension that
        is a plain column is in the schema already; listing it would send the model to
        ``find`` for nothing).

        >>> o = Origin(file="m.yml", line=1)
        >>> TeamContext(folder="context", metrics=[Metric(name="revenue", type="simple", origin=o)],
        ...             queries=[VerifiedQuery(file="q.sql", questions=["?"], verified_by="a",
        ...                                    verified_at="2026-01-01", sql="SELECT 1")]).index_line()
        'metrics: revenue; verified queries: 1'
        """
        parts = []
        for kind, names in (("metrics", [m.name for m in self.metrics]),
                            ("dimensions", [f"{d.table}.{d.name}" for d in self.dimensions if d.meaningful])):
            if names:
                more = f" and {len(names) - INDEX_NAMES} more" if len(names) > INDEX_NAMES else ""
                parts.append(f"{kind}: {', '.join(names[:INDEX_NAMES])}{more}")
        if self.queries:
            parts.append(f"verified queries: {len(self.queries)}")
        return "; ".join(parts)

    def prompt_section(self) -> str:
        """The system message's section: the rules (capped) and the one-line index."""
        if self.empty:
            return ""
        lines = [f"\nThe team's context ({self.folder}/, kept by the team; its definitions win over your own):"]
        if self.rules:
            rules = self.rules.strip()
            if len(rules) > RULES_CHARS:
                rules = rules[: RULES_CHARS - 1] + f"… (rules.md cut at {RULES_CHARS} characters)"
            lines += ["Rules:", rules]
        index = self.index_line()
        if index:
            lines.append(f"Defined ({index}): call find with the user's words before computing one of them, "
                         "and follow the definition it returns.")
        return "\n".join(lines) + "\n"
