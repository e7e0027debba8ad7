/**
 * The events the server emits, as TypeScript types, and a guard that reads one frame.
 *
 * These mirror `jupyter_analyst/events.py` field for field (a Python test,
 * tests/contracts/test_ui_event_types.py, fails when the two drift). The sidebar renders a
 * thread only from these events, never from model text.
 */

/** The states of one turn (DESIGN.md, decision 4). */
export const TURN_STATES = [
  'planning',
  'data_fetching',
  'analyzing',
  'presenting',
  'completed',
  'error'
] as const;
export type State = (typeof TURN_STATES)[number];

/** Why a tool call was not executed as asked, or what a guard did about it. */
export const REASON_CODES = [
  'invalid_state',
  'duplicate_tool_call_skipped',
  'duplicate_artifact_prevented',
  'empty_python_payload_retried',
  'empty_payload_refused',
  'invalid_arguments',
  'unknown_tool',
  'step_limit_reached',
  'arguments_normalized',
  'unknown_name_refused',
  'invented_name_flagged',
  'expectation_failed',
  'clarification_asked',
  'chat_mode',
  'plan_refused',
  'answer_cut_short',
  'model_refused'
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/** A JSON value as the server sends it (tool arguments and results are free-form). */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** What every event carries. */
export interface EventBase {
  /** Thread-scoped, gap-free sequence number, assigned when the event is persisted. */
  seq: number;
  /** The thread the event belongs to. */
  thread_id: string;
  /** The turn that produced the event. */
  turn_id: string;
  /** When the event was made (UTC, ISO 8601). */
  ts: string;
}

export interface TurnStarted extends EventBase {
  type: 'turn_started';
  /** What the user asked. */
  prompt: string;
  /** The model answering. */
  model: string;
  /** Whether the user asked to re-execute steps that could be reused. */
  rerun: boolean;
}

export interface StateChanged extends EventBase {
  type: 'state';
  /** The state left (null at the start of a turn). */
  from_state: State | null;
  /** The state entered. */
  to_state: State;
}

export interface TextDelta extends EventBase {
  type: 'text_delta';
  /** A piece of the model's streamed text (several pieces when the server merged them). */
  text: string;
}

/** The model has begun to think before it answers (its monologue is neither shown nor kept). */
export interface ModelThinking extends EventBase {
  type: 'thinking';
}

/** What a turn waits for while it starts (jupyter_analyst/events.py `STARTING_MESSAGES`). */
export const STARTING_WHAT = ['engine', 'sql_checker', 'kernel'] as const;
export type StartingWhat = (typeof STARTING_WHAT)[number];

/**
 * Something the turn needs starts now (told only when it has to start): the analyst's engine,
 * the SQL checker, the thread's sandboxed Python kernel.
 */
export interface Starting extends EventBase {
  type: 'starting';
  /** What starts. */
  what: StartingWhat;
  /** What to say meanwhile ("Starting the sandboxed Python kernel…"). */
  message: string;
}

export interface ToolCallStarted extends EventBase {
  type: 'tool_call';
  /** The tool call's id. */
  call_id: string;
  /** The tool's name. */
  tool: string;
  /** The arguments after normalisation (`sql` for run_sql, `code` for run_python). */
  arguments: JsonObject;
  /** The step's logical key, when it has one. */
  step_key: string | null;
}

export type ToolStatus = 'ok' | 'error' | 'refused';

export interface ToolResult extends EventBase {
  type: 'tool_result';
  /** The tool call this answers. */
  call_id: string;
  /** The tool's name. */
  tool: string;
  /** `ok`; `error` when the tool ran and failed; `refused` when a guard stopped it. */
  status: ToolStatus;
  /** True when the result came from an earlier identical step. */
  reused: boolean;
  /** What the model was told (see results.ts for typed views). */
  result: JsonObject;
  /** Artifacts the step produced or reused. */
  artifact_ids: string[];
  /** Time spent executing (0 for a reused step). */
  duration_s: number;
}

/** What a running Python step printed since the last of these (bounded per step). */
export interface StepOutput extends EventBase {
  type: 'step_output';
  /** The running step (its tool call). */
  call_id: string;
  stream: 'stdout' | 'stderr';
  /** What it printed on `stream`, as it came. */
  text: string;
  /** Seconds since the step started. */
  elapsed_s: number;
  /** Characters printed past what a step shows live (they reach its result only). */
  omitted: number;
}

/** How much of a running SQL step's query is done, as its engine estimates it (rising). */
export interface StepProgress extends EventBase {
  type: 'step_progress';
  /** The running step (its tool call). */
  call_id: string;
  /** Whole percent done (0-99: never 100 before the step's result). */
  percent: number;
  /** Seconds since the query began to run. */
  elapsed_s: number;
}

export interface ArtifactRecorded extends EventBase {
  type: 'artifact';
  /** The artifact's inventory id. */
  artifact_id: string;
  /** Its dataset variable or file name. */
  name: string;
  /** `dataset`, `image`, `file` or `text`. */
  artifact_type: string;
  /** `sha256:` of its bytes. */
  fingerprint: string;
  /** False when an equivalent artifact already existed and was reused. */
  created: boolean;
  /** The tool call that recorded it (several run at once in a staged plan). */
  call_id: string | null;
}

export interface Guarded extends EventBase {
  type: 'guard';
  /** The reason code. */
  reason: ReasonCode;
  /** A readable explanation. */
  message: string;
  /** The tool call concerned, if any. */
  call_id: string | null;
}

export interface AnswerReady extends EventBase {
  type: 'answer';
  /** The final answer shown to the user. */
  text: string;
  /** Ids or names the answer cites that do not exist. */
  flagged: string[];
}

/**
 * How a turn ended; `needs_input`: with a question the user's next message answers;
 * `step_limited`: its step budget ran out, and its answer says what is unfinished;
 * `no_answer`: the model's last reply said nothing.
 */
export const TURN_END_STATUSES = [
  'completed',
  'needs_input',
  'step_limited',
  'no_answer',
  'error',
  'interrupted'
] as const;
export type TurnEndStatus = (typeof TURN_END_STATUSES)[number];

/** Where a token count comes from: the model server's own `usage`, the estimate, or both. */
export type CountedBy = 'server' | 'estimate' | 'mixed' | 'none';

/** Prompt and completion tokens, how they were counted, their cost in USD where priced. */
export interface LedgerTokens {
  prompt_tokens: number;
  completion_tokens: number;
  counted_by: CountedBy;
  /** Null when the model has no configured price: tokens only, never a made-up cost. */
  cost_usd: number | null;
}

/** What a turn cost (jupyter_analyst/ledger.py). */
export interface TurnLedger {
  /** The model calls made and their tokens. */
  usage: LedgerTokens & { calls: number };
  /** Steps executed, and the time they ran. */
  steps: number;
  execution_s: number;
  /** What reused steps saved: the recorded cost of the steps they reuse. */
  saved: LedgerTokens & { steps: number; execution_s: number; untracked: number };
  /**
   * The end-of-turn summarizer's call, added to the stored turn when it answers (absent or
   * zero in what the turn's end carried).
   */
  summarizer?: LedgerTokens & { calls: number };
}

export interface TurnEnded extends EventBase {
  type: 'turn_ended';
  /** How the turn ended. */
  status: TurnEndStatus;
  /** Why, when it did not complete. */
  message: string | null;
  /** Reason-code and step counters for the turn. */
  counters: Record<string, number>;
  /** What the turn cost; null for a turn closed without running to its end. */
  ledger: TurnLedger | null;
}

export interface ContextUsage extends EventBase {
  type: 'context_usage';
  /** The model call of the turn this prompt was for (1, 2, ...). */
  call: number;
  /** The prompt's estimated size in tokens. */
  tokens: number;
  /** The token budget it was held to. */
  budget: number;
  /** Tokens per part: rules, summary, pinned, notebook, state, history, current. */
  parts: Record<string, number>;
  /** Messages sent. */
  messages: number;
  /** Earlier turns sent as messages. */
  turns: number[];
  /** Earlier turns left out to stay within the budget. */
  dropped_turns: number;
  /** The last turn the rolling summary covers (0 for none). */
  summarized_through: number;
  /** Time spent assembling the prompt. */
  assembly_ms: number;
  /** The prompt's size in tokens as the model server counted it; null before the reply and when the server reports none. */
  prompt_tokens: number | null;
  /** The reply's size in tokens as the model server counted it (null as prompt_tokens). */
  completion_tokens: number | null;
}

export interface MemoryUpdated extends EventBase {
  type: 'memory';
  /** What changed the agent state off the hot path. */
  origin: 'summarizer';
  /** Whether the change was applied. */
  status: 'applied' | 'failed';
  /** The agent state's version after the change. */
  version: number;
  /** How many entries were added, updated, removed and fields patched. */
  changes: Record<string, number>;
  /** The last turn the rolling summary covers after the change. */
  summarized_through: number;
  /** Why it failed. */
  message: string | null;
  /** What the summarizer's call cost (added to its turn's ledger); null when none was sent. */
  usage: (LedgerTokens & { calls: number }) | null;
}

/** One step of a staged plan, as the plan lists it. */
export interface PlanStepView {
  /** The step's id in the plan (what other steps' `inputs` name). */
  id: string;
  /** The call id its own `tool_call` and `tool_result` events carry. */
  call_id: string;
  /** The tool the step calls. */
  tool: 'run_sql' | 'run_python';
  /** What it does in a few words. */
  summary: string;
  /** The steps it needs. */
  inputs: string[];
}

/** A stage of a staged plan. */
export interface PlanStageView {
  /** `parallel`: the stage's queries run together; `sequence`: its steps run in order. */
  mode: 'parallel' | 'sequence';
  /** The stage's steps, in the order they start. */
  steps: PlanStepView[];
}

export interface PlanMade extends EventBase {
  type: 'plan';
  /** The `plan` call this is the checked plan of. */
  call_id: string;
  /** What the plan is for, as the model put it. */
  goal: string;
  /** The stages, in the order they run. */
  stages: PlanStageView[];
}

/** Where one step of a plan stands. */
export type PlanStepStatus = 'running' | 'ok' | 'error' | 'refused' | 'skipped';

export interface PlanStepChanged extends EventBase {
  type: 'plan_step';
  /** The `plan` call the step belongs to. */
  call_id: string;
  /** The step's id in the plan. */
  step_id: string;
  /** The call id of the step's own events. */
  step_call_id: string;
  /** `running` when it starts; then how it ended. `skipped`: a step it needs did not succeed. */
  status: PlanStepStatus;
  /** True when an earlier identical step's result was used. */
  reused: boolean;
  /** Why it did not succeed. */
  message: string | null;
}

/** Every event, discriminated by `type`. */
export type AnalystEvent =
  | TurnStarted
  | StateChanged
  | TextDelta
  | ModelThinking
  | Starting
  | ToolCallStarted
  | ToolResult
  | StepOutput
  | StepProgress
  | ArtifactRecorded
  | Guarded
  | AnswerReady
  | TurnEnded
  | ContextUsage
  | MemoryUpdated
  | PlanMade
  | PlanStepChanged;

export type EventType = AnalystEvent['type'];

// ------------------------------------------------------------------ the guard

/** How one field is checked, and its default when the server may leave it out. */
type FieldRule =
  | {
      kind:
        | 'string'
        | 'number'
        | 'integer'
        | 'boolean'
        | 'object'
        | 'strings'
        | 'integers'
        | 'counts'
        | 'stages'
        | 'nullable-ledger'
        | 'nullable-usage';
    }
  | { kind: 'nullable-string' }
  | { kind: 'nullable-integer' }
  | { kind: 'enum'; values: readonly string[]; nullable?: boolean };

interface FieldSpec {
  rule: FieldRule;
  /** Present: the field is optional on the wire and takes this value. */
  fallback?: JsonValue;
}

const str: FieldSpec = { rule: { kind: 'string' } };
const int: FieldSpec = { rule: { kind: 'integer' } };
const num: FieldSpec = { rule: { kind: 'number' } };
const counts: FieldSpec = { rule: { kind: 'counts' } };
const optNullString: FieldSpec = { rule: { kind: 'nullable-string' }, fallback: null };
const optNullInt: FieldSpec = { rule: { kind: 'nullable-integer' }, fallback: null };
const oneOf = (values: readonly string[], fallback?: string): FieldSpec =>
  fallback === undefined
    ? { rule: { kind: 'enum', values } }
    : { rule: { kind: 'enum', values }, fallback };

/** The fields of each event type beyond the common ones, with the Python defaults. */
const FIELDS: { [T in EventType]: Record<string, FieldSpec> } = {
  turn_started: { prompt: str, model: str, rerun: { rule: { kind: 'boolean' }, fallback: false } },
  state: {
    from_state: { rule: { kind: 'enum', values: TURN_STATES, nullable: true } },
    to_state: oneOf(TURN_STATES)
  },
  text_delta: { text: str },
  thinking: {},
  starting: { what: oneOf(STARTING_WHAT), message: str },
  tool_call: {
    call_id: str,
    tool: str,
    arguments: { rule: { kind: 'object' } },
    step_key: optNullString
  },
  tool_result: {
    call_id: str,
    tool: str,
    status: oneOf(['ok', 'error', 'refused']),
    reused: { rule: { kind: 'boolean' }, fallback: false },
    result: { rule: { kind: 'object' } },
    artifact_ids: { rule: { kind: 'strings' }, fallback: [] },
    duration_s: { rule: { kind: 'number' }, fallback: 0 }
  },
  step_output: {
    call_id: str,
    stream: oneOf(['stdout', 'stderr']),
    text: str,
    elapsed_s: num,
    omitted: { ...int, fallback: 0 }
  },
  step_progress: { call_id: str, percent: int, elapsed_s: num },
  artifact: {
    artifact_id: str,
    name: str,
    artifact_type: str,
    fingerprint: str,
    created: { rule: { kind: 'boolean' } },
    call_id: optNullString
  },
  guard: { reason: oneOf(REASON_CODES), message: str, call_id: optNullString },
  answer: { text: str, flagged: { rule: { kind: 'strings' }, fallback: [] } },
  turn_ended: {
    status: oneOf(TURN_END_STATUSES),
    message: optNullString,
    counters: { ...counts, fallback: {} },
    ledger: { rule: { kind: 'nullable-ledger' }, fallback: null }
  },
  context_usage: {
    call: int,
    tokens: int,
    budget: int,
    parts: counts,
    messages: int,
    turns: { rule: { kind: 'integers' } },
    dropped_turns: int,
    summarized_through: int,
    assembly_ms: num,
    prompt_tokens: optNullInt,
    completion_tokens: optNullInt
  },
  memory: {
    origin: oneOf(['summarizer']),
    status: oneOf(['applied', 'failed']),
    version: { ...int, fallback: 0 },
    changes: { ...counts, fallback: {} },
    summarized_through: { ...int, fallback: 0 },
    message: optNullString,
    usage: { rule: { kind: 'nullable-usage' }, fallback: null }
  },
  plan: { call_id: str, goal: { ...str, fallback: '' }, stages: { rule: { kind: 'stages' } } },
  plan_step: {
    call_id: str,
    step_id: str,
    step_call_id: str,
    status: oneOf(['running', 'ok', 'error', 'refused', 'skipped']),
    reused: { rule: { kind: 'boolean' }, fallback: false },
    message: optNullString
  }
};

const PLAN_MODES: readonly string[] = ['parallel', 'sequence'];
const PLAN_TOOLS: readonly string[] = ['run_sql', 'run_python'];

/** Whether `value` is a plan's stages: each a mode and its steps, each step fully described. */
function isStages(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every(
      stage =>
        isObject(stage) &&
        typeof stage.mode === 'string' &&
        PLAN_MODES.includes(stage.mode) &&
        Array.isArray(stage.steps) &&
        stage.steps.every(
          step =>
            isObject(step) &&
            typeof step.id === 'string' &&
            typeof step.call_id === 'string' &&
            typeof step.tool === 'string' &&
            PLAN_TOOLS.includes(step.tool) &&
            typeof step.summary === 'string' &&
            Array.isArray(step.inputs) &&
            step.inputs.every(i => typeof i === 'string')
        )
    )
  );
}

const COUNTED_BY: readonly string[] = ['server', 'estimate', 'mixed', 'none'];

/** Whether `value` is tokens as the ledger counts them (and `counters`, each an integer). */
function isTokens(value: unknown, counters: readonly string[]): boolean {
  return (
    isObject(value) &&
    isInteger(value.prompt_tokens) &&
    isInteger(value.completion_tokens) &&
    typeof value.counted_by === 'string' &&
    COUNTED_BY.includes(value.counted_by) &&
    (value.cost_usd === null ||
      (typeof value.cost_usd === 'number' && Number.isFinite(value.cost_usd))) &&
    counters.every(name => isInteger(value[name]))
  );
}

/** Whether `value` is a turn's ledger: its usage, the steps it ran, what reuse saved. */
function isLedger(value: unknown): boolean {
  return (
    isObject(value) &&
    isTokens(value.usage, ['calls']) &&
    isInteger(value.steps) &&
    typeof value.execution_s === 'number' &&
    isTokens(value.saved, ['steps', 'untracked']) &&
    isObject(value.saved) &&
    typeof value.saved.execution_s === 'number'
  );
}

/** The event types the server emits. */
export const EVENT_TYPES = Object.keys(FIELDS) as EventType[];

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

function fits(rule: FieldRule, value: unknown): boolean {
  switch (rule.kind) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'object':
      return isObject(value);
    case 'strings':
      return Array.isArray(value) && value.every(v => typeof v === 'string');
    case 'integers':
      return Array.isArray(value) && value.every(isInteger);
    case 'counts':
      return isObject(value) && Object.values(value).every(isInteger);
    case 'stages':
      return isStages(value);
    case 'nullable-ledger':
      return value === null || isLedger(value);
    case 'nullable-usage':
      return value === null || isTokens(value, ['calls']);
    case 'nullable-string':
      return value === null || typeof value === 'string';
    case 'nullable-integer':
      return value === null || isInteger(value);
    case 'enum':
      return (
        (rule.nullable === true && value === null) ||
        (typeof value === 'string' && rule.values.includes(value))
      );
  }
}

function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(FIELDS, value);
}

/**
 * One event from its JSON (a parsed value or the text of an SSE frame's data), or null
 * when it is not an event this client knows: not an object, an unknown `type`, no
 * positive integer `seq`, or a field missing or of the wrong kind. Never throws, so a
 * bad frame cannot break the stream that carries it. Optional fields take the server's
 * defaults; fields this client does not know are dropped.
 */
export function parseEvent(json: unknown): AnalystEvent | null {
  let value = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json) as unknown;
    } catch {
      return null;
    }
  }
  if (!isObject(value) || !isEventType(value.type)) {
    return null;
  }
  const seq = value.seq;
  if (!isInteger(seq) || seq < 1) {
    return null; // the store numbers events from 1; delivery depends on it
  }
  const out: { [key: string]: unknown } = {
    type: value.type,
    seq,
    thread_id: typeof value.thread_id === 'string' ? value.thread_id : '',
    turn_id: typeof value.turn_id === 'string' ? value.turn_id : '',
    ts: typeof value.ts === 'string' ? value.ts : ''
  };
  for (const [name, spec] of Object.entries(FIELDS[value.type])) {
    const field = value[name];
    if (field === undefined && spec.fallback !== undefined) {
      out[name] = structuredCopy(spec.fallback);
    } else if (fits(spec.rule, field)) {
      out[name] = field;
    } else {
      return null;
    }
  }
  // Every field was checked against the rules of this type above.
  return out as unknown as AnalystEvent;
}

function structuredCopy(value: JsonValue): JsonValue {
  return Array.isArray(value) ? [...value] : isObject(value) ? { ...value } : value;
}

/** The body of a stream's final `event: error` frame (a stream that ended without its turn's end). */
export interface StreamError {
  reason: string;
  message: string;
}

/** A stream error frame's data, or null when it is not one. */
export function parseStreamError(json: unknown): StreamError | null {
  let value = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json) as unknown;
    } catch {
      return null;
    }
  }
  if (isObject(value) && typeof value.reason === 'string' && typeof value.message === 'string') {
    return { reason: value.reason, message: value.message };
  }
  return null;
}
