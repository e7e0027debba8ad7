"""``jupyter analyst ...`` (also ``jupyter-analyst``): a thin layer over the public functions."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import errno
import gc
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ._version import __version__
from .errors import AnalystError

if TYPE_CHECKING:
    from .workspace import Workspace

T = TypeVar("T")
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
#: ``verify`` of a notebook that records no artifact: neither a pass nor a difference.
EXIT_NOTHING_TO_VERIFY = 3


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


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", help="model name (default: $OPENAI_MODEL or gpt-4o-mini)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")


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

    run = sub.add_parser("run", help="run one turn of a thread", description="Run one turn of a thread.")
    run.add_argument("--db", dest="source", metavar="SOURCE",
                     help="data source: a .duckdb file, :memory:, CSV/Parquet file or folder, or a "
                          "SQLAlchemy URL (default for --thread: the thread's source)")
    run.add_argument("--prompt", required=True, help="what to ask")
    run.add_argument("--thread", metavar="ID", help="continue this thread instead of starting one")
    _workspace_arg(run)
    _model_args(run)
    run.add_argument("--output", metavar="NB.ipynb", type=Path,
                     help="write the notebook here (default: the thread's notebook in the workspace)")
    run.add_argument("--rerun", action="store_true", help="re-execute steps instead of reusing them")
    run.add_argument("--attach", metavar="NB.ipynb", type=Path,
                     help="your notebook: its outline goes into the model's context, which reads the cells "
                          "it needs by id (read_cells)")
    run.add_argument("--json", action="store_true", help="print one JSON object when the turn ends")
    run.add_argument("--max-steps", type=int, default=16, help="model calls allowed per turn (default 16)")
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

    state = sub.add_parser("state", help="show a thread's agent state (what the agent has established)")
    state.add_argument("--thread", required=True, metavar="ID")
    _workspace_arg(state)
    state.add_argument("--json", action="store_true", help="print the whole state as JSON")

    arts = sub.add_parser("artifacts", help="the artifact inventory")
    arts_sub = arts.add_subparsers(dest="artifacts_command", metavar="ACTION")
    lst = arts_sub.add_parser("list", help="list a thread's artifacts")
    lst.add_argument("--thread", required=True, metavar="ID")
    _workspace_arg(lst)
    lst.add_argument("--json", action="store_true", help="print JSON")

    threads = sub.add_parser("threads", help="list the workspace's threads")
    _workspace_arg(threads)
    threads.add_argument("--json", action="store_true", help="print JSON")

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

    sub.add_parser("doctor", help="show which sandbox layers are active on this machine")

    spec = sub.add_parser("install-kernelspec", help="install the sandboxed kernelspec for Jupyter")
    spec.add_argument("--user", action="store_true", help="for this user only")
    spec.add_argument("--sys-prefix", action="store_true", help="into this environment (sys.prefix)")

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
    _workspace_arg(verify)

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

    scripted = sub.add_parser("scripted-model", help="serve a scripted OpenAI-compatible model (testing)")
    scripted.add_argument("--script", type=Path, help="script JSON (default: the demo's script)")
    scripted.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    return parser


#: The exit status of the command the console script ran, once it has returned.
_finished: int | None = None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script (``argv`` None: the process's own arguments).

    As the console script, the process ends as soon as the command has returned and its
    output is flushed (see :func:`_end_process`).
    """
    global _finished
    if argv is None:
        atexit.register(_end_process)  # registered first, so it runs last
        # The modules a command imports live as long as the process: collecting them over
        # and over while they load is wasted work (a fifth of a turn's start-up). The
        # collector is off while the command starts; what the imports made is then set
        # aside (gc.freeze) and the collector runs as usual for what the command does.
        gc.disable()
        _finished = status = _command(argv, started=_collect_from_now)
    else:
        _finished = status = _command(argv)
    return status


def _collect_from_now() -> None:
    """The command has imported what it needs: from now on the collector runs, on new objects only."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def _end_process() -> None:
    """The console script's last exit handler: end the process without the interpreter's
    teardown, which frees every object of the SDKs one by one (a quarter of a second, more
    than a turn whose steps are all reused takes).

    Exit handlers run after the interpreter has joined the threads that were still working,
    and every other handler has run by now (this one was registered first); the command
    closed its stores, sources and kernels before returning. After an uncaught exception
    (no status), the usual teardown runs.
    """
    if _finished is None:
        return
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what it could not take is lost either way
            pass
    os._exit(_finished)


def _command(argv: Sequence[str] | None, started: Callable[[], None] = lambda: None) -> int:
    """Parse ``argv`` and run the command; returns the exit status. ``started`` is called
    when ``run`` has imported what it runs on, and at once for any other command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "run":
        started()
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    try:
        match args.command:
            case "run":
                return _run(args, started)
            case "artifacts":
                if args.artifacts_command != "list":
                    parser.parse_args(["artifacts", "--help"])
                return _artifacts_list(args)
            case "threads":
                return _threads(args)
            case "state":
                return _state(args)
            case "export":
                return _export(args)
            case "verify":
                return _verify(args)
            case "execute":
                return _execute(args)
            case "demo":
                if args.lab:
                    from .lab import run_lab

                    return run_lab(args.out, port=args.port, open_browser=not args.no_browser,
                                   extra=args.jupyter_args)
                if args.jupyter_args:
                    parser.error("Jupyter options after -- go with --lab")
                from .demo import run_demo

                return run_demo(args.out, as_json=args.json)
            case "scripted-model":
                return _scripted_model(args)
            case "doctor":
                from .kernel.sandbox.doctor import main as doctor

                return doctor()
            case "install-kernelspec":
                from .kernel import install_kernelspec

                prefix = sys.prefix if args.sys_prefix else None
                print(f"installed the sandboxed kernelspec in {install_kernelspec(user=args.user, prefix=prefix)}")
                return 0
    except AnalystError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        if getattr(args, "json", False):
            print(json.dumps({"status": "error", "error": exc.to_dict()}))
        return EXIT_BAD_INPUT if _is_bad_input(exc) else EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # A file the command reads or writes outside the workspace: one line, not a traceback.
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        if getattr(args, "json", False):
            print(json.dumps({"status": "error", "error": {"reason": "os_error", "message": str(exc)}}))
        return EXIT_BAD_INPUT if exc.errno in _SET_UP_ERRNOS else EXIT_FAILED
    return EXIT_BAD_INPUT


#: File-system failures that are the set-up's, not the product's: exit status 2.
_SET_UP_ERRNOS = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.ENOENT})


def _is_bad_input(exc: AnalystError) -> bool:
    from .errors import ConfigError, DiskUnavailable, SourceError

    return isinstance(exc, ConfigError | SourceError | DiskUnavailable)


def _run(args: argparse.Namespace, started: Callable[[], None] = lambda: None) -> int:
    from .agent import ContextBudget
    from .turns import AnalystConfig, BackgroundWork, ModelSettings, TurnRequest, TurnSummary, run_turn
    from .progress import ProgressPrinter, print_summary

    started()

    model = ModelSettings.resolve(model=args.model, base_url=args.base_url, summary_model=args.summary_model)
    attached = None
    if args.attach is not None:
        from .notebooks.outline import load_attached

        attached = load_attached(args.attach)
    request = TurnRequest(
        prompt=args.prompt, source=args.source, thread_id=args.thread, rerun=args.rerun,
        notebook=args.output, attached=attached,
    )
    from .kernel import SandboxPolicy

    policy = SandboxPolicy(enabled=not args.no_sandbox)
    if args.memory_mb:
        policy = policy.model_copy(update={"memory_mb": args.memory_mb})
    config = AnalystConfig(
        workspace=args.workspace, store=args.store, blobs=args.blobs, blobs_endpoint=args.blobs_endpoint,
        max_steps=args.max_steps, sandbox=policy,
        plan_concurrency=args.plan_concurrency, summarizer=not args.no_summarizer, context=ContextBudget(tokens=args.context_tokens),
    )
    printer = None if args.json else ProgressPrinter()

    async def turn() -> TurnSummary:
        # The answer is printed as soon as the turn is done; the summarizer finishes after.
        background = BackgroundWork()
        summary = await run_turn(request, config=config, model=model, on_event=printer, background=background)
        if args.json:
            print(summary.model_dump_json(), flush=True)
        else:
            print_summary(summary)
            if background.pending:
                print("updating the agent state...", file=sys.stderr, flush=True)
        await background.drain()
        return summary

    summary = asyncio.run(turn())
    return 0 if summary.status == "completed" else EXIT_FAILED


def _read_workspace(args: argparse.Namespace, read: Callable[[Workspace], T], *, thread: str | None = None) -> T:
    """What ``read`` takes from the workspace of ``args`` (closed again after); with
    ``thread``, an unknown thread is a clear error first."""
    from .workspace import Workspace

    workspace = Workspace(args.workspace, store=args.store, blobs=args.blobs, blobs_endpoint=args.blobs_endpoint)
    try:
        if thread is not None:
            workspace.store.get_thread(thread)
        return read(workspace)
    finally:
        workspace.close()


def _state(args: argparse.Namespace) -> int:
    from .agent import state_summary

    state = _read_workspace(args, lambda ws: ws.store.agent_state(args.thread), thread=args.thread)
    if args.json:
        print(state.model_dump_json(indent=2))
        return 0
    from .untrusted import terminal_text

    print(f"agent state of {args.thread}, version {state.version}")
    # Expired context is shown too: this is a record, not a prompt. The model wrote most of it.
    print(terminal_text(state_summary(state, ttl_s=float("inf"), cap=100_000)))
    if state.summary.text:
        print(terminal_text(f"Summary of turns 1-{state.summary.through_turn}:\n{state.summary.text}"))
    return 0


def _export(args: argparse.Namespace) -> int:
    from .notebooks.export import export_thread, recorded_data_version
    from .notebooks.render import default_output, render
    from ._text import masked

    def export(ws: Workspace) -> tuple[Any, Path]:
        thread = ws.store.get_thread(args.thread)
        output = args.output or default_output(thread.title, thread.thread_id, args.to)
        # A page is for reading, not re-running: a URL's password stays out of it.
        spec = thread.source or ""
        parameters = {"source": masked(spec)} if args.to != "ipynb" and masked(spec) != spec else None
        nb = export_thread(ws.store, ws.artifacts, args.thread, parameters=parameters,
                           file_name=output.with_suffix(".ipynb").name,
                           data_version=recorded_data_version(ws.notebook_path(args.thread)))
        return nb, output

    nb, output = _read_workspace(args, export, thread=args.thread)
    written = render(nb, args.to, output)
    manifest = nb.metadata["jupyter_analyst"]["manifest"]
    extra = f" (and {len(written) - 1} image files)" if len(written) > 1 else ""
    print(f"exported {args.thread} to {written[0]}{extra}: {len(nb.cells)} cells, "
          f"{len(manifest)} artifacts in the manifest")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from .errors import ConfigError
    from .notebooks.verify import format_report, verify_notebook

    notebook, source = args.notebook, args.source
    if args.thread is not None:
        # The user's own workspace says which source and notebook the thread has; the
        # notebook's own metadata (its thread, its source) is never asked.
        thread = _read_workspace(args, lambda ws: (ws.store.get_thread(args.thread), ws.notebook_path(args.thread)))
        source = source or thread[0].source
        notebook = notebook or thread[1]
    if notebook is None:
        raise ConfigError("no notebook to verify", reason="notebook_not_found",
                          hint="pass NB.ipynb, or --thread ID for a thread's own audit notebook")
    # A bar per executed cell on a terminal; nothing on a pipe, where it would be noise.
    report = verify_notebook(notebook, source=source, progress=not args.json and sys.stderr.isatty())
    print(json.dumps(report.to_json(), indent=2) if args.json else format_report(report))
    return {"verified": 0, "nothing_to_verify": EXIT_NOTHING_TO_VERIFY}.get(report.verdict, EXIT_FAILED)


def _execute(args: argparse.Namespace) -> int:
    from .turns import AnalystConfig, ModelSettings
    from .kernel import SandboxPolicy
    from .turns import PromptProgress, plan_playbook, run_playbook

    # The playbook, its parameters and its source are checked before the model is needed.
    plan = plan_playbook(args.playbook, parameters=dict(args.parameter), source=args.source)
    model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
    config = AnalystConfig(workspace=args.workspace, store=args.store, blobs=args.blobs,
                           blobs_endpoint=args.blobs_endpoint, sandbox=SandboxPolicy(enabled=not args.no_sandbox))
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
        from .untrusted import terminal_text

        for turn in run.turns:
            print(f"\n{terminal_text(turn.answer)}")
        print(f"\naudit notebook: {run.output}  (thread {run.thread_id})")
    return 0 if run.ok else EXIT_FAILED


def _artifacts_list(args: argparse.Namespace) -> int:
    items = _read_workspace(args, lambda ws: ws.artifacts.list(args.thread), thread=args.thread)
    if args.json:
        print(json.dumps([a.model_dump() for a in items], indent=2))
        return 0
    if not items:
        print("(no artifacts)")
    from .untrusted import terminal_text

    for a in items:
        print(terminal_text(f"{a.artifact_id}  {a.type:<8} {a.producer:<7} {a.size:>10}  {a.fingerprint[:19]}  {a.name}"))
    return 0


def _threads(args: argparse.Namespace) -> int:
    from .sql import display_spec

    threads = _read_workspace(args, lambda ws: ws.store.list_threads())
    if args.json:
        print(json.dumps([t.model_dump() for t in threads], indent=2))
        return 0
    from .untrusted import terminal_text

    for t in threads:
        # Stored absolute; shown relative to this folder when it is inside it.
        print(terminal_text(f"{t.thread_id}  {t.created_at}  {display_spec(t.source) if t.source else '-'}  {t.title or ''}"))
    return 0


def _scripted_model(args: argparse.Namespace) -> int:
    import threading

    from .demo import DEMO_SCRIPT
    from .testing import ScriptedModelServer

    server = ScriptedModelServer(args.script or DEMO_SCRIPT, port=args.port).start()
    print(f"scripted model (not a real LLM) serving at {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
