"""What a real model is sent: prompt tokens per call and per turn, and the tool block's share.

A fixed three-turn conversation on the sample data is run against Gemma 3 270M on
llama-cpp-python (``make real-model``): the same prompts every run, at most two calls with
tools per turn, replies capped at 48 tokens, no summarizer. Token counts are the server's
own (``context_usage`` after each reply). The model is tiny and samples, so which calls it
makes can change between runs; the first call of each turn (system prompt, history, tools)
depends only on the product, and is the figure to compare.

Each figure is shown against the one measured before the context and tool-block work
(:data:`BEFORE`), so a later run reads as before/after.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import tool_schemas
from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.testing import TurnRunner
from jupyter_analyst.testing.servers.llama import MODEL_NAME, LlamaModelServer, llama_environment
from jupyter_analyst.testing.servers.llama_launcher import tools_text

from .common import Report

PROMPTS = (
    "What is the total revenue by region?",
    "Which product sold the most units?",
    "Show revenue by month for the top region.",
)
MAX_STEPS = 2

#: Measured on the code before the context and tool-block work (commit e8b0d24, 2025-11-26,
#: 2 cores shared; every turn completed in one call, the model answering in text): the figure
#: each row is compared with. Rows missing here are new.
BEFORE: dict[str, float] = {
    "prompt tokens, turn 1 call 1": 2734, "prompt tokens, turn 1 (all calls)": 2734,
    "prompt tokens, turn 2 call 1": 2847, "prompt tokens, turn 2 (all calls)": 2847,
    "prompt tokens, turn 3 call 1": 2914, "prompt tokens, turn 3 (all calls)": 2914,
    "prompt tokens, first calls of the turns": 8495, "prompt tokens, whole conversation": 8495,
    "tool block, tokens per call": 2214, "tool block, characters with every tool": 8896,
    "tool block, tokens as offered in the first call": 2214,
    "tool block share, first call": 81.0, "tool block share, all calls": 78.2,
}
BEFORE_LABEL = "before (e8b0d24)"


def _row(report: Report, name: str, value: float, unit: str) -> None:
    before = BEFORE.get(name)
    report.add(name, value, value if before is None else before,
               "before: not measured" if before is None else BEFORE_LABEL, unit=unit)


def bench_real_model(report: Report, *, rows: int, repeat: int) -> None:
    built = llama_environment()
    if built is None:
        raise RuntimeError("the real model is not built: run `make real-model`")
    with tempfile.TemporaryDirectory(prefix="bench-real-model-") as tmp, \
            LlamaModelServer(*built, n_predict=48) as server:
        db = build_sample_database(Path(tmp) / "sales.duckdb")
        runner = TurnRunner(Path(tmp) / "ws", server, db, model=MODEL_NAME)
        every = {spec["function"]["name"]: spec for spec in tool_schemas()}
        block = tools_text(list(every.values()))
        block_tokens = server.count_tokens(block)
        thread = None
        total = first_total = 0
        for n, prompt in enumerate(PROMPTS, 1):
            summary = runner.run(prompt, thread=thread, max_steps=MAX_STEPS, summarizer=False)
            thread = summary.thread_id
            served = [e for e in runner.events if e.type == "context_usage" and e.turn_id == summary.turn_id
                      and e.prompt_tokens is not None]
            for usage in served:
                _row(report, f"prompt tokens, turn {n} call {usage.call}", usage.prompt_tokens, "tok")
            turn_tokens = sum(u.prompt_tokens for u in served)
            _row(report, f"prompt tokens, turn {n} (all calls)", turn_tokens, "tok")
            total += turn_tokens
            first_total += served[0].prompt_tokens if served else 0
            report.note(f"turn {n}: {summary.status}, {len(served)} call(s)"
                        + (f": {summary.error.get('message', '')[:120]}" if summary.error else ""))
        # Each call's tool block as it was offered (tools are offered only when they can be used).
        served = server.usage()
        offered = [server.count_tokens(tools_text([every[name] for name in call["tools"]])) for call in served]
        _row(report, "prompt tokens, first calls of the turns", first_total, "tok")
        _row(report, "prompt tokens, whole conversation", total, "tok")
        _row(report, "tool block, tokens per call", block_tokens, "tok")
        _row(report, "tool block, characters with every tool", len(block), "chars")
        _row(report, "tool block, tokens as offered in the first call", offered[0], "tok")
        _row(report, "tool block share, first call", 100 * offered[0] / served[0]["prompt_tokens"], "%")
        _row(report, "tool block share, all calls", 100 * sum(offered) / max(total, 1), "%")
        report.note(f"{len(PROMPTS)} turns, {len(served)} model calls, at most {MAX_STEPS} with tools per turn; "
                    "token counts are the server's (llama-cpp-python, Gemma 3 270M Q4_K_M); the tool block is "
                    "counted as the server's chat format offers it (its definitions and how to call them); "
                    f"the first call was offered {', '.join(served[0]['tools'])}")
