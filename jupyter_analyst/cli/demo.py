"""``jupyter analyst demo``: the whole loop, offline, on bundled sample data.

The model is the scripted one (an OpenAI-compatible server on 127.0.0.1 replaying
``data/demo_script.json``), so every part but the model's words is real: DuckDB, the
kernel, the inventory, the notebook. Two turns run: a question, then "continue", for which
the script asks for the same steps again, so every one is reused instead of run. (A real
model given "continue" usually writes new steps on the existing datasets instead.)
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import sys
from importlib import resources
from pathlib import Path

import duckdb

from ..turns import TurnSummary
from .._disk import unavailable
from ..errors import StorageError
from ..evals import build_named_source
from ..turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
from ..progress import ProgressPrinter, print_summary
from ..testing import MODEL_NAME, ScriptedModelServer

DATA = resources.files("jupyter_analyst") / "data"
DEMO_SCRIPT = Path(str(DATA / "demo_script.json"))
FIRST_PROMPT = "Revenue by region per month, with a chart"


def build_sample_database(path: Path) -> Path:
    """Create ``path`` afresh as a DuckDB file holding the bundled sample sales tables (the
    eval suites' ``sample`` source, built the same way)."""
    path.unlink(missing_ok=True)
    return build_named_source("sample", path)


def run_demo(out: Path, *, as_json: bool = False) -> int:
    """Run the two demo turns into ``out``; returns the exit status."""
    out = out.resolve()
    try:
        db = build_sample_database(out / "sales.duckdb")
    except (OSError, duckdb.Error) as exc:
        raise unavailable(exc, out, workspace=False) or StorageError(f"cannot make the sample data in {out}: {exc}") from exc
    workspace = out / ".analyst"
    say = (lambda *a: None) if as_json else (lambda *a: print(*a, file=sys.stderr, flush=True))
    with ScriptedModelServer(DEMO_SCRIPT) as server:
        model = ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted")
        config = AnalystConfig(workspace=workspace)
        printer = None if as_json else ProgressPrinter()
        say("jupyter-analyst demo: OFFLINE, with the SCRIPTED model (its replies are canned, not an LLM's)")
        say(f"sample data: {db}\n")
        first = asyncio.run(
            run_turn(TurnRequest(prompt=FIRST_PROMPT, source=str(db)), config=config, model=model, on_event=printer)
        )
        if not as_json:
            print_summary(first)
        say('\nsecond turn: "continue" (the script asks for the same steps again, so they are reused;'
            ' a real model usually goes further instead)\n')
        second = asyncio.run(
            run_turn(
                TurnRequest(prompt="continue", thread_id=first.thread_id), config=config, model=model,
                on_event=printer,
            )
        )
    audit = _export(workspace, first.thread_id, out / "analysis.ipynb")
    if as_json:
        print(json.dumps({"first": first.model_dump(), "second": second.model_dump(), "audit": str(audit)}, indent=2))
    else:
        print_summary(second)
        _closing(first, second, workspace, audit, db)
    ok = first.status == "completed" and second.status == "completed"
    return 0 if ok else 1


def _export(workspace: Path, thread_id: str, path: Path) -> Path:
    """The thread's audit-trail notebook, with its manifest of fingerprints."""
    from ..notebooks import export_thread, recorded_data_version, write_export
    from ..workspace import Workspace

    ws = Workspace(workspace)
    try:
        nb = export_thread(ws.store, ws.artifacts, thread_id, file_name=path.name,
                           data_version=recorded_data_version(ws.notebook_path(thread_id)))
        return write_export(nb, path)
    finally:
        ws.close()


def _closing(first: TurnSummary, second: TurnSummary, workspace: Path, audit: Path, db: Path) -> None:
    cmd = shell_command()
    audit_, db_, ws = (shown_path(p) for p in (audit, db, workspace))
    print(
        "\nWhat to open next:\n"
        f"  audit:      {audit_}  (check it: {cmd} verify {audit_} --db {db_})\n"
        f"  JupyterLab: {cmd} demo --lab --out {shown_path(audit.parent)}  (from a clone: make lab; the Data analyst "
        f"panel, and {audit.name} in its file browser)\n"
        f"  notebook:   {shown_path(Path(second.notebook)) if second.notebook else '-'}  (the thread's own, under a hidden folder)\n"
        f"  inventory:  {cmd} artifacts list --workspace {ws} --thread {first.thread_id}\n"
        f"  memory:     {cmd} state --workspace {ws} --thread {first.thread_id}\n"
        f"  continue:   {cmd} run --workspace {ws} --thread {first.thread_id} "
        '--prompt "..."  (needs a real model: OPENAI_API_KEY)'
    )


def shell_command() -> str:
    """The command that runs this CLI when pasted into the user's shell as it is: its bare
    name when the shell's PATH finds this very script, else the script's path (a venv that is
    not activated), relative to the current folder when it is inside it.

    >>> shell_command().endswith("jupyter-analyst")
    True
    """
    script = Path(sys.executable).parent / "jupyter-analyst"
    if not script.is_file():  # not a venv's or a prefix's interpreter: run the package itself
        return f"{shlex.quote(sys.executable)} -m jupyter_analyst.cli"
    found = shutil.which("jupyter-analyst")
    if found and os.path.samefile(found, script):
        return "jupyter-analyst"
    return shown_path(script)


def shown_path(path: Path) -> str:
    """``path`` as a user pastes it: relative to the current folder when inside it, quoted
    for a POSIX shell.

    >>> shown_path(Path.cwd() / "demo-output" / "analysis.ipynb")
    'demo-output/analysis.ipynb'
    >>> shown_path(Path("/tmp/my data/x.duckdb"))
    "'/tmp/my data/x.duckdb'"
    """
    try:
        text = str(path.relative_to(Path.cwd()))
    except ValueError:
        text = str(path)
    return shlex.quote(text)
