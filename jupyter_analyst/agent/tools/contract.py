"""The tool definitions the model is given: the canonical tool contract of DESIGN.md.

The descriptions are prompts: the model reads them to decide what to call and how, so they
say what each tool is for, what it returns, and that finished work is reused, not redone.
"""

from __future__ import annotations

from typing import Any

TOOL_NAMES = ("list_tables", "describe_table", "run_sql", "run_python", "plan", "list_artifacts", "find",
              "read_cells", "clarify")

_EXPECT: dict[str, Any] = {
    "type": "object",
    "description": (
        "Optional: what you expect the step to produce. It is checked against the real result and "
        "any mismatch is reported back to you, so state only what you are sure of."
    ),
    "properties": {
        "rows": {"type": "integer", "minimum": 0, "description": "the exact number of rows expected"},
        "count": {
            "type": "integer", "minimum": 0,
            "description": "the exact number of artifacts a Python step should make (charts, files)",
        },
        "columns": {
            "type": "array", "items": {"type": "string"},
            "description": "column names the result must have",
        },
        "artifact_type": {
            "type": "string", "enum": ["dataset", "image", "file", "text"],
            "description": "the kind of artifact the step must produce",
        },
        "artifact_ids": {
            "type": "array", "items": {"type": "string"},
            "description": "ids of existing artifacts the step is expected to reuse or produce",
        },
    },
    "additionalProperties": False,
}


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """One OpenAI ``tools`` entry of type ``function``."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object", "properties": properties, "required": required, "additionalProperties": False,
            },
        },
    }


TOOLS: list[dict[str, Any]] = [
    _tool(
        "list_tables",
        "List the tables and views of the data source, with their row counts. Call it first when you "
        "do not know the schema yet; never guess table names.",
        {},
        [],
    ),
    _tool(
        "describe_table",
        "Show one table's columns with their types, its row count and a few sample rows. Use it "
        "before writing SQL against a table whose columns you have not seen.",
        {"table": {"type": "string", "description": "the table's name exactly as list_tables gives it"}},
        ["table"],
    ),
    _tool(
        "run_sql",
        "Run ONE read-only SQL query (SELECT, optionally with CTEs) against the data source. The "
        "result is stored as a dataset artifact and loaded into the Python kernel as a pandas "
        "DataFrame named `name`. Returns the artifact id, row count, columns, dtypes and sample rows, "
        "and `reused: true` when the same query already ran (the existing dataset is used as is). "
        "Writes, DDL and several statements at once are refused; unknown tables or columns are "
        "refused with the nearest real names.",
        {
            "sql": {"type": "string", "description": "one SELECT query, as plain SQL without Markdown fences"},
            "name": {
                "type": "string",
                "description": "the DataFrame's variable name in Python, a valid identifier such as monthly_revenue",
            },
            "expect": _EXPECT,
        },
        ["sql", "name"],
    ),
    _tool(
        "run_python",
        "Run Python code in the Jupyter kernel where every dataset from run_sql is a pandas DataFrame "
        "under its name; pandas is imported as pd and matplotlib.pyplot as plt. Print what you "
        "need to see. Figures you show (plt.show()) and files you write under outputs/ become artifacts. "
        "Returns stdout, errors with the traceback, new artifact ids, and `reused: true` when identical "
        "code already ran on the same inputs. Query data with run_sql, not from Python.",
        {
            "code": {"type": "string", "description": "the Python source, as plain code without Markdown fences"},
            "expect": _EXPECT,
        },
        ["code"],
    ),
    _tool(
        "plan",
        "Run several run_sql and run_python steps in one call, in stages, when the request needs "
        "several datasets. Stages run in order; the steps of a 'parallel' stage are independent and "
        "their queries run at the same time; a 'sequence' stage runs its steps in order. A step lists "
        "in 'inputs' the ids of the steps it needs (from earlier stages). The whole plan is checked "
        "before anything runs. Each step is an ordinary run_sql or run_python call (same checks, same "
        "reuse of identical steps); a step that fails fails only the steps that need it. Returns each "
        "step's status and result. For a single query or a single piece of code, call run_sql or "
        "run_python directly.",
        {
            "goal": {"type": "string", "description": "what the plan is for, in one sentence"},
            "stages": {
                "type": "array", "minItems": 1, "maxItems": 8,
                "description": "the stages, in the order they run (at most 8, with at most 16 steps in all)",
                "items": {
                    "type": "object",
                    "properties": {
                        "mode": {"type": "string", "enum": ["parallel", "sequence"]},
                        "steps": {
                            "type": "array", "minItems": 1,
                            "items": {
                                "type": "object",
                                "properties": {
                                    "id": {"type": "string", "description": "a short id such as q1, unique in the plan"},
                                    "tool": {"type": "string", "enum": ["run_sql", "run_python"]},
                                    "arguments": {
                                        "type": "object",
                                        "description": "the tool's arguments: {sql, name} for run_sql, {code} for run_python",
                                    },
                                    "inputs": {
                                        "type": "array", "items": {"type": "string"},
                                        "description": "ids of the steps this one needs",
                                    },
                                },
                                "required": ["id", "tool", "arguments"],
                                "additionalProperties": False,
                            },
                        },
                    },
                    "required": ["mode", "steps"],
                    "additionalProperties": False,
                },
            },
        },
        ["stages"],
    ),
    _tool(
        "list_artifacts",
        "List this conversation's artifacts (datasets, charts, files, texts): id, name, type, the step "
        "that produced it, content fingerprint and creation time. Check it before redoing work: an "
        "artifact that exists can be used directly.",
        {
            "type": {
                "type": "string", "enum": ["dataset", "image", "file", "text"],
                "description": "only artifacts of this type",
            },
            "name": {"type": "string", "description": "only artifacts whose name contains this text"},
        },
        [],
    ),
    _tool(
        "find",
        "Look up a table, column, dataset or artifact the user named loosely (\"the sales table\", "
        "\"that chart\", \"revenue by month\"). Fuzzy search over the data source's tables and "
        "columns and this conversation's datasets and artifacts; returns the best matches with "
        "their exact names and ids. Use it instead of guessing a name.",
        {
            "query": {"type": "string", "description": "the words the user used"},
            "kind": {
                "type": "string", "enum": ["table", "column", "dataset", "artifact"],
                "description": "only this kind of thing",
            },
        },
        ["query"],
    ),
    _tool(
        "read_cells",
        "Read cells of the user's notebook by their ids, as the notebook outline in the system "
        "message lists them: each cell's source and a short text of its outputs. Read only the "
        "few cells you need (what a variable holds, how a chart was made), never the whole notebook.",
        {
            "cell_ids": {
                "type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 20,
                "description": "ids from the notebook outline",
            },
        },
        ["cell_ids"],
    ),
    _tool(
        "clarify",
        "Ask the user to choose when the request can reasonably mean different things and the "
        "choice changes the result (which measure, which period, which table). Give the "
        "question and the candidate interpretations; the turn ends with the question. Do not "
        "use it when the request is clear: act instead.",
        {
            "question": {"type": "string", "description": "one short question to the user"},
            "candidates": {
                "type": "array", "items": {"type": "string"},
                "description": "the interpretations to choose from, each a short phrase",
            },
        },
        ["question", "candidates"],
    ),
]
