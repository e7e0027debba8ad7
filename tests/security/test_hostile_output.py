"""The kernel's messages are untrusted input: checked, and capped as they arrive.

Before the fix the host kept every display a step sent and applied the 256 MB step cap only
afterwards: 40 displays of 25 MB took it to 2.5 GB. A display whose PNG was not base64, an
SVG given as an object, or a message forged with the wrong types raised in the host, so the
CLI printed a traceback and no JSON. An exception of 30 MB became a 60 MB tool result and
notebook. One message of fifty 20 MB frames (one buffer, sent without a copy) was assembled
whole by ZMQ in the host: 1 GB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nbformat
import pytest

from jupyter_analyst.agent.spec.outcome import MODEL_TEXT_CAP
from jupyter_analyst.kernel.outputs import MB
from jupyter_analyst.testing import ScriptedModelServer, python_step, text_step

from .conftest import results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

FLOOD = """
import base64, os
from IPython.display import display
picture = base64.b64encode(b"\\x89PNG\\r\\n\\x1a\\n" + os.urandom(25 * 2**20 * 3 // 4)).decode()
for _ in range(40):
    display({"image/png": picture}, raw=True)
print("sent", len(picture))
"""

MALFORMED = """
import json
from IPython.display import display
display({"image/png": "not base64"}, raw=True)
display({"image/png": "aGVsbG8gd29ybGQ="}, raw=True)
display({"image/svg+xml": {"an": "object"}}, raw=True)
kernel = get_ipython().kernel
parent = kernel.get_parent()
def forge(kind, content):
    kernel.session.send(kernel.iopub_socket, kind, json.dumps(content), parent=parent)
forge("stream", ["not", "an", "object"])
forge("stream", {"name": "stdout", "text": 42})
forge("display_data", {"data": "not a bundle"})
forge("error", {"ename": 1, "evalue": None, "traceback": "x"})
forge("execute_result", {"data": {"text/plain": 5}, "execution_count": "seven"})
forge("status", {"execution_state": ["idle"]})
kernel.iopub_socket.send_multipart([b"topic", b"<IDS|MSG>", b"signature", b"not json", b"{}", b"{}", b"{}"])
print("still here")
"""


FRAMES = """
import glob, json, os, sys
# The relay's sockets, which every client in the host connects to, cannot be taken over.
folder = os.path.dirname(json.load(open(sys.argv[sys.argv.index("-f") + 1]))["ip"])
kept = []
for path in glob.glob(folder + "/k-*"):
    try:
        os.unlink(path)
    except OSError:
        kept.append(path)
buffer = b"x" * (20 * 2**20)
get_ipython().kernel.iopub_socket.send_multipart([b"display_data", b"<IDS|MSG>"] + [buffer] * 50, copy=False)
print(len(kept), "relay sockets kept")
"""


def _status(key: str) -> int:
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key + ":"))


@pytest.mark.serial  # the host's peak memory while about 1 GB goes by: alone, not beside another test's
def test_forty_displays_of_25_mb_leave_the_host_near_its_cap(tmp_path, sales_db):
    cap = 64 * MB
    turns = [{"match": "warm", "steps": [python_step("import matplotlib.pyplot as plt; plt.plot([1]); plt.show()"),
                                          text_step()]},
             {"match": "flood", "steps": [python_step(FLOOD), text_step()]}]
    with scripted(tmp_path / "ws", sales_db, {"turns": turns}) as runner:
        runner.run("warm up: what a turn loads once", outputs={"step_bytes": cap})
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # the peak resident size starts again from here
        before = _status("VmRSS")
        summary = runner.run("flood", outputs={"step_bytes": cap})
        growth = _status("VmHWM") - before
    # 1,000 MB went by (2.5 GB of host memory before the fix). The host grew by what it kept
    # (at most the cap), that figure's base64 copies in the audit notebook, and a few 25 MB
    # messages in flight: a bound set by the cap, not by what the kernel sent.
    assert growth < 8 * cap, f"the host grew by {growth // MB} MB for a cap of {cap // MB} MB"
    assert summary.status == "completed"
    step = results_of(runner, summary.turn_id)[0]
    assert step.status == "ok" and "sent" in step.result["stdout"]
    # What was kept is within the cap; what was not is said, with how much.
    assert 1 <= len(step.artifact_ids) <= 3
    assert any("display(s)" in n and "past the step's cap of 64 MB" in n for n in step.result["output_notes"])


def test_malformed_and_forged_messages_leave_the_cli_printing_its_json(tmp_path, sales_db):
    script = {"turns": [{"match": ".", "steps": [python_step(MALFORMED), text_step()]}]}
    with ScriptedModelServer(script) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="x")
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", str(sales_db), "--prompt", "forge",
             "--json", "--no-summarizer", "--workspace", str(tmp_path / "ws")],
            env=env, capture_output=True, text=True, timeout=240,
        )
        requests = list(server.requests)
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    summary = json.loads(out.stdout.splitlines()[0])
    assert summary["status"] == "completed"
    told = next(json.loads(m["content"]) for m in requests[1]["messages"] if m["role"] == "tool")
    assert told["stdout"] == "still here\n" and told.get("error") is None
    notes = "\n".join(told["output_notes"])
    for expected in ("a PNG whose base64 does not decode was refused", "an image/png that is not a PNG was refused",
                     "an SVG that is not text was refused", "malformed stream message(s)",
                     "malformed error message(s)", "malformed execute_result message(s)",
                     "could not be read were ignored"):
        assert expected in notes, notes
    assert told["artifacts"] == [], "nothing refused became a figure"


def test_an_exception_of_30_mb_is_capped_like_stdout(tmp_path, sales_db):
    steps = [python_step("raise ValueError('x' * 30_000_000)"), text_step()]
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("raise")
    step = results_of(runner, summary.turn_id)[0]
    assert step.status == "error"
    message = step.result["error"]["message"]
    assert message.startswith("ValueError: xxx") and len(message) < MODEL_TEXT_CAP + 200
    assert "characters (lines " in message and "not shown" in message
    assert len(json.dumps(step.result)) < 20_000
    # The audit notebook shows the failed step with the message the model was told.
    notebook = nbformat.read(summary.notebook, as_version=4)
    # (Markdown cells escape the model's punctuation: what a reader sees is the unescaped text.)
    assert any("ValueError: xxx" in c.source.replace("\\", "") for c in notebook.cells if c.cell_type == "markdown")
    assert os.path.getsize(summary.notebook) < MB
    # The step's outputs kept in the store (for the notebook) are capped like stdout (1M characters).
    stored = sum(p.stat().st_size for p in (tmp_path / "ws").glob("analyst.sqlite3*"))
    assert stored < 5 * MB, f"{stored // MB} MB stored"


@pytest.mark.serial  # the host's peak memory while about 1 GB goes by: alone, not beside another test's
def test_one_message_of_fifty_20_mb_frames_is_cut_before_the_host_holds_it(tmp_path, sales_db):
    turns = [{"match": "warm", "steps": [python_step("print(1)"), text_step()]},
             {"match": "frames", "steps": [python_step(FRAMES), text_step()]}]
    with scripted(tmp_path / "ws", sales_db, {"turns": turns}) as runner:
        runner.run("warm up: what a turn loads once")
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        before = _status("VmRSS")
        summary = runner.run("frames")
        growth = _status("VmHWM") - before
    # 1,000 MB were sent in one message; the host read at most 64 MB of it.
    assert growth < 4 * 64 * MB, f"the host grew by {growth // MB} MB"
    step = results_of(runner, summary.turn_id)[0]
    assert step.status == "ok" and step.result["stdout"] == "5 relay sockets kept\n", step.result
    assert any("past the 64 MB the host reads in one were cut off" in n for n in step.result["output_notes"])
