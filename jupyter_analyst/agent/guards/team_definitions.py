"""What a turn's queries say about the team's context folder, read once the turn has answered:
the definitions they followed (cited with the answer, as its numbers are), and the measures
they computed that the folder lacks (offered to a person, who alone may save one).

Read off the hot path of the model's calls: after the answer, from the turn's own query
steps that ran (or were reused), on the host's copy of their SQL; nothing is run. What one
query says is kept in the workspace by the folder's digest, the dialect and the SQL, so a
turn whose queries are reused on an unchanged folder does not parse them again (nor import
the parser); a folder changed since (a metric saved) is read anew.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from ...errors import AnalystError
from ...events import MetricSuggestion
from ...receipts import DefinitionCitation
from ...step_kinds import QUERY_STEP, is_query_step

if TYPE_CHECKING:
    from ...knowledge import TeamContext
    from ..environment import ThreadEnvironment
    from ..spec import StepOutcome

#: Column types whose conditions say which period was asked about, not what a measure counts.
TIME_TYPES = ("DATE", "TIME", "TIMESTAMP", "DATETIME", "INTERVAL")
#: The most suggestions a turn offers, over all its queries.
MAX_SUGGESTIONS = 3
#: Changes when what a kept reading holds changes.
READING_VERSION = "1"


class StepRan(Protocol):
    """What is read of a step the turn ran (the loop's trace, which lives in a room above)."""

    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    outcome: StepOutcome


class _Reading(BaseModel):
    """What one query says of the folder (its call id left out: the same SQL in another step)."""

    definitions: list[DefinitionCitation] = []
    suggestions: list[MetricSuggestion] = []


def read_team_definitions(env: ThreadEnvironment, steps: Sequence[StepRan],
                          ) -> tuple[list[DefinitionCitation], list[MetricSuggestion]]:
    """The definitions the turn's queries followed, and the measures they computed that the
    folder lacks. Blocking (sqlglot, the source's schema, the workspace): call it off the event loop."""
    team = env.team
    queries = [(s.call_id, QUERY_STEP.text(s.arguments)) for s in steps
               if is_query_step(s.tool) and s.outcome.status == "ok" and QUERY_STEP.text(s.arguments).strip()]
    # No folder (none configured, none beside the workspace): nothing to cite, nowhere to save.
    if team is None or not team.digest or not queries:
        return [], []
    try:
        dialect = env.source.dialect
        schema = env.source.schema()
    except AnalystError:
        return [], []
    time_columns = sorted({column.lower() for columns in schema.values() for column, type_ in columns.items()
                           if any(t in str(type_).upper() for t in TIME_TYPES)})
    cited: dict[tuple[str, str], DefinitionCitation] = {}
    offered: dict[str, MetricSuggestion] = {}
    for call_id, sql in queries:
        reading = _read(sql, dialect, team, time_columns, env.team_readings)
        for definition in reading.definitions:
            cited.setdefault((definition.definition, definition.name), definition.model_copy(update={"call_id": call_id}))
        for suggestion in reading.suggestions:
            offered.setdefault(suggestion.measure.lower(), suggestion.model_copy(update={"call_id": call_id}))
    return list(cited.values()), list(offered.values())[:MAX_SUGGESTIONS]


def _read(sql: str, dialect: str, team: TeamContext, time_columns: list[str], kept: Path | None) -> _Reading:
    path = None
    if kept is not None and team.digest:
        key = hashlib.sha256("\0".join([READING_VERSION, team.digest, dialect, ",".join(time_columns), sql])
                             .encode()).hexdigest()
        path = kept / f"{key}.json"
        try:
            return _Reading.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            pass
    from ...knowledge import definitions_followed, suggest_metrics

    reading = _Reading(definitions=definitions_followed(sql, dialect, team, call_id=""),
                       suggestions=suggest_metrics(sql, dialect, team, call_id="", time_columns=time_columns))
    if path is not None:
        _keep(path, reading)
    return reading


def _keep(path: Path, reading: _Reading) -> None:
    """Written whole or not at all; a workspace that cannot be written only costs a parse."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".reading-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(reading.model_dump_json())
        os.replace(tmp, path)
    except OSError:
        return
