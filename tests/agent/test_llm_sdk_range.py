"""The ``openai`` SDK range the package allows, met on its edges: the floor of the 1.x line
and the last 2.x release let the HTTP library's errors out of a stream unwrapped (3.x wraps
them), so the same turn is run under each, in its own interpreter, against the scripted model
server: a call is read, a stream cut once is asked again, a stream cut twice and a server that
never answers are each one clear error (never a raw ``httpx`` traceback). The SDK is imported
as the console script imports it (ahead, its aiohttp transport left out: ``agent/llm/sdk.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.process, pytest.mark.timeout(300)]

#: The floor in pyproject.toml, and the last release of the major before the installed one.
EDGES = ("1.40.0", "2.54.0")

PROBE = textwrap.dedent("""
    import asyncio, json, socket, sys
    from jupyter_analyst.agent import LLMClient, start_sdk_import
    from jupyter_analyst.agent.llm.sdk import AIOHTTP_TRANSPORTS, sdk

    # As the console script imports it: ahead, on a thread of its own, its aiohttp transport left out.
    start_sdk_import(without_aiohttp=True)
    openai = sdk()
    from jupyter_analyst.agent.tools import TOOLS
    from jupyter_analyst.errors import ModelError
    from jupyter_analyst.testing import ScriptedModelServer

    USER = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "go"}]
    SCRIPT = {"turns": [{"steps": [{"tool_calls": [{"name": "list_tables", "arguments": {}}]}]}]}
    seen = {"version": openai.__version__, "transports": [m for m in AIOHTTP_TRANSPORTS if m in sys.modules]}

    async def ask(base_url, timeout=30):
        client = LLMClient(model="m", base_url=base_url, api_key="x", max_retries=0, timeout=timeout)
        try:
            return [call.name for call in (await client.complete(USER, TOOLS)).tool_calls]
        except ModelError as exc:
            return {"reason": exc.reason, "message": exc.message}
        finally:
            await client.aclose()

    async def main():
        for cuts in (0, 1, 2):
            server = ScriptedModelServer(SCRIPT).start()
            try:
                server.drop_streams(cuts)
                seen[f"cut {cuts}"] = await ask(server.base_url)
            finally:
                server.stop()
        with socket.socket() as silent:
            silent.bind(("127.0.0.1", 0))
            silent.listen()
            seen["silent"] = await ask(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", timeout=0.5)

    asyncio.run(main())
    print(json.dumps(seen))
""")


@pytest.fixture(scope="module")
def sdk(tmp_path_factory):
    """An ``openai`` release installed beside (and ahead of) the environment's own."""
    def install(version: str) -> Path:
        target = tmp_path_factory.mktemp(f"openai-{version}")
        out = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                              str(target), f"openai=={version}", "distro"],
                             capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stderr[-2000:]
        return target
    return install


@pytest.mark.parametrize("version", EDGES)
def test_each_major_the_package_allows_meets_a_cut_stream_with_one_clear_error(sdk, version):
    out = subprocess.run([sys.executable, "-c", PROBE], env={"PYTHONPATH": str(sdk(version)), "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["version"] == version and seen["transports"] == []
    assert seen["cut 0"] == seen["cut 1"] == ["list_tables"]
    assert seen["cut 2"]["reason"] == "model_connection_dropped"
    assert "broke twice mid-reply" in seen["cut 2"]["message"]
    assert seen["silent"]["reason"] == "model_timeout" and "did not answer within 0.5 s" in seen["silent"]["message"]


def test_the_floor_tested_here_is_the_one_the_package_declares():
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    # The declared range starts where the floor's line does and stops before a major not tested.
    assert f'"openai>={EDGES[0].rsplit(".", 1)[0]},<4"' in pyproject
