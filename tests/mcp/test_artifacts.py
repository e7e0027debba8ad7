"""Charts and datasets as a client agent meets them: a chart comes back as an image, every
artifact as a resource link; a read has the artifact's own MIME type; resources/list lists the
user's recent artifacts; a new session reads what an earlier one of the same user made, and
never another user's. A real `jupyter analyst mcp` process, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ImageContent, ResourceLink

pytestmark = pytest.mark.process  # each test starts the server process

REVENUE = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"
CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region_id', y='revenue')\nplt.show()"
PARQUET = "application/vnd.apache.parquet"


def server(workspace: Path, source: Path, user: str = "local") -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[
        "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer", "--db", str(source),
        "--user", user])


def test_a_chart_comes_back_as_an_image_and_artifacts_as_typed_resources(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            sql = await client.call_tool("run_sql", {"sql": REVENUE, "name": "revenue"})
            thread = sql.structured_content["thread"]
            chart = await client.call_tool("run_python", {"code": CHART, "thread": thread})
            made = [*sql.structured_content["artifacts"], *chart.structured_content["artifacts"]]
            views = {a["type"]: a for a in made}
            reads = {kind: (await client.read_resource(view["uri"])).contents[0] for kind, view in views.items()}
            listed = (await client.list_resources()).resources
            return sql, chart, views, reads, listed

    sql, chart, views, reads, listed = asyncio.run(session())
    assert not sql.is_error and not chart.is_error, chart.content
    images = [part for part in chart.content if isinstance(part, ImageContent)]
    assert [image.mime_type for image in images] == ["image/png"]
    png = base64.b64decode(images[0].data)
    assert png.startswith(b"\x89PNG") and "sha256:" + hashlib.sha256(png).hexdigest() == views["image"]["fingerprint"]
    links = {part.uri: part for result in (sql, chart) for part in result.content if isinstance(part, ResourceLink)}
    assert {str(uri) for uri in links} == {views["dataset"]["uri"], views["image"]["uri"]}
    assert links[views["dataset"]["uri"]].mime_type == PARQUET
    assert reads["image"].mime_type == "image/png" and reads["dataset"].mime_type == PARQUET
    assert base64.b64decode(reads["dataset"].blob).startswith(b"PAR1")
    assert {(str(r.uri), r.mime_type) for r in listed} >= {(views["dataset"]["uri"], PARQUET),
                                                             (views["image"]["uri"], "image/png")}


def test_a_new_session_reads_its_users_artifacts_and_never_another_users(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db, "alice")) as first:
            made = await first.call_tool("run_sql", {"sql": REVENUE, "name": "revenue"})
        uri = made.structured_content["artifacts"][0]["uri"]
        fingerprint = made.structured_content["artifacts"][0]["fingerprint"]
        async with Client(server(tmp_path / "ws", sales_db, "alice")) as again:
            read = (await again.read_resource(uri)).contents[0]
            listed = [str(r.uri) for r in (await again.list_resources()).resources]
        async with Client(server(tmp_path / "ws", sales_db, "bob")) as bob:
            refused = await bob.call_tool("get_artifact", {"fingerprint": fingerprint})
            bob_listed = [str(r.uri) for r in (await bob.list_resources()).resources]
            try:
                await bob.read_resource(uri)
                bob_read = "read"
            except Exception as exc:  # noqa: BLE001 - the SDK raises its own error type for a refused read
                bob_read = str(exc)
        return made, read, listed, refused, bob_listed, bob_read

    made, read, listed, refused, bob_listed, bob_read = asyncio.run(session())
    assert "sha256:" + hashlib.sha256(base64.b64decode(read.blob)).hexdigest() == \
        made.structured_content["artifacts"][0]["fingerprint"]
    uri = made.structured_content["artifacts"][0]["uri"]
    assert uri in listed and uri not in bob_listed
    assert refused.is_error and "no artifact" in refused.content[0].text
    assert "no artifact" in bob_read
