"""Malformed tool calls, end to end through ``jupyter-analyst run --json``.

Each call below once crashed the CLI with a traceback (or silently ended the turn). Every
one must come back to the model as a clean tool error with a reason code while the turn
goes on: exit status 0, exactly one JSON object on stdout, and the model's next request
carries the error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from jupyter_analyst.testing import ScriptedModelServer, call_step, python_step, sql_step, text_step

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]

# call -> the reason code the model must be told
MALFORMED: dict[str, tuple[dict, str]] = {
    "deeply nested JSON arguments": (
        {"tool_calls": [{"name": "run_sql", "raw_arguments": '{"sql": ' + "[" * 100_000 + "]" * 100_000 + "}"}]},
        "arguments_too_deep",
    ),
    "SQL with 3000 nested parentheses": (
        sql_step("SELECT " + "(" * 3000 + "1" + ")" * 3000 + " AS x", "x"),
        "sql_too_complex",
    ),
    # Spaced out: "--" would start an SQL comment.
    "SQL with 100k unary minus signs": (sql_step("SELECT " + "- " * 100_000 + "1 AS x", "x"), "sql_too_large"),
    "SQL with 5k unary minus signs": (sql_step("SELECT " + "- " * 5_000 + "1 AS x", "x"), "sql_too_complex"),
    "Python with 100k unary minus signs": (python_step("x = " + "-" * 100_000 + "1"), "python_too_large"),
    "Python with 5k unary minus signs": (python_step("x = " + "-" * 5_000 + "1"), "python_too_complex"),
    "a lone surrogate in code": (
        {"tool_calls": [{"name": "run_python", "raw_arguments": '{"code": "print(\'\\ud800\')"}'}]},
        "invalid_unicode",
    ),
    "an integer too long to read": (
        {"tool_calls": [{"name": "run_sql", "raw_arguments":
                         '{"sql": "SELECT 1 AS x", "name": "x", "expect": {"rows": 1' + "0" * 5_000 + "}}"}]},
        "invalid_arguments",
    ),
    "a tool call with an empty name": ({"tool_calls": [{"name": "", "arguments": {"sql": "SELECT 1"}}]}, "unknown_tool"),
    "a dataset named __builtins__": (sql_step("SELECT 1 AS x", "__builtins__"), "reserved_name"),
}


def run_cli(script: dict, sales_db, workspace) -> tuple[subprocess.CompletedProcess, list[dict]]:
    """One turn through the CLI against a scripted model; returns the process and the model's requests."""
    with ScriptedModelServer(script) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="x")
        out = subprocess.run(
            [*CLI, "run", "--db", str(sales_db), "--prompt", "go", "--json", "--no-summarizer",
             "--workspace", str(workspace)],
            env=env, capture_output=True, text=True, timeout=240,
        )
        return out, list(server.requests)


def tool_errors(request: dict) -> list[dict]:
    """The errors the model was told in the tool messages of one request."""
    told = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
    return [t["error"] for t in told if "error" in t]


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_call_is_a_tool_error_and_the_turn_goes_on(case, sales_db, tmp_path):
    step, reason = MALFORMED[case]
    out, requests = run_cli({"turns": [{"steps": [step, text_step("recovered")]}]}, sales_db, tmp_path / "ws")
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout[:2000]
    summary = json.loads(lines[0])
    assert summary["status"] == "completed" and summary["answer"] == "recovered"
    # The loop went on: the model was asked again, and told why its call failed.
    assert len(requests) == 2
    errors = tool_errors(requests[1])
    assert [e["reason"] for e in errors] == [reason], errors
    assert errors[0]["message"] and len(json.dumps(errors[0])) < 2_000


def test_every_malformed_call_in_one_reply_gets_its_own_error(sales_db, tmp_path):
    """Parallel malformed calls: each is answered under its own id, and a good one still runs."""
    calls = [c for step, _ in MALFORMED.values() for c in step["tool_calls"]]
    good = call_step("list_tables")["tool_calls"]
    script = {"turns": [{"steps": [{"tool_calls": [*calls, *good]}, text_step("recovered")]}]}
    out, requests = run_cli(script, sales_db, tmp_path / "ws")
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout)["status"] == "completed"
    messages = requests[1]["messages"]
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert asked == answered and len(set(asked)) == len(calls) + 1
    assert [e["reason"] for e in tool_errors(requests[1])] == [reason for _, reason in MALFORMED.values()]
    # Every call the model sent is echoed with a name an OpenAI-compatible server accepts.
    names = [c["function"]["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert all(n and len(n) <= 64 for n in names)


RESERVED = [
    "__builtins__", "__name__", "__x__", "_", "__", "_1", "_private",  # dunders, IPython's and private names
    "class", "None", "lambda", "match",  # keywords and soft keywords
    "sum", "len", "print", "list", "type", "id", "open",  # builtins
    "pd", "plt", "matplotlib", "get_ipython", "In", "Out", "exit", "quit", "display", "analyst",  # set-up names
]
NOT_IDENTIFIERS = ["", "1abc", "my-data", "a b", "ｐｄ", "ﬁle", "x" * 300]


@pytest.mark.parametrize("name", RESERVED + NOT_IDENTIFIERS)
def test_dataset_names_that_would_clobber_python_or_the_kernel_are_refused(analyst, name):
    from jupyter_analyst.testing import sql_step

    a = analyst({"turns": [{"steps": [sql_step("SELECT region FROM regions", name), text_step("done")]}]})
    out = a.run("name")
    assert out.status == "completed" and out.tool_calls["executed"] == 0
    (error,) = tool_errors(a.server.requests[1])
    expected = "reserved_name" if name in RESERVED else {"invalid_name", "argument_too_long"}
    assert error["reason"] in ({expected} if isinstance(expected, str) else expected), error
    if error["reason"] != "argument_too_long":
        assert error["hint"] and error.get("suggestions"), error
        suggestion = error["suggestions"][0]
        assert suggestion.isidentifier() and suggestion not in RESERVED and suggestion != name


def test_a_plain_dataset_name_still_works(analyst):
    a = analyst({"turns": [{"steps": [sql_step("SELECT region FROM regions", "regions_df"), text_step("done")]}]})
    out = a.run("plain")
    assert out.tool_calls["executed"] == 1 and a.of_type("tool_result")[0].status == "ok"


def test_lone_surrogates_in_the_models_text_and_the_prompt_are_stored_as_replacement_characters(sales_db, tmp_path):
    """Prose is not code: a lone surrogate there becomes U+FFFD, and every event persists."""
    script = {"turns": [{"steps": [text_step("revenue \ud800 grew")]}]}
    with ScriptedModelServer(script) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        env.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="x")
        # Bytes that are not UTF-8 reach Python's argv as lone surrogates.
        out = subprocess.run(
            [*(c.encode() for c in CLI), b"run", b"--db", str(sales_db).encode(), b"--prompt", b"why \xed\xa0\x80?",
             b"--json", b"--no-summarizer", b"--workspace", str(tmp_path / "ws").encode()],
            env=env, capture_output=True, timeout=240,
        )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-3000:]
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed" and summary["answer"] == "revenue \ufffd grew"
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    try:
        events = workspace.store.events(summary["thread_id"])
        assert events[0].type == "turn_started" and "\ufffd" in events[0].prompt
        assert any(e.type == "answer" and e.text == "revenue \ufffd grew" for e in events)
    finally:
        workspace.close()
