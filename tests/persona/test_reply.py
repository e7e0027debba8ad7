"""A turn's events as the chat message the Analyst persona posts (no Jupyter AI needed)."""

from __future__ import annotations

from jupyter_analyst.events import AnswerReady, ArtifactRecorded, PlanMade, PlanStageView, PlanStepView, StateChanged, TextDelta, ToolResult, TurnEnded
from jupyter_analyst.persona.chat_message import PANEL_COMMAND, PANEL_LINK, ChatReply, open_link
from jupyter_analyst.untrusted import markdown_inline


def test_the_message_lists_what_the_turn_made_with_the_thread_to_open():
    reply = ChatReply("thr_1")
    reply.apply(TextDelta(text="Revenue by region:"))
    reply.apply(ArtifactRecorded(artifact_id="art_1", name="by_region", artifact_type="dataset", fingerprint="f",
                                 created=True))
    reply.apply(ArtifactRecorded(artifact_id="art_2", name="outputs/chart.png", artifact_type="image", fingerprint="g",
                                 created=False))
    reply.apply(PlanMade(call_id="c1", goal="compare regions", stages=[PlanStageView(mode="parallel", steps=[
        PlanStepView(id="q1", call_id="c1.q1", tool="run_sql", summary="a"),
        PlanStepView(id="q2", call_id="c1.q2", tool="run_sql", summary="b")])]))
    reply.apply(TurnEnded(status="completed"))
    assert reply.body.split("\n\n") == [
        "Revenue by region:",
        "- dataset `by_region` (new, `art_1`)\n- chart `outputs/chart.png` (reused, `art_2`)\n"
        "- plan of 2 steps in 1 stages: compare regions",
        f"*Thread `thr_1`: its datasets, charts and plans are in the Data analyst panel (command `{PANEL_COMMAND}`).*",
        open_link("thr_1"),
    ]


def test_names_and_messages_the_model_wrote_are_inert():
    reply = ChatReply("thr_1")
    reply.apply(ArtifactRecorded(artifact_id="art_1", name="x`<img src=y onerror=alert(1)>`", artifact_type="file",
                                 fingerprint="f", created=True))
    reply.apply(ToolResult(call_id="c", tool="run_python", status="error",
                           result={"error": {"message": "[click](http://attacker.example) <script>"}}))
    reply.apply(TurnEnded(status="interrupted", message="cancelled <b>now</b>"))
    # The one link is the message's own, last: none in what the model wrote.
    body, own = reply.body.rsplit("\n\n", 1)
    assert own == open_link("thr_1")
    assert "<img" not in body and "<script>" not in body and "](" not in body and "<b>" not in body
    assert f"*The turn ended: interrupted ({markdown_inline('cancelled <b>now</b>')})*" in body


def test_the_answer_replaces_the_streamed_words():
    reply = ChatReply("thr_1")
    reply.apply(TextDelta(text="Let me look. "))
    assert not reply.apply(StateChanged(from_state="planning", to_state="analyzing"))  # not shown
    reply.apply(AnswerReady(text="North leads."))
    assert reply.body.startswith("North leads.\n\n")


def test_the_open_link_is_a_fragment_the_panel_takes_not_a_command_link():
    """A command link in a chat's message (untrusted content) makes JupyterLab ask "Run
    Command?" with a not-trusted warning; the link is a plain fragment the panel's extension
    takes (src/widgets/threadLinks.ts reads the same prefix: ``PANEL_LINK``)."""
    body = ChatReply("thr_1").body
    assert "commandlinker" not in body and "<button" not in body
    assert body.endswith("\n\n[Open in the Data analyst panel](#jupyter-analyst-thread=thr_1)")
    assert open_link("thr_1") == f"[Open in the Data analyst panel]({PANEL_LINK}thr_1)"
    # Whatever a thread id holds, it stays inside the link's target.
    assert open_link("t)](http://x") == "[Open in the Data analyst panel](#jupyter-analyst-thread=t%29%5D%28http%3A%2F%2Fx)"


def test_a_chart_is_shown_from_the_servers_own_content_route_and_a_dataset_as_a_table():
    reply = ChatReply("thr_1", base_url="/user/ann/")
    reply.apply(ArtifactRecorded(artifact_id="art_2", name="](http://attacker.example/x.png) chart.png",
                                 artifact_type="image", fingerprint="g", created=True))
    reply.apply(ToolResult(call_id="c", tool="run_sql", status="ok", result={
        "dataset": "by_region", "artifact_id": "art_1", "rows": 40,
        "columns": [{"name": "region"}, {"name": "note"}],
        "sample": [["North", "[x](http://attacker.example)"], ["South", "<img src=x onerror=alert(1)>"]]}))
    body = reply.body
    images = [line.strip() for line in body.splitlines() if line.strip().startswith("![")]
    assert images == ["![chart](/user/ann/analyst/api/artifacts/art_2/content)"]
    table = body.split("`by_region`, first 2 of 40 rows:\n\n", 1)[1].split("\n\n")[0].splitlines()
    assert table[:2] == ["| region | note |", "| --- | --- |"] and table[2].startswith("| North | \\[x\\]")
    # The name the model chose stays a code span; the data's own text is escaped in its cells.
    assert "- chart `](http://attacker.example/x.png) chart.png` (new, `art_2`)" in body
    assert "<img" not in body and not any("](http" in row for row in table)


def test_without_the_servers_address_a_chart_is_listed_only():
    reply = ChatReply("thr_1")
    reply.apply(ArtifactRecorded(artifact_id="art_2", name="chart.png", artifact_type="image", fingerprint="g",
                                 created=True))
    assert "![" not in reply.body and "chart `chart.png` (new, `art_2`)" in reply.body
