"""Every way a step makes an artifact, exported and verified: it must match on the same data,
and be named as changed when one row of the data changes.

One thread makes all of them (a dataset; figures shown inline, one and several in a cell, PNG
and SVG; charts saved with ``savefig`` as PNG, SVG and PDF; files pandas writes, one of them
a Parquet file; a file a later step overwrites), so one export and two re-runs check the
whole matrix. Real parts throughout: the scripted model over the real SDK, sandboxed
kernels, a DuckDB file, papermill.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import NamedTuple

import duckdb
import nbformat
import pytest

from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, python_step, sql_step, text_step

SQL = "SELECT cat, count(*) AS n, sum(value) AS total FROM items GROUP BY cat ORDER BY cat"
STEPS = [
    sql_step(SQL, "by_cat"),
    # 1: one figure shown inline
    python_step("import matplotlib.pyplot as plt\nby_cat.plot.bar(x='cat', y='total')\nplt.show()"),
    # 2: several figures in one cell
    python_step("fig1, ax1 = plt.subplots()\nax1.bar(by_cat['cat'], by_cat['n'])\n"
                "fig2, ax2 = plt.subplots()\nax2.plot(by_cat['total'])\nplt.show()"),
    # 3: an SVG figure shown inline
    python_step("import io\nfrom IPython.display import SVG, display\nbuf = io.StringIO()\n"
                "fig, ax = plt.subplots()\nax.barh(by_cat['cat'], by_cat['total'])\n"
                "fig.savefig(buf, format='svg')\nplt.close(fig)\ndisplay(SVG(buf.getvalue()))"),
    # 4, 5: saved as SVG and as PDF under outputs/ (closed: not shown)
    python_step("fig, ax = plt.subplots()\nax.bar(by_cat['cat'], by_cat['total'])\n"
                "fig.savefig('outputs/by_cat.svg')\nplt.close(fig)"),
    python_step("fig, ax = plt.subplots()\nax.pie(by_cat['n'], labels=by_cat['cat'])\n"
                "fig.savefig('outputs/by_cat.pdf')\nplt.close(fig)"),
    # 6: a Parquet file pandas writes (a dataset, and a file)
    python_step("by_cat.to_parquet('outputs/by_cat.parquet', index=False)"),
    # 7, 8: a file, then overwritten by a later step
    python_step("with open('outputs/summary.txt', 'w') as fh:\n    fh.write(by_cat.to_string())"),
    python_step("with open('outputs/summary.txt', 'w') as fh:\n    fh.write('later\\n' + by_cat.to_string())"),
    # 9: the chart saved as PNG beside a CSV pandas writes, on the Agg backend (last: it stays)
    python_step("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                "fig, ax = plt.subplots(); ax.bar(by_cat['cat'], by_cat['n']); fig.savefig('outputs/by_cat.png'); "
                "by_cat.to_csv('outputs/by_cat.csv')"),
    text_step("[scripted model] charted and saved"),
]


class Case(NamedTuple):
    step: int
    """Which step of ``STEPS`` makes it."""
    name: str
    """Its name in the inventory: the path under outputs/, or the figure's name or its suffix."""
    type: str


CASES = {
    "dataset": Case(0, "by_cat", "dataset"),
    "figure shown inline": Case(1, "-figure-1.png", "image"),
    # Named after the variables that hold them (neither has a title).
    "several figures, the first": Case(2, "fig1.png", "image"),
    "several figures, the second": Case(2, "fig2.png", "image"),
    "SVG figure shown inline": Case(3, "-figure-1.svg", "image"),
    "savefig SVG": Case(4, "outputs/by_cat.svg", "image"),
    "savefig PDF": Case(5, "outputs/by_cat.pdf", "file"),
    "Parquet file written by pandas": Case(6, "outputs/by_cat.parquet", "dataset"),
    "file later overwritten": Case(7, "outputs/summary.txt", "text"),
    "file overwriting it": Case(8, "outputs/summary.txt", "text"),
    "savefig PNG": Case(9, "outputs/by_cat.png", "image"),
    "CSV written by pandas": Case(9, "outputs/by_cat.csv", "file"),
}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ))


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """The thread exported, and its verify reports on the same data and on one changed row."""
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.notebooks.verify import verify_notebook
    from jupyter_analyst.workspace import Workspace

    root = tmp_path_factory.mktemp("matrix")
    db = root / "items.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE items AS SELECT i AS id, ['alpha', 'beta', 'gamma'][i % 3 + 1] AS cat, "
                    "i * 1.5 AS value FROM range(1, 13) t(i)")
    with ScriptedModelServer({"turns": [{"match": ".", "steps": STEPS}]}) as server:
        turn = TurnRunner(root / "ws", server, db).run("chart every way")
    assert turn.status == "completed" and turn.tool_calls["executed"] == len(STEPS) - 1, turn
    ws = Workspace(root / "ws")
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, turn.thread_id), root / "matrix.ipynb")
    finally:
        ws.close()
    nb = nbformat.read(path, as_version=4)
    calls = [c.metadata["jupyter_analyst"]["call_id"] for c in nb.cells
             if "call_id" in c.metadata.get("jupyter_analyst", {})]
    assert len(calls) == len(STEPS) - 1
    same = verify_notebook(path, source=str(db))

    changed = root / "changed.duckdb"
    changed.write_bytes(db.read_bytes())
    with duckdb.connect(str(changed)) as con:
        con.execute("UPDATE items SET cat = 'delta' WHERE id = 1")  # one row: a new category
    run = cli("verify", str(path), "--db", str(changed), "--json")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    table = cli("verify", str(path), "--db", str(changed))
    return {"nb": nb, "calls": calls, "same": same.to_json(), "changed": json.loads(run.stdout),
            "table": table.stdout}


def entry_of(matrix, case: Case) -> dict:
    call = matrix["calls"][case.step]
    found = [e for e in matrix["nb"].metadata["jupyter_analyst"]["manifest"]
             if e["call_id"] == call and e["name"].endswith(case.name)]
    assert len(found) == 1, (case, matrix["nb"].metadata["jupyter_analyst"]["manifest"])
    assert found[0]["type"] == case.type  # the kind of artifact the case stands for
    return found[0]


def check_of(report: dict, entry: dict) -> dict:
    return next(c for c in report["checks"] if c["artifact_id"] == entry["artifact_id"])


def test_the_matrix_is_the_whole_manifest(matrix):
    manifest = matrix["nb"].metadata["jupyter_analyst"]["manifest"]
    assert sorted(entry_of(matrix, case)["artifact_id"] for case in CASES.values()) == sorted(
        e["artifact_id"] for e in manifest)
    assert matrix["same"]["verdict"] == "verified" and matrix["same"]["ok"] is True, matrix["same"]
    assert matrix["same"]["counts"] == {"matched": len(CASES), "changed": 0, "missing": 0}
    assert matrix["changed"]["verdict"] == "not_verified" and matrix["changed"]["error"] is None
    assert matrix["changed"]["counts"] == {"matched": 0, "changed": len(CASES), "missing": 0}
    assert "verified: the notebook reproduces every artifact" not in matrix["table"]
    assert "NOT verified" in matrix["table"]


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_it_matches_on_the_same_data(matrix, case):
    entry = entry_of(matrix, CASES[case])
    check = check_of(matrix["same"], entry)
    assert check["status"] == "matched" and check["actual"] == entry["fingerprint"], check
    step = matrix["nb"].cells[check["cell"]]
    assert step.metadata["jupyter_analyst"]["call_id"] == entry["call_id"]


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_one_changed_row_names_what_changed(matrix, case):
    entry = entry_of(matrix, CASES[case])
    check = check_of(matrix["changed"], entry)
    assert check["status"] == "changed", check
    assert check["actual"] and check["actual"] != entry["fingerprint"]
    assert (check["name"], check["type"], check["call_id"]) == (entry["name"], entry["type"], entry["call_id"])
    step = matrix["nb"].cells[check["cell"]]
    assert step.metadata["jupyter_analyst"]["call_id"] == entry["call_id"]
    # The table a person reads names it, its step and its cell, with both short fingerprints.
    row = next(line for line in matrix["table"].splitlines()
               if line.startswith("changed") and f" {entry['name']} " in line and entry["call_id"] in line)
    assert f"cell {check['cell']}" in row and entry["fingerprint"][7:19] in row and check["actual"][7:19] in row
