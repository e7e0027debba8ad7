"""A turn that ends with a question: it reports ``needs_input``, and the user's next message
is presented to the model as the answer to it (read from the requests the model receives)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from jupyter_analyst.testing import call_step as tool, sql_step as sql, text_step as say

QUESTION = "Which revenue do you mean?"
CLARIFY = {"steps": [tool("clarify", question=QUESTION, candidates=["gross revenue", "net of returns"])]}
GROSS = {"match": "^gross|^the first", "steps": [sql("SELECT SUM(revenue) AS gross FROM orders", "gross"), say()]}


def system_of(request):
    return request["messages"][0]["content"]


def test_a_clarify_turn_ends_needs_input_and_the_next_message_answers_it(analyst):
    a = analyst({"turns": [GROSS, CLARIFY]})
    asked = a.run("show revenue")
    assert asked.status == "needs_input" and asked.answer.startswith(QUESTION)
    assert [e.status for e in a.of_type("turn_ended")] == ["needs_input"]

    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    assert ws.store.turns(asked.thread_id)[-1].status == "needs_input"
    ws.close()

    answered = a.run("gross revenue, please", thread=asked.thread_id)
    assert answered.status == "completed"
    request = a.server.requests[1]
    system = system_of(request)
    # The model is told what was asked and that this message answers it...
    assert f'waiting for the user\'s answer to the question it asked: "{QUESTION}"' in system
    assert "(candidates: gross revenue | net of returns)" in system
    assert "The user's message in this turn is the answer to it." in system
    assert request["messages"][-1] == {"role": "user", "content": "gross revenue, please"}
    # ...and the question is closed with that answer, not left open.
    assert "Open items:" not in system
    ws = Workspace(a.workspace)
    (question,) = [i for i in ws.store.agent_state(asked.thread_id).items.values() if i.kind == "question"]
    ws.close()
    assert question.status == "resolved" and question.resolution == "gross revenue"


def test_an_answer_in_the_users_own_words_resolves_the_question(analyst):
    a = analyst({"turns": [{"match": "^after returns", "steps": [say("ok")]}, CLARIFY]})
    asked = a.run("show revenue")
    a.run("after returns are taken off", thread=asked.thread_id)
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    (question,) = [i for i in ws.store.agent_state(asked.thread_id).items.values() if i.kind == "question"]
    ws.close()
    assert question.status == "resolved" and question.resolution == "after returns are taken off"


def test_the_cli_reports_needs_input_in_json_and_exits_0(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer({"turns": [CLARIFY]}) as server:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
               "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", str(sales_db), "--prompt", "show revenue",
             "--workspace", str(tmp_path), "--no-summarizer", "--json"],
            env=env, capture_output=True, text=True, timeout=120,
        )
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.splitlines()[0])
    assert summary["status"] == "needs_input" and summary["answer"].startswith(QUESTION)
