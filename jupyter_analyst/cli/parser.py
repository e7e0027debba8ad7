"""The command line's grammar: ``jupyter analyst COMMAND [OPTIONS]``, one subparser per command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import ConfigError
from ..ledger import Price, parse_price


def _workspace_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--workspace", default=".analyst", metavar="DIR",
        help="folder holding threads, events and artifacts (default: .analyst)",
    )
    p.add_argument(
        "--store", default=None, metavar="URL",
        help="database of threads, events and the inventory: a postgresql:// URL shared by "
             "several processes (default: the workspace's own SQLite file)",
    )
    p.add_argument(
        "--blobs", default=None, metavar="URL",
        help="where artifacts' bytes are kept: s3://bucket/prefix, read through a verified cache in "
             "the workspace (default: the workspace folder; needs jupyter-analyst[s3])",
    )
    p.add_argument(
        "--blobs-endpoint", default=None, metavar="URL",
        help="the S3 API's address for --blobs (MinIO, Ceph...; default: $AWS_ENDPOINT_URL, else AWS)",
    )


def _context_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--context", default=None, metavar="DIR", type=Path,
        help="the team's context folder: rules.md, dbt metrics and dimensions (*.yml), verified queries "
             "(queries/*.sql) (default: context/ beside the workspace folder, when it exists)",
    )


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="model name (default: $OPENAI_MODEL or gpt-4o-mini)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")


def _price(value: str) -> Price:
    """``--price``: USD per million prompt/completion tokens, ``0.15/0.60``."""
    try:
        return parse_price(value)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(f"{exc.message}: {exc.hint}") from None


def _price_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--price", type=_price, metavar="PROMPT/COMPLETION",
                   help="what the model's tokens cost, in USD per million prompt/completion tokens (e.g. "
                        "0.15/0.60): the summary then shows a cost; without it, tokens only")


def _budget(value: str) -> tuple[str, str]:
    """``--budget``: ``SCOPE=LIMIT`` (``user/day=200k tokens``, ``thread=$2``) or ``timezone=ZONE``."""
    key, sep, limit = value.partition("=")
    if not sep or not key.strip() or not limit.strip():
        raise argparse.ArgumentTypeError(f"expected SCOPE=LIMIT (e.g. 'user/day=200k tokens'), not {value!r}")
    return key.strip(), limit.strip()


def _budget_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--budget", type=_budget, action="append", default=[], metavar="SCOPE=LIMIT",
                   help="a spending limit checked before each model call, repeatable: SCOPE is user, thread or "
                        "server, each optionally /day (reset at midnight); LIMIT is 'N tokens' (200k, 2M), '$X' "
                        "(needs --price) or both, comma-joined; timezone=ZONE sets the day's zone (default UTC)")


def _plan_concurrency(value: str) -> int:
    """``--plan-concurrency``: a whole number from 1 to 16."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not 1 <= number <= 16:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1 to 16, not {value!r}")
    return number


def build_parser() -> argparse.ArgumentParser:
    """The command-line grammar."""
    parser = argparse.ArgumentParser(
        prog="jupyter analyst",
        description="Ask questions about your data: SQL -> dataset -> Python, with reuse.",
    )
    parser.add_argument("--version", action="version", version=f"jupyter-analyst {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _run_command(sub)
    _state_command(sub)
    _artifacts_command(sub)
    _threads_command(sub)
    _demo_command(sub)
    _doctor_command(sub)
    _install_kernelspec_command(sub)
    _export_command(sub)
    _verify_command(sub)
    _execute_command(sub)
    _scripted_model_command(sub)
    _eval_command(sub)
    _context_command(sub)
    _mcp_command(sub)
    _proposals_command(sub)
    return parser


def _run_command(sub: Any) -> None:
    """``jupyter analyst run``."""
    run = sub.add_parser("run", help="run one turn of a thread", description="Run one turn of a thread.")
    run.add_argument("--db", dest="source", metavar="SOURCE",
                     help="data source: a .duckdb file, :memory:, CSV/Parquet file or folder, or a "
                          "SQLAlchemy URL (default for --thread: the thread's source)")
    run.add_argument("--prompt", required=True, help="what to ask")
    run.add_argument("--thread", metavar="ID", help="continue this thread instead of starting one")
    _workspace_arg(run)
    _context_arg(run)
    _model_args(run)
    run.add_argument("--output", metavar="NB.ipynb", type=Path,
                     help="write the notebook here (default: the thread's notebook in the workspace)")
    run.add_argument("--rerun", action="store_true", help="re-execute steps instead of reusing them")
    run.add_argument("--attach", metavar="NB.ipynb", type=Path,
                     help="your notebook: its outline goes into the model's context, which reads the cells "
                          "it needs by id (read_cells)")
    run.add_argument("--propose", action="store_true",
                     help="with --attach: the model may propose cells for the notebook; they run in the sandbox, "
                          "are written to NB.proposed.ipynb beside it and printed as a diff (the notebook is not "
                          "changed: apply them with `jupyter analyst proposals accept`)")
    run.add_argument("--json", action="store_true", help="print one JSON object when the turn ends")
    run.add_argument("--max-steps", type=int, default=16, help="model calls allowed per turn (default 16)")
    run.add_argument("--sql-timeout", "--query-timeout", dest="query_timeout", type=_positive, default=60.0,
                     metavar="SECONDS", help="seconds one SQL query may run before it is stopped in its engine, "
                                             "on every kind of source (default 60)")
    run.add_argument("--plan-concurrency", type=_plan_concurrency, default=4, metavar="N",
                     help="queries of a staged plan's parallel stage that run at once (1-16, default 4)")
    run.add_argument("--no-sandbox", action="store_true",
                     help="run the kernel without bubblewrap or limits (trusted code only)")
    run.add_argument("--memory-mb", type=int, help="kernel memory limit in MiB (default 4096)")
    run.add_argument("--summary-model", metavar="MODEL",
                     help="cheaper model for the end-of-turn summarizer (default: $ANALYST_SUMMARY_MODEL, else --model)")
    run.add_argument("--no-summarizer", action="store_true",
                     help="do not update the agent state with a model call after the turn")
    run.add_argument("--context-tokens", type=int, default=16_000, metavar="N",
                     help="token budget of each model call's prompt (default 16000)")
    _budget_arg(run)
    _price_arg(run)


def _state_command(sub: Any) -> None:
    """``jupyter analyst state``."""
    state = sub.add_parser("state", help="show a thread's agent state (what the agent has established)")
    state.add_argument("--thread", required=True, metavar="ID")
    _workspace_arg(state)
    state.add_argument("--json", action="store_true", help="print the whole state as JSON")


def _artifacts_command(sub: Any) -> None:
    """``jupyter analyst artifacts``."""
    arts = sub.add_parser("artifacts", help="the artifact inventory")
    arts_sub = arts.add_subparsers(dest="artifacts_command", metavar="ACTION")
    lst = arts_sub.add_parser("list", help="list a thread's artifacts")
    lst.add_argument("--thread", required=True, metavar="ID")
    _workspace_arg(lst)
    lst.add_argument("--json", action="store_true", help="print JSON")


def _threads_command(sub: Any) -> None:
    """``jupyter analyst threads``."""
    threads = sub.add_parser("threads", help="list the workspace's threads (or rename or delete one)")
    _workspace_arg(threads)
    threads.add_argument("--json", action="store_true", help="print JSON")
    change = threads.add_mutually_exclusive_group()
    change.add_argument("--rename", nargs=2, metavar=("ID", "TITLE"), help="give a thread a title of your own")
    change.add_argument("--delete", metavar="ID",
                        help="delete a thread: its turns, events, artifacts (their bytes stay while another "
                             "thread holds the same content), audit notebook and kernel folder")
    threads.add_argument("--force", action="store_true",
                         help="with --delete: even when a turn of it is marked running (a process that was cut)")


def _demo_command(sub: Any) -> None:
    """``jupyter analyst demo``."""
    demo = sub.add_parser("demo", help="offline demo on bundled sample data with the scripted model")
    demo.add_argument("--out", default="demo-output", type=Path, help="folder for the demo's files")
    demo.add_argument("--json", action="store_true", help="print the two turn summaries as JSON")
    demo.add_argument("--lab", action="store_true",
                      help="instead: serve JupyterLab on the sample data with the scripted model (the "
                           "'Data analyst' panel); --out is its root folder")
    demo.add_argument("--port", type=int, help="with --lab: the server's port (default: Jupyter's)")
    demo.add_argument("--no-browser", action="store_true", help="with --lab: do not open a browser")
    demo.add_argument("jupyter_args", nargs="*", metavar="-- JUPYTER_ARG",
                      help="with --lab: more `jupyter lab` options, after `--` (e.g. -- --config=FILE)")


def _doctor_command(sub: Any) -> None:
    """``jupyter analyst doctor``."""
    sub.add_parser("doctor", help="show which sandbox layers are active on this machine")


def _install_kernelspec_command(sub: Any) -> None:
    """``jupyter analyst install-kernelspec``."""
    spec = sub.add_parser("install-kernelspec", help="install the sandboxed kernelspec for Jupyter")
    spec.add_argument("--user", action="store_true", help="for this user only")
    spec.add_argument("--sys-prefix", action="store_true", help="into this environment (sys.prefix)")


def _export_command(sub: Any) -> None:
    """``jupyter analyst export``."""
    export = sub.add_parser("export", help="export a thread as a re-executable audit notebook (or an HTML/markdown page)",
                            description="Export a thread as one notebook: a summary, a parameters cell, the steps with "
                                        "their outputs and provenance, and a manifest of every artifact's fingerprint. "
                                        "--to html or markdown renders it with nbconvert, to read or share.")
    export.add_argument("--thread", required=True, metavar="ID")
    export.add_argument("-o", "--output", type=Path, metavar="PATH",
                        help="where to write it (default: TITLE-THREAD.ipynb/.html/.md in this folder)")
    export.add_argument("--to", choices=("ipynb", "html", "markdown"), default="ipynb",
                        help="ipynb (default: re-executable, verifiable), html or markdown (for reading)")
    _workspace_arg(export)


def _verify_command(sub: Any) -> None:
    """``jupyter analyst verify``."""
    verify = sub.add_parser("verify", help="re-execute an exported notebook in the sandbox and check its fingerprints",
                            description="Re-execute NB in the sandboxed kernel against the data source you name "
                                        "and compare every artifact's fingerprint with the notebook's manifest. "
                                        "A notebook's own parameters never choose the source: anyone can hand you "
                                        "a notebook. Exit status 0 verified, 1 on any difference, 2 for bad input, "
                                        "3 when the notebook records no artifact (nothing to verify).")
    verify.add_argument("notebook", type=Path, nargs="?", metavar="NB.ipynb",
                        help="the notebook (default with --thread: the thread's own audit notebook)")
    verify.add_argument("--db", dest="source", metavar="SOURCE",
                        help="the data source to run against (required unless --thread names one)")
    verify.add_argument("--thread", metavar="ID",
                        help="a thread of your workspace: its source (unless --db), its notebook (unless NB)")
    verify.add_argument("--json", action="store_true", help="print the report as JSON")
    verify.add_argument("--reanswer", action="store_true",
                        help="restate the answers' cited numbers with the re-run's values (old -> new) and "
                             "write NB.reanswered.ipynb beside NB; exit 1 when a cited number changed")
    _workspace_arg(verify)


def _execute_command(sub: Any) -> None:
    """``jupyter analyst execute``."""
    execute = sub.add_parser("execute", help="ask a playbook's prompts in order; write the audit notebook",
                             description="Ask the markdown cells tagged 'prompt' of PLAYBOOK to the agent, in "
                                         "order, on one thread, with {name} replaced by -p parameters.")
    execute.add_argument("playbook", type=Path, metavar="PLAYBOOK.ipynb")
    execute.add_argument("-o", "--output", required=True, type=Path, metavar="OUT.ipynb")
    execute.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                         help="a parameter substituted into the prompts and the source (repeatable)")
    execute.add_argument("--db", dest="source", metavar="SOURCE", help="the data source (else -p source or the playbook's)")
    _model_args(execute)
    execute.add_argument("--no-sandbox", action="store_true", help="run kernels without bubblewrap")
    execute.add_argument("--json", action="store_true", help="print one JSON object at the end")
    _workspace_arg(execute)
    _context_arg(execute)


def _scripted_model_command(sub: Any) -> None:
    """``jupyter analyst scripted-model``."""
    scripted = sub.add_parser("scripted-model", help="serve a scripted OpenAI-compatible model (testing)")
    scripted.add_argument("--script", type=Path, help="script JSON (default: the demo's script)")
    scripted.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")


def _positive(value: str) -> float:
    """A number of seconds above zero."""
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, not {value!r}")
    return number


def _source_option(value: str) -> tuple[str, str]:
    """``eval --source NAME=PATH_OR_URL`` (see ``evals.parse_source_option``)."""
    from ..evals import parse_source_option

    return parse_source_option(value)


def _eval_command(sub: Any) -> None:
    """``jupyter analyst eval``."""
    ev = sub.add_parser(
        "eval", help="evaluate a model on a suite of questions with gold answers",
        description="Run each task of SUITE (JSON Lines: the native format, DABstep's or InfiAgent-DABench's) "
                    "as a new thread against its source, score each answer against the gold one, and write "
                    "REPORT.json, REPORT.md and the threads' audit notebooks (REPORT.threads/). A killed run "
                    "continues where it stopped (REPORT.progress.jsonl). Exit status 0 when the run finished, "
                    "whatever the score.")
    ev.add_argument("suite", type=Path, nargs="?", metavar="SUITE.jsonl",
                    help="the tasks (or `sample` / `nycflights13`: the suites shipped with the package; `context`: "
                         "the team's verified answers, the context folder's suite.jsonl, exit status 1 when one "
                         "fails)")
    ev.add_argument("-o", "--output", type=Path, metavar="REPORT.json",
                    help="the report (default: SUITE-report.json in this folder)")
    ev.add_argument("--labels", type=Path, metavar="FILE",
                    help="gold answers kept apart from the questions, by id (InfiAgent-DABench's labels file)")
    ev.add_argument("--db", dest="source", metavar="SOURCE",
                    help="the data source of every task, whatever the suite names (default: each task's own)")
    ev.add_argument("--source", dest="sources", action="append", type=_source_option, default=[],
                    metavar="NAME=PATH_OR_URL",
                    help="a task whose source is NAME reads PATH_OR_URL (repeatable); SPEC alone lets tasks "
                         "name SPEC. A suite is untrusted: its tasks may name only `sample`, `nycflights13` "
                         "and the sources given here, by --db or inside --data-dir; any other is refused "
                         "before anything runs")
    ev.add_argument("--data-dir", type=Path, metavar="DIR",
                    help="tasks' relative sources are read inside DIR, never outside it (e.g. the suite's "
                         "own folder; for InfiAgent-DABench, its da-dev-tables folder); without it a "
                         "relative source is refused")
    ev.add_argument("--concurrency", type=_plan_concurrency, default=2, metavar="N",
                    help="tasks run at once (1-16, default 2)")
    ev.add_argument("--task-timeout", type=_positive, default=600.0, metavar="SECONDS",
                    help="time a turn may take before it counts as a timeout (default 600)")
    ev.add_argument("--restart", action="store_true", help="ignore the resume file and run every task again")
    ev.add_argument("--compare", nargs=2, type=Path, metavar=("A.json", "B.json"),
                    help="instead: show two reports side by side")
    ev.add_argument("--gold", choices=("check", "write"),
                    help="instead: recompute the suite's gold answers from its gold_sql, and check or rewrite them")
    _workspace_arg(ev)
    _context_arg(ev)
    _model_args(ev)
    ev.add_argument("--max-steps", type=int, default=16, help="model calls allowed per turn (default 16)")
    ev.add_argument("--no-sandbox", action="store_true",
                    help="run the kernels without bubblewrap or limits (trusted code only)")
    ev.add_argument("--summarizer", action="store_true",
                    help="update each thread's agent state after each turn (its model calls are not counted)")
    _price_arg(ev)


def _context_command(sub: Any) -> None:
    """``jupyter analyst context verify`` and ``context add-metric``."""
    context = sub.add_parser("context", help="the team's context folder: verify a turn's answer, save a metric")
    actions = context.add_subparsers(dest="context_command", metavar="ACTION")
    verify = actions.add_parser(
        "verify", help="make a finished turn a verified query and a task of the team's suite",
        description="Write the turn's question and SQL as queries/NAME.sql of the context folder (who verified "
                    "it, when) and append a task to its suite.jsonl: the question, the SQL as gold_sql, and the "
                    "answer that SQL computes from the data now. `jupyter analyst eval context` runs the suite.")
    verify.add_argument("--thread", required=True, metavar="ID")
    verify.add_argument("--turn", type=int, metavar="N", help="the turn (default: the thread's last)")
    verify.add_argument("--step", metavar="CALL_ID",
                        help="the query step whose SQL is the gold SQL (default: the one the answer cites, else "
                             "the turn's last)")
    verify.add_argument("--name", metavar="NAME",
                        help="the query's file name and task id (default: made from the question, numbered when "
                             "taken); an existing one is refused")
    verify.add_argument("--by", metavar="NAME", help="who verified it (default: your user name)")
    verify.add_argument("--source-name", metavar="NAME",
                        help="the name the task gives the thread's source (default: its file's or database's name)")
    verify.add_argument("--tolerance", type=float, metavar="X",
                        help="how far a number of the model's answer may be from the gold one (default: 0, or "
                             "0.01 when the answer has decimals)")
    verify.add_argument("--json", action="store_true", help="print what was written as JSON")
    _workspace_arg(verify)
    _context_arg(verify)
    metric = actions.add_parser(
        "add-metric", help="save a metric (a measure of one table, its filters) to the team's folder",
        description="Write models/NAME.yml of the context folder in dbt's semantic-layer YAML: a semantic model "
                    "over the table with the metric's measure, and the metric with its filters. It is read back "
                    "by dbt-semantic-interfaces before it is written; an existing name or file is refused. A turn "
                    "whose SQL computed a measure the folder lacks prints this command.")
    metric.add_argument("name", metavar="NAME", help="the metric's name: lower case, digits and _")
    metric.add_argument("--table", required=True, help="the table its measure is read from")
    metric.add_argument("--agg", required=True, choices=("sum", "count", "count_distinct", "average", "min", "max"),
                        help="the measure's aggregate")
    metric.add_argument("--expr", required=True, metavar="SQL", help="what it aggregates: a column or an expression "
                                                                     "of the table's columns")
    metric.add_argument("--filter", dest="filters", action="append", default=[], metavar="SQL",
                        help="a condition on the table's columns its rows meet (repeatable)")
    metric.add_argument("--label", default="", help="its label (default: made from the name)")
    metric.add_argument("--description", default="", help="what the team means by it")
    metric.add_argument("--dialect", default="duckdb", help="the SQL dialect of --expr and --filter (default: duckdb)")
    metric.add_argument("--dry-run", action="store_true", help="print the file that would be written, write nothing")
    _workspace_arg(metric)
    _context_arg(metric)


def _mcp_command(sub: Any) -> None:
    """``jupyter analyst mcp``."""
    mcp = sub.add_parser("mcp", help="serve the analyst's tools to other agents over MCP (stdio, or --http)",
                         description="Serve the analyst's tools over the Model Context Protocol: on stdin/stdout "
                                     "for the agent that starts it, or over streamable HTTP with --http.")
    mcp.add_argument("--db", dest="source", metavar="SOURCE",
                     help="the default data source new threads open (a .duckdb file, CSV/Parquet, or a SQLAlchemy "
                          "URL), named after its file or database")
    mcp.add_argument("--source", dest="sources", action="append", default=[], metavar="NAME=PATH_OR_URL",
                     help="another source a client may choose by NAME (repeatable; the first is the default when "
                          "there is no --db; PATH_OR_URL alone is named after its file or database). Clients see "
                          "the names only, and may open no other source")
    _workspace_arg(mcp)
    _context_arg(mcp)
    _model_args(mcp)
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp")
    mcp.add_argument("--host", default="127.0.0.1", help="address to listen on with --http (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="port to listen on with --http (default 8765)")
    mcp.add_argument("--token", default=None, metavar="TOKEN",
                     help="the token every HTTP request must send as Authorization: Bearer TOKEN "
                          "(default: $ANALYST_MCP_TOKEN, else one is made and printed on stderr)")
    mcp.add_argument("--user", default="local", help="whose threads the tools work on (default: local)")
    mcp.add_argument("--notebooks", metavar="DIR", type=Path, default=None,
                     help="a folder whose notebooks ask may work beside (named relative to it) and propose cells for; "
                          "adds accept_proposal, reject_proposal and revert_turn")
    _budget_arg(mcp)
    _price_arg(mcp)
    mcp.add_argument("--no-sandbox", action="store_true",
                     help="run kernels without bubblewrap or limits (trusted code only)")
    mcp.add_argument("--no-summarizer", action="store_true",
                     help="do not update the agent state with a model call after an ask")


def _proposals_command(sub: Any) -> None:
    """``jupyter analyst proposals accept|reject|revert``."""
    proposals = sub.add_parser("proposals", help="accept, reject or revert cells the model proposed for a notebook",
                               description="Apply a decision on cells the model proposed (run --attach --propose) "
                                           "to the notebook file. Accepting checkpoints the notebook first "
                                           "(.ipynb_checkpoints, as Jupyter does); revert restores it exactly.")
    actions = proposals.add_subparsers(dest="proposals_command", metavar="ACTION", required=True)
    for action, said in (("accept", "write proposed changes into the notebook"),
                         ("reject", "reject proposed changes (the notebook is not touched)"),
                         ("revert", "undo a turn's accepted changes: the notebook as it was before them")):
        p = actions.add_parser(action, help=said, description=said[:1].upper() + said[1:] + ".")
        p.add_argument("notebook", metavar="NB.ipynb", type=Path, help="the notebook the proposal is for")
        p.add_argument("--thread", required=True, metavar="ID", help="the thread that proposed them")
        _workspace_arg(p)
        if action == "revert":
            p.add_argument("--turn", metavar="ID", help="the turn to revert (default: the newest proposal's)")
        else:
            p.add_argument("--proposal", metavar="ID", help="the proposal (default: the thread's newest for the notebook)")
            p.add_argument("--cells", nargs="+", metavar="ID",
                           help="the changes decided on, by id (default: every pending one)")
