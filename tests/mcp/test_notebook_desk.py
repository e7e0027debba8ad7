"""The MCP server's notebook folder: what a client may name, and a contents manager's refusal
said as one clear error, with nothing written."""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.mcp.notebook_desk import NotebookDesk
from jupyter_analyst.workspace import Workspace


def test_a_hidden_notebook_is_refused_by_the_contents_manager_as_one_clear_error(tmp_path):
    folder = tmp_path / "nb"
    (folder / ".hidden").mkdir(parents=True)
    notebook = folder / ".hidden" / "study.ipynb"
    notebook.write_text(json.dumps({"cells": [{"id": "a", "cell_type": "code", "source": "x = 1", "metadata": {},
                                               "outputs": [], "execution_count": None}],
                                    "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    before = notebook.read_bytes()
    workspace = Workspace(tmp_path / "ws")
    try:
        thread = workspace.store.create_thread(user="local", source="x", title="t").thread_id
        change = {"change_id": "a", "op": "replace", "cell_id": "a", "source": "x = 2", "reason": "r",
                  "base_digest": None}
        body = {"proposal_id": "prop_1", "thread_id": thread, "turn_id": "turn_1", "call_id": "c",
                "notebook": ".hidden/study.ipynb", "changes": [change], "created_at": "now"}
        workspace.store.record_proposal(thread, "turn_1", "prop_1", ".hidden/study.ipynb", body)
        desk = NotebookDesk(folder)
        with pytest.raises(ConfigError, match="the notebook cannot be read or written: .*hidden"):
            desk.decide(workspace, "accept", thread, "prop_1", None, "local")
        with pytest.raises(ConfigError, match="unknown proposal 'prop_x'"):
            desk.decide(workspace, "accept", thread, "prop_x", None, "local")
    finally:
        workspace.close()
    assert notebook.read_bytes() == before
