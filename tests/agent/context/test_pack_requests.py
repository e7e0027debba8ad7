"""The context pack from the model's side: what the requests the scripted model receives hold.

Protected parts survive a small budget; the previous turn's end is stated; the system
message is the same bytes on every call of a turn; the inventory is stated once, as lines.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from jupyter_analyst.agent import ContextBudget
from jupyter_analyst.testing import call_step, python_step, sql_step as sql, text_step as say

OFFER = "I can split it by month next, or chart it. Want that?"
HYPOTHESIS = "North grows fastest because of the spring promotion"
TASK = "compare the regions per month"


def system_of(request):
    return request["messages"][0]["content"]


def requests_for(server, prompt):
    return [r for r in server.requests
            if [m for m in r["messages"] if m["role"] == "user"][-1]["content"] == prompt]


def many_datasets_turn(n: int) -> dict:
    steps = [sql(f"SELECT {i} AS k, COUNT(*) AS n FROM orders", f"count_with_a_long_descriptive_name_{i}")
             for i in range(n)]
    return {"match": "^count", "steps": [*steps, say(f"North leads (`count_with_a_long_descriptive_name_0`).\n\n{OFFER}")]}


def test_a_small_budget_keeps_the_protected_parts(analyst):
    remembered = {"add": [
        {"section": "hypotheses", "value": {"id": "h1", "text": HYPOTHESIS}},
        {"section": "items", "value": {"id": "t1", "kind": "task", "text": TASK}},
    ]}
    a = analyst({
        "turns": [{"match": "^continue", "steps": [say("ok")]}, many_datasets_turn(12)],
        "summarizer": [{"steps": [{"content": json.dumps(remembered)}]}],
    })
    budget = ContextBudget(tokens=1_000, state_chars=1_000)
    first = a.run("count things", context=budget)
    a.run("continue", thread=first.thread_id, context=budget)
    (request,) = requests_for(a.server, "continue")
    system = system_of(request)
    # Protected: how the last turn ended and what it offered, the open items, the hypotheses.
    assert f'Previous turn (1): completed in 12 steps. Its answer offered: "{OFFER}"' in system
    assert f"- task: {TASK}" in system and f"- {HYPOTHESIS}" in system
    # Cut to make room: the oldest datasets, never the protected parts.
    shown = re.findall(r"`count_with_a_long_descriptive_name_(\d+)`", system.split("Datasets")[-1])
    assert 0 < len(shown) < 12 and shown[-1] == "11"
    # The inventory is not there as JSON (timestamps, fingerprints, sizes).
    assert "fingerprint" not in system and "created_at" not in system and '{"id": "art_' not in system


def test_the_system_message_is_the_same_bytes_on_every_call_of_a_turn(analyst):
    a = analyst({"turns": [{"steps": [
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
        sql("SELECT COUNT(*) AS n FROM orders", "order_count"),
        say("`by_region` holds it."),
    ]}]})
    first = a.run("revenue by region")
    a.run("and again", thread=first.thread_id)
    turn_one, turn_two = a.server.requests[:3], requests_for(a.server, "and again")
    assert len(turn_one) == 3 and len({system_of(r) for r in turn_one}) == 1
    assert len({system_of(r) for r in turn_two}) == 1
    # The stable part (rules and schema) leads, the agent state (which changes) comes last.
    one, two = system_of(turn_one[0]), system_of(turn_two[0])
    common = len(next((i for i, (x, y) in enumerate(zip(one, two)) if x != y), min(len(one), len(two))) * "x")
    assert "Tables:" in one[:common] and "`by_region`" in two[common:]


def test_continue_after_an_interrupted_turn_says_where_it_stopped(analyst):
    from jupyter_analyst.workspace import Workspace

    a = analyst({"turns": [{"match": "^continue", "steps": [say("ok")]}, {"steps": [say("hello")]}]})
    first = a.run("what tables are there")
    ws = Workspace(a.workspace)
    turn = ws.store.start_turn(first.thread_id, "revenue by month, then a chart")
    call = {"id": "call_1", "type": "function", "function": {
        "name": "run_sql", "arguments": json.dumps({"name": "monthly", "sql": "SELECT 1"})}}
    for message in (
        {"role": "user", "content": turn.prompt},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps({"dataset": "monthly", "rows": 12})},
        {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "call_2", "function": {
            "name": "run_python", "arguments": json.dumps({"code": "monthly.plot()"})}}]},
    ):
        ws.store.append_message(first.thread_id, turn.turn_id, message)
    ws.store.end_turn(turn.turn_id, "interrupted")
    ws.close()
    a.run("continue", thread=first.thread_id)
    (request,) = requests_for(a.server, "continue")
    assert ("Previous turn (2): interrupted after step 1 (run_sql `monthly`); it gave no answer"
            in system_of(request))


def test_continue_after_a_turn_stopped_midway_says_after_which_step(analyst):
    """Stopped as the server stops a turn (its task cancelled) while the second step starts."""
    from jupyter_analyst.testing.model_server import MODEL_NAME
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn

    monthly = "SELECT DATE_TRUNC('month', order_date) AS month, SUM(revenue) AS revenue FROM orders GROUP BY 1"
    a = analyst({"turns": [
        {"match": "^continue", "steps": [say("ok")]},
        {"steps": [sql(monthly, "monthly"), python_step("monthly.plot()"), say("never said")]},
    ]})

    async def stopped_at_the_chart() -> None:
        def on_event(event) -> None:
            a.events.append(event)
            if event.type == "tool_call" and event.tool == "run_python":
                task.cancel()

        request = TurnRequest(prompt="revenue by month, then a chart", source=str(a.source))
        model = ModelSettings(model=MODEL_NAME, base_url=a.server.base_url, api_key="x")
        task = asyncio.create_task(run_turn(request, config=AnalystConfig(workspace=a.workspace), model=model,
                                            on_event=on_event))
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stopped_at_the_chart())
    (ended,) = a.of_type("turn_ended")
    assert ended.status == "interrupted"
    a.run("continue", thread=ended.thread_id)
    (request,) = requests_for(a.server, "continue")
    system = system_of(request)
    assert ("Previous turn (1): interrupted after step 1 (run_sql `monthly`); it gave no answer "
            "(the steps that finished are kept)." in system)
    # The finished step is kept and listed (described once: it is the active dataset); the
    # stopped one did not count as a step.
    assert re.search(r"^- `monthly` art_\w+: ", system, re.MULTILINE)
    assert system.count("from orders; measures: revenue = SUM(revenue)") == 1
    assert "never said" not in json.dumps(request["messages"])


def test_continue_after_a_completed_turn_says_so_with_its_offer_and_open_items(analyst):
    remembered = {"add": [
        {"section": "hypotheses", "value": {"id": "h1", "text": HYPOTHESIS}},
        {"section": "items", "value": {"id": "t1", "kind": "task", "text": TASK}},
    ]}
    a = analyst({
        "turns": [{"match": "^continue", "steps": [say("ok")]}, {"steps": [
            sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
            say(f"North leads (`by_region`).\n\n{OFFER}"),
        ]}],
        "summarizer": [{"steps": [{"content": json.dumps(remembered)}]}],
    })
    first = a.run("revenue by region")
    assert first.status == "completed"
    a.run("continue", thread=first.thread_id)
    (request,) = requests_for(a.server, "continue")
    system = system_of(request)
    assert f'Previous turn (1): completed in 1 step. Its answer offered: "{OFFER}"' in system
    assert "interrupted" not in system
    assert f"- task: {TASK}" in system.split("Open items:")[1]
    assert f"- {HYPOTHESIS}" in system


def test_the_active_dataset_is_the_one_the_answer_cited_and_lapses_on_a_new_topic(analyst):
    a = analyst({"turns": [
        {"match": "^(plot it|how many products|what have we done)", "steps": [say("ok")]},
        {"steps": [
            sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
            sql("SELECT COUNT(*) AS n FROM products", "product_count"),
            say("North leads (`by_region`); for scale, `product_count` products."),
        ]},
    ]})
    first = a.run("revenue by region")
    a.run("plot it", thread=first.thread_id)
    # The answer cited `by_region` first; the last step made `product_count`.
    assert "- active dataset: `by_region`" in system_of(requests_for(a.server, "plot it")[0])
    # A question that names nothing the thread knows is no new topic: it stays active.
    a.run("What have we done so far?", thread=first.thread_id)
    assert "- active dataset: `by_region`" in system_of(requests_for(a.server, "What have we done so far?")[0])
    # One that names another table of the source is.
    a.run("How many products are there?", thread=first.thread_id)
    system = system_of(requests_for(a.server, "How many products are there?")[0])
    assert "- active dataset:" not in system and "`by_region`" in system  # still listed, no longer active


def test_an_earlier_result_says_what_it_still_holds_and_an_earlier_error_keeps_its_last_line(analyst):
    rows = "SELECT range AS n FROM range(30)"
    failing = "import pandas as pd\n" + "x = 1\n" * 40 + "pd.DataFrame({'region': [1]})['regoin']"
    a = analyst({"turns": [
        {"match": "^and then", "steps": [say("done")]},
        {"match": ".", "steps": [sql(rows, "thirty"), python_step(failing), say("Thirty rows.")]},
    ]})
    first = a.run("thirty rows please")
    a.run("and then?", thread=first.thread_id)
    (request,) = requests_for(a.server, "and then?")
    earlier = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
    result = next(r for r in earlier if r.get("dataset") == "thirty")
    # Rows were cut from the history: it no longer says it is whole.
    assert len(result["data"]) < 30 and "all 30 rows" not in json.dumps(result)
    assert result["shown"].startswith("the first 12 of 30 rows")
    # The error keeps its end (what failed and the hint), not only the traceback's head.
    error = next(r for r in earlier if "error" in r)
    assert "KeyError: 'regoin'" in error["error"]["message"] and "closest: region" in error["error"]["message"]


def test_the_data_source_is_named_once(analyst):
    a = analyst({"turns": [{"steps": [
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
        say("North leads (`by_region`)."),
    ]}]})
    first = a.run("revenue by region")
    a.run("and by region again", thread=first.thread_id)
    for request in a.server.requests:
        system = system_of(request)
        # On the "Data source" line (with its kind), not again as the active source.
        assert system.count(a.source.name) == 1 and f"Data source: duckdb {a.source.name}\n" in system
        assert "- active source:" not in system


BY_REGION_NOTE = "from orders; measures: revenue = SUM(revenue); by: region_id; 5 rows"


@pytest.mark.parametrize("prompt", ["plot it", "How many products are there?"])
def test_a_dataset_is_described_once_in_a_request(analyst, prompt):
    """Active ("plot it"), the system message's active line describes it; no longer active (a
    new topic), its line in the dataset list does. The earlier result that made it points there."""
    a = analyst({"turns": [
        {"match": "^(plot it|how many products)", "steps": [say("ok")]},
        {"steps": [sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
                   say("North leads (`by_region`).")]},
    ]})
    first = a.run("revenue by region")
    a.run(prompt, thread=first.thread_id)
    (request,) = requests_for(a.server, prompt)
    assert json.dumps(request["messages"]).count(BY_REGION_NOTE) == 1
    assert BY_REGION_NOTE in system_of(request)
    (made,) = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
    assert made["dataset"] == "by_region" and made["intent_note"] == "described in the system message (`by_region`)"


def test_an_earlier_result_keeps_its_description_when_the_system_message_has_no_room_for_it(analyst):
    a = analyst({"turns": [{"match": "^continue", "steps": [say("ok")]}, many_datasets_turn(12)]})
    budget = ContextBudget(state_chars=1_000)
    first = a.run("count things", context=budget)
    a.run("continue", thread=first.thread_id, context=budget)
    (request,) = requests_for(a.server, "continue")
    system = system_of(request)
    made = {r["dataset"]: r["intent_note"] for r in
            (json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool")}
    assert len(made) == 12
    for name, note in made.items():
        # Pointed to only where the system message does describe it (the oldest lines were cut).
        described = re.search(rf"`{name}` \(?art_\w+: from orders", system) is not None
        assert note == (f"described in the system message (`{name}`)" if described else note)
        assert described or note.startswith("from orders")
    assert 0 < sum(n.startswith("described") for n in made.values()) < 12


def test_an_earlier_question_is_shown_as_the_user_saw_it_and_once_as_asked(analyst):
    """The answer says the question as the user read it and the previous turn's line quotes
    it once; the clarify call and its result, which would say it a third time, are not sent."""
    from jupyter_analyst.testing import call_step as tool

    question = 'Which "revenue" do you mean?'
    a = analyst({"turns": [
        {"match": "^gross", "steps": [say("ok")]},
        {"steps": [tool("clarify", question=question, candidates=["gross revenue", "net revenue"])]},
    ]})
    asked = a.run("which revenue is biggest?")
    a.run("gross, please", thread=asked.thread_id)
    (request,) = requests_for(a.server, "gross, please")
    history = request["messages"][1:]
    assert not [m for m in history if m["role"] == "tool" or m.get("tool_calls")]
    # The numbered form the user read is the answer's, once.
    assert json.dumps(history).count("1. gross revenue") == 1
    # Twice in all: the previous turn's line and the answer the user read.
    assert json.dumps(request["messages"]).count("gross revenue") == 2
    # Quoted with its own quotes escaped: where the question ends stays plain.
    assert 'the question it asked: "Which \\"revenue\\" do you mean?" (candidates: gross revenue | net revenue)' in system_of(request)


LONG_SQL = ("SELECT region_id, SUM(revenue) AS total_revenue, AVG(revenue) AS average_revenue, "
            "MIN(revenue) AS smallest_order, MAX(revenue) AS largest_order, COUNT(*) AS order_count "
            "FROM orders WHERE revenue > 0 AND region_id IS NOT NULL GROUP BY region_id")


@pytest.mark.parametrize("prompt", ["plot it", "How many products are there?"])
def test_a_long_description_is_described_once_never_cut_beside_its_whole_copy(analyst, prompt):
    """A description longer than an earlier result's text cap is pointed to like a short one:
    the comparison is made on the whole description, before the result is shortened."""
    a = analyst({"turns": [
        {"match": "^(plot it|how many products)", "steps": [say("ok")]},
        {"steps": [sql(LONG_SQL, "region_stats"), say("North leads (`region_stats`).")]},
    ]})
    first = a.run("order statistics by region")
    (note,) = [e.result["intent_note"] for e in a.of_type("tool_result") if e.tool == "run_sql"]
    assert len(note) > 210  # longer than the cap an earlier result's text is cut to
    a.run(prompt, thread=first.thread_id)
    (request,) = requests_for(a.server, prompt)
    sent = json.dumps(request["messages"])
    assert note in system_of(request) and sent.count(json.dumps(note)[1:-1]) == 1
    (made,) = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]
    assert made["intent_note"] == "described in the system message (`region_stats`)"
    assert "not shown" not in sent


def test_a_confirmed_expectation_says_what_held_in_the_fields_own_name(analyst):
    a = analyst({"turns": [{"steps": [
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region",
            expect={"rows": 5, "columns": ["revenue"]}),
        say("ok"),
    ]}]})
    a.run("revenue by region")
    (told,) = [json.loads(m["content"]) for m in a.server.requests[1]["messages"] if m["role"] == "tool"]
    assert told["expectation"] == {"status": "confirmed", "rule": "rows and columns",
                                   "detail": "5 rows, as expected; columns revenue present"}


def test_the_state_names_no_host_notebook_path_and_says_when_no_dataset_is_active(analyst):
    a = analyst({"turns": [
        {"match": "^How many products", "steps": [say("ok")]},
        {"steps": [sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
                   say("North leads (`by_region`).")]},
    ]})
    first = a.run("revenue by region")
    a.run("How many products are there?", thread=first.thread_id)  # a new topic: no dataset is active
    (request,) = requests_for(a.server, "How many products are there?")
    system = system_of(request)
    assert "notebook.ipynb" not in system and str(a.workspace) not in system
    assert "- no active dataset when this turn began: ask or use find when the user refers to something loosely" in system
    assert "`by_region`" in system  # still listed among the datasets


WIDE_SQL = ("WITH paid AS (SELECT region_id, revenue FROM orders WHERE revenue > 0 AND region_id IS NOT NULL) "
            "SELECT region_id, COUNT(*) AS order_count, "
            + ", ".join(f"SUM(CASE WHEN revenue > {low} AND revenue <= {low * 10} THEN revenue ELSE 0 END) "
                        f"AS revenue_of_orders_above_{low}" for low in (1, 10, 100, 1000, 10000, 100000, 1000000))
            + " FROM paid GROUP BY region_id HAVING COUNT(*) > 1")


def _named_tools(text: str) -> set[str]:
    from jupyter_analyst.agent.tools import TOOL_NAMES

    return {name for name in TOOL_NAMES if re.search(rf"\b{name}\b", text)}


def test_every_tool_a_request_names_is_one_it_offers(analyst):
    """A pointer to a tool the request does not offer costs a round trip on an unknown-tool
    error: a shortened description, a find that matched nothing and an unknown table point
    only to tools offered on every call (a thread's first turn offers no list_artifacts)."""
    a = analyst({"turns": [{"steps": [
        sql(WIDE_SQL, "region_mix"),
        call_step("find", query="zebra giraffe"),
        call_step("describe_table", table="ordrs"),
        say("ok"),
    ]}]})
    a.run("order mix by region")
    (note,) = [e.result["intent_note"] for e in a.of_type("tool_result") if e.tool == "run_sql"]
    assert 'shortened to fit (full SQL: find "region_mix" with_code=true)' in note
    requests = [r for r in a.server.requests if r.get("tools")]
    assert len(requests) == 4
    for request in requests:
        offered = {t["function"]["name"] for t in request["tools"]}
        assert "list_artifacts" not in offered
        texts = [m["content"] for m in request["messages"] if isinstance(m.get("content"), str)]
        named = set().union(*(_named_tools(t) for t in texts))
        assert named <= offered, named - offered


def test_tool_results_carry_their_characters_not_ascii_escapes(analyst):
    """A model reads "→" and "Zürich", not "\\u2192" and "Z\\u00fcrich"."""
    a = analyst({"turns": [{"steps": [
        sql(WIDE_SQL, "region_mix"),
        python_step('print("Zürich →")'),
        say("ok"),
    ]}]})
    out = a.run("order mix by region")
    assert out.status == "completed"
    last = a.server.requests[-1]
    contents = [m["content"] for m in last["messages"] if m["role"] == "tool"]
    assert len(contents) == 2
    described, printed = contents
    assert "…" in described and "\\u2026" not in described
    assert "Zürich →" in printed and "\\u" not in printed


def test_a_lone_surrogate_in_a_tool_result_is_sent_as_a_replacement_character():
    """Without ASCII escapes a lone surrogate would be sent as such, which UTF-8 cannot
    encode: the request would fail in the HTTP client, far from where the text came in."""
    from jupyter_analyst.agent.context.pack import compact_tool_message

    message = {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"stdout": "a \ud800 → b"})}
    content = compact_tool_message(message)["content"]
    assert content.encode("utf-8") and "a \ufffd → b" in content


def test_the_rules_point_to_lists_of_what_exists_only_as_far_as_there_are_any(analyst):
    """A literal model looks for a list the rules say follows: on a thread's first call there
    is none, and the rule says they are listed once steps have made them."""
    a = analyst({"turns": [{"steps": [
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"), say("ok"),
    ]}]})
    first = a.run("revenue by region")
    a.run("and again", thread=first.thread_id)
    opening, later = system_of(a.server.requests[0]), system_of(requests_for(a.server, "and again")[0])
    assert "Datasets (DataFrames in the kernel)" not in opening
    assert "listed below are already made" not in opening
    assert "once steps have made datasets and artifacts, they are listed below" in opening
    assert "Datasets (DataFrames in the kernel)" in later and "`by_region`" in later


def test_no_request_carries_a_path_of_this_machine(analyst, sales_db, tmp_path):
    # The model provider sees every request: the data file, the workspace (kernels, blobs)
    # and their folders are named, never located: in the rules, the schema, the agent state,
    # tool results and errors, in a first turn, the next, and a chat turn.
    steps = [call_step("list_tables"), call_step("describe_table", table="orders"),
             call_step("describe_table", table="nope"),
             sql("SELECT region, COUNT(*) AS n FROM orders GROUP BY region", "by_region"),
             sql("SELECT * FROM read_csv('/etc/passwd')", "stolen"),
             python_step("import matplotlib.pyplot as plt\nplt.bar(by_region.region, by_region.n)\nplt.show()"),
             python_step("open('missing.csv')"), say("North leads (`by_region`).")]
    a = analyst({"turns": [{"match": "^hello", "steps": [say("Hi.")]},
                           {"match": "^again", "steps": [say("Still North.")]},
                           {"match": "^compare", "steps": steps}]})
    first = a.run("compare the regions")
    a.run("again, please", thread=first.thread_id)
    a.run("hello", thread=first.thread_id)
    assert len(a.server.requests) == len(steps) + 2
    system = system_of(a.server.requests[0])
    assert "Data source: duckdb sales.duckdb\n" in system
    for request in a.server.requests:
        sent = json.dumps(request)
        for place in (str(sales_db.parent), str(tmp_path), str(sales_db.parent.parent)):
            assert place not in sent, sent[max(0, sent.find(place) - 300):sent.find(place) + 100]


def test_the_system_message_gives_the_turns_date_and_a_turn_on_the_next_day_still_reuses_its_steps(analyst):
    from datetime import UTC, datetime

    from jupyter_analyst import _clock

    a = analyst({"turns": [{"steps": [
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "by_region"),
        say("`by_region` holds it."),
    ]}]})
    with _clock.moved(lambda: datetime(2026, 4, 30, 23, 59, tzinfo=UTC)):
        first = a.run("revenue by region")
    with _clock.moved(lambda: datetime(2026, 5, 1, 0, 1, tzinfo=UTC)):
        second = a.run("revenue by region", thread=first.thread_id)
    one, two = (system_of(requests_for(a.server, "revenue by region")[i]) for i in (0, 2))
    assert "Today is Thursday 2026-04-30 (UTC, the date this turn began)." in one
    assert "Today is Friday 2026-05-01" in two and "2026-04-30" not in two
    # The date is prompt text only: the same step on the next day is the same step.
    assert first.tool_calls["executed"] == 1
    assert second.tool_calls == {"executed": 0, "reused": 1, "blocked": 0}
