"""A thread's answer re-answered on today's data, for the panel: ``POST threads/{id}/verify``
with ``reanswer``.

The work is ``jupyter analyst verify NB --db SOURCE --reanswer --json``'s, in a process of its
own as every verification is (``verifications.py``): the notebook re-run on the thread's
source, each cited number restated with today's value. What the server adds is where the
re-answered notebook goes: beside the verified notebook in the user's folder (beside the
default export for a fresh one), written through the contents manager so its checks apply.
A folder that refuses it leaves the re-answer standing, with the reason it was not written.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import ConfigError
from ..notebooks import answer_receipts
from .verifications import verify_in_subprocess

#: How the CLI names a re-answered notebook beside its original (``notebooks/reanswer.py``).
SUFFIX = ".reanswered.ipynb"


def reanswered_path(notebook: str) -> str:
    """Where the re-answer of ``notebook`` (a path in the user's folder) is written.

    >>> reanswered_path("analyst/regions-89abcdef.ipynb")
    'analyst/regions-89abcdef.reanswered.ipynb'
    """
    return notebook[: -len(".ipynb")] + SUFFIX


def check_reanswerable(nb: Any, name: str) -> None:
    """Refuse, before anything runs, a notebook whose answers cite no number from a step:
    there is nothing to restate. Its receipts are read as the re-answer reads them (hostile
    input, every span and step checked), so a forged one is refused here too.

    Raises:
        ConfigError: ``no_receipts``, or the reasons of ``notebooks.answer_receipts``.
    """
    try:
        found = answer_receipts(nb, PurePosixPath(name))
    except ConfigError as exc:
        if exc.reason != "no_receipts":
            raise
        found = []
    if not any(receipts.citations for _, _, receipts in found):
        raise ConfigError("the thread has no answer with receipts: no number of its answers is cited to a step, "
                          "so there is nothing to re-answer", reason="no_receipts",
                          hint="ask a question whose answer states numbers from the data, then re-answer it; "
                               "verify still re-runs the thread")


async def reanswer_notebook_text(nb: dict[str, Any], source: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The re-answer of the notebook ``nb`` on ``source`` (a spec), from a temporary folder
    of its own that is removed afterwards; with the re-answered notebook's content, when the
    run wrote one."""
    with tempfile.TemporaryDirectory(prefix="analyst-verify-") as tmp:
        path = Path(tmp) / "notebook.ipynb"
        path.write_text(json.dumps(nb), encoding="utf-8")
        report = await verify_in_subprocess(path, source, reanswer=True)
        out = path.with_name("notebook" + SUFFIX)
        # Written by the host's own process beside the copy (the kernel ran elsewhere).
        content = json.loads(out.read_text(encoding="utf-8")) if out.is_file() and not out.is_symlink() else None
    return report, content
