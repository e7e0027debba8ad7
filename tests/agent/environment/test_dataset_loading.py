"""A query's dataset loads into a running kernel after the step has returned its result.

The model reads the result while the kernel reads the file; whatever uses the kernel next
waits for the load, and a load that fails is loud for the next step that reads the name.
A real kernel and DuckDB file; nothing is mocked.
"""

from __future__ import annotations

import asyncio

import pytest

SQL = "SELECT region_id, COUNT(*) AS n FROM orders GROUP BY region_id"


async def _step(tools, tool: str, args: dict, call_id: str):
    from jupyter_analyst.agent.spec import CallContext

    ctx = CallContext(tools.environment.thread_id, "turn", call_id)
    return await tools.call(tool, args, ctx, await tools.plan(tool, args))


def test_the_next_python_step_finds_the_dataset_loaded_after_the_query_returned(thread_tools):
    runtime, tools = thread_tools

    async def go():
        try:
            await runtime.kernel()
            fetched = await _step(tools, "run_sql", {"sql": SQL, "name": "counts"}, "c1")
            assert fetched.status == "ok"
            fingerprint = fetched.artifacts[0][0].fingerprint
            # Returned before the kernel read the file ...
            assert runtime.loaded.get("counts") != fingerprint
            # ... which the next step that uses the kernel waits for.
            used = await _step(tools, "run_python", {"code": "print(len(counts), int(counts['n'].sum()))"}, "c2")
            assert used.status == "ok", used.result
            (total,) = runtime.source.cursor().execute("SELECT COUNT(*) FROM orders").fetchone()
            assert used.result["stdout"].split() == [str(fetched.result["rows"]), str(total)]
            assert runtime.loaded["counts"] == fingerprint
        finally:
            await runtime.close()

    asyncio.run(go())


def test_a_load_that_fails_in_the_background_fails_the_step_that_reads_the_name(thread_tools):
    runtime, tools = thread_tools

    async def go():
        try:
            await runtime.kernel()
            fetched = await _step(tools, "run_sql", {"sql": SQL, "name": "counts"}, "c1")
            artifact = fetched.artifacts[0][0]
            await runtime.settle()
            runtime.loaded.clear()  # as a kernel that does not hold it yet
            runtime.artifacts.blob_path(artifact).write_bytes(b"damaged")
            await runtime.dataset_fetched("counts", artifact.fingerprint)  # the load fails after this returns
            await runtime.settle()
            assert "counts" not in runtime.loaded and not runtime.kernel_complete
            used = await _step(tools, "run_python", {"code": "print(len(counts))"}, "c2")
            assert used.status == "error" and used.result["error"]["reason"] == "blob_corrupt"
            assert artifact.artifact_id in used.result["error"]["message"]
        finally:
            await runtime.close()

    asyncio.run(go())
