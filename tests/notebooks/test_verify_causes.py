"""``verify`` names why each artifact did not reproduce: code, data, environment, chance.

One thread (the scripted model over the real SDK, sandboxed kernels, a DuckDB file) makes a
dataset, a file from it, and a file holding an unseeded random draw; its export is verified
as it is, on data with one more row, and edited (a cell's code, the recorded versions).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import nbformat
import pytest

from jupyter_analyst.notebooks.trail import META
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, python_step, sql_step, text_step

SQL = "SELECT cat, count(*) AS n, sum(value) AS total FROM items GROUP BY cat ORDER BY cat"
CSV = "by_cat.to_csv('outputs/by_cat.csv')"
STEPS = [
    sql_step(SQL, "by_cat"),
    python_step(CSV),
    python_step("import random\nwith open('outputs/draw.txt', 'w') as fh:\n    fh.write(str(random.random()))"),
    text_step("[scripted model] saved"),
]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.workspace import Workspace

    root = tmp_path_factory.mktemp("causes")
    db = root / "items.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE items AS SELECT i AS id, ['alpha', 'beta', 'gamma'][i % 3 + 1] AS cat, "
                    "i * 1.5 AS value FROM range(1, 13) t(i)")
    with ScriptedModelServer({"turns": [{"match": ".", "steps": STEPS}]}) as server:
        turn = TurnRunner(root / "ws", server, db).run("save them")
    assert turn.status == "completed" and turn.tool_calls["executed"] == len(STEPS) - 1, turn
    ws = Workspace(root / "ws")
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, turn.thread_id), root / "causes.ipynb")
    finally:
        ws.close()
    return {"path": path, "db": db, "root": root}


def check_named(report: dict, suffix: str) -> dict:
    (check,) = [c for c in report["checks"] if c["name"].endswith(suffix)]
    return check


def test_the_step_records_the_tables_it_read_and_the_notebook_the_versions(exported):
    nb = nbformat.read(exported["path"], as_version=4)
    sql_cell = next(c for c in nb.cells if c.metadata.get(META, {}).get("tool") == "run_sql")
    (items,) = sql_cell.metadata[META]["inputs"]
    assert items["table"] == "items" and items["rows"] == 12 and len(items["content"]) == 16
    assert items["hashed_by"].startswith("duckdb ")
    assert sql_cell.metadata[META]["code"].startswith("by_cat = analyst.sql(")
    assert set(nb.metadata[META]["environment"]) == {"python", "pandas", "numpy", "matplotlib", "pyarrow", "duckdb"}


def test_an_unseeded_draw_is_not_deterministic_and_the_rest_matches(exported):
    from jupyter_analyst.notebooks.verify import verify_notebook

    report = verify_notebook(exported["path"], source=str(exported["db"])).to_json()
    assert report["counts"] == {"matched": 2, "changed": 1, "missing": 0}, report
    draw = check_named(report, "outputs/draw.txt")
    assert draw["cause"] == "not_deterministic", draw
    evidence = draw["evidence"]
    assert evidence["cell"] == draw["cell"] and evidence["call_id"] == draw["call_id"]
    # Two runs, two draws: neither is the recorded one, nor the other.
    first, second = evidence["runs"]
    assert first == draw["actual"] and second and len({first, second, draw["expected"]}) == 3
    assert f"fix the seed or the sort in cell {draw['cell']}" in evidence["summary"]
    assert all(c["cause"] is None and c["evidence"] is None for c in report["checks"] if c is not draw)


def test_one_more_row_is_data_changed_naming_the_table_and_the_row(exported):
    from jupyter_analyst.notebooks.verify import VerifyReport, format_report

    changed = exported["root"] / "one-more.duckdb"
    changed.write_bytes(exported["db"].read_bytes())
    with duckdb.connect(str(changed)) as con:
        con.execute("INSERT INTO items VALUES (13, 'alpha', 1.0)")
    run = cli("verify", str(exported["path"]), "--db", str(changed), "--json")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    report = json.loads(run.stdout)
    # The dataset read the table; the file was written from the dataset, in a later cell.
    for suffix in ("by_cat", "outputs/by_cat.csv"):
        check = check_named(report, suffix)
        assert check["status"] == "changed" and check["cause"] == "data_changed", check
        (table,) = check["evidence"]["tables"]
        assert (table["table"], table["rows_recorded"], table["rows_now"]) == ("items", 12, 13)
        assert check["evidence"]["summary"] == "data changed: items: 13 rows now, 12 recorded (+1 row)"
    sql_cell = check_named(report, "by_cat")["cell"]
    assert check_named(report, "outputs/by_cat.csv")["evidence"]["cell"] == sql_cell
    assert check_named(report, "outputs/draw.txt")["cause"] == "not_deterministic"

    text = format_report(VerifyReport.model_validate(report))
    assert "  by_cat: data changed: items: 13 rows now, 12 recorded (+1 row)" in text.splitlines()


def test_an_edited_cell_is_code_changed_and_faked_versions_environment_changed(exported, tmp_path):
    from jupyter_analyst.notebooks.verify import format_report, verify_notebook

    nb = nbformat.read(exported["path"], as_version=4)
    cell = next(c for c in nb.cells if c.source.endswith(CSV))
    cell.source = cell.source.replace(CSV, "by_cat.to_csv('outputs/by_cat.csv', index=False)")
    nb.metadata[META]["environment"]["pandas"] = "0.0.1"
    edited = tmp_path / "edited.ipynb"
    nbformat.write(nb, edited)

    report = verify_notebook(edited, source=str(exported["db"]))
    by_name = {c.name: c for c in report.checks}
    assert by_name["by_cat"].status == "matched" and by_name["by_cat"].cause is None
    # Both hold for the edited cell's file: the code comes first.
    csv = by_name["outputs/by_cat.csv"]
    assert csv.status == "changed" and csv.cause == "code_changed", csv
    assert csv.evidence.cell == csv.cell == nb.cells.index(cell)
    assert "-by_cat.to_csv('outputs/by_cat.csv')" in csv.evidence.diff.splitlines()
    assert "+by_cat.to_csv('outputs/by_cat.csv', index=False)" in csv.evidence.diff.splitlines()
    # The draw's code and data are as recorded; its versions are not.
    draw = by_name["outputs/draw.txt"]
    assert draw.cause == "environment_changed", draw
    (pandas,) = draw.evidence.versions
    assert (pandas.package, pandas.recorded) == ("pandas", "0.0.1") and pandas.now not in (None, "0.0.1")
    assert draw.evidence.summary == f"environment changed: pandas 0.0.1 -> {pandas.now}"

    lines = format_report(report).splitlines()
    assert f"  outputs/by_cat.csv: code changed: cell {csv.cell} was edited since the step ran" in lines
    assert "    +by_cat.to_csv('outputs/by_cat.csv', index=False)" in lines
