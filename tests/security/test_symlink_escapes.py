"""Attacks through links and special files in ``outputs/``: the host must never follow one.

Before the fix, the host walked ``outputs/`` following links, so a link to a host file
stored that file as an artifact and handed its bytes back to the model.
"""

from __future__ import annotations

import os
import textwrap

import pytest

from jupyter_analyst.testing import python_step, text_step

from .conftest import blob_bytes, results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

SECRET = b"TOP-SECRET-HOST-BYTES-7f3a"


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, sales_db):
    """One turn whose steps are the attacks; the host's secret files live outside the sandbox."""
    host = tmp_path_factory.mktemp("host")
    secret = host / "secret.txt"
    secret.write_bytes(SECRET)
    secret_dir = host / "private"
    secret_dir.mkdir()
    (secret_dir / "key.pem").write_bytes(SECRET)
    steps = [
        # 0: a link to a host file, and to /etc/shadow
        python_step(f"import os\nos.symlink({str(secret)!r}, 'outputs/leak.txt')\n"
                    "os.symlink('/etc/shadow', 'outputs/shadow.csv')"),
        # 1: outputs/ itself swapped for a link to a host folder
        python_step(f"import os, shutil\nshutil.rmtree('outputs')\nos.symlink({str(secret_dir)!r}, 'outputs')"),
        # 2: put outputs/ back; a FIFO (the host must not block on it) and a hard link
        python_step("import os\nos.unlink('outputs')\nos.makedirs('outputs')\nos.mkfifo('outputs/pipe.csv')\n"
                    "open('mine.txt', 'w').write('x')\nos.link('mine.txt', 'outputs/hard.txt')"),
        # 3: a link in a sub-folder pointing up and out
        python_step(f"import os\nos.makedirs('outputs/sub/deeper')\n"
                    f"os.symlink({str(host)!r}, 'outputs/sub/deeper/up')"),
        # 4: ordinary work still goes through
        python_step("open('outputs/ok.csv', 'w').write('a,b\\n1,2\\n')"),
        text_step(),
    ]
    with scripted(tmp_path_factory.mktemp("ws") / "ws", sales_db, {"turns": [{"match": "attack", "steps": steps}]}) as analyst:
        summary = analyst.run("attack")
        yield analyst, summary, results_of(analyst, summary.turn_id)


def _not_stored(result) -> dict[str, str]:
    return {f["path"]: f["reason"] for f in result.result.get("files_not_stored", [])}


def test_a_link_to_a_host_file_is_reported_and_not_stored(attacked):
    analyst, _, results = attacked
    step = results[0]
    assert step.status == "ok" and step.artifact_ids == []
    refused = _not_stored(step)
    assert set(refused) == {"outputs/leak.txt", "outputs/shadow.csv"}
    assert all("link" in why for why in refused.values())
    assert not any(SECRET in b for b in blob_bytes(analyst.workspace))


def test_outputs_swapped_for_a_link_to_a_host_folder_stores_nothing(attacked):
    analyst, _, results = attacked
    step = results[1]
    assert step.artifact_ids == []
    assert "outputs" in _not_stored(step)
    assert not any(SECRET in b for b in blob_bytes(analyst.workspace))


def test_fifos_and_hard_links_are_ignored_without_blocking(attacked):
    _, summary, results = attacked
    step = results[2]
    assert step.status == "ok" and step.artifact_ids == []
    refused = _not_stored(step)
    assert "not a regular file" in refused["outputs/pipe.csv"]
    assert "hard link" in refused["outputs/hard.txt"]


def test_a_link_deep_in_outputs_is_not_walked(attacked):
    analyst, _, results = attacked
    step = results[3]
    assert step.artifact_ids == [] and "outputs/sub/deeper/up" in _not_stored(step)
    assert not any(SECRET in b for b in blob_bytes(analyst.workspace))


def test_the_kernel_keeps_working_and_the_turn_completes(attacked):
    analyst, summary, results = attacked
    assert summary.status == "completed"
    ok = results[4]
    assert ok.status == "ok" and len(ok.artifact_ids) == 1
    art = analyst.of_type("artifact")[-1]
    assert art.name == "outputs/ok.csv"
