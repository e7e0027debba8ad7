"""The Jupyter server extension: the analysis API over the same engine the CLI uses.

A Jupyter server imports this module at every start (and ``jupyter server extension list``
imports it to list it), whether or not anyone opens the panel: it imports only what the
class's traits need. What the server runs is imported by the hooks that build it
(``initialize_settings``, ``initialize_handlers``), and the turn engine itself only when a
client first asks for it (see engine.py).
"""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp
from tornado.ioloop import IOLoop
from typing import Any

from traitlets import Bool, Dict, Float, Int, List, TraitError, Unicode, validate


class AnalystApp(ExtensionApp):
    """jupyter-analyst inside a Jupyter server (``c.AnalystApp.*`` configures it)."""

    name = "jupyter_analyst"

    workspace = Unicode(".analyst", config=True, help="Folder holding threads, events, the inventory and artifacts.")
    store_url = Unicode("", config=True, help="Database of threads, events and the inventory: a postgresql:// URL "
                        "that several server processes share (default: the workspace's own SQLite file).")
    blobs_url = Unicode("", config=True, help="Where artifacts' bytes are kept: an s3://bucket/prefix URL, read "
                        "through a verified cache in the workspace (default: the workspace folder).")
    blobs_endpoint_url = Unicode("", config=True, help="The S3 API's address for blobs_url (MinIO, Ceph...; "
                                 "default: $AWS_ENDPOINT_URL, else AWS).")
    context_dir = Unicode("", config=True, help="The team's context folder: rules.md, dbt metrics and dimensions "
                          "(*.yml), verified queries (queries/*.sql) (default: context/ beside the workspace folder, "
                          "read when it exists).")
    context_editors = List(Unicode(), default_value=None, allow_none=True, config=True,
                           help="Who may add to the context folder (verify an answer): user names, and JupyterHub "
                                "groups as 'group:NAME'. Default: the server's own user only (the token holder of a "
                                "single-user server, or the Hub user it was started for); everyone else gets 403.")
    model = Unicode("", config=True, help="Model name (default: $OPENAI_MODEL, else gpt-4o-mini).")
    model_base_url = Unicode("", config=True, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL).")
    api_key = Unicode("", config=True, help="API key of the endpoint (default: $OPENAI_API_KEY).")
    sources = Dict(value_trait=Unicode(), key_trait=Unicode(), default_value={}, config=True,
                   help="Named data sources: {name: path or SQLAlchemy URL}. The first is the default. "
                        "Clients name these sources; the API never shows their paths or URLs.")
    allow_any_source = Bool(False, config=True,
                            help="Let clients name any path or URL on the server as a data source, not only the "
                                 "names in `sources` (off: any other name gets 400 with the configured names).")
    jupyter_mcp_tools = Bool(False, config=True,
                             help="Answer calls of the analyst's tools in Jupyter's own MCP server (jupyter-server-mcp). "
                                  "That server listens on a port of its own, outside the Jupyter server's token: any "
                                  "process of any user of this machine that reaches it may call them. Off: they are "
                                  "listed there but refuse to run.")
    jupyter_mcp_wait = Float(600.0, min=0.0, config=True,
                             help="Seconds a step of the analyst's tools in Jupyter's MCP server waits for the "
                                  "thread's running turn (the panel's, or its own earlier steps) before it is "
                                  "refused (turn_in_progress) with nothing run.")
    max_prompt_bytes = Int(100_000, min=1, config=True,
                           help="Largest prompt a turn takes, in bytes of UTF-8 (larger: 413 prompt_too_large).")
    max_body_bytes = Int(1 << 20, min=1, config=True,
                         help="Largest JSON request body of the API, in bytes (larger: 413 body_too_large).")
    sandbox = Bool(True, config=True, help="Run kernels in the bubblewrap sandbox (see `jupyter analyst doctor`).")
    memory_mb = Int(4096, config=True, help="Memory limit of each kernel, in MiB.")
    processes = Int(256, config=True, help="Processes and threads allowed per kernel.")
    python_timeout = Float(120.0, config=True, help="Seconds one Python step may run before it is interrupted.")
    query_timeout = Float(60.0, config=True, help="Seconds one SQL query may run before it is stopped.")
    sql_memory_mb = Int(0, min=0, config=True,
                        help="Memory one DuckDB source may use for a turn's queries, in MiB (past it a query spills "
                             "to disk, then fails with a clear error); 0: a quarter of the machine's memory.")
    row_cap = Int(1_000_000, config=True, help="Rows kept from one query; the rest is dropped and reported.")
    max_steps = Int(16, config=True, help="Model calls allowed per turn before it must answer.")
    plan_concurrency = Int(4, min=1, max=16, config=True,
                           help="Queries of a staged plan's parallel stage that run at once (each on its own cursor).")
    gateway_kernel = Unicode("python3", config=True,
                             help="Kernelspec started for threads when the server's kernels run on a gateway "
                                  "(--gateway-url): a Python with pandas and pyarrow, isolated by the gateway's "
                                  "process proxy (the bubblewrap sandbox is not applied there).")
    pool_size = Int(1, config=True, help="Prestarted sandboxed kernels kept warm for new threads (0: none).")
    pool_idle = Float(600.0, config=True, help="Seconds a warm kernel may wait unused before it is stopped.")
    kernel_idle = Float(1800.0, min=0.0, config=True,
                        help="Seconds a thread's kernel lives on unused after its turn before it is stopped (its "
                             "thread's next Python step starts one and restores only what that step reads).")
    max_kernels = Int(32, min=0, config=True,
                      help="Threads' kernels kept alive between turns on this server; past it the least recently "
                           "used idle ones are stopped (0: a kernel stops when its turn ends).")
    max_kernels_per_user = Int(8, min=0, config=True,
                               help="Threads' kernels kept alive between turns for one user; past it that user's "
                                    "least recently used idle ones are stopped.")
    turn_lease = Float(30.0, min=1.0, config=True,
                       help="On a shared (PostgreSQL) store: seconds a running turn's lease lasts; its process renews it "
                            "every third of that. A turn whose process stops renewing (killed, cut off) is marked "
                            "interrupted by any server once it runs out.")
    summarizer = Bool(True, config=True, help="After each turn, a model call updates the agent state and the rolling summary.")
    summary_model = Unicode("", config=True, help="Model of the summarizer (default: $ANALYST_SUMMARY_MODEL, else the main model).")
    context_tokens = Int(16_000, config=True, help="Token budget of each model call's prompt (estimated, 4 characters each).")
    active_ttl = Float(1800.0, config=True, help="Seconds the active source, dataset and notebook stay authoritative unused.")
    prices = Dict(key_trait=Unicode(), default_value={}, config=True,
                  help='What each model\'s tokens cost, in USD per million tokens: {model name: {"prompt": USD, '
                       '"completion": USD}} or {model name: "PROMPT/COMPLETION"}, e.g. {"gpt-4o-mini": "0.15/0.60"}. '
                       "A turn of a priced model shows its cost; without a price, tokens only.")

    budgets = Dict(key_trait=Unicode(), default_value={}, config=True,
                   help='Spending limits checked before each model call: {"user/day": LIMIT, "thread": LIMIT, '
                        '"server/day": LIMIT, ..., "timezone": "UTC"}. Scopes: user, thread, server, each per day '
                        '(/day, reset at midnight of the timezone) or in all. LIMIT: "N tokens" (200k, 2M), "$X" '
                        '(needs a price of the model), both comma-joined, or {"tokens": N, "usd": X}. A turn past '
                        "one ends budget_exhausted; GET analyst/api/budget shows what is left.")
    budget_admins = List(Unicode(), default_value=[], config=True,
                         help="Users who may read every user's spending (GET analyst/api/budget/users), besides the "
                              "server's owner.")

    @validate("budgets")
    def _valid_budgets(self, proposal: Any) -> dict[str, Any]:
        from ..budgets import parse_budgets

        return _parsed_setting("budgets", parse_budgets, proposal["value"])

    @validate("prices")
    def _valid_prices(self, proposal: Any) -> dict[str, Any]:
        from ..ledger import parse_prices

        return _parsed_setting("prices", parse_prices, proposal["value"])

    def initialize_settings(self) -> None:
        from ..agent import ContextBudget
        from ..turns import AnalystConfig, ModelSettings
        from ..errors import ConfigError
        from ..kernel import SandboxPolicy, kernels_dir
        from ..sql import EngineLimits
        from .editors import ContextEditors
        from .inputs import ApiLimits
        from .manager_launcher import ServerKernelLauncher, is_gateway
        from .service import ThreadService

        try:
            config = AnalystConfig(
                workspace=self.workspace,
                store=self.store_url or None,
                blobs=self.blobs_url or None,
                blobs_endpoint=self.blobs_endpoint_url or None,
                context_dir=self.context_dir or None,
                max_steps=self.max_steps,
                plan_concurrency=self.plan_concurrency,
                turn_lease_s=self.turn_lease,
                query_timeout_s=self.query_timeout,
                engine=EngineLimits(memory_bytes=self.sql_memory_mb * 2**20 or None),
                row_cap=self.row_cap,
                python_timeout_s=self.python_timeout,
                summarizer=self.summarizer,
                active_ttl_s=self.active_ttl,
                context=ContextBudget(tokens=self.context_tokens),
                prices=dict(self.prices),
                budgets=dict(self.budgets),
                sandbox=SandboxPolicy(enabled=self.sandbox, memory_mb=self.memory_mb, processes=self.processes),
            )
            try:
                model: ModelSettings | None = ModelSettings.resolve(
                    model=self.model or None, base_url=self.model_base_url or None, api_key=self.api_key or None,
                    summary_model=self.summary_model or None,
                )
            except ConfigError as exc:
                model = None
                self.log.warning("jupyter-analyst: %s; turns will be refused until one is (%s)", exc.message, exc.hint)
            ksm = self.serverapp.kernel_spec_manager
            if str(kernels_dir()) not in ksm.kernel_dirs:
                ksm.kernel_dirs = [str(kernels_dir()), *ksm.kernel_dirs]
            remote_kernel = None
            if is_gateway(self.serverapp.kernel_manager):
                remote_kernel = self.gateway_kernel
                self.log.warning(
                    "jupyter-analyst: kernels run on the gateway as its kernelspec %r: their isolation is the "
                    "gateway's process proxy's, not bubblewrap's; datasets and files travel over the kernel "
                    "protocol", remote_kernel)
            service = ThreadService(
                jupyter_mcp_tools=self.jupyter_mcp_tools, jupyter_mcp_wait_s=self.jupyter_mcp_wait,
                config=config, model=model, sources=dict(self.sources), allow_any_source=self.allow_any_source,
                launcher=ServerKernelLauncher(self.serverapp.kernel_manager, remote_kernel=remote_kernel),
                pool_size=self.pool_size,
                pool_idle_s=self.pool_idle,
                kernel_idle_s=self.kernel_idle,
                max_kernels=self.max_kernels,
                max_kernels_per_user=self.max_kernels_per_user,
                budget_admins=frozenset(self.budget_admins),
            )
            if service.pool is not None:
                # Filled once the server's loop runs, so the first thread finds a kernel ready.
                IOLoop.current().add_callback(service.pool.refill)
        except Exception as exc:
            self.log.critical("jupyter-analyst could NOT start: %s", exc)
            raise
        self.settings["jupyter_analyst"] = service
        self.settings["jupyter_analyst_editors"] = ContextEditors.configured(self.context_editors)
        self.settings["jupyter_analyst_limits"] = ApiLimits(
            max_body_bytes=self.max_body_bytes, max_prompt_bytes=self.max_prompt_bytes,
        )
        self.log.info("jupyter-analyst: workspace %s, %d source(s)", service.workspace.root, len(self.sources))

    def initialize_handlers(self) -> None:
        from .routes import routes

        self.handlers.extend(routes("/"))

    async def stop_extension(self) -> None:
        service = self.settings.get("jupyter_analyst")
        if service is not None:
            await service.close()


def _parsed_setting(name: str, parse: Any, value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as set, once ``parse`` reads it; its ``ConfigError`` as the trait's error."""
    from ..errors import ConfigError

    try:
        parse(value)
    except ConfigError as exc:
        raise TraitError(f"AnalystApp.{name}: {exc.message} ({exc.hint})" if exc.hint
                         else f"AnalystApp.{name}: {exc.message}") from None
    return dict(value)
