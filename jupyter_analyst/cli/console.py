"""The console script ``jupyter-analyst`` (``jupyter analyst ...`` runs it too): parse, run
one command, turn its errors into an exit status, and end the process quickly."""

from __future__ import annotations

import argparse
import atexit
import errno
import gc
import json
import os
import sys
from collections.abc import Callable, Sequence

from ..errors import AnalystError
from . import commands
from .commands import EXIT_BAD_INPUT, EXIT_FAILED
from .parser import build_parser


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
                return commands.run(args, started)
            case "artifacts":
                if args.artifacts_command != "list":
                    parser.parse_args(["artifacts", "--help"])
                return commands.artifacts_list(args)
            case "threads":
                return commands.threads(args)
            case "state":
                return commands.state(args)
            case "export":
                return commands.export(args)
            case "verify":
                return commands.verify(args)
            case "execute":
                return commands.execute(args)
            case "demo":
                if args.jupyter_args and not args.lab:
                    parser.error("Jupyter options after -- go with --lab")
                return commands.demo(args)
            case "eval":
                from .evaluation import evaluate

                return evaluate(args)
            case "context":
                if args.context_command not in ("verify", "add-metric"):
                    parser.parse_args(["context", "--help"])
                from .context import add_metric, verify as verify_answer

                return verify_answer(args) if args.context_command == "verify" else add_metric(args)
            case "scripted-model":
                return commands.scripted_model(args)
            case "mcp":
                return commands.mcp(args)
            case "doctor":
                return commands.doctor()
            case "proposals":
                from .proposal_commands import proposals

                return proposals(args, commands.read_workspace)
            case "install-kernelspec":
                return commands.install_kernelspec(args)
    except AnalystError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        _json_error(args, exc.to_dict())
        return EXIT_BAD_INPUT if _is_bad_input(exc) else EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        # A file the command reads or writes outside the workspace: one line, not a traceback.
        where = f": {exc.filename}" if exc.filename else ""
        print(f"error: {exc.strerror or exc}{where}", file=sys.stderr)
        _json_error(args, {"reason": "os_error", "message": str(exc)})
        return EXIT_BAD_INPUT if exc.errno in _SET_UP_ERRNOS else EXIT_FAILED
    except Exception as exc:  # noqa: BLE001 - whatever else escapes a command: one line, not a traceback
        text = str(exc).strip()
        message = f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        _json_error(args, {"reason": "internal_error", "message": message})
        return EXIT_FAILED
    return EXIT_BAD_INPUT


def _json_error(args: argparse.Namespace, error: dict) -> None:
    """With ``--json``, the one JSON object says the command failed; unless the command had
    printed its own already (a failure after a turn's result, while its sources closed)."""
    if getattr(args, "json", False) and not getattr(args, "json_printed", False):
        print(json.dumps({"status": "error", "error": error}), flush=True)


#: File-system failures that are the set-up's, not the product's: exit status 2.
_SET_UP_ERRNOS = frozenset({errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.ENOENT})


def _is_bad_input(exc: AnalystError) -> bool:
    from ..errors import ConfigError, DiskUnavailable, SourceError

    return isinstance(exc, ConfigError | SourceError | DiskUnavailable)
