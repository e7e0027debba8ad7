"""The benchmark harness: each benchmark isolated, results kept, the README generated from them."""

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


def test_readme_table_is_the_one_generated_from_the_results_file():
    results = harness.load(harness.RESULTS)
    assert results["benches"], "benchmarks/results.json holds no run: run `make bench`"
    assert readme.current(harness.ROOT / "benchmarks" / "README.md") == readme.render(results), (
        "benchmarks/README.md's table differs from benchmarks/results.json: run `python -m benchmarks --readme`")


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
