"""What the code cannot say of the API: the prose of each operation (its summary, the refusals
it answers, the headers it reads and sets), the description's preamble, and which answers
give the ids that other operations take (OpenAPI links)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from ...agent_state import AgentState
from ...artifacts import Artifact
from ...evals import VerifiedAnswer
from ...knowledge import SavedMetric
from .. import inputs, replies

DESCRIPTION = """\
The analysis API of the jupyter-analyst Jupyter server extension. Every path is under
{base_url}analyst/api/ and needs a Jupyter token (`Authorization: token ...`) or session with
access to the `analyst` resource; requests that carry a token are not XSRF-checked, browser
requests with a session cookie are, like any Jupyter API. Errors are JSON objects
{message, reason, hint} (see Error; the reason codes are listed there). Threads and artifacts
belong to the user who made them: anyone else gets 404. Bodies and query parameters are
checked before anything runs: unknown fields, wrong types, blank or non-Unicode text, NaN
and numbers out of range are 400; a body over c.AnalystApp.max_body_bytes (default 1 MiB)
is 413 body_too_large. Sources are named, never given as paths: only the names in
c.AnalystApp.sources are accepted, unless c.AnalystApp.allow_any_source is set. A method a
path does not declare is 405, with an Allow header naming those it does.
"""


@dataclass(frozen=True)
class Operation:
    """What the code cannot say of one operation: its prose and the refusals it answers."""

    summary: str
    ok: type[BaseModel] | str | None = None
    """The 200/201 body's model, or a media type for bytes (``None``: the operation's model below)."""
    status: int = 200
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    errors: dict[int, str] = field(default_factory=dict)
    """Status -> when it is answered (400/403/405 are added to every operation)."""
    description: str | None = None
    headers: tuple[dict[str, Any], ...] = ()
    """Request headers it reads."""
    answers_with: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Headers of the 200/201/202 answer, by name."""


_NOT_FOUND = "unknown, or another user's"
_LOCATION = {"description": "the new resource, to follow", "required": True,
             "schema": {"type": "string", "format": "uri-reference"}}
_RETRY_AFTER = {"description": "seconds to wait before asking again, while the resource is not finished",
                "required": False, "schema": {"type": "string", "pattern": "^[0-9]+$"}}
_TURNLESS = {404: _NOT_FOUND, 409: "the thread has no turn yet, so no notebook (notebook_not_found)"}

#: Every operation, by path (as routes.py has it, under the API's root) and method.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/config", "get"): Operation(
        "What clients show of the server's set-up (the model's name and endpoint, never its key)",
        replies.ConfigReply),
    ("/sources", "get"): Operation(
        "Configured data sources (names and kinds, never paths or credentials)", replies.SourcesReply),
    ("/openapi.yaml", "get"): Operation("This description", "application/yaml"),
    ("/budget", "get"): Operation(
        "What the caller may still spend: each budget that applies, its limit, what was spent, what is left "
        "and when it resets", replies.BudgetReply, query=inputs.BudgetQuery,
        description="Budgets (c.AnalystApp.budgets) limit the model's tokens or cost per user, per thread and for "
                    "the whole server, each per day (reset at midnight of the budgets' time zone) or in all. They "
                    "are checked before each model call; a turn past one ends `budget_exhausted` with `message`. "
                    "`thread_id` adds that thread's own budgets. `limited` is false on a server without budgets.",
        errors={404: f"`thread_id` is {_NOT_FOUND} (thread_not_found)"}),
    ("/budget/users", "get"): Operation(
        "Every user's spending on a day, with their budgets (the server's owner and budget administrators only)",
        replies.SpendingReply, query=inputs.SpendingQuery,
        description="`day` is a day of the budgets' time zone (default: today). Each user who made a model call "
                    "that day is listed, with their tokens, cost (of priced calls) and calls, and their own and the "
                    "server's budgets as they stand. Administrators: c.AnalystApp.budget_admins, and the server's "
                    "owner (a single-user server's token holder; the JupyterHub user whose server it is, when its "
                    "store is its own: on a shared store only the configured administrators).",
        errors={403: "not the server's owner nor a budget administrator (not_budget_admin)"}),
    ("/threads", "get"): Operation(
        "The caller's threads, the most recently active first (each with its source's configured name)",
        replies.ThreadsReply),
    ("/threads", "post"): Operation(
        "Create a thread on a configured source (the default one when `source` is absent)",
        replies.Thread, status=201, body=inputs.NewThread, errors={413: "body_too_large"}),
    ("/threads/{thread_id}", "get"): Operation(
        "A thread with its turns, whether a turn runs, its last event number and its live kernel",
        replies.ThreadReply, errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}", "patch"): Operation(
        "Rename a thread (its title is its first question until then)",
        replies.Thread, body=inputs.ThreadChange, errors={404: _NOT_FOUND, 413: "body_too_large"}),
    ("/threads/{thread_id}", "delete"): Operation(
        "Delete a thread with its turns, events, artifacts, audit notebook and kernel",
        replies.ThreadDeleted, errors={404: _NOT_FOUND, 409: "a turn is running on it (turn_in_progress)"},
        description="Gone at once from every listing and route. Its artifacts leave the inventory; their bytes "
                    "stay in the content store, which addresses them by content and may hold the same bytes "
                    "for another thread. Stop a running turn first (POST cancel)."),
    ("/threads/{thread_id}/turns", "post"): Operation(
        "Start a turn and stream its events",
        "text/event-stream", body=inputs.NewTurn,
        description="The answer is an event stream (`id:` the event's sequence number, `data:` one Event as "
                    "JSON) until the turn ends. Without `source` the turn runs on the thread's own source; a "
                    "configured source named here switches the thread to it. `notebook` attaches the "
                    "caller's notebook: its outline goes into the model's context, which reads the cells "
                    "it needs by id; a notebook that is not there (or is reached through a link) is "
                    "attached with a note saying so, and the turn runs.",
        errors={404: _NOT_FOUND,
                409: "a turn is already running on the thread (turn_in_progress)",
                413: "body_too_large, or prompt_too_large (c.AnalystApp.max_prompt_bytes)"}),
    ("/threads/{thread_id}/events", "get"): Operation(
        "The thread's events after ?after=N (or Last-Event-ID)",
        replies.EventsReply, query=inputs.EventsQuery,
        description="With `Accept: text/event-stream` the events come as a stream (as from POST turns), "
                    "which follows the running turn until it ends.",
        headers=({"name": "Last-Event-ID", "in": "header", "required": False,
                  "description": "the last sequence number seen, when ?after is absent",
                  "schema": {"type": "string", "pattern": "^[0-9]{0,19}$"}},),
        errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/cancel", "post"): Operation(
        "Stop the running turn; completed steps are kept and the turn ends as interrupted",
        replies.CancelReply, body=inputs.CancelTurn, errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/artifacts", "get"): Operation(
        "The thread's artifact inventory", replies.ArtifactsReply, query=inputs.ArtifactsQuery,
        errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/notebook", "get"): Operation(
        "The thread's audit notebook (nbformat 4); a source URL's password is masked in it",
        "application/x-ipynb+json", errors=_TURNLESS),
    ("/threads/{thread_id}/export", "post"): Operation(
        "Write the thread's audit notebook into the caller's Jupyter folder through the contents manager",
        replies.ExportReply, body=inputs.ExportNotebook,
        description="As `jupyter analyst export` writes it; a URL source's password is masked in it. The "
                    "default path is analyst/{title}-{thread}.ipynb.",
        errors={**_TURNLESS,
                409: f"{_TURNLESS[409]}, `path` goes through a link (notebook_not_found), or the contents manager "
                     "cannot write at `path` (path_not_writable: a hidden name, a file where a folder should be, a "
                     "folder where the notebook should be)"}),
    ("/threads/{thread_id}/verify", "post"): Operation(
        "Start re-executing the thread's notebook in the sandbox to compare each artifact's fingerprint",
        replies.Verification, status=202, body=inputs.VerifyNotebook,
        description="Answered at once (202) with the verification, `queued` or `running`: a re-execution takes "
                    "seconds. Follow it at `Location` (GET threads/{thread_id}/verifications/{verification_id}) "
                    "every `Retry-After` seconds until it is `done`, with the report of `jupyter analyst verify "
                    "--json`, or `failed`. `path`: an export of this thread in the caller's folder (else a fresh "
                    "export); it runs against the thread's own source. `reanswer`: the answers' cited numbers are "
                    "also restated with today's values (`jupyter analyst verify --reanswer`), in the finished "
                    "verification's `reanswer`, and the re-answered notebook is written beside `path` (or the "
                    "default export's path). One verification of a thread runs at a time; a few of a server's.",
        answers_with={"Location": _LOCATION, "Retry-After": {**_RETRY_AFTER, "required": True}},
        errors={**_TURNLESS,
                409: f"{_TURNLESS[409]}, there is no notebook at `path` or it goes through a link "
                     "(notebook_not_found), `path` is not an export of this thread (notebook_of_another_thread) or "
                     "no notebook (notebook_unreadable), or a verification of the thread is under way "
                     "(verify_in_progress, its id in `verification_id`); with `reanswer`, no answer cites a number "
                     "from a step (no_receipts) or its receipts are not the answer's (receipts_invalid)"}),
    ("/threads/{thread_id}/verifications/{verification_id}", "get"): Operation(
        "A verification of the thread's notebook: how it goes, and its report once done",
        replies.Verification,
        description="While it is `queued` or `running`, `Retry-After` says when to ask again. The server keeps "
                    "its verifications in memory: the last finished ones, until it restarts.",
        answers_with={"Retry-After": _RETRY_AFTER},
        errors={404: "unknown thread or verification, or another user's (verification_not_found)"}),
    ("/threads/{thread_id}/verified-answers", "post"): Operation(
        "Make a completed turn's answer a verified query of the team's context folder and a task of its suite",
        VerifiedAnswer, status=201, body=inputs.VerifyAnswer,
        description="As `jupyter analyst context verify` does: the turn's question and the SQL of its query "
                    "step (the one its answer cites, else its last; `step` names another) are written as "
                    "queries/{name}.sql of the server's context folder (c.AnalystApp.context_dir), verified by "
                    "the caller today, and a task is appended to the folder's suite.jsonl: the question, the SQL "
                    "as gold_sql, and the answer that SQL computes from the thread's source now (checked and run "
                    "as the model's SQL is), for `jupyter analyst eval context`. A query file is never replaced. "
                    "Only the users and Hub groups of c.AnalystApp.context_editors may do it (default: the "
                    "server's own user); anyone else gets 403 before the thread is looked up.",
        errors={403: "the caller is not one of c.AnalystApp.context_editors (not_a_context_editor)",
                404: _NOT_FOUND,
                409: "the thread has no such turn (turn_not_found) or it did not complete (turn_not_finished), it "
                     "ran no query (no_sql) or none with the call_id `step` (step_not_found), its SQL is refused or "
                     "fails on the data now (gold_failed) or returns more rows than an answer holds "
                     "(answer_too_large), `name` is taken (query_exists), or the context folder, its queries/ or its "
                     "suite.jsonl is a link or not a folder (context_link, context_not_a_folder, context_not_found)",
                413: "body_too_large"}),
    ("/threads/{thread_id}/definitions", "post"): Operation(
        "Save a metric a turn suggested to the team's context folder, as dbt's semantic-layer YAML",
        SavedMetric, status=201, body=inputs.SaveDefinition,
        description="A turn whose SQL computed a measure the context folder does not define tells it in its "
                    "`turn_ended`'s `suggestions`; nothing is written until a person saves one here (the panel's "
                    "\"Save as a definition\", after showing the file from `definitions/preview`). As `jupyter "
                    "analyst context add-metric` does: models/{name}.yml of the server's context folder "
                    "(c.AnalystApp.context_dir), a semantic model over the table with the measure and the metric "
                    "with its filters, read back by dbt-semantic-interfaces before it is written. A name or file "
                    "the folder has is refused, never replaced. Only the users and Hub groups of "
                    "c.AnalystApp.context_editors may (default: the server's own user); anyone else gets 403 "
                    "before the thread is looked up.",
        errors={403: "the caller is not one of c.AnalystApp.context_editors (not_a_context_editor)",
                404: _NOT_FOUND,
                409: "the thread has no such turn (turn_not_found) or the turn no such suggestion "
                     "(suggestion_not_found), the name or file is the folder's already (definition_exists), the "
                     "metric would not read back as suggested (invalid_definition), dbt-semantic-interfaces is not "
                     "installed (context_library_missing), or the folder or its models/ is a link or not a folder "
                     "(context_link, context_not_a_folder, context_not_found)",
                413: "body_too_large"}),
    ("/threads/{thread_id}/definitions/preview", "post"): Operation(
        "The file a turn's suggested metric would be saved as, writing nothing",
        SavedMetric, body=inputs.SaveDefinition,
        description="What POST threads/{thread_id}/definitions would write (`written` is false), checked the "
                    "same way, so a person sees the YAML before saving it. Editors only, as saving is.",
        errors={403: "the caller is not one of c.AnalystApp.context_editors (not_a_context_editor)",
                404: _NOT_FOUND,
                409: "as POST threads/{thread_id}/definitions",
                413: "body_too_large"}),
    ("/threads/{thread_id}/steps/{call_id}/cell", "get"): Operation(
        "One SQL or Python step as a runnable code cell, as exported notebooks have it",
        replies.StepCell, errors={404: "unknown thread or step (step_not_found)"}),
    ("/threads/{thread_id}/proposals", "get"): Operation(
        "The cells the model proposed for the caller's notebooks, each change with its status and diff",
        replies.ProposalsReply,
        description="A proposal is made by the model's `propose_cells` tool in a turn with a notebook attached; "
                    "nothing in the notebook changes until a person accepts. Each change is an insert (a new "
                    "cell after `after`), a replace (`cell_id`'s source) or a delete, with its reason, how its "
                    "code ran in the thread's sandboxed kernel (`run`: outputs, step key, the artifacts' "
                    "fingerprints) and, while pending, nbdime's diff of the cell against the notebook as it "
                    "is now, or `conflict` when its cell was edited since the model read it.",
        errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/proposals/{proposal_id}/accept", "post"): Operation(
        "Accept proposed changes into the notebook (checkpointed first); the proposal as it is then",
        replies.ProposalView, body=inputs.DecideChanges,
        description="`cell_ids` accepts those changes, `all` every pending one (refused for a proposal with a "
                    "cell that failed in the sandbox). Before the proposal's first accepted change the notebook "
                    "is checkpointed through the contents manager. Accepted cells carry "
                    "`metadata.jupyter_analyst` (proposal, turn, step key, fingerprints) and their sandbox "
                    "outputs; the user's kernel runs nothing. A change whose cell was edited since the model "
                    "read it is refused, and nothing is written.",
        errors={404: f"{_NOT_FOUND}, or an unknown proposal (proposal_not_found)",
                409: "a change's cell was edited since (notebook_changed), the proposal failed in the sandbox "
                     "and all was asked (proposal_failed), a change was decided already (already_decided) or "
                     "is not the proposal's (unknown_change), or the notebook cannot be read "
                     "(notebook_not_found)", 413: "body_too_large"}),
    ("/threads/{thread_id}/proposals/{proposal_id}/reject", "post"): Operation(
        "Reject proposed changes; the notebook is not touched",
        replies.ProposalView, body=inputs.DecideChanges,
        description="The model is told of the rejection in its next turns, and asked not to propose it again.",
        errors={404: f"{_NOT_FOUND}, or an unknown proposal (proposal_not_found)",
                409: "a change was decided already (already_decided) or is not the proposal's (unknown_change)",
                413: "body_too_large"}),
    ("/threads/{thread_id}/turns/{turn_id}/revert", "post"): Operation(
        "Undo a turn's accepted changes: the notebook restored from its checkpoint, byte for byte",
        replies.RevertResult, body=inputs.RevertTurn,
        description="Restores the checkpoint taken before the turn's first accepted change (through the "
                    "contents manager's checkpoints API); its accepted changes are marked reverted.",
        errors={404: _NOT_FOUND,
                409: "nothing of the turn was accepted (nothing_to_revert), or the notebook cannot be written "
                     "(notebook_not_found)", 413: "body_too_large"}),
    ("/threads/{thread_id}/state", "get"): Operation(
        "The thread's agent state (entities with dependencies, assumptions, expectations, items, "
        "active context, rolling summary)", AgentState, errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/tables", "get"): Operation(
        "The tables of the thread's source, with row counts, and questions to start the thread with",
        replies.TablesReply,
        description="The tables as the model's outline lists them (the first 40; `more` counts the rest), "
                    "each with its exact row count when it was read in time (else null). `suggestions`: the "
                    "scripted model's own questions when it is the server's model, else ones built from the "
                    "table names.",
        errors={404: _NOT_FOUND, 400: "the thread's source is no longer configured (unknown_source) or "
                                      "does not open (source_not_found)"}),
    ("/artifacts/{artifact_id}", "get"): Operation("An artifact's metadata", Artifact, errors={404: _NOT_FOUND}),
    ("/artifacts/{artifact_id}/content", "get"): Operation(
        "An artifact's bytes, with its content type (checked against its fingerprint first)",
        "*/*", query=inputs.ContentQuery,
        description="`?format=csv` serves a dataset as `text/csv; charset=utf-8` instead of its Parquet bytes, "
                    "converted a batch of rows at a time and downloaded as `<name>.csv`: numbers as they are, "
                    "every other column as text (dates `2024-01-31`, timestamps `2024-01-31 12:00:00`, "
                    "intervals ISO 8601, bytes hex, nested values JSON), and a cell or column name a "
                    "spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, `|`, `%`, after "
                    "any spaces, or with a tab or line break) written with a leading `'`. A CSV file the "
                    "model wrote is served the same way (its numbers as they are, other cells quoted). "
                    "Without a format a dataset downloads as `<name>.parquet`.",
        errors={400: "`format=csv` for an artifact that is not a dataset (not_a_dataset), or an unknown format",
                404: _NOT_FOUND, 500: "the stored bytes do not match the fingerprint"}),
    ("/artifacts/{artifact_id}/preview", "get"): Operation(
        "The artifact as a notebook output shows it, for rendermime",
        replies.Preview, query=inputs.PreviewQuery,
        description="A dataset's first rows as text/html and text/plain, an image as its base64 bytes, the "
                    "start of a text file (the bytes are checked against the fingerprint first).",
        errors={404: _NOT_FOUND, 500: "the stored bytes do not match the fingerprint"}),
}

#: Operations whose answers name ids other operations take: OpenAPI links, so a client (or a
#: stateful fuzzer) goes from a new thread to its turns, events and artifacts with real ids.
GIVES = {
    ("/threads", "post"): {"thread_id": "$response.body#/thread_id"},
    # An artifact, and the step that made it (its cell), in the thread asked about.
    ("/threads/{thread_id}/verify", "post"): {"thread_id": "$request.path.thread_id",
                                              "verification_id": "$response.body#/verification_id"},
    ("/threads/{thread_id}/artifacts", "get"): {"thread_id": "$request.path.thread_id",
                                                "artifact_id": "$response.body#/artifacts/0/artifact_id",
                                                "call_id": "$response.body#/artifacts/0/source_call_id"},
}

PARAMETERS = {
    "thread_id": "a thread's id (thr_...)",
    "artifact_id": "an artifact's id",
    "call_id": "a tool call's id, as its events carry it",
    "verification_id": "a verification's id (ver_...), as POST threads/{thread_id}/verify answers it",
    "proposal_id": "a proposal's id (prop_...), as GET threads/{thread_id}/proposals lists it",
    "turn_id": "a turn's id, as GET threads/{thread_id} lists it",
}
