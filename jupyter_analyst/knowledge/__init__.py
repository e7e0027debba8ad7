"""What a team knows, kept in files beside the data: a context folder of rules (``rules.md``),
metrics and dimensions in dbt's semantic-layer YAML, and verified queries (``queries/*.sql``).

The folder is read as hostile input (context_files.py: no links followed, size caps); dbt's YAML is
parsed by dbt-semantic-interfaces (semantic.py), the queries' headers by verified.py; a file
that cannot be read is one problem naming file and line, and the rest is used. What it
defines is kept as a digest while the folder is unchanged (loading.py), so a turn imports
the YAML parser and the library only when the folder changed. divergence.py tells a query
that computes a defined metric differently from its definition. writing.py adds a verified
query (its file and its task in the folder's ``suite.jsonl``) without writing through a link.
suggestions.py reads a turn's SQL for the definitions it followed and the measures it
computed that the folder lacks; metric_files.py saves one, when a person says so, as a new
dbt YAML file read back by dbt-semantic-interfaces before it is written.

The names below are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .definitions import TeamContext
    from .divergence import divergences
    from .loading import load_team_context
    from .metric_files import MetricDraft, SavedMetric, save_metric
    from .suggestions import definitions_followed, suggest_metrics
    from .writing import SUITE, QueryHeader, add_verified_query, render_query, stem_of, team_suite

_HOME = {
    "TeamContext": "definitions",
    "divergences": "divergence",
    "load_team_context": "loading",
    "MetricDraft": "metric_files",
    "SavedMetric": "metric_files",
    "save_metric": "metric_files",
    "definitions_followed": "suggestions",
    "suggest_metrics": "suggestions",
    "SUITE": "writing",
    "QueryHeader": "writing",
    "add_verified_query": "writing",
    "render_query": "writing",
    "stem_of": "writing",
    "team_suite": "writing",
}

__all__ = sorted(_HOME)
__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
