"""The settings of the engine and of the model, shared by the CLI, the server and the magics.

>>> AnalystConfig(workspace=".analyst").max_steps
16
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from ..agent import ContextBudget, LLMClient
from ..budgets import Budgets, parse_budgets
from ..errors import ConfigError
from ..kernel import OutputCaps, SandboxPolicy
from ..ledger import Price, parse_prices
from ..sql import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, EngineLimits

DEFAULT_MODEL = "gpt-4o-mini"
NO_MODEL_HINT = "set OPENAI_API_KEY (and OPENAI_BASE_URL for other servers), or try `jupyter analyst demo`"


class ModelSettings(BaseModel):
    """Which OpenAI-compatible endpoint and model answer."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    summary_model: str | None = None
    """The (cheaper) model of the end-of-turn summarizer; the main model when unset."""

    @classmethod
    def resolve(
        cls, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
        summary_model: str | None = None,
    ) -> ModelSettings:
        """Flags first, then ``OPENAI_*`` variables; a clear error when nothing is configured."""
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is None:
            raise ConfigError("no model is configured", reason="no_model", hint=NO_MODEL_HINT)
        # Local servers (vLLM, Ollama, llama.cpp) accept any key; the SDK insists on one.
        return cls(
            model=model or os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL,
            base_url=base_url,
            api_key=api_key or "not-needed",
            summary_model=summary_model or os.environ.get("ANALYST_SUMMARY_MODEL") or None,
        )

    @contextlib.asynccontextmanager
    async def client(self, *, summarizer: bool = False) -> AsyncIterator[LLMClient]:
        """A client of the endpoint (of the summarizer's model with ``summarizer``), closed after."""
        model = (self.summary_model or self.model) if summarizer else self.model
        # Made off the event loop: the first in a process imports the SDK and builds its TLS
        # context (a second and more), which would hold up everything else the loop serves.
        llm = await asyncio.to_thread(LLMClient, model=model, base_url=self.base_url, api_key=self.api_key)
        try:
            yield llm
        finally:
            await llm.aclose()


class AnalystConfig(BaseModel):
    """Settings of the engine shared by the CLI and the server."""

    workspace: Path | str = ".analyst"
    store: str | None = None
    """The database of threads, events and the inventory: ``None`` for the workspace's own
    SQLite file, or a ``postgresql://`` URL shared by several processes."""
    blobs: str | None = None
    """Where artifacts' bytes are kept: ``None`` for the workspace folder, or an
    ``s3://bucket/prefix`` URL (read through a verified cache in the workspace)."""
    blobs_endpoint: str | None = None
    """The S3 API's address for ``blobs`` (MinIO, Ceph...); default: ``AWS_ENDPOINT_URL`` or AWS."""
    context_dir: Path | str | None = None
    """The team's context folder (rules, dbt metrics and dimensions, verified queries); ``None``
    for ``context/`` beside the workspace folder, read when it exists."""
    max_steps: int = 16
    plan_concurrency: int = Field(default=4, ge=1, le=16,
                                  description="Queries of a staged plan's parallel stage that run at once.")
    context: ContextBudget = ContextBudget()
    """What each model call may carry: tokens, recent turns and messages, summary size."""
    active_ttl_s: float = 1_800.0
    """How long the active source, dataset and notebook stay authoritative without use."""
    summarizer: bool = True
    """Whether a model call after each turn updates the agent state and the rolling summary."""
    query_timeout_s: float = 60.0
    engine: EngineLimits = EngineLimits()
    """What a source's engine may use while it runs queries (DuckDB's memory, threads, spill)."""
    row_cap: int = 1_000_000
    python_timeout_s: float = 120.0
    sql_max_chars: int = Field(
        default=DEFAULT_MAX_CHARS, gt=0,
        description="Longer SQL from the model is refused unparsed (reason sql_too_large).",
    )
    sql_prepare_timeout_s: float = Field(
        default=DEFAULT_TIMEOUT_S, gt=0,
        description="Checking one query (parse, guard, qualify) may take this long, in a worker "
                    "process off the event loop; past it the query is refused (reason sql_too_complex).",
    )
    sandbox: SandboxPolicy = SandboxPolicy()
    outputs: OutputCaps = OutputCaps()
    """How much a step, and a thread in all, may add to the inventory."""
    turn_lease_s: float = Field(default=30.0, ge=1.0, description=(
        "On a shared (PostgreSQL) store: how long a running turn's lease lasts; its process renews it every "
        "third of that, and a turn whose lease ran out is closed as interrupted (see store/leases.py)."))

    prices: dict[str, Price] = {}
    """What each model's tokens cost, by model name (USD per million prompt and completion
    tokens); a model without a price gets tokens counted and no cost."""

    budgets: Budgets = Budgets()
    """Limits on the model's tokens or cost per user, thread and server, each per day or in
    all (see jupyter_analyst/budgets.py); none by default."""

    @field_validator("budgets", mode="before")
    @classmethod
    def _budgets(cls, value: Any) -> Budgets:
        return parse_budgets(value)

    @field_validator("prices", mode="before")
    @classmethod
    def _prices(cls, value: Any) -> dict[str, Price]:
        return parse_prices(value)

    def price_of(self, model: str) -> Price | None:
        """The price of ``model``'s tokens, if one is configured."""
        return self.prices.get(model)

    def context_folder(self, workspace_root: Path) -> Path:
        """The context folder a turn reads: the configured one, or ``context/`` beside the workspace."""
        if self.context_dir is not None:
            return Path(self.context_dir).expanduser()
        return workspace_root.parent / "context"

    def loop_settings(self) -> dict[str, Any]:
        """What the agent loop of a turn takes from the settings."""
        return {"max_steps": self.max_steps, "plan_concurrency": self.plan_concurrency, "budget": self.context,
                "active_ttl_s": self.active_ttl_s}
