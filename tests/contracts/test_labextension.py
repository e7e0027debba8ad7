"""The JupyterLab extension is installed where JupyterLab looks, and JupyterLab says it is enabled and OK.

``make test`` builds it (``npm run build:prod``) and links it into the environment
(``jupyter labextension develop``); a wheel carries the same files in its shared data.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_core.paths import jupyter_path

# They need the panel built and linked: `make test-unit` leaves them out, every other target runs them.
pytestmark = pytest.mark.extension

NAME = "jupyter-analyst"
HINT = "build and link it with `make extension` (npm ci, npm run build:prod, jupyter-builder develop)"


def installed_extension() -> Path:
    """The first ``labextensions/jupyter-analyst`` JupyterLab would load."""
    for root in jupyter_path("labextensions"):
        if (Path(root) / NAME / "package.json").is_file():
            return Path(root) / NAME
    raise AssertionError(f"{NAME} is not in any labextensions folder of {jupyter_path('labextensions')}: {HINT}")


def test_the_built_extension_is_where_jupyterlab_looks() -> None:
    where = installed_extension()
    meta = json.loads((where / "package.json").read_text())
    assert meta["name"] == NAME
    # The federated build: its entry point is there, with the style module.
    entry = meta["jupyterlab"]["_build"]["load"]
    assert (where / entry).is_file(), f"{where / entry} is missing: {HINT}"
    assert (where / "static" / "style.js").is_file()
    assert (where / "schemas" / NAME / "plugin.json").is_file()


def test_jupyterlab_lists_the_extension_enabled_and_ok() -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"], capture_output=True, text=True, timeout=120,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listing.stdout + listing.stderr)  # without the colours
    line = next((ln for ln in text.splitlines() if ln.strip().startswith(f"{NAME} ")), None)
    assert line is not None, f"{NAME} is not listed by `jupyter labextension list`: {HINT}\n{text}"
    assert "enabled" in line and "OK" in line, line
