"""A kernel that fails to start: retried once, then an error the model and the user see; the
thread starts a kernel again at its next Python step.

The failing kernel is real: a kernelspec whose command exits at once for its first starts
(counted in a file), then runs ipykernel.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
       "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")
TOTAL = "total = round(revenue.revenue.sum(), 2)"
SHOW = "print('total', total)"

#: Exits with status 3 for the first N starts, then becomes ipykernel.
FLAKY_KERNEL = """\
import os, sys
counter, failures = sys.argv[2], int(sys.argv[3])
with open(counter, "a") as fh:
    fh.write("start\\n")
if sum(1 for _ in open(counter)) <= failures:
    print("flaky kernel: refusing to start", file=sys.stderr)
    sys.exit(3)
os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", "-f", sys.argv[1]])
"""


def flaky_kernels(folder: Path, failures: int) -> tuple[Path, Path]:
    """A kernelspec folder whose ``python3`` fails its first ``failures`` starts; and the counter file."""
    spec = folder / "kernels" / "python3"
    spec.mkdir(parents=True)
    counter = folder / "starts.txt"
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-c", FLAKY_KERNEL, "{connection_file}", str(counter), str(failures)],
        "display_name": "flaky", "language": "python",
    }))
    return spec.parent, counter


def starts(counter: Path) -> int:
    return len(counter.read_text().splitlines()) if counter.exists() else 0


SCRIPT = {"turns": [
    # The model runs the step again, then reads what it made.
    {"match": "^again", "steps": [python_step(TOTAL), python_step(SHOW), text_step()]},
    # The model reads what the step that could not run would have made.
    {"match": ".", "steps": [sql_step(SQL, "revenue"), python_step(TOTAL), python_step(SHOW),
                             text_step("[scripted model] no total")]},
]}


def test_a_kernel_that_cannot_start_fails_the_turn_and_the_thread_recovers(tmp_path, sales_db):
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.kernel import LocalKernelLauncher, SandboxPolicy

    kernels, counter = flaky_kernels(tmp_path, failures=2)
    launcher = LocalKernelLauncher(kernel_dirs=[kernels])
    config = AnalystConfig(workspace=tmp_path / "ws", sandbox=SandboxPolicy(enabled=False), summarizer=False)
    events: list = []
    with ScriptedModelServer(SCRIPT) as server:
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")

        def turn(prompt: str, thread: str | None = None):
            request = TurnRequest(prompt=prompt, source=None if thread else str(sales_db), thread_id=thread)
            return asyncio.run(run_turn(request, config=config, model=model, launcher=launcher,
                                        on_event=events.append))

        first = turn("total revenue")
        # Tried twice (the first start and one retry), then given up.
        assert starts(counter) == 2
        result, refused = [e for e in events if e.type == "tool_result" and e.tool == "run_python"]
        assert result.status == "error"
        error = result.result["error"]
        assert error["reason"] == "kernel_start_failed" and "did not run" in error["message"]
        assert "flaky kernel: refusing to start" in error["message"], "the kernel's own words are shown"
        # The model was told (its next request carries the error) ...
        told = [m for m in server.requests[-2]["messages"] if m["role"] == "tool"][-1]
        assert "kernel_start_failed" in told["content"]
        # ... and reading what that step would have defined is refused, saying why.
        assert refused.status == "refused"
        assert "'total'" in refused.result["error"]["message"] and "did not run" in refused.result["error"]["message"]
        # ... and so is the user: the turn is not `completed`.
        assert first.status == "error" and first.error["reason"] == "kernel_start_failed"
        assert first.counters["kernel_start_failed"] == 1
        assert first.transitions[-1] == "error"

        events.clear()
        second = turn("again", thread=first.thread_id)
    results = [e for e in events if e.type == "tool_result"]
    # The thread's next step starts a kernel again (the third start succeeds) and runs.
    assert [r.status for r in results] == ["ok", "ok"]
    assert results[1].result["stdout"].startswith("total ")
    assert starts(counter) == 3
    assert second.status == "completed", second.error


@pytest.mark.asyncio
async def test_a_kernel_whose_set_up_fails_is_not_kept(tmp_path):
    """A kernel that starts but cannot run the set-up cell is stopped, tried again, and reported."""
    import os

    from jupyter_analyst.errors import KernelError
    from jupyter_analyst.kernel import KernelSession, SandboxPolicy
    from jupyter_analyst.kernel.session import kernel_environment

    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pandas.py").write_text("raise ImportError('pandas is broken here')\n")
    env = kernel_environment()
    env["PYTHONPATH"] = os.pathsep.join([str(shadow), env.get("PYTHONPATH", "")])
    session = KernelSession(tmp_path / "work", sandbox=SandboxPolicy(enabled=False), env=env)
    with pytest.raises(KernelError) as info:
        await session.start()
    assert info.value.reason == "kernel_start_failed"
    assert "2 attempts" in info.value.message and "pandas is broken here" in info.value.message
    assert not session.is_started, "nothing half-started is kept"
    await session.shutdown()
