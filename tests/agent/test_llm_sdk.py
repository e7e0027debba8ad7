"""The ``openai`` SDK imported ahead, on a thread of its own: the client takes it from there;
the console script's import leaves out the aiohttp transport and nothing else; an import
ahead that fails is made again by the client, whose error it then is.

Each check runs in a fresh interpreter, where ``sys.modules`` tells what was imported, and
an import hook which thread imported it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from jupyter_analyst.testing import ScriptedModelServer, text_step

#: Records which threads import each module named in WATCHED, in order (the hook finds nothing itself).
HOOK = """
import sys, threading
WATCHED = {"openai", "openai.resources.chat", "aiohttp", "openai._vendor.httpx_aiohttp"}
importers = {}

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED:
            importers.setdefault(name, []).append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Watch())
"""


def _fresh(code: str) -> dict:
    """What ``code`` (after the hook) prints as JSON on its last line, run in a new interpreter."""
    out = subprocess.run([sys.executable, "-c", HOOK + textwrap.dedent(code)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_sdk_begun_ahead_is_imported_off_the_calling_thread_and_the_client_takes_it():
    with ScriptedModelServer({"turns": [{"steps": [text_step("[scripted] ahead")]}]}) as model:
        report = _fresh(f"""
            import asyncio, json
            from jupyter_analyst.agent import LLMClient, start_sdk_import

            start_sdk_import()
            start_sdk_import()  # once per process

            async def ask():
                client = await asyncio.to_thread(LLMClient, model="m", base_url={model.base_url!r}, api_key="x")
                try:
                    return (await client.complete([{{"role": "user", "content": "hi"}}], None)).text
                finally:
                    await client.aclose()

            answer = asyncio.run(ask())
            print(json.dumps({{"answer": answer, "importers": importers,
                              "threads": [t.name for t in threading.enumerate()]}}))
        """)
    assert report["answer"] == "[scripted] ahead"
    assert report["importers"]["openai"] == report["importers"]["openai.resources.chat"] == ["openai-import"]
    assert "openai-import" not in report["threads"]  # done, and only one was started


def test_the_console_scripts_import_leaves_out_the_aiohttp_transport_and_only_it():
    report = _fresh("""
        import importlib.util, json
        from jupyter_analyst.agent import start_sdk_import
        from jupyter_analyst.agent.llm.sdk import AIOHTTP_TRANSPORTS, sdk

        start_sdk_import(without_aiohttp=True)
        openai = sdk()
        left_out = {name: name in sys.modules for name in ("aiohttp", *AIOHTTP_TRANSPORTS)}
        # Left out for the SDK's import only: whoever imports it by name later gets it.
        vendored = importlib.util.find_spec("openai._vendor.httpx_aiohttp") is not None
        if vendored:
            import openai._vendor.httpx_aiohttp
        print(json.dumps({"left_out": left_out, "vendored": vendored, "client": openai.AsyncOpenAI.__name__,
                          "http": openai.DefaultAsyncHttpxClient.__name__,
                          "importable_after": vendored and "openai._vendor.httpx_aiohttp" in sys.modules}))
    """)
    assert not any(report["left_out"].values()), report
    assert report["client"] == "AsyncOpenAI" and report["http"]
    assert report["importable_after"] == report["vendored"]


def test_the_sdk_imported_whole_keeps_its_aiohttp_transport_where_it_has_one():
    report = _fresh("""
        import importlib.util, json
        from jupyter_analyst.agent import start_sdk_import
        from jupyter_analyst.agent.llm.sdk import sdk

        start_sdk_import()
        sdk()
        has = importlib.util.find_spec("aiohttp") is not None and importlib.util.find_spec("openai._vendor") is not None
        print(json.dumps({"has": has, "imported": "openai._vendor.httpx_aiohttp" in sys.modules}))
    """)
    assert report["imported"] == report["has"]


def test_an_import_ahead_that_fails_is_made_again_by_the_client():
    report = _fresh("""
        import json
        from jupyter_analyst.agent import start_sdk_import
        from jupyter_analyst.agent.llm.sdk import sdk

        class FailAhead:
            # The thread ahead cannot import the SDK (as if its import raised there); the caller can.
            def find_spec(self, name, path=None, target=None):
                if name == "openai" and threading.current_thread().name == "openai-import":
                    raise ImportError("not on this thread")
                return None

        sys.meta_path.insert(1, FailAhead())  # after the watch, which sees the attempt
        start_sdk_import()
        openai = sdk()
        print(json.dumps({"module": openai.__name__, "client": openai.AsyncOpenAI.__name__,
                          "importers": importers}))
    """)
    assert report["module"] == "openai" and report["client"] == "AsyncOpenAI"
    assert report["importers"]["openai"] == ["openai-import", "MainThread"]  # tried ahead, then made here


def test_what_comes_after_the_import_ahead_comes_once_it_is_over_or_at_once_when_there_is_none():
    report = _fresh("""
        import json
        from jupyter_analyst.agent import start_sdk_import
        from jupyter_analyst.agent.llm.sdk import sdk

        told = []
        start_sdk_import(then=lambda: told.append(("first", "openai" in sys.modules, threading.current_thread().name)))
        sdk()
        seen_by_sdk = list(told)
        start_sdk_import(then=lambda: told.append(("again", "openai" in sys.modules, threading.current_thread().name)))
        print(json.dumps({"seen_by_sdk": seen_by_sdk, "told": told}))
    """)
    assert report["seen_by_sdk"] == [["first", True, "openai-import"]]  # before sdk() returned
    assert report["told"][1] == ["again", True, "MainThread"]  # nothing left to import: at once
