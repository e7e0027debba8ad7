"""The parameters both MCP surfaces give their tools (the stand-alone server's and the tools
inside Jupyter's MCP server), each described as the client's model reads it in the schema.
Those that name other tools (whose names differ by surface) are each surface's own."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

Sql = Annotated[str, Field(description="One read-only SELECT (or WITH ... SELECT) in the source's SQL dialect.")]
Name = Annotated[str, Field(description=(
    "The dataset's name: a Python identifier, the DataFrame's name in the thread's Python."))]
Code = Annotated[str, Field(description="Python to run in the thread's kernel.")]
Prompt = Annotated[str, Field(description="The question, in plain words.")]
Rerun = Annotated[bool, Field(description=(
    "Run it again even when the thread already ran the same step (by default its result is reused)."))]
