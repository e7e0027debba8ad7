"""The audit notebook's answer cell carries the answer's receipts as footnotes: each cited
number linked to the step cell that made it (row, column), an unsupported one marked; the
HTML page keeps the links and the anchors they lead to.

A real DuckDB file, a real kernel, the real openai SDK over HTTP to the scripted model,
nbconvert's own HTML exporter.
"""

from __future__ import annotations

import re

from jupyter_analyst.testing import sql_step, text_step as answer

REVENUE_SQL = ("SELECT r.region, ROUND(SUM(o.revenue), 2) AS revenue FROM orders o "
               "JOIN regions r ON o.region_id = r.region_id GROUP BY r.region ORDER BY revenue DESC")


def exported(a, thread_id: str):
    from jupyter_analyst.notebooks.export import export_thread
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    try:
        return export_thread(ws.store, ws.artifacts, thread_id)
    finally:
        ws.close()


def test_the_answer_cell_links_each_cited_number_to_its_step_cell(analyst, tmp_path):
    from jupyter_analyst.notebooks.page_export import render
    from jupyter_analyst.notebooks.trail import META

    a = analyst({"turns": [{"steps": [
        sql_step(REVENUE_SQL, "revenue"),
        answer("Central leads with 192,506.67; West grew 37% last year."),
    ]}]})
    summary = a.run("Which region leads?")
    nb = exported(a, summary.thread_id)
    (step,) = [c for c in nb["cells"] if c["cell_type"] == "code" and c["metadata"].get(META, {}).get("call_id")]
    (cell,) = [c for c in nb["cells"] if c["metadata"].get(META, {}).get("role") == "answer"]
    source = "".join(cell["source"])
    # The answer as written, then its notes.
    assert "Central leads with 192,506.67; West grew 37% last year.\n\n---\n\n**Receipts**" in source
    link = f"[In [{step['execution_count']}]](#cell-id={step['id']})"
    assert f"`192,506.67`: step {link}, row 1, column `revenue`" in source
    assert f"`Central`: step {link}, row 1, column `region`" in source
    assert "`37%`: ⚠️ no step shows this number" in source

    (page, *_) = render(nb, "html", tmp_path / "audit.html")
    html = page.read_text()
    assert f'href="#cell-id={step["id"]}"' in html
    assert re.search(rf'<div[^>]* id="cell-id={step["id"]}"', html)
    assert "no step shows this number" in html


def test_an_answer_without_receipts_has_no_notes(analyst):
    from jupyter_analyst.notebooks.trail import META

    a = analyst({"turns": [{"steps": [answer("Nothing to count here.")]}]})
    summary = a.run("Hello?")
    (cell,) = [c for c in exported(a, summary.thread_id)["cells"]
               if c["metadata"].get(META, {}).get("role") == "answer"]
    assert "Receipts" not in "".join(cell["source"])
