"""What a Python step takes from earlier steps and leaves for later ones, from a fixture
of input/expected pairs; and the bindings the keys are made of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst.agent.environment.bindings import inputs_of, replayed
from jupyter_analyst.agent.dataflow import free_names, rebound_names
from jupyter_analyst.artifacts import StepRecord

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "agent" / "dataflow.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["code"].splitlines()[0][:40] for c in CASES])
def test_free_and_rebound_names(case):
    assert sorted(free_names(case["code"])) == case["free"]
    assert sorted(rebound_names(case["code"])) == case["rebound"]


def test_only_names_an_earlier_step_bound_are_inputs():
    bindings = {"revenue": "sha256:r", "plt": "step:setup", "total": "step:t"}
    code = "import matplotlib.pyplot as plt\nrevenue.plot()\nprint(total, len(revenue))"
    assert inputs_of(code, bindings) == {"revenue": "sha256:r", "total": "step:t"}


def _step(key: str, tool: str, status: str = "ok", **arguments) -> StepRecord:
    return StepRecord(thread_id="t", step_key=key, tool=tool, call_id=key, turn_id="u", arguments=arguments,
                      status=status, result={}, artifact_ids=["art_1"] if tool == "run_sql" else [],
                      created_at="2026-01-01T00:00:00Z", duration_s=0.0)


def test_a_history_replays_to_its_last_bindings():
    steps = [
        _step("step:q", "run_sql", sql="SELECT 1", name="revenue"),
        _step("step:a", "run_python", code="revenue['x'] = 1\nshare = 0.5"),
        _step("step:b", "run_python", status="error", code="share = broken"),
        _step("step:c", "run_python", code="share = share * 2"),
    ]
    assert replayed(steps, {"art_1": "sha256:r"}) == {"revenue": "step:a", "share": "step:c"}


@pytest.mark.serial  # a ratio of two timings: on a machine not shared with another test
def test_analysis_time_grows_linearly_with_the_length_of_the_code():
    """Long code is analysed on the event loop: sixteen times the statements may take about
    sixteen times as long, not the 250 times a quadratic analysis took."""
    import gc
    import time

    from jupyter_analyst.agent.dataflow import free_names

    def seconds(statements: int) -> float:
        code = "".join(f"x{i} = df['col'].sum() + x{i - 1 if i else 0}\n" for i in range(statements))
        runs = []
        for _ in range(3):
            gc.collect()
            gc.disable()  # collections of the many syntax-tree objects would add noise
            try:
                started = time.perf_counter()
                free_names(code)
                runs.append(time.perf_counter() - started)
            finally:
                gc.enable()
        return min(runs)

    small, large = seconds(2_000), seconds(32_000)
    assert large / small < 50, f"{small:.3f} s for 2,000 statements, {large:.3f} s for 32,000"
