"""A turn's suggested metric saved to the team's context folder, when a person says so: the
``suggestions`` its ``turn_ended`` recorded (read from the thread's events, never from the
request) made a dbt metric by knowledge/metric_files.py, shown first (nothing written) and
then written.

Who may is the surface's business (the server's ``context_editors``); the thread is the
caller's, looked up as the user's.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError
from ..events import MetricSuggestion, TurnEnded
from ..knowledge import MetricDraft, SavedMetric, save_metric
from ..store import ThreadStore


def turn_suggestion(store: ThreadStore, thread_id: str, *, turn: int | None, index: int, user: str | None = None,
                    ) -> MetricSuggestion:
    """Suggestion ``index`` of turn ``turn`` (default: the thread's last).

    Raises:
        ConfigError: no such turn (``turn_not_found``), or the turn suggested no such metric
            (``suggestion_not_found``).
    """
    store.get_thread(thread_id, user=user)
    turns = store.turns(thread_id)
    chosen = turns[-1] if turns and turn is None else next((t for t in turns if t.number == turn), None)
    if chosen is None:
        raise ConfigError(f"the thread {thread_id} has no turn {turn if turn is not None else 'yet'}",
                          reason="turn_not_found")
    events = store.events(thread_id, turn_id=chosen.turn_id, types=["turn_ended"])
    ended = next((e for e in events if isinstance(e, TurnEnded)), None)
    offered = ended.suggestions if ended is not None else []
    if not 0 <= index < len(offered):
        raise ConfigError(f"turn {chosen.number} of {thread_id} suggested "
                          f"{len(offered) or 'no'} metric{'s' * (len(offered) != 1)}: there is no suggestion {index}",
                          reason="suggestion_not_found")
    return offered[index]


def save_suggestion(store: ThreadStore, thread_id: str, folder: Path, *, turn: int | None, index: int = 0,
                    name: str | None = None, write: bool, user: str | None = None) -> SavedMetric:
    """The metric a turn suggested, as its file in ``folder``: written when ``write``, else
    only shown. ``name`` replaces the proposed name. Blocking (it reads the store and the
    folder, and may write): call it off the event loop.

    Raises:
        ConfigError: see :func:`turn_suggestion` and ``knowledge.save_metric``.
    """
    suggestion = turn_suggestion(store, thread_id, turn=turn, index=index, user=user)
    draft = MetricDraft(name=name or suggestion.name, table=suggestion.table, agg=suggestion.agg,
                        expr=suggestion.expr, filters=suggestion.filters)
    return save_metric(folder, draft, dialect=suggestion.dialect, write=write)
