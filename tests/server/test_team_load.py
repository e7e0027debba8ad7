"""A small team load: two server processes on one PostgreSQL store, six threads at once, each
turn streamed on its own process and followed on the other; no event is lost or duplicated.
(``make bench`` runs the full one, 4 processes and 32 threads: benchmarks/bench_team.py.)"""

from __future__ import annotations

import pytest

from benchmarks.bench_team import SCRIPT, run_team, stream_problems, store_problems
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.streams import Frame

pytestmark = pytest.mark.timeout(600)


def test_six_concurrent_turns_on_two_processes_lose_and_repeat_nothing(postgres, sales_db, tmp_path):
    with ScriptedModelServer(SCRIPT) as model:
        team = run_team(tmp_path, processes=2, threads=6, model_url=model.base_url, database=sales_db,
                        store_url=postgres.new_database())
    assert team["problems"] == []
    # Every turn: started, SQL, Python, answer, ended: a stream carried each of its events.
    assert team["events"] >= 6 * 10
    assert len(team["own"]) >= team["events"] // 2 and len(team["other"]) >= team["events"] // 2


def test_the_checks_see_a_lost_a_repeated_and_a_stray_event():
    stored = [{"seq": 1, "type": "turn_started"}, {"seq": 2, "type": "tool_call", "tool": "run_sql"},
              {"seq": 3, "type": "text_delta", "text": "hi"}, {"seq": 4, "type": "turn_ended", "status": "completed"}]
    frames = [Frame(str(e["seq"]), e, 0.0) for e in stored]
    assert stream_problems(stored, frames, "s") == [] and store_problems(stored) == []
    assert stream_problems(stored, [frames[0], *frames[2:]], "s") == ["s: tool_call 2 lost"]
    assert stream_problems(stored, [*frames[:2], frames[1], *frames[2:]], "s") == ["s: seq 2 twice or out of order"]
    assert store_problems([*stored[:2], *stored[3:]]) == ["store: seq not 1..N"]
    assert store_problems(stored[:3]) == ["store: not one turn from its start to its end"]
