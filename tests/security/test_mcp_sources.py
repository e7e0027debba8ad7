"""Attacks on the sources of `jupyter analyst mcp` by its client, which is untrusted: a client
names one of the sources the user configured and opens nothing else, whatever it passes as
`source` (a path of this machine, a path out of the workspace, a database URL), alone or with
a thread; and nothing it is sent carries a path of this machine (its words reach a model
provider). A real server process, driven by the SDK's own client over stdio."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_analyst.workspace import Workspace

pytestmark = pytest.mark.process  # each test starts the server process

ATTACKS = [
    "/etc/passwd",
    "../x.duckdb",
    "postgresql://attacker:pw@127.0.0.1:5432/postgres",
    "sqlite:////etc/passwd",
    "sqlite:///../x.db",
    "duckdb:///:memory:",
    ":memory:",
    "sales/../../etc/passwd",
    "sales ",
    "SALES",
]


def server(workspace: Path, sales: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[
        "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer", "--db", str(sales),
        "--source", f"copy={sales}"])


def sent(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content) + json.dumps(result.structured_content)


def test_a_path_url_or_unknown_name_as_source_is_refused_with_the_names(tmp_path, sales_db):
    (tmp_path / "x.duckdb").write_bytes(sales_db.read_bytes())  # what "../x.duckdb" would reach

    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            refused = {}
            for attack in ATTACKS:
                for tool, arguments in (("list_tables", {}), ("run_sql", {"sql": "SELECT 1 AS one", "name": "one"}),
                                        ("run_python", {"code": "print(1)"}), ("describe_table", {"table": "orders"}),
                                        ("ask", {"prompt": "anything"})):
                    refused[(attack, tool)] = await client.call_tool(tool, {**arguments, "source": attack})
            made = await client.call_tool("list_tables", {})
            thread = made.structured_content["thread"]
            with_thread = {attack: await client.call_tool("run_sql", {"sql": "SELECT 1 AS one", "name": "one",
                                                                      "thread": thread, "source": attack})
                           for attack in ATTACKS}
            return refused, with_thread, thread

    refused, with_thread, thread = asyncio.run(session())
    for (attack, tool), result in [*refused.items(), *(((a, "run_sql+thread"), r) for a, r in with_thread.items())]:
        assert result.is_error, (attack, tool)
        error = result.structured_content["error"]
        assert error["reason"] == "unknown_source", (attack, tool, error)
        assert error["sources"] == ["sales", "copy"] and "choose one of: sales, copy" in result.content[0].text
        assert str(tmp_path) not in sent(result) and "/etc/passwd" not in sent(result), (attack, tool)
    workspace = Workspace(tmp_path / "ws")
    try:  # nothing was opened for the client but the configured source, in the one thread it made
        threads = workspace.store.list_threads()
        assert [t.thread_id for t in threads] == [thread] and threads[0].source == str(sales_db)
        assert len(workspace.store.turns(thread)) == 1
    finally:
        workspace.close()


def test_no_result_carries_a_path_of_this_machine(tmp_path, sales_db):
    """Sources by name, the audit notebook by its URI, and an engine's message that quotes the
    path it could not open said with the source's name."""
    gone = tmp_path / "gone.duckdb"
    gone.write_bytes(sales_db.read_bytes())

    async def session():
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(tmp_path / "ws"), "--no-summarizer",
            "--db", str(sales_db), "--source", f"gone={gone}"])
        async with Client(params) as client:
            results = [await client.call_tool("run_sql", {"sql": "SELECT COUNT(*) AS n FROM orders", "name": "n"})]
            thread = results[0].structured_content["thread"]
            results.append(await client.call_tool("run_python", {"code": "print(len(n))", "thread": thread}))
            made = await client.call_tool("list_tables", {"source": "gone"})
            gone.unlink()  # the source's file is gone: its thread's next step cannot open it
            results += [made, await client.call_tool("describe_table", {"table": "orders",
                                                                        "thread": made.structured_content["thread"]})]
            for tool, arguments in (("list_sources", {}), ("threads", {}), ("thread_state", {"thread": thread}),
                                    ("list_artifacts", {"thread": thread}), ("verify", {"thread": thread})):
                results.append(await client.call_tool(tool, arguments))
            return results

    results = asyncio.run(session())
    assert results[3].is_error, sent(results[3])  # the vanished source
    listed = results[4].structured_content["sources"]
    assert [s["name"] for s in listed] == ["sales", "gone"] and listed[1]["error"]
    for result in results:
        assert str(tmp_path) not in sent(result) and str(sales_db.parent) not in sent(result), sent(result)
    assert results[-1].structured_content["notebook"].startswith("analyst://notebook/")
