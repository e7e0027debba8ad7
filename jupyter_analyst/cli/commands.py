"""What each command of ``jupyter analyst`` does: parsed arguments in, an exit status out.

Each command imports the engine it needs when it runs, not before: ``jupyter analyst
--help`` or ``threads`` never pays for the model's SDK, and ``run`` starts its turn as
soon as what the turn uses is loaded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..turns import TurnSummary
    from ..workspace import Workspace

T = TypeVar("T")
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
#: ``verify`` of a notebook that records no artifact: neither a pass nor a difference.
EXIT_NOTHING_TO_VERIFY = 3


#: How long ``run`` waits for the end-of-turn summarizer after the answer (seconds).
SUMMARIZER_WAIT_VARIABLE = "ANALYST_SUMMARIZER_WAIT"


def summarizer_wait() -> float:
    """``ANALYST_SUMMARIZER_WAIT`` seconds (default 60), what ``run`` gives the summarizer.

    Raises:
        ConfigError: it is not a positive number.
    """
    import os

    from ..errors import ConfigError

    raw = os.environ.get(SUMMARIZER_WAIT_VARIABLE, "").strip()
    try:
        value = float(raw) if raw else 60.0
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ConfigError(f"{SUMMARIZER_WAIT_VARIABLE}={raw!r} is not a positive number of seconds")
    return value


def run(args: argparse.Namespace, started: Callable[[], None] = lambda: None) -> int:
    """``run``: one turn of a thread, its progress on stderr as it goes (or one JSON object at the end);
    ``started`` is called once the turn's engine is imported, the model's SDK included."""
    from ..agent import ContextBudget, start_sdk_import
    from ..turns import AnalystConfig, BackgroundWork, ModelSettings, TurnRequest, run_turn
    from ..events import MemoryUpdated
    from ..progress import ProgressPrinter, print_summary

    # The model's SDK is the command's last import, begun now on a thread of its own, so that
    # it overlaps what the turn opens first; this process runs nothing but the turn, so the SDK
    # may leave out what the turn never uses. ``started`` comes once it is loaded.
    start_sdk_import(without_aiohttp=True, then=started)

    if args.propose and args.attach is None:
        from ..errors import ConfigError

        raise ConfigError("--propose proposes cells for a notebook: name it with --attach NB.ipynb",
                          reason="no_notebook")
    model = ModelSettings.resolve(model=args.model, base_url=args.base_url, summary_model=args.summary_model)
    attached = None
    if args.attach is not None:
        from ..notebooks import load_attached

        attached = load_attached(args.attach, args.attach.name)  # its name: never a path of this machine
    request = TurnRequest(
        prompt=args.prompt, source=args.source, thread_id=args.thread, rerun=args.rerun,
        notebook=args.output, attached=attached,
    )
    from ..kernel import SandboxPolicy

    policy = SandboxPolicy(enabled=not args.no_sandbox)
    if args.memory_mb:
        policy = policy.model_copy(update={"memory_mb": args.memory_mb})
    config = AnalystConfig(
        workspace=args.workspace, store=args.store, blobs=args.blobs, blobs_endpoint=args.blobs_endpoint,
        context_dir=args.context, max_steps=args.max_steps, sandbox=policy, query_timeout_s=args.query_timeout,
        plan_concurrency=args.plan_concurrency, summarizer=not args.no_summarizer, context=ContextBudget(tokens=args.context_tokens),
        prices={model.model: args.price} if args.price is not None else {},
        budgets=dict(args.budget),
    )
    printer = None if args.json else ProgressPrinter()
    wait = summarizer_wait()
    summarized: list[MemoryUpdated] = []

    def on_event(event: Any) -> Any:
        if isinstance(event, MemoryUpdated):
            summarized.append(event)  # the summarizer's call, counted in the summary below
        return printer(event) if printer is not None else None

    async def turn() -> TurnSummary:
        # The answer is printed as soon as the turn is done; the summarizer finishes after
        # (``--json``: the one object is printed after it, with its call counted, or pending).
        background = BackgroundWork()
        summary = await run_turn(request, config=config, model=model, on_event=on_event, background=background)
        if not args.json:
            print_summary(summary, context=args.context)
        _print_data_note(summary, as_json=args.json)
        if not args.json and background.pending:
            print("updating the agent state...", file=sys.stderr, flush=True)
        try:
            await asyncio.wait_for(background.drain(), wait)
        except TimeoutError:
            # The answer is out: a summarizer that does not answer does not hold the command.
            print(f"agent state not updated: the summarizer did not answer within {wait:g} s "
                  f"(set {SUMMARIZER_WAIT_VARIABLE} to wait longer)", file=sys.stderr, flush=True)
        else:
            if summary.summarizer_pending:
                summary = summary.with_summarizer(summarized[-1].usage if summarized else None)
        if args.json:
            print(summary.model_dump_json(), flush=True)
            args.json_printed = True  # the one object is out: a later failure adds none
        return summary

    summary = asyncio.run(turn())
    if args.propose and summary.status == "completed":
        from .proposal_commands import after_run

        after_run(args, read_workspace, summary)
    # A turn that asks the user a question did its part: the next ``run`` on the thread answers it.
    return 0 if summary.status in ("completed", "needs_input") else EXIT_FAILED


def _print_data_note(summary: TurnSummary, *, as_json: bool) -> None:
    """What the turn's source's data version means for its reused steps, when it gives none
    (a live database): read from the thread's notebook, which the turn wrote it into. On
    stdout under the summary; with --json, stdout holds the one object only."""
    from ..notebooks import recorded_data_version
    from ..sql import data_version_note

    version = recorded_data_version(Path(summary.notebook)) if summary.notebook else None
    note = data_version_note(version)
    if note is not None:
        print(f"data version: {version} ({note})", file=sys.stderr if as_json else sys.stdout, flush=True)


def read_workspace(args: argparse.Namespace, read: Callable[[Workspace], T], *, thread: str | None = None) -> T:
    """What ``read`` takes from the workspace of ``args`` (closed again after); with
    ``thread``, an unknown thread is a clear error first."""
    from ..workspace import Workspace

    workspace = Workspace(args.workspace, store=args.store, blobs=args.blobs, blobs_endpoint=args.blobs_endpoint)
    try:
        if thread is not None:
            workspace.store.get_thread(thread)
        return read(workspace)
    finally:
        workspace.close()


def state(args: argparse.Namespace) -> int:
    """``state``: what the agent has established on a thread, as a person reads it (or JSON)."""
    from ..agent import state_summary

    state = read_workspace(args, lambda ws: ws.store.agent_state(args.thread), thread=args.thread)
    if args.json:
        print(state.model_dump_json(indent=2))
        return 0
    from ..untrusted import terminal_text

    print(f"agent state of {args.thread}, version {state.version}")
    # Expired context is shown too: this is a record, not a prompt. The model wrote most of it.
    print(terminal_text(state_summary(state, ttl_s=float("inf"), cap=100_000)))
    if state.summary.text:
        print(terminal_text(f"Summary of turns 1-{state.summary.through_turn}:\n{state.summary.text}"))
    return 0


def export(args: argparse.Namespace) -> int:
    """``export``: the thread as a re-executable audit notebook, or a page to read."""
    from ..notebooks import default_output, export_thread, recorded_data_version, render_notebook

    def export(ws: Workspace) -> tuple[Any, Path]:
        thread = ws.store.get_thread(args.thread)
        output = args.output or default_output(thread.title, thread.thread_id, args.to)
        # A source's password or token stays out of every export (export_thread masks it).
        nb = export_thread(ws.store, ws.artifacts, args.thread,
                           file_name=output.with_suffix(".ipynb").name,
                           data_version=recorded_data_version(ws.notebook_path(args.thread)))
        return nb, output

    nb, output = read_workspace(args, export, thread=args.thread)
    written = render_notebook(nb, args.to, output)
    manifest = nb.metadata["jupyter_analyst"]["manifest"]
    extra = f" (and {len(written) - 1} image files)" if len(written) > 1 else ""
    print(f"exported {args.thread} to {written[0]}{extra}: {len(nb.cells)} cells, "
          f"{len(manifest)} artifacts in the manifest")
    return 0


def verify(args: argparse.Namespace) -> int:
    """``verify``: re-execute a notebook against a source the user names and compare its fingerprints."""
    from ..errors import ConfigError
    from ..notebooks import format_report, verify_notebook

    notebook, source = args.notebook, args.source
    if args.thread is not None:
        # The user's own workspace says which source and notebook the thread has; the
        # notebook's own metadata (its thread, its source) is never asked.
        thread = read_workspace(args, lambda ws: (ws.store.get_thread(args.thread), ws.notebook_path(args.thread)))
        source = source or thread[0].source
        notebook = notebook or thread[1]
    if notebook is None:
        raise ConfigError("no notebook to verify", reason="notebook_not_found",
                          hint="pass NB.ipynb, or --thread ID for a thread's own audit notebook")
    if args.reanswer:
        from ..notebooks import format_reanswer, reanswer_notebook

        restated = reanswer_notebook(notebook, source=source, progress=not args.json and sys.stderr.isatty())
        print(json.dumps(restated.to_json(), indent=2, default=str) if args.json else format_reanswer(restated))
        counts = restated.counts
        return EXIT_FAILED if counts["changed"] or counts["gone"] or restated.verify["error"] else 0
    # A bar per executed cell on a terminal; nothing on a pipe, where it would be noise.
    report = verify_notebook(notebook, source=source, progress=not args.json and sys.stderr.isatty())
    print(json.dumps(report.to_json(), indent=2) if args.json else format_report(report))
    return {"verified": 0, "nothing_to_verify": EXIT_NOTHING_TO_VERIFY}.get(report.verdict, EXIT_FAILED)


def execute(args: argparse.Namespace) -> int:
    """``execute``: a playbook's prompts asked in order on one thread, its audit notebook written."""
    from ..turns import AnalystConfig, ModelSettings
    from ..kernel import SandboxPolicy
    from ..turns import PromptProgress, plan_playbook, run_playbook

    # The playbook, its parameters and its source are checked before the model is needed.
    plan = plan_playbook(args.playbook, parameters=dict(args.parameter), source=args.source)
    model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
    config = AnalystConfig(workspace=args.workspace, store=args.store, blobs=args.blobs,
                           blobs_endpoint=args.blobs_endpoint, context_dir=args.context,
                           sandbox=SandboxPolicy(enabled=not args.no_sandbox))
    progress = None if args.json else PromptProgress()
    try:
        run = asyncio.run(run_playbook(
            plan, output=args.output, config=config, model=model, on_prompt=progress,
        ))
    finally:
        if progress is not None:
            progress.close()
    if args.json:
        print(json.dumps({"thread_id": run.thread_id, "output": run.output, "ok": run.ok,
                          "turns": [t.model_dump() for t in run.turns]}))
    else:
        from ..untrusted import terminal_text

        for turn in run.turns:
            print(f"\n{terminal_text(turn.answer)}")
        print(f"\naudit notebook: {run.output}  (thread {run.thread_id})")
    return 0 if run.ok else EXIT_FAILED


def artifacts_list(args: argparse.Namespace) -> int:
    """``artifacts list``: a thread's inventory."""
    items = read_workspace(args, lambda ws: ws.artifacts.list(args.thread), thread=args.thread)
    if args.json:
        print(json.dumps([a.model_dump() for a in items], indent=2))
        return 0
    if not items:
        print("(no artifacts)")
        return 0
    from ..untrusted import terminal_text

    # The ids set the first column's width: they grew past the header's once, and a fixed
    # width pushed every row's columns out of line with it.
    width = max(len("ARTIFACT"), *(len(a.artifact_id) for a in items))
    row = "{:<%d}  {:<8} {:<7} {:>10}  {:<19}  {}" % width
    print(row.format("ARTIFACT", "TYPE", "MADE BY", "BYTES", "FINGERPRINT", "NAME"))
    for a in items:
        print(terminal_text(row.format(a.artifact_id, a.type, a.producer, a.size, a.fingerprint[:19], a.name)))
    return 0


def threads(args: argparse.Namespace) -> int:
    """``threads``: the workspace's threads."""
    from ..sql import display_spec

    if args.rename:
        from ..errors import ConfigError

        thread_id, title = args.rename
        if not title.strip():
            raise ConfigError("the title is blank", reason="invalid_title", hint="pass a title with some text")
        read_workspace(args, lambda ws: ws.store.rename_thread(thread_id, title.strip()), thread=thread_id)
        print(f"renamed {thread_id}", file=sys.stderr)
        return 0
    if args.delete:
        count = read_workspace(args, lambda ws: _delete_thread(ws, args.delete, force=args.force), thread=args.delete)
        print(f"deleted {args.delete} and its {count} artifact{'s' if count != 1 else ''}", file=sys.stderr)
        return 0
    threads = read_workspace(args, lambda ws: ws.store.list_threads())
    if args.json:
        print(json.dumps([t.model_dump() for t in threads], indent=2))
        return 0
    from ..untrusted import terminal_text

    for t in threads:
        # Stored absolute; shown relative to this folder when it is inside it.
        print(terminal_text(f"{t.thread_id}  {t.created_at}  {display_spec(t.source) if t.source else '-'}  {t.title or ''}"))
    return 0


def _delete_thread(workspace: Workspace, thread_id: str, *, force: bool) -> int:
    from ..store import ThreadBusy

    # A server running a turn on this folder's SQLite store holds no lease: a turn marked
    # running may be live, so it is left alone unless the user says the process is gone.
    if workspace.store.has_running_turn(thread_id) and not force:
        raise ThreadBusy("a turn of this thread is marked running",
                         hint="stop it where it runs; if its process was cut, pass --force")
    return workspace.delete_thread(thread_id)


def demo(args: argparse.Namespace) -> int:
    """``demo``: two turns on the sample data; with ``--lab``, JupyterLab on it."""
    if args.lab:
        from .lab import run_lab

        return run_lab(args.out, port=args.port, open_browser=not args.no_browser, extra=args.jupyter_args)
    from .demo import run_demo

    return run_demo(args.out, as_json=args.json)


def doctor() -> int:
    """``doctor``: which sandbox layers this machine gives a kernel."""
    from ..kernel import run_doctor

    return run_doctor()


def install_kernelspec(args: argparse.Namespace) -> int:
    """``install-kernelspec``: the sandboxed kernelspec, for this user or this environment."""
    from ..kernel import install_kernelspec as install

    prefix = sys.prefix if args.sys_prefix else None
    print(f"installed the sandboxed kernelspec in {install(user=args.user, prefix=prefix)}")
    return 0


def scripted_model(args: argparse.Namespace) -> int:
    """``scripted-model``: the scripted OpenAI-compatible model, served until the process is stopped."""
    import threading

    from .demo import DEMO_SCRIPT
    from ..testing import ScriptedModelServer

    server = ScriptedModelServer(args.script or DEMO_SCRIPT, port=args.port).start()
    print(f"scripted model (not a real LLM) serving at {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()
    return 0


def mcp(args: argparse.Namespace) -> int:
    """``mcp``: the analyst's tools for other agents, until the client (stdio) or a signal (HTTP) ends it.

    Over HTTP a token is always required: without ``--token`` or ``$ANALYST_MCP_TOKEN`` one is
    made, and printed on stderr with the URL, for the user to paste into the client's settings.
    """
    import os

    from ..errors import AnalystError
    from ..kernel import SandboxPolicy
    from ..mcp import AnalystTools, named_sources, new_token, parse_named, require_sdk, serve_http, serve_stdio
    from ..turns import AnalystConfig, ModelSettings

    require_sdk()  # before anything opens: one line naming the extra
    given = ([(None, args.source)] if args.source else []) + [parse_named(value) for value in args.sources]
    sources = named_sources(given)
    token = args.token or os.environ.get("ANALYST_MCP_TOKEN") or None
    if args.http:
        host = f"[{args.host}]" if ":" in args.host and not args.host.startswith("[") else args.host
        print(f"MCP server (streamable HTTP) at http://{host}:{args.port}/mcp", file=sys.stderr)
        if token is None:
            token = new_token()
            print(f"with the header  Authorization: Bearer {token}", file=sys.stderr, flush=True)
        else:
            print("with the header  Authorization: Bearer <the token of --token or $ANALYST_MCP_TOKEN>",
                  file=sys.stderr, flush=True)
    config = AnalystConfig(workspace=args.workspace, store=args.store, blobs=args.blobs,
                           blobs_endpoint=args.blobs_endpoint, context_dir=args.context,
                           sandbox=SandboxPolicy(enabled=not args.no_sandbox), summarizer=not args.no_summarizer,
                           budgets=dict(args.budget))
    try:
        model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
    except AnalystError:
        model = None  # the step tools need no model; ask says so when called
    if model is not None and args.price is not None:
        config = config.model_copy(update={"prices": {model.model: args.price}})
    tools = AnalystTools(config, sources=sources, model=model, user=args.user, notebooks=args.notebooks)
    if args.http:
        assert token is not None
        asyncio.run(serve_http(tools, host=args.host, port=args.port, token=token))
    else:
        asyncio.run(serve_stdio(tools))
    return 0
