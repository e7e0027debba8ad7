"""The tables of a workspace's threads and their schema steps (a ``ThreadStore``'s migrations)."""

from __future__ import annotations

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id  TEXT PRIMARY KEY,
    "user"     TEXT NOT NULL,
    title      TEXT,
    source     TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    turn_id    TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    number     INTEGER NOT NULL,
    prompt     TEXT NOT NULL,
    status     TEXT NOT NULL,
    answer     TEXT,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    UNIQUE (thread_id, number)
);
CREATE TABLE IF NOT EXISTS messages (
    message_id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    turn_id    TEXT NOT NULL,
    role       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages(thread_id, message_id);
CREATE INDEX IF NOT EXISTS messages_by_turn ON messages(turn_id, message_id);
CREATE TABLE IF NOT EXISTS events (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    seq        INTEGER NOT NULL,
    turn_id    TEXT NOT NULL,
    type       TEXT NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
CREATE TABLE IF NOT EXISTS agent_state (
    thread_id  TEXT PRIMARY KEY REFERENCES threads(thread_id),
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- Entities live in their own rows: a thread can know thousands of artifacts, and neither a
-- prompt nor a change should have to read or rewrite all of them.
CREATE TABLE IF NOT EXISTS agent_entities (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    entity_id  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (thread_id, entity_id)
);
CREATE INDEX IF NOT EXISTS agent_entities_recent ON agent_entities(thread_id, kind, version);
CREATE TABLE IF NOT EXISTS agent_state_deltas (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    version    INTEGER NOT NULL,
    turn_id    TEXT,
    origin     TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, version)
);
"""


#: Forward-only steps after :data:`SCHEMA` (see ``DatabaseStore.migrations``).
MIGRATIONS = (
    # A running turn's lease (see ``TurnLog.renew_leases``): on a store several processes
    # share, a turn whose lease ran out was cut with its process. NULL: no lease taken.
    "ALTER TABLE turns ADD COLUMN lease_until TEXT;",
    # A conversation of another host (a Jupyter AI chat) and the thread that answers it
    # there, per user: the host's next message goes on with the same thread.
    "CREATE TABLE IF NOT EXISTS thread_bindings (host TEXT NOT NULL, conversation TEXT NOT NULL, "
    '"user" TEXT NOT NULL, thread_id TEXT NOT NULL REFERENCES threads(thread_id), created_at TEXT NOT NULL, '
    'PRIMARY KEY (host, conversation, "user"));',
    # What the turn cost (a jupyter_analyst.ledger.Ledger as JSON); NULL while it runs,
    # and for turns closed without their ledger (their process was gone).
    "ALTER TABLE turns ADD COLUMN ledger TEXT;",
    # Each model call's tokens and cost, by user, thread and time: what budgets are checked
    # against (store/spending.py). No reference to threads: a deleted thread's calls still count.
    """CREATE TABLE IF NOT EXISTS model_spend (
    spend_id  TEXT PRIMARY KEY,
    "user"    TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    turn_id   TEXT,
    at        TEXT NOT NULL,
    tokens    INTEGER NOT NULL,
    cost_usd  REAL,
    settled   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS model_spend_by_user ON model_spend("user", at);
CREATE INDEX IF NOT EXISTS model_spend_by_thread ON model_spend(thread_id, at);
CREATE INDEX IF NOT EXISTS model_spend_by_time ON model_spend(at);
""",
    # The answer's receipts (its citations and unsupported claims, as JSON); NULL while the
    # turn runs, and for turns closed before receipts were kept.
    "ALTER TABLE turns ADD COLUMN receipts TEXT;",
    # (Each table's closing parenthesis on its own line: PostgreSQL's DDL adds a rowid column there.)
    # Cells the model proposed for a user's notebook (a notebooks.proposals.Proposal as
    # JSON), each person's decision on each change, append-only, and the checkpoint taken
    # through the contents manager before a proposal's first accepted change.
    "CREATE TABLE IF NOT EXISTS proposals (proposal_id TEXT PRIMARY KEY, "
    "thread_id TEXT NOT NULL REFERENCES threads(thread_id), turn_id TEXT NOT NULL, notebook TEXT NOT NULL, "
    "body TEXT NOT NULL, created_at TEXT NOT NULL\n);\n"
    "CREATE INDEX IF NOT EXISTS proposals_by_thread ON proposals(thread_id, created_at);\n"
    "CREATE TABLE IF NOT EXISTS proposal_decisions (decision_id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "thread_id TEXT NOT NULL REFERENCES threads(thread_id), proposal_id TEXT NOT NULL, change_id TEXT NOT NULL, "
    'decision TEXT NOT NULL, "user" TEXT NOT NULL, created_at TEXT NOT NULL\n);\n'
    "CREATE INDEX IF NOT EXISTS proposal_decisions_by_proposal ON proposal_decisions(proposal_id, decision_id);\n"
    "CREATE TABLE IF NOT EXISTS notebook_checkpoints (proposal_id TEXT PRIMARY KEY, "
    "thread_id TEXT NOT NULL REFERENCES threads(thread_id), turn_id TEXT NOT NULL, notebook TEXT NOT NULL, "
    "checkpoint_id TEXT NOT NULL, digest TEXT NOT NULL, body TEXT NOT NULL, created_at TEXT NOT NULL\n);",
)

#: A thread's rows, children first (``threads`` last: the others refer to it).
THREAD_TABLES = ("notebook_checkpoints", "proposal_decisions", "proposals", "thread_bindings", "agent_state_deltas", "agent_entities", "agent_state", "events", "messages",
                 "turns", "threads")

