"""How the loop ends a turn, read from the requests the model receives: a turn that ends with
a question reports ``needs_input``, and the user's next message is presented to the model as
the answer to it; a turn out of steps is told so in its last request and ends
``step_limited``; a reply with nothing in it ends ``no_answer``, never an empty ``completed``."""

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


# ---------------------------------------------------------------- how a turn without a full answer ends

LOOK = [tool("describe_table", table="orders"), tool("describe_table", table="products"),
        tool("describe_table", table="regions")]
PARTIAL = "North leads on orders; the split by product is unfinished: describe_table regions comes next."


def test_a_turn_out_of_steps_is_told_so_and_ends_step_limited(analyst):
    from jupyter_analyst.agent import STEP_BUDGET_MARKER

    a = analyst({"turns": [{"match": "^and now", "steps": [say("ok")]},
                           {"match": "^compare", "steps": [*LOOK[:2], say(PARTIAL)]}]})
    out = a.run("compare the regions", max_steps=2)
    last = a.server.requests[2]
    # The last request has no tools, and says why and what to do about it.
    assert not last.get("tools")
    note = last["messages"][-1]
    assert note["role"] == "user" and note["content"].startswith(STEP_BUDGET_MARKER)
    assert "2 model calls with tools" in note["content"] and "unfinished" in note["content"]
    # The turn says it ran out, in its summary and its turn_ended event; the note is not kept.
    assert out.status == "step_limited" and out.answer == PARTIAL
    assert out.message == "the step budget (2 model calls with tools) ran out; the answer says what is unfinished"
    (ended,) = a.of_type("turn_ended")
    assert (ended.status, ended.message) == ("step_limited", out.message)
    # The next turn is told the previous one ran out of steps, not that it completed.
    a.run("and now?", thread=out.thread_id)
    system = system_of(a.server.requests[3])
    assert "Previous turn (1): ran out of steps in 2 steps" in system and "completed" not in system.split(
        "Previous turn (1):")[1].split("\n")[0]
    assert STEP_BUDGET_MARKER not in json.dumps(a.server.requests[3]["messages"])


def test_an_empty_reply_after_a_step_ends_no_answer(analyst):
    # An Ollama-style empty reply after a tool result (no text, no calls, "stop"), and again
    # when the client asks once more (see test_llm_providers.py).
    a = analyst({"turns": [{"match": "^and now", "steps": [say("ok")]},
                           {"match": "last reply was empty", "steps": [{"content": "\n\n"}]},
                           {"match": "^compare", "steps": [LOOK[0], {}]}]})
    out = a.run("compare the regions")
    assert len(a.server.requests) == 3
    assert out.status == "no_answer" and out.answer == ""
    assert out.message.startswith("the model replied with nothing after its last step, also when asked again")
    assert [(e.status, e.message) for e in a.of_type("turn_ended")] == [("no_answer", out.message)]
    a.run("and now?", thread=out.thread_id)
    assert ("Previous turn (1): ended without an answer after step 1 (describe_table): "
            "the model's last reply said nothing.") in system_of(a.server.requests[3])


def test_calls_after_the_last_step_end_no_answer(analyst):
    # Tools are no longer offered, and the model calls them anyway, with no text.
    a = analyst({"turns": [{"steps": [LOOK[0], LOOK[1]]}]})
    out = a.run("compare the regions", max_steps=1)
    assert not a.server.requests[1].get("tools")
    assert out.status == "no_answer" and out.answer == ""
    assert out.message == "the model kept calling tools after its last step (none were offered) and gave no answer"
    assert [e.status for e in a.of_type("turn_ended")] == ["no_answer"]
