"""A running Python step's prints, told while it runs: coalesced, bounded, kept when stopped."""

from __future__ import annotations

import asyncio

from jupyter_analyst.agent.tools.live_output import LiveOutput
from jupyter_analyst.testing import python_step, text_step as say

SLOW_PRINTS = (
    "import time\n"
    "for i in range(4):\n"
    "    print(f'batch {i} done', flush=True)\n"
    "    time.sleep(0.7)\n"
    "print('all done')"
)


def test_pieces_are_merged_per_stream_in_order_and_bounded():
    told = []

    async def emit(event):
        told.append(event)

    async def run():
        live = LiveOutput(emit, "call_1", flush_s=3600, cap=12)
        for stream, text in [("stdout", "abc"), ("stdout", "def\n"), ("stderr", "warn\n"), ("stdout", "ghijkl")]:
            live.feed(stream, text)
        await live.close()

    asyncio.run(run())
    assert [(e.stream, e.text, e.omitted) for e in told] == [
        ("stdout", "abcdef\n", 0), ("stderr", "warn\n", 0), ("stdout", "", 6),
    ]
    assert all(e.call_id == "call_1" and e.elapsed_s >= 0 for e in told)


def test_a_slow_step_is_seen_printing_before_its_result(analyst):
    a = analyst({"turns": [{"steps": [python_step(SLOW_PRINTS), say("[scripted] done")]}]})
    summary = a.run("a slow step")
    assert summary.status == "completed", summary.error
    kinds = [e.type for e in a.events]
    outputs = [e for e in a.events if e.type == "step_output"]
    # Told as it ran: several events, the first long before the step's result.
    assert len(outputs) >= 3 and kinds.index("step_output") < kinds.index("tool_result")
    assert "".join(e.text for e in outputs) == "".join(f"batch {i} done\n" for i in range(4)) + "all done\n"
    assert outputs[0].elapsed_s < outputs[-1].elapsed_s
    (result,) = a.of_type("tool_result")
    assert result.result["stdout"].endswith("all done\n") and result.duration_s >= 2.0


def test_a_reused_step_prints_nothing_live(analyst):
    a = analyst({"turns": [{"steps": [python_step("print('hi')"), say("[scripted] done")]},
                           {"steps": [python_step("print('hi')"), say("[scripted] again")]}]})
    first = a.run("once")
    a.events.clear()
    a.run("again", thread=first.thread_id)
    (result,) = a.of_type("tool_result")
    assert result.reused and a.of_type("step_output") == []
