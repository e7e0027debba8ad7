"""What the model is told of a Python step's output and errors, read from its next request."""

from __future__ import annotations

import json

from jupyter_analyst.agent.spec.outcome import MODEL_TEXT_CAP
from jupyter_analyst.testing import python_step, text_step


def told(server, request: int = 1) -> dict:
    tool = [m for m in server.requests[request]["messages"] if m["role"] == "tool"]
    return json.loads(tool[-1]["content"])


def test_a_long_print_keeps_its_head_and_its_conclusion(analyst):
    code = "for i in range(2000):\n    print(f'row {i}: ' + 'x' * 20)\nprint('CONCLUSION: the answer is 42')"
    a = analyst({"turns": [{"steps": [python_step(code), text_step()]}]})
    a.run("print a lot")
    stdout = told(a.server)["stdout"]
    assert stdout.startswith("row 0: ")
    assert stdout.rstrip().endswith("CONCLUSION: the answer is 42")
    assert len(stdout) < MODEL_TEXT_CAP + 300
    # The middle is said to be left out: how much, which lines, and how to see it.
    marker = next(line for line in stdout.splitlines() if line.startswith("[..."))
    assert "characters (lines " in marker and "not shown" in marker and "print less at once" in marker
    # Whole lines only on each side of the gap.
    kept = [line for line in stdout.splitlines() if not line.startswith("[...")]
    assert all(line.startswith("row ") and line.endswith("x" * 20) for line in kept[:-1])


def test_a_long_print_is_not_an_error(analyst):
    """Printing fast while the kernel sends what was printed before ends well (a buffer the
    kernel's sending thread had just closed made the print itself fail)."""
    code = "for i in range(20000):\n    print(i)\nprint('done')"
    a = analyst({"turns": [{"steps": [python_step(code), text_step()]}]})
    a.run("print fast")
    result = told(a.server)
    assert "error" not in result, result.get("error")
    assert result["stdout"].rstrip().endswith("19999\ndone")


REVENUE_SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
               "ON o.region_id = r.region_id GROUP BY r.region")


def test_a_key_error_on_a_dataframe_lists_its_columns(analyst):
    from jupyter_analyst.testing import sql_step

    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "by_region"),
                                      python_step("top = by_region.sort_values('revenue')\nprint(top['revnue'].sum())"),
                                      text_step()]}]})
    a.run("a typo in a column")
    message = told(a.server, 2)["error"]["message"]
    # The line of the model's own code, the error, and the real columns, closest first.
    assert "print(top['revnue'].sum())" in message
    assert "KeyError: 'revnue'" in message
    assert "Hint: the DataFrame's columns (2): region, revenue; closest: revenue" in message
    # pandas' own frames are counted, not shown.
    assert "frames inside pandas not shown" in message and "get_loc" not in message
    assert len(message) < 600


# A name read where the host's check of the names a step reads does not look (that check
# refuses a plain undefined name before the step runs, with the nearest real names).
NAME_TYPO = "print(len(eval('by_regoin')))"


def test_name_and_attribute_errors_say_what_exists(analyst):
    from jupyter_analyst.testing import sql_step

    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "by_region"), python_step(NAME_TYPO),
                                      python_step("print(by_region.revenu.sum())"), text_step()]}]})
    a.run("typos in names")
    name_error = told(a.server, 2)["error"]["message"]
    assert "NameError: name 'by_regoin' is not defined" in name_error
    assert "closest defined names: by_region" in name_error and "DataFrames defined: by_region" in name_error
    attribute_error = told(a.server, 3)["error"]["message"]
    assert "'DataFrame' object has no attribute 'revenu'" in attribute_error
    assert "the DataFrame's columns (2): region, revenue; closest: revenue" in attribute_error
