"""The proposed notebook beside the notebook, and a contents manager's refusal said plainly."""

from __future__ import annotations

import os

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.turns import file_contents, through_contents
from jupyter_analyst.turns.proposed_file import read_notebook_file, write_proposed


def test_a_hidden_notebook_refused_by_the_contents_manager_is_one_clear_error(tmp_path):
    (tmp_path / ".study.ipynb").write_text("{}")
    files = file_contents(tmp_path)
    with pytest.raises(ConfigError, match="the notebook cannot be read or written: ") as caught:
        through_contents(lambda: files.get(".study.ipynb", content=True, type="file", format="text"))
    assert caught.value.reason == "notebook_not_found"


def test_the_proposed_notebook_is_written_beside_it_never_through_a_link(tmp_path):
    notebook = tmp_path / "study.ipynb"
    notebook.write_text('{"cells": []}')
    assert write_proposed(notebook, "{}") == tmp_path / "study.proposed.ipynb"
    elsewhere = tmp_path / "elsewhere.ipynb"
    elsewhere.write_text("kept")
    (tmp_path / "study.proposed.ipynb").unlink()
    os.symlink(elsewhere, tmp_path / "study.proposed.ipynb")
    with pytest.raises(ConfigError, match="is a link, which is not followed"):
        write_proposed(notebook, "{}")
    assert elsewhere.read_text() == "kept"
    with pytest.raises(ConfigError, match="there is no readable notebook"):
        read_notebook_file(tmp_path / "missing.ipynb")
