"""``jupyter analyst demo --lab``: JupyterLab on the bundled sample data, offline.

The model is the scripted one (``data/lab_script.json``, replayed by an OpenAI-compatible
server on 127.0.0.1): the demo's question, "continue", and a deliberately slow step to
stop. Everything else is real: the server extension, its kernels, DuckDB and the
"Data analyst" panel. ``make lab`` runs this; the browser tests start JupyterLab the same
way, with their own server configuration after ``--``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

import duckdb

from .demo import build_sample_database
from .._disk import unavailable
from ..errors import StorageError
from ..testing import MODEL_NAME, ScriptedModelServer

LAB_SCRIPT = Path(str(resources.files("jupyter_analyst") / "data" / "lab_script.json"))
SOURCE_NAME = "sales"


def lab_arguments(out: Path, db: Path, model_url: str, *, port: int | None, open_browser: bool,
                  as_root: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """The ``jupyter lab`` command line: the sample source, the scripted model, ``out`` as root.

    ``as_root``: the demo runs as root (a container, CI), which Jupyter refuses unless told.

    >>> args = lab_arguments(Path("/d"), Path("/d/sales.duckdb"), "http://127.0.0.1:9/v1", port=8899, open_browser=False)
    >>> [a for a in args if "sources" in a or "port" in a]
    ['--AnalystApp.sources={"sales": "/d/sales.duckdb"}', '--ServerApp.port=8899']
    """
    args = [
        f"--ServerApp.root_dir={out}",
        f"--AnalystApp.workspace={out / '.analyst'}",
        "--AnalystApp.sources=" + json.dumps({SOURCE_NAME: str(db)}),
        f"--AnalystApp.model_base_url={model_url}",
        "--AnalystApp.api_key=scripted",
        f"--AnalystApp.model={MODEL_NAME}",
        # jupyter-server-mcp (installed with the test extra) would open a port of its own.
        "--ServerApp.jpserver_extensions={'jupyter_analyst.server': True, 'jupyter_server_mcp': False}",
    ]
    if port is not None:
        args.append(f"--ServerApp.port={port}")
    if not open_browser:
        args.append("--no-browser")
    if as_root:
        args.append("--allow-root")
    return [*args, *extra]


def run_lab(out: Path, *, port: int | None = None, open_browser: bool = True, extra: Sequence[str] = ()) -> int:
    """Serve JupyterLab on the sample data with the scripted model until it is stopped."""
    from jupyterlab.labapp import LabApp

    out = out.resolve()
    try:
        db = build_sample_database(out / "sales.duckdb")
    except (OSError, duckdb.Error) as exc:
        raise unavailable(exc, out, workspace=False) or StorageError(f"cannot make the sample data in {out}: {exc}") from exc
    with ScriptedModelServer(LAB_SCRIPT) as server:
        print(
            "\n" + "=" * 78 + "\n"
            "jupyter-analyst: JupyterLab with the SCRIPTED model (canned replies, not an LLM), OFFLINE\n"
            f"  data source '{SOURCE_NAME}': {db}\n"
            "  open the 'Data analyst' panel in the right sidebar and ask, e.g.:\n"
            '    "Revenue by region per month, with a chart", then "continue",\n'
            '    or "count slowly" (a slow step, to try Stop), or "think it over" (a model thinking)\n'
            + "=" * 78 + "\n",
            file=sys.stderr, flush=True,
        )
        argv = lab_arguments(out, db, server.base_url, port=port, open_browser=open_browser,
                             as_root=os.geteuid() == 0, extra=extra)
        LabApp.launch_instance(argv=argv)
    return 0
