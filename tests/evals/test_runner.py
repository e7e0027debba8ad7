"""A suite run against the scripted model playing an oracle: right answers, wrong ones, no
answer, a refusal, a model error and a timeout each get exactly the score they should, with
the calls, tokens and steps the turns really made."""

from __future__ import annotations

import asyncio
import json

import nbformat
import pytest

from jupyter_analyst.evals import evaluate, outputs
from jupyter_analyst.kernel import SandboxPolicy
from jupyter_analyst.testing import MODEL_NAME, ScriptedModelServer
from jupyter_analyst.turns import AnalystConfig, ModelSettings

TASKS = [
    {"id": "right", "question": "How many orders are there?", "answer": 2400, "guidelines": "A whole number."},
    {"id": "wrong", "question": "What is the total revenue?", "answer": 613135.6, "tolerance": 0.01},
    {"id": "silent", "question": "Which category sells most?", "answer": "Hardware"},
    {"id": "refused", "question": "Which region is North?", "answer": "Norway"},
    {"id": "broken", "question": "What is the price of a Gizmo?", "answer": 45},
    {"id": "absent", "question": "What was the total discount?", "answer": "not in the data"},
    {"id": "rows", "question": "Name and country of regions 1 and 2?", "answer": [["North", "Norway"], ["South", "Spain"]]},
    {"id": "follow", "source": None, "turns": [
        {"question": "Which region has the most orders?", "answer": "Central"},
        {"question": "And its total revenue?", "answer": 192506.67, "tolerance": 0.01}]},
]

ORACLE = {"turns": [
    {"match": "How many orders", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT count(*) AS n FROM orders", "name": "n_orders"}}]},
        {"content": "There are 2,400 orders.\nANSWER: 2,400"}]},
    {"match": "What is the total revenue", "steps": [{"content": "ANSWER: 613000"}]},
    {"match": "category sells", "steps": [{"content": "It is Hardware, clearly."}]},
    {"match": "region is North", "steps": [{"refusal": "I cannot help with that."}]},
    {"match": "price of a Gizmo", "steps": [{"error": {"status": 500, "message": "the model fell over"}}]},
    {"match": "total discount", "steps": [{"content": "There is no discount column.\nANSWER: not in the data"}]},
    {"match": "regions 1 and 2", "steps": [{"content": "ANSWER:\n| South | Spain |\n| North | Norway |"}]},
    {"match": "most orders", "steps": [{"content": "ANSWER: Central"}]},
    {"match": "its total revenue", "steps": [{"content": "ANSWER: 192,506.67"}]},
]}

EXPECTED = {
    "right": (True, None), "wrong": (False, "wrong_number"), "silent": (False, "no_answer"),
    "refused": (False, "refused"), "broken": (False, "error"), "absent": (True, None), "rows": (True, None),
    "follow": (True, None),
}


def write_suite(path, tasks, source):
    path.write_text("".join(json.dumps({**t, "source": source}) + "\n" for t in tasks))
    return path


def run(tmp_path, suite, script, *, sources, report="report.json", timeout=120.0, concurrency=2):
    with ScriptedModelServer(script) as server:
        model = ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted")
        config = AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False)
        result = asyncio.run(evaluate(suite, report_path=tmp_path / report, config=config, model=model,
                                      sources=sources, concurrency=concurrency, task_timeout_s=timeout))
        return result, server.requests


def test_each_answer_gets_exactly_its_score(tmp_path, sales_db):
    suite = write_suite(tmp_path / "suite.jsonl", TASKS, "sales")
    report, requests = run(tmp_path, suite, ORACLE, sources={"sales": str(sales_db)})
    got = {t["id"]: (t["correct"], t["failure"]) for t in report["tasks"]}
    assert got == EXPECTED
    assert [t["id"] for t in report["tasks"]] == [t["id"] for t in TASKS]  # the suite's order
    by_id = {t["id"]: t for t in report["tasks"]}
    # The figures are the turns' own: two model calls and one executed query for "right".
    right = by_id["right"]
    assert (right["model_calls"], right["steps_executed"], right["steps_reused"]) == (2, 1, 0)
    assert right["given"] == "2,400" and right["gold"] == 2400
    assert right["tokens_counted_by"] == "server" and right["prompt_tokens"] > 0 and right["completion_tokens"] > 0
    assert by_id["broken"]["model_calls"] == 1 and "fell over" in by_id["broken"]["turns"][0]["error"]
    # The follow-up's second question went to the same thread, after the first answer.
    second = next(r for r in requests if "its total revenue" in json.dumps(r["messages"][-1]))
    assert any("ANSWER: Central" in json.dumps(m) for m in second["messages"])
    # Its second answer states a number no step of the thread showed: the model is told once
    # and answers again (the oracle keeps its answer), one model call more.
    assert by_id["follow"]["given"] == ["Central", "192,506.67"] and by_id["follow"]["model_calls"] == 3
    told = [r for r in requests if r["messages"][-1]["content"].startswith("[answer check] ")]
    assert sorted('"613000"' in r["messages"][-1]["content"] or '"192,506.67"' in r["messages"][-1]["content"]
                  for r in told) == [True, True]
    # Every question told the model its answer format and the marker.
    asked = requests[0]["messages"][-1]["content"]
    assert "Answer format:" in asked and "ANSWER: " in asked
    totals = report["totals"]
    assert (totals["tasks"], totals["correct"]) == (8, 4)
    assert totals["failures"] == {"error": 1, "no_answer": 1, "refused": 1, "wrong_number": 1}
    assert totals["model_calls"] == sum(t["model_calls"] for t in report["tasks"])
    # The outputs: the JSON report, its table, and each thread as an audit notebook.
    files = outputs(tmp_path / "report.json")
    assert json.loads((tmp_path / "report.json").read_text()) == report
    table = files["markdown"].read_text()
    # The model's answer is literal text in the table.
    assert "| right | yes | 2\\,400 | 2400 |" in table and "**4/8 correct** (50.0%)" in table
    notebook = nbformat.read(right["notebook"], as_version=4)
    nbformat.validate(notebook)
    assert "SELECT count(*) AS n FROM orders" in json.dumps(notebook.cells)


def test_a_turn_past_the_timeout_is_a_timeout(tmp_path, sales_db):
    tasks = [{"id": "slow", "question": "How slow?", "answer": 1},
             {"id": "quick", "question": "How quick?", "answer": 2}]
    script = {"turns": [
        {"match": "slow", "steps": [{"reasoning": "one\ntwo\nthree\nfour\n", "reasoning_pace_s": 1.0,
                                     "content": "ANSWER: 1"}]},
        {"match": "quick", "steps": [{"content": "ANSWER: 2"}]}]}
    report, _ = run(tmp_path, write_suite(tmp_path / "s.jsonl", tasks, "sales"), script, timeout=1.5,
                    sources={"sales": str(sales_db)})
    got = {t["id"]: (t["correct"], t["failure"]) for t in report["tasks"]}
    assert got == {"slow": (False, "timeout"), "quick": (True, None)}
    slow = report["tasks"][0]
    assert 1.5 <= slow["time_s"] < 3.5 and "1.5 s" in slow["turns"][0]["error"]


def test_a_second_run_reuses_the_finished_tasks_and_another_model_is_refused(tmp_path, sales_db):
    suite = write_suite(tmp_path / "suite.jsonl", TASKS[:2], "sales")
    first, _ = run(tmp_path, suite, ORACLE, sources={"sales": str(sales_db)})
    again, requests = run(tmp_path, suite, ORACLE, sources={"sales": str(sales_db)})
    assert requests == [] and again["tasks"] == first["tasks"]
    from jupyter_analyst.errors import ConfigError

    with ScriptedModelServer(ORACLE) as server, pytest.raises(ConfigError, match="of another run"):
        model = ModelSettings(model="another-model", base_url=server.base_url, api_key="x")
        asyncio.run(evaluate(suite, report_path=tmp_path / "report.json", model=model, sources={"sales": str(sales_db)},
                             config=AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False),
                                                  summarizer=False)))


def test_tasks_without_a_source_need_db(tmp_path):
    from jupyter_analyst.errors import ConfigError

    suite = tmp_path / "dabstep.jsonl"
    suite.write_text(json.dumps({"task_id": "1", "question": "How many?", "answer": "3", "guidelines": "A number."}) + "\n")
    with pytest.raises(ConfigError, match="1 tasks name no data source") as caught:
        asyncio.run(evaluate(suite, report_path=tmp_path / "r.json", config=AnalystConfig(workspace=tmp_path / "ws"),
                             model=ModelSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key="x")))
    assert "--db" in caught.value.hint and not (tmp_path / "r.progress.jsonl").exists()


def test_the_report_totals_the_tasks_costs_and_what_reuse_saved(tmp_path, sales_db):
    sql = "SELECT count(*) AS n FROM orders"
    tasks = [{"id": "twice", "turns": [{"question": "How many orders?", "answer": 2400},
                                       {"question": "Count them again?", "answer": 2400}]},
             {"id": "plain", "question": "How many regions?", "answer": 4}]
    used = {"prompt_tokens": 1000, "completion_tokens": 100}
    script = {"turns": [
        {"match": "How many orders", "steps": [
            {"tool_calls": [{"name": "run_sql", "arguments": {"sql": sql, "name": "n"}}], "usage": used},
            {"content": "ANSWER: 2400", "usage": used}]},
        {"match": "again", "steps": [
            {"tool_calls": [{"name": "run_sql", "arguments": {"sql": sql, "name": "n"}}], "usage": used},
            {"content": "ANSWER: 2400", "usage": used}]},
        {"match": "regions", "steps": [{"content": "ANSWER: 4", "usage": "none"}]},
    ]}
    suite = write_suite(tmp_path / "suite.jsonl", tasks, "sales")
    with ScriptedModelServer(script) as server:
        model = ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted")
        config = AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False,
                               prices={MODEL_NAME: "1/10"})
        report = asyncio.run(evaluate(suite, report_path=tmp_path / "report.json", config=config, model=model,
                                      sources={"sales": str(sales_db)}))
    twice, plain = report["tasks"]
    call = (1000 * 1 + 100 * 10) / 1e6
    assert (twice["model_calls"], twice["tokens_counted_by"]) == (4, "server")
    assert twice["cost_usd"] == pytest.approx(4 * call)
    # The second turn reused the first one's query: it saved that step's share, one whole call.
    assert twice["saved"]["steps"] == 1 and twice["saved"]["prompt_tokens"] == 1000
    assert twice["saved"]["cost_usd"] == pytest.approx(call) and twice["saved"]["execution_s"] > 0
    assert plain["tokens_counted_by"] == "estimate" and plain["cost_usd"] > 0
    totals = report["totals"]
    assert totals["cost_usd"] == pytest.approx(twice["cost_usd"] + plain["cost_usd"])
    assert totals["tokens_counted_by"] == "mixed" and totals["saved"]["steps"] == 1
    assert report["settings"]["price"] == {"prompt": 1.0, "completion": 10.0}
    table = outputs(tmp_path / "report.json")["markdown"].read_text()
    assert f"cost ${totals['cost_usd']:.6f}".rstrip("0") in table and "saving 1000 prompt and 100 completion tokens" in table


def test_a_relative_source_is_read_inside_the_data_dir_the_user_gives(tmp_path, sales_db):
    from jupyter_analyst.errors import ConfigError

    suite = write_suite(tmp_path / "suite.jsonl", TASKS[:1], sales_db.name)
    with ScriptedModelServer(ORACLE) as server:
        model = ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted")
        config = AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False)
        with pytest.raises(ConfigError, match="task 'right' names the source 'sales.duckdb'") as caught:
            asyncio.run(evaluate(suite, report_path=tmp_path / "r.json", config=config, model=model))
        assert "--data-dir DIR" in caught.value.hint and server.requests == []
        report = asyncio.run(evaluate(suite, report_path=tmp_path / "r.json", config=config, model=model,
                                      data_dir=sales_db.parent))
    (right,) = report["tasks"]
    assert (right["correct"], right["steps_executed"]) == (True, 1)


def test_a_turn_out_of_steps_is_reported_as_such_not_as_a_wrong_answer(tmp_path, sales_db):
    suite = write_suite(tmp_path / "suite.jsonl", [
        {"id": "long", "question": "How many orders are there?", "answer": 2400}], "sales")
    look = {"tool_calls": [{"name": "describe_table", "arguments": {"table": "orders"}}]}
    script = {"turns": [{"match": "How many orders", "steps": [look, {"content": "Not counted yet.\nANSWER: 0"}]}]}
    with ScriptedModelServer(script) as server:
        model = ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted")
        config = AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False,
                               max_steps=1)
        report = asyncio.run(evaluate(suite, report_path=tmp_path / "report.json", config=config, model=model,
                                      sources={"sales": str(sales_db)}, concurrency=1, task_timeout_s=120.0))
    (task,) = report["tasks"]
    assert (task["correct"], task["failure"]) == (False, "step_limited")
    (turn,) = task["turns"]
    assert turn["status"] == "step_limited" and "step budget (1 model call with tools) ran out" in turn["error"]
    assert report["totals"]["failures"] == {"step_limited": 1}
    assert "| long | no |" in outputs(tmp_path / "report.json")["markdown"].read_text()
    assert "Failures: step_limited 1." in outputs(tmp_path / "report.json")["markdown"].read_text()
