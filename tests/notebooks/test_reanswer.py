"""``verify --reanswer`` restates an answer's cited numbers on today's data, old -> new.

One thread (the scripted model over the real SDK, a sandboxed kernel, a DuckDB file) sums
items by category and answers citing three totals, a difference of two of them and an
invented percentage; its export is re-answered after one row changed. A notebook without
receipts and notebooks with forged receipts are refused before any kernel starts.
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
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, sql_step, text_step

SQL = "SELECT cat, count(*) AS n, sum(value) AS total FROM items GROUP BY cat ORDER BY cat"
ANSWER = "alpha totals 45.0 and beta 33.0, a gap of 12.0; gamma totals 39.0, up 37% on last year."


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.workspace import Workspace

    root = tmp_path_factory.mktemp("reanswer")
    db = root / "items.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE items AS SELECT i AS id, ['alpha', 'beta', 'gamma'][i % 3 + 1] AS cat, "
                    "i * 1.5 AS value FROM range(1, 13) t(i)")
    steps = [sql_step(SQL, "by_cat"), text_step(ANSWER)]
    with ScriptedModelServer({"turns": [{"match": ".", "steps": steps}]}) as server:
        turn = TurnRunner(root / "ws", server, db).run("totals by category?")
    assert turn.status == "completed", turn
    ws = Workspace(root / "ws")
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, turn.thread_id), root / "items.ipynb")
    finally:
        ws.close()
    return {"path": path, "db": db, "root": root}


def answer_cell(nb):
    (cell,) = [c for c in nb.cells if c.metadata.get(META, {}).get("role") == "answer"]
    return cell


def test_the_export_carries_the_answers_receipts(exported):
    receipts = answer_cell(nbformat.read(exported["path"], as_version=4)).metadata[META]["receipts"]
    assert receipts["answer"] == ANSWER
    cited = {c["text"]: c for c in receipts["citations"]}
    assert {"45.0", "33.0", "39.0", "12.0"} <= set(cited), receipts
    assert (cited["45.0"]["row"], cited["45.0"]["column"]) == (0, "total")
    assert cited["12.0"]["derived"]["operation"] == "difference"
    assert [u["text"] for u in receipts["unsupported"]] == ["37%"]


def test_one_changed_row_rewrites_exactly_the_numbers_that_depend_on_it(exported):
    today = exported["root"] / "today.duckdb"
    today.write_bytes(exported["db"].read_bytes())
    with duckdb.connect(str(today)) as con:
        con.execute("UPDATE items SET value = 20 WHERE id = 12")  # alpha: 45.0 -> 47.0
    before = exported["path"].read_bytes()
    run = cli("verify", str(exported["path"]), "--db", str(today), "--reanswer", "--json")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    report = json.loads(run.stdout)
    (answer,) = report["answers"]
    assert answer["answer"] == ANSWER.replace("45.0", "47.0").replace("12.0", "14.0")
    assert "47.0 (was 45.0)" in answer["marked"] and "14.0 (was 12.0)" in answer["marked"]
    claims = {c["text"]: c for c in answer["claims"]}
    assert (claims["45.0"]["status"], claims["45.0"]["new_text"]) == ("changed", "47.0")
    assert (claims["45.0"]["row"], claims["45.0"]["column"]) == (0, "total")
    assert (claims["12.0"]["status"], claims["12.0"]["derived"], claims["12.0"]["new_text"]) == \
        ("changed", "difference", "14.0")
    for same in ("33.0", "39.0"):
        assert claims[same]["status"] == "unchanged" and claims[same]["new_text"] == same, claims[same]
    assert claims["37%"]["status"] == "not_rechecked"
    changed = sorted(c["text"] for c in answer["claims"] if c["status"] == "changed")
    assert changed == ["12.0", "45.0"]
    assert report["verify"]["causes"] == ["data_changed"]

    # The original is untouched; the re-answered notebook sits beside it, today's values in it.
    assert exported["path"].read_bytes() == before
    out = exported["path"].with_name("items.reanswered.ipynb")
    assert report["output"] == str(out)
    nb = nbformat.read(out, as_version=4)
    nbformat.validate(nb)
    cell = answer_cell(nb)
    assert "47.0 (was 45.0)" in cell.source and "`45.0` -> `47.0`: changed" in cell.source
    assert "`33.0`: unchanged" in cell.source and "`37%`: not re-checked" in cell.source
    moved = {c["text"]: c for c in cell.metadata[META]["receipts"]["citations"]}
    assert moved["47.0"]["value"] == 47.0 and cell.metadata[META]["receipts"]["answer"] == answer["answer"]
    start = moved["39.0"]["start"]
    assert answer["answer"][start:start + 4] == "39.0"
    step = next(c for c in nb.cells if c.cell_type == "code" and c.metadata.get(META, {}).get("tool") == "run_sql")
    # Its outputs are the re-run's: today's result, whose fingerprint is not the recorded one.
    (shown,) = [o["data"]["text/plain"] for o in step.outputs]
    (entry,) = [e for e in nb.metadata[META]["manifest"] if e["name"] == "by_cat"]
    assert shown.startswith("by_cat: 3 rows, sha256:") and entry["fingerprint"][:19] not in shown


def forged(exported, tmp_path, change):
    nb = nbformat.read(exported["path"], as_version=4)
    change(answer_cell(nb).metadata[META])
    path = tmp_path / "forged.ipynb"
    nbformat.write(nb, path)
    return cli("verify", str(path), "--db", str(exported["db"]), "--reanswer")


def test_a_notebook_without_receipts_is_told_so(exported, tmp_path):
    run = forged(exported, tmp_path, lambda meta: meta.pop("receipts"))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "carries no receipts" in run.stderr and "export the thread again" in run.stderr
    assert not (tmp_path / "forged.reanswered.ipynb").exists()


@pytest.mark.parametrize(("change", "said"), [
    (lambda m: m["receipts"]["citations"][0].update(call_id="call_nowhere"), "cites step 'call_nowhere'"),
    (lambda m: m["receipts"]["citations"][0].update(artifact_id="art_other"), "cites artifact 'art_other'"),
    (lambda m: m["receipts"]["citations"][0].update(row=10**9), "outside 0-100000"),
    (lambda m: m["receipts"]["citations"][0].update(start=0, end=9999), "is not the answer's text"),
    (lambda m: m["receipts"]["citations"].extend(m["receipts"]["citations"][:1] * 5000), "more than the 2000 read"),
    (lambda m: m["receipts"].update(citations="all of them"), "malformed"),
    (lambda m: m["receipts"]["citations"][-1].update(derived={"operation": "ratio", "of": [0, 99]}),
     "derived from citations that do not exist"),
])
def test_forged_receipts_are_refused_before_anything_runs(exported, tmp_path, change, said):
    run = forged(exported, tmp_path, change)
    assert run.returncode == 2, run.stdout + run.stderr
    assert said in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "forged.reanswered.ipynb").exists()


def test_a_link_where_the_reanswer_would_go_is_refused(exported, tmp_path):
    nb = tmp_path / "mine.ipynb"
    nb.write_bytes(exported["path"].read_bytes())
    (tmp_path / "mine.reanswered.ipynb").symlink_to(nb)
    run = cli("verify", str(nb), "--db", str(exported["db"]), "--reanswer")
    assert run.returncode == 2 and "is a link" in run.stderr, run.stdout + run.stderr
    assert nb.read_bytes() == exported["path"].read_bytes()
