"""The benchmark harness: each benchmark isolated, results kept, the docs' table generated from them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmarks import harness, readme


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for all purposes (its parent, the benchmark, was killed with it).
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_failing_or_crashing_benchmark_loses_nothing_else(tmp_path):
    out = tmp_path / "results.json"
    specs = ["benchmarks.selftest:fails", "benchmarks.selftest:crashes", "benchmarks.selftest:fine"]
    harness.run(specs, out=out, rows=10, repeat=3, quick=True, timeout_s=120)
    benches = json.loads(out.read_text())["benches"]

    fails, crashes, fine = (benches[s] for s in specs)
    assert fails["status"] == "failed" and fails["error"] == "RuntimeError: the peer is not installed"
    assert [r["name"] for r in fails["rows"]] == ["measured before the failure"]
    assert crashes["status"] == "crashed" and crashes["error"] == "killed by SIGABRT"
    assert [r["name"] for r in crashes["rows"]] == ["measured before the crash"]
    assert fine["status"] == "ok" and fine["error"] is None
    figure, count = fine["rows"]
    assert (figure["ours"], figure["baseline"], figure["peer"], figure["peer_name"]) == (2.0, 1.0, 4.0, "peer")
    assert (count["ours"], count["baseline"]) == (10.0, 3.0) and fine["notes"] == ["quick=True"]
    assert fine["quick"] is True and fine["commit"]


def test_a_hanging_benchmark_is_stopped_with_its_helpers(tmp_path):
    out = tmp_path / "results.json"
    harness.run(["benchmarks.selftest:hangs"], out=out, rows=1, repeat=1, timeout_s=3)
    entry = json.loads(out.read_text())["benches"]["benchmarks.selftest:hangs"]
    assert entry["status"] == "timeout" and entry["error"] == "still running after 3 s"
    (note,) = entry["notes"]
    assert not _pid_alive(int(note.removeprefix("helper pid ")))


def test_a_partial_run_keeps_the_other_figures(tmp_path):
    out = tmp_path / "results.json"
    out.write_text(json.dumps({"benches": {"run_sql": {"status": "ok", "rows": [], "notes": ["kept"]}}}))
    harness.run(["benchmarks.selftest:fine"], out=out, rows=1, repeat=1)
    benches = json.loads(out.read_text())["benches"]
    assert benches["run_sql"]["notes"] == ["kept"] and benches["benchmarks.selftest:fine"]["status"] == "ok"


def test_the_docs_table_is_the_one_generated_from_the_results_file():
    results = harness.load(harness.RESULTS)
    assert results["benches"], "benchmarks/results.json holds no run: run `make bench`"
    assert harness.PAGE == harness.ROOT / "docs" / "benchmarks.md"
    assert readme.current(harness.PAGE) == readme.render(results), (
        "docs/benchmarks.md's table differs from benchmarks/results.json: run `python -m benchmarks --readme`")


def test_render_shows_peer_ratio_and_unfinished_benchmarks():
    results = {"machine": {"cpus": 2}, "benches": {
        "run_sql": {"status": "ok", "commit": "abc", "notes": ["n"], "rows": [
            {"name": "q", "ours": 0.5, "baseline": 0.25, "baseline_name": "duckdb", "unit": "s",
             "peer": 1.0, "peer_name": "JupySQL"}]},
        "server": {"status": "crashed", "commit": "abc", "error": "killed by SIGKILL", "rows": [], "notes": []},
    }}
    text = readme.render(results)
    assert "| q | 500.0 ms | 250.0 ms (duckdb) | 2.00x | 1.00 s (JupySQL) | 0.50x |" in text
    assert "* `run_sql`: n" in text and "* `server` did not finish (crashed): killed by SIGKILL" in text


def test_the_eval_benchmarks_oracle_scores_every_task_of_the_sample_suite_in_the_fewest_calls(tmp_path):
    """bench_eval compares the real model with this oracle: it must be the ceiling it claims."""
    import asyncio

    from benchmarks.bench_eval import _tasks, oracle_script
    from jupyter_analyst.evals import evaluate, suite_path
    from jupyter_analyst.kernel import SandboxPolicy
    from jupyter_analyst.testing import MODEL_NAME, ScriptedModelServer
    from jupyter_analyst.turns import AnalystConfig, ModelSettings

    tasks = _tasks(quick=False)
    turns = [turn for t in tasks for turn in t.get("turns", [t])]
    queried = sum(turn["answer"] != "not in the data" for turn in turns)
    with ScriptedModelServer(oracle_script(tasks)) as server:
        report = asyncio.run(evaluate(
            suite_path(Path("sample")), report_path=tmp_path / "oracle.json",
            config=AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False),
            model=ModelSettings(model=MODEL_NAME, base_url=server.base_url, api_key="scripted"), concurrency=2))
    totals = report["totals"]
    assert (totals["correct"], totals["tasks"]) == (len(tasks), len(tasks)) == (9, 9), totals
    # One query and one answer a turn; a question the data cannot answer, the answer alone.
    assert (totals["model_calls"], totals["steps_executed"]) == (len(turns) + queried, queried) == (19, 9), totals
    assert totals["failures"] == {}


def test_the_spark_benchmark_measures_nothing_and_says_why_without_java(monkeypatch):
    from benchmarks.bench_spark import bench_spark_tpch
    from benchmarks.common import Report

    monkeypatch.setenv("PATH", "/nonexistent")  # a machine without Java
    report = Report()
    bench_spark_tpch(report, rows=1_000, repeat=1)
    assert report.rows == [] and len(report.notes) == 1
    assert report.notes[0].startswith("Spark is not measured: ") and "java" in report.notes[0], report.notes
