"""The ``find`` tool: resolving loose names ("the sales table", "that revenue chart", "amount").

The ``find`` tool searches the data source's tables and columns, the thread's datasets
and artifacts, and what the team's context folder defines (metrics and dimensions by name,
label and synonym; verified queries by the questions they answer) with a fuzzy score, so the
model looks a name up instead of guessing it, and finds the team's definition before making
its own.
Scores combine the similarity of the whole strings with word overlap, because users name
things by a word they remember ("revenue") more often than by the exact identifier
("monthly_revenue_by_region").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ...artifacts import Artifact
from ...errors import InvalidArguments
from ..spec import ToolSpec
from ..spec import CallContext, StepOutcome, StepPlan
from .provenance import CODE_ITEMS, MadeBy, made_by, step_text, steps_by_key, wants_code
from .result_models import ResultModel

if TYPE_CHECKING:
    from ...knowledge import TeamContext
    from ..environment import ThreadEnvironment

Kind = Literal["table", "column", "dataset", "artifact", "metric", "dimension", "verified_query"]
KINDS: tuple[Kind, ...] = ("table", "column", "dataset", "artifact", "metric", "dimension", "verified_query")
#: The most characters of a verified query's SQL a match carries.
SQL_CHARS = 2_000

#: Matches scoring below this are not worth showing.
MIN_SCORE = 0.45
#: A word of the query and a word of a name this alike are the same word mistyped ("revnue").
SAME_WORD = 0.8
#: The most weak matches shown when nothing matches well: enough to see what is near.
WEAK_LIMIT = 3
#: How many matches are returned.
LIMIT = 10
#: What ranking adds to the team's definitions' scores (never to the score shown): where one
#: fits about as well as a bare column, the definition comes first, since it is what the team
#: settled; a column that fits clearly better still leads.
DEFINITION_LEAD = {"metric": 0.1, "verified_query": 0.1}
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "of", "by", "table", "chart", "dataset", "data", "that", "this", "my", "column", "file"}


class Match(BaseModel):
    """One candidate for what the user meant."""

    kind: Kind
    name: str
    """The exact name to use: a table, ``table.column``, a dataset variable or a file name."""
    score: float
    id: str | None = None
    """The artifact id, for artifacts and datasets."""
    detail: str | None = None
    weak: bool | None = None
    """True when no word of the query is in the name (only letters in common): most likely
    not what was meant. Left out otherwise."""
    definition: str | None = None
    """A metric's or dimension's definition in SQL terms (the team's: compute it so)."""
    defined_in: str | None = None
    """The context folder's file and line that defines it."""
    sql: str | None = None
    """A verified query's SQL (run it with run_sql, as it is or adapted): always given, since
    it is the query's definition, like a metric's ``definition``."""
    description: str | None = None
    """A metric's or dimension's description: what the team means by it."""
    synonyms: list[str] | None = None
    """The other words the team uses for a metric or dimension."""
    in_kernel: bool | None = None
    """False for an earlier dataset of a name that now holds another: the kernel holds it
    under no name (fetch it again to use it). Left out otherwise."""


#: Words in a query that say what kind of thing is meant.
_KIND_WORDS: dict[str, Kind] = {
    "table": "table", "tables": "table", "column": "column", "columns": "column", "field": "column",
    "dataset": "dataset", "dataframe": "dataset", "chart": "artifact", "plot": "artifact",
    "figure": "artifact", "file": "artifact", "image": "artifact",
    "metric": "metric", "metrics": "metric", "measure": "metric", "kpi": "metric",
    "dimension": "dimension", "dimensions": "dimension",
    "verified": "verified_query", "query": "verified_query", "queries": "verified_query",
}


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _words(text: str) -> set[str]:
    words = _WORD.findall(text.lower().replace("_", " "))
    return {_singular(w) for w in words if w not in _STOP} or {_singular(w) for w in words}


def kind_hint(query: str) -> Kind | None:
    """The kind of thing a query names, if it says ("the region *table*")."""
    hits = {_KIND_WORDS[w] for w in _WORD.findall(query.lower()) if w in _KIND_WORDS}
    return hits.pop() if len(hits) == 1 else None


def score(query: str, name: str) -> float:
    """How well ``name`` fits ``query``, from 0 to 1.

    >>> score("revenue", "monthly_revenue") > score("revenue", "regions")
    True
    >>> score("the orders table", "orders")
    1.0
    """
    q, n = query.lower().strip(), name.lower()
    q_words, n_words = _words(q), _words(n)
    if q_words and q_words == n_words:
        return 1.0
    ratio = difflib.SequenceMatcher(None, " ".join(sorted(q_words)) or q, n.replace("_", " ")).ratio()
    overlap = len(q_words & n_words) / len(q_words) if q_words else 0.0
    contained = 0.85 if q_words and all(any(w in part for part in n_words) for w in q_words) else 0.0
    # Near-misses of one word ("revnue") count through the per-word best ratio.
    fuzzy_words = (
        sum(max((difflib.SequenceMatcher(None, w, m).ratio() for m in n_words), default=0.0) for w in q_words)
        / len(q_words)
        if q_words
        else 0.0
    )
    return round(max(ratio, 0.9 * overlap, contained, 0.8 * fuzzy_words), 3)


def shares_a_word(query: str, name: str) -> bool:
    """Whether a word of ``query`` is in ``name``: the same word, one inside the other
    ("delay" in "dep_delay"), one mistyped ("revnue") or abbreviated ("qty"). Letters in
    common are not enough.

    >>> shares_a_word("revnue", "revenue"), shares_a_word("carrier name", "airlines name")
    (True, True)
    >>> shares_a_word("qty", "quantity"), shares_a_word("ticket fare price", "arr_time")
    (True, False)
    """
    q_words, n_words = _words(query), _words(name)
    return any(w in m or m in w or _abbreviates(w, m) or difflib.SequenceMatcher(None, w, m).ratio() >= SAME_WORD
               for w in q_words for m in n_words if min(len(w), len(m)) >= 2)


def _abbreviates(short: str, word: str) -> bool:
    """``short`` is ``word`` with letters left out, its first kept ("amt" of "amount")."""
    if len(short) < 3 or len(short) >= len(word) or short[0] != word[0]:
        return False
    rest = iter(word)
    return all(letter in rest for letter in short)


def code_score(query: str, code: str) -> float:
    """How well ``query`` fits the code or SQL that made something: below a name's score,
    so a name that fits wins, and only when every word of the query is in the code.

    >>> code_score("delay histogram", "ax.hist(df.dep_delay); ax.set_title('Delays')")
    0.0
    >>> code_score("delay", "ax.hist(df.dep_delay); ax.set_title('Delays')")
    0.7
    """
    q_words = _words(query)
    c_words = _words(code)
    if not q_words or not c_words:
        return 0.0
    return 0.7 if all(any(w in c for c in c_words) for w in q_words) else 0.0


def find(
    query: str,
    *,
    schema: Mapping[str, Mapping[str, str]],
    datasets: Mapping[str, str] | None = None,
    artifacts: Sequence[Artifact] = (),
    code: Mapping[str, str] | None = None,
    team: TeamContext | None = None,
    kind: Kind | None = None,
    limit: int = LIMIT,
) -> list[Match]:
    """The best matches for ``query`` among everything that has a name.

    ``datasets`` maps a dataset's variable name to its artifact id; ``code`` an artifact id to
    the code or SQL of the step that made it, searched too (a chart is often remembered by
    what it shows, which its code names). ``team``: what the team's context folder defines.

    >>> schema = {"orders": {"order_id": "INTEGER", "revenue": "DOUBLE"}, "regions": {"region": "VARCHAR"}}
    >>> [m.name for m in find("revenue", schema=schema)][:1]
    ['orders.revenue']
    """
    candidates: list[Match] = []
    hinted = kind_hint(query)

    code = code or {}

    def offer(found_kind: Kind, name: str, searched: Iterable[str], described: str = "", **extra: Any) -> None:
        if kind is not None and kind != found_kind:
            return
        searched = [text for text in searched if text]
        best = max(score(query, text) for text in searched)
        strong = any(shares_a_word(query, text) for text in searched)
        in_code = max(code_score(query, code.get(extra.get("id") or "", "")), code_score(query, described))
        if in_code > best:
            best, strong = in_code, True
            if not described:
                extra["detail"] = f"{extra.get('detail')}; matched in the code that made it"
        if hinted == found_kind:
            best = min(1.0, best + 0.05)
        if strong:  # a word in common is worth showing, however long the rest of the query
            best = max(best, MIN_SCORE)
        if best >= MIN_SCORE:
            candidates.append(Match(kind=found_kind, name=name, score=round(best, 2), weak=None if strong else True,
                                    **extra))

    for table, columns in schema.items():
        offer("table", table, [table], detail=f"{len(columns)} columns")
        for column, type_ in columns.items():
            # The table's name counts for a column only beside a word of its own: else every
            # column of a table the query names would match (the table itself is offered).
            searched = [column, f"{table} {column}"] if shares_a_word(query, column) else [column]
            offer("column", f"{table}.{column}", searched, detail=type_)
    datasets = datasets or {}
    for name, artifact_id in datasets.items():
        offer("dataset", name, [name], id=artifact_id, detail="a DataFrame in the kernel")
    # A dataset's file is an artifact too: it is found once, as the dataset (unless only
    # artifacts are asked for). A dataset whose name now holds another is found as a dataset,
    # saying it is not in the kernel: else a search by what it holds finds only the newer one.
    offered = set(datasets.values()) if kind != "artifact" else set()
    for artifact in artifacts:
        if artifact.artifact_id in offered:
            continue
        if artifact.type == "dataset" and kind != "artifact":
            now = datasets.get(artifact.name)
            offer("dataset", artifact.name, [artifact.name, artifact.artifact_id], id=artifact.artifact_id,
                  in_kernel=False, detail=f"an earlier `{artifact.name}`, not in the kernel"
                         + (f" (the name now holds {now})" if now else "") + ": fetch it again to use it")
        else:
            offer("artifact", artifact.name, [artifact.name, artifact.artifact_id], id=artifact.artifact_id,
                  detail=artifact.type)
    if team is not None:
        _offer_team(offer, team)
    # The team's definitions first, where they fit as well: they are what the team settled.
    order = {"metric": -2, "verified_query": -1, "dataset": 0, "table": 1, "artifact": 2, "dimension": 2.5,
             "column": 3}
    # A name that shares a word with the query ranks above any that shares only letters.
    candidates.sort(key=lambda m: (bool(m.weak), -(m.score + DEFINITION_LEAD.get(m.kind, 0.0)), order[m.kind], m.name))
    return candidates[:WEAK_LIMIT] if candidates and candidates[0].weak else candidates[:limit]


def _offer_team(offer: Any, team: TeamContext) -> None:
    """Offer what the team's context folder defines."""
    for metric in team.metrics:
        offer("metric", metric.name, [metric.name, metric.label, *metric.synonyms], described=metric.description,
              detail=metric.label or None, definition=metric.formula(), defined_in=f"{team.folder}/{metric.origin}",
              description=metric.description or None, synonyms=metric.synonyms or None)
    for dim in team.dimensions:
        offer("dimension", f"{dim.table}.{dim.name}", [dim.name, dim.label, *dim.synonyms], described=dim.description,
              detail=f"{dim.type} dimension", definition=dim.expr, defined_in=f"{team.folder}/{dim.origin}",
              description=dim.description or None, synonyms=dim.synonyms or None)
    for verified in team.queries:
        sql = verified.sql if len(verified.sql) <= SQL_CHARS else verified.sql[: SQL_CHARS - 1] + "…"
        offer("verified_query", verified.file.removeprefix("queries/"), verified.questions,
              detail=f"answers: {' | '.join(verified.questions)}; verified by {verified.verified_by} on "
                     f"{verified.verified_at}", sql=sql, defined_in=f"{team.folder}/{verified.file}")


def run_find(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    query = str(args.get("query") or "").strip()
    if not query:
        raise InvalidArguments("find needs a 'query': the words the user used", hint='e.g. {"query": "sales"}')
    kind = args.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise InvalidArguments(f"find cannot look for {kind!r}", hint=f"kind is one of: {', '.join(KINDS)}")
    artifacts = env.artifacts.list(ctx.thread_id)
    steps = steps_by_key(env.artifacts.steps(ctx.thread_id))
    by_id = {a.artifact_id: a for a in artifacts}
    matches = find(
        query,
        schema=env.source.schema(),
        datasets=env.dataset_ids(),
        artifacts=artifacts if kind in (None, "artifact", "dataset") else (),
        code={a.artifact_id: step_text(steps.get(a.logical_key or "")) for a in artifacts},
        team=env.team,
        kind=kind,
    )
    found = [m.model_dump(exclude_none=True) for m in matches]
    if wants_code(args.get("with_code")):
        # The producing step of the best few datasets and artifacts found.
        for entry in [e for e in found if e.get("id") in by_id][:CODE_ITEMS]:
            entry.update(made_by(by_id[entry["id"]], steps))
    result: dict[str, Any] = {"query": query, "matches": found}
    if not matches:
        # Said as a finding, not an invitation to search again: the schema is in the system message.
        result["note"] = (f"no {kind} matches {query!r}; look without a kind, or ask the user" if kind else
                          f"nothing in the data or the thread is named like {query!r}: it is likely not in the data "
                          "(every table and column is in the system message): say so, or ask the user")
    elif matches[0].weak:
        result["note"] = (f"no good match: no name shares a word with {query!r}, these only share letters; "
                          "it is likely not in the data: say so, or ask the user")
    return StepOutcome(status="ok", result=result)


class FoundMatch(Match, MadeBy):
    """A match as the result gives it (fields that are ``None`` left out), with the step that
    made it when its code is asked for."""


class FindResult(ResultModel):
    """The best matches for the user's words, and a note when none is good."""

    query: str
    matches: list[FoundMatch]
    note: str | None = None


FIND = ToolSpec(
    name="find",
    description="Fuzzy search of tables, columns, datasets, artifacts and the team's metrics, dimensions and "
                "verified queries: the best matches' names, ids and definitions.",
    properties={
        "query": {"type": "string", "description": "the user's words"},
        "kind": {"type": "string", "enum": list(KINDS), "description": "only this kind"},
        "with_code": {"type": "boolean", "description": "also the code or SQL behind each dataset and "
                                                        "artifact (a verified query's SQL comes always)"},
    },
    required=("query",),
    payload="query",
    aliases={"q": "query", "name": "query", "text": "query", "search": "query", "type": "kind",
             "code": "with_code", "include_code": "with_code"},
    run=run_find,
    looks_only=True,
    result_model=FindResult,
)
