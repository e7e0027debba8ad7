/**
 * The events the server emits, and a guard that reads one frame.
 *
 * The types are the API's generated schemas (api.generated.ts: `npm run gen:api` from
 * jupyter_analyst/server/openapi.yaml, which `make openapi` writes from
 * jupyter_analyst/events.py): names for them here, never a copy of their fields, which a spec
 * (src/__tests__/model/generatedTypes.spec.ts) refuses anywhere in src/. The sidebar renders a
 * thread only from these events, never from model text.
 */

import type { components } from './api.generated';

type Schemas = components['schemas'];

/** Every event, discriminated by `type`. */
export type AnalystEvent = Schemas['Event'];
export type EventType = AnalystEvent['type'];
/** The event whose `type` is `T`. */
export type EventOf<T extends EventType> = Extract<AnalystEvent, { type: T }>;
/** What every event carries: its sequence number, thread, turn and time. */
export type EventBase = Pick<AnalystEvent, 'seq' | 'thread_id' | 'turn_id' | 'ts'>;

export type TurnStarted = Schemas['TurnStarted'];
export type StateChanged = Schemas['StateChanged'];
export type TextDelta = Schemas['TextDelta'];
export type ModelThinking = Schemas['ModelThinking'];
export type Starting = Schemas['Starting'];
export type ToolCallStarted = Schemas['ToolCallStarted'];
export type ToolResult = Schemas['ToolResult'];
export type StepOutput = Schemas['StepOutput'];
export type StepProgress = Schemas['StepProgress'];
export type ArtifactRecorded = Schemas['ArtifactRecorded'];
export type Guarded = Schemas['Guarded'];
export type AnswerReady = Schemas['AnswerReady'];
export type TurnEnded = Schemas['TurnEnded'];
export type ContextUsage = Schemas['ContextUsage'];
export type MemoryUpdated = Schemas['MemoryUpdated'];
export type PlanMade = Schemas['PlanMade'];
export type PlanStepChanged = Schemas['PlanStepChanged'];

/** One step of a staged plan, and a stage of one, as the plan lists them. */
export type PlanStepView = Schemas['PlanStepView'];
export type PlanStageView = Schemas['PlanStageView'];

/**
 * An answer's receipts (jupyter_analyst/receipts/citations.py): a span of the final answer
 * and the step result that shows its value, or derived from two that do; a number nothing
 * supports. Spans are character offsets into the answer's text.
 */
export type Citation = Schemas['Citation'];
export type Derivation = Schemas['Derivation'];
export type UnsupportedClaim = Schemas['UnsupportedClaim'];
/** A definition of the team's context folder (a metric, a verified query) the answer's queries followed. */
export type DefinitionCitation = Schemas['DefinitionCitation'];
/** A measure the turn's SQL computed that the team's context folder lacks: a person may save it. */
export type MetricSuggestion = Schemas['MetricSuggestion'];
/** What a claim states: a number, a percentage, money, a date...; `name` for a text value. */
export type ClaimKind = Citation['kind'];

/** What a turn cost (jupyter_analyst/ledger.py); model calls and their tokens. */
export type TurnLedger = Schemas['Ledger'];
export type CallTokens = Schemas['Usage'];
/** Where a token count comes from: the model server's own `usage`, the estimate, or both. */
export type CountedBy = CallTokens['counted_by'];

/**
 * A JSON value, as what the server sends is. Tool arguments and results are free-form
 * (`unknown` values in their schemas: `dict[str, Any]` in Python) and read with care.
 */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** The states of one turn (DESIGN.md, decision 4). */
export type State = StateChanged['to_state'];
/** Why a tool call was not executed as asked, or what a guard did about it. */
export type ReasonCode = Guarded['reason'];
/** What a turn waits for while it starts. */
export type StartingWhat = Starting['what'];
export type ToolStatus = ToolResult['status'];
/**
 * How a turn ended; `needs_input`: with a question the user's next message answers;
 * `step_limited`: its step budget ran out, and its answer says what is unfinished;
 * `no_answer`: the model's last reply said nothing;
 * `budget_exhausted`: a spending budget was reached before a model call (its message says
 * what was spent, the limit and when it resets).
 */
export type TurnEndStatus = TurnEnded['status'];
/** Where one step of a plan stands. */
export type PlanStepStatus = PlanStepChanged['status'];

/**
 * The members of a string union, each once, in the order given: the keys of a
 * `Record<U, true>`, so the compiler refuses a list that leaves one out or names another.
 */
function membersOf<U extends string>(members: Record<U, true>): readonly U[] {
  return Object.keys(members) as U[];
}

export const TURN_STATES = membersOf<State>({
  planning: true,
  data_fetching: true,
  analyzing: true,
  presenting: true,
  completed: true,
  error: true
});

export const REASON_CODES = membersOf<ReasonCode>({
  invalid_state: true,
  duplicate_tool_call_skipped: true,
  duplicate_artifact_prevented: true,
  empty_python_payload_retried: true,
  empty_payload_refused: true,
  invalid_arguments: true,
  unknown_tool: true,
  step_limit_reached: true,
  arguments_normalized: true,
  unknown_name_refused: true,
  invented_name_flagged: true,
  expectation_failed: true,
  clarification_asked: true,
  chat_mode: true,
  plan_refused: true,
  answer_cut_short: true,
  model_refused: true,
  unsupported_claim_flagged: true,
  context_file_invalid: true
});

export const TURN_END_STATUSES = membersOf<TurnEndStatus>({
  completed: true,
  needs_input: true,
  step_limited: true,
  no_answer: true,
  budget_exhausted: true,
  error: true,
  interrupted: true
});

// ------------------------------------------------------------------ the guard

/** How one value is checked. */
export type Rule =
  | { kind: 'string' | 'number' | 'integer' | 'boolean' | 'json' | 'counts' | 'scalar' }
  | { kind: 'enum'; values: readonly string[] }
  /**
   * `lenient`: an item that does not fit is left out instead of refusing the list (for what
   * only decorates an event, as an answer's receipts: one odd item must not drop a turn's end).
   */
  | { kind: 'list'; of: Rule; lenient?: boolean }
  | { kind: 'nullable'; rule: Rule }
  | { kind: 'record'; fields: Fields };

/** How one field is checked, and its default when the server may leave it out. */
export interface FieldSpec {
  rule: Rule;
  /** Present: the field is optional on the wire and takes this value (the Python default). */
  fallback?: JsonValue;
}

export type Fields = Record<string, FieldSpec>;

/** A field table for schema `S`: one spec for each of its fields and for nothing else. */
type FieldsOf<S> = { [K in keyof S]-?: FieldSpec };

/** The fields an event has beyond the common ones and its `type`. */
type OwnFieldsOf<T extends EventType> = FieldsOf<Omit<EventOf<T>, keyof EventBase | 'type'>>;

const str: FieldSpec = { rule: { kind: 'string' } };
const int: FieldSpec = { rule: { kind: 'integer' } };
const num: FieldSpec = { rule: { kind: 'number' } };
const bool: FieldSpec = { rule: { kind: 'boolean' } };
const strings: Rule = { kind: 'list', of: { kind: 'string' } };
const counts: Rule = { kind: 'counts' };
const optNullString: FieldSpec = {
  rule: { kind: 'nullable', rule: { kind: 'string' } },
  fallback: null
};
const optNullInt: FieldSpec = {
  rule: { kind: 'nullable', rule: { kind: 'integer' } },
  fallback: null
};
const oneOf = (values: readonly string[]): Rule => ({ kind: 'enum', values });
const record = (fields: Fields): Rule => ({ kind: 'record', fields });
const nullable = (rule: Rule): Rule => ({ kind: 'nullable', rule });
/** What a record is when every field of it takes its default. */
function defaultsOf(fields: Fields): JsonObject {
  const out: JsonObject = {};
  for (const [name, spec] of Object.entries(fields)) {
    out[name] = spec.fallback ?? null;
  }
  return out;
}

const COUNTED_BY = membersOf<CountedBy>({ server: true, estimate: true, mixed: true, none: true });

const TOKENS = {
  prompt_tokens: { ...int, fallback: 0 },
  completion_tokens: { ...int, fallback: 0 },
  counted_by: { rule: oneOf(COUNTED_BY), fallback: 'none' },
  cost_usd: { rule: nullable({ kind: 'number' }), fallback: null }
};

const USAGE: FieldsOf<CallTokens> = { ...TOKENS, calls: { ...int, fallback: 0 } };
const SAVED: FieldsOf<Schemas['Saved']> = {
  ...TOKENS,
  steps: { ...int, fallback: 0 },
  execution_s: { ...num, fallback: 0 },
  untracked: { ...int, fallback: 0 }
};
const PRICE: FieldsOf<Schemas['Price']> = { prompt: num, completion: num };
const LEDGER: FieldsOf<TurnLedger> = {
  usage: { rule: record(USAGE), fallback: defaultsOf(USAGE) },
  steps: { ...int, fallback: 0 },
  execution_s: { ...num, fallback: 0 },
  saved: { rule: record(SAVED), fallback: defaultsOf(SAVED) },
  price: { rule: nullable(record(PRICE)), fallback: null },
  summarizer: { rule: record(USAGE), fallback: defaultsOf(USAGE) }
};
const CLAIM_KINDS = membersOf<UnsupportedClaim['kind']>({
  number: true,
  percent: true,
  money: true,
  multiple: true,
  year: true,
  date: true,
  month: true
});
const OPERAND_CELL: FieldsOf<Schemas['OperandCell']> = {
  call_id: str,
  artifact_id: optNullString,
  row: int,
  column: str
};
const DERIVATION: FieldsOf<Derivation> = {
  operation: {
    rule: oneOf(
      membersOf<Derivation['operation']>({
        difference: true,
        sum: true,
        ratio: true,
        percent_change: true,
        share: true,
        total: true
      })
    )
  },
  of: { rule: nullable({ kind: 'list', of: { kind: 'integer' } }), fallback: null },
  cells: { rule: { kind: 'list', of: record(OPERAND_CELL) }, fallback: [] }
};
/** Where a claim is in the answer and what it says (a citation's and an unsupported claim's). */
const SPAN = { start: int, end: int, text: str };
const CITATION: FieldsOf<Citation> = {
  ...SPAN,
  kind: { rule: oneOf([...CLAIM_KINDS, 'name']) },
  value: { rule: { kind: 'scalar' } },
  call_id: { rule: nullable({ kind: 'string' }) },
  artifact_id: optNullString,
  row: optNullInt,
  column: optNullString,
  derived: { rule: nullable(record(DERIVATION)), fallback: null }
};
const UNSUPPORTED: FieldsOf<UnsupportedClaim> = {
  ...SPAN,
  kind: { rule: oneOf(CLAIM_KINDS) },
  value: { rule: { kind: 'scalar' } }
};
const DEFINITION: FieldsOf<DefinitionCitation> = {
  kind: { rule: oneOf(['definition']), fallback: 'definition' },
  name: str,
  definition: {
    rule: oneOf(membersOf<DefinitionCitation['definition']>({ metric: true, verified_query: true }))
  },
  file: str,
  call_id: str
};
const SUGGESTION: FieldsOf<MetricSuggestion> = {
  name: str,
  table: str,
  agg: str,
  expr: str,
  filters: { rule: strings, fallback: [] },
  measure: str,
  call_id: str,
  dialect: { ...str, fallback: 'duckdb' }
};
const PLAN_STEP: FieldsOf<PlanStepView> = {
  id: str,
  call_id: str,
  tool: { rule: oneOf(membersOf<PlanStepView['tool']>({ run_sql: true, run_python: true })) },
  summary: str,
  inputs: { rule: strings, fallback: [] }
};
const PLAN_STAGE: FieldsOf<PlanStageView> = {
  mode: { rule: oneOf(membersOf<PlanStageView['mode']>({ parallel: true, sequence: true })) },
  steps: { rule: { kind: 'list', of: record(PLAN_STEP) } }
};

/** The fields of each event type beyond the common ones, with the Python defaults. */
export const FIELDS: { [T in EventType]: OwnFieldsOf<T> } = {
  turn_started: { prompt: str, model: str, rerun: { ...bool, fallback: false } },
  state: {
    from_state: { rule: nullable(oneOf(TURN_STATES)) },
    to_state: { rule: oneOf(TURN_STATES) }
  },
  text_delta: { text: str },
  thinking: {},
  starting: {
    what: {
      rule: oneOf(membersOf<StartingWhat>({ engine: true, sql_checker: true, kernel: true }))
    },
    message: str
  },
  tool_call: {
    call_id: str,
    tool: str,
    arguments: { rule: { kind: 'json' } },
    step_key: optNullString
  },
  tool_result: {
    call_id: str,
    tool: str,
    status: { rule: oneOf(membersOf<ToolStatus>({ ok: true, error: true, refused: true })) },
    reused: { ...bool, fallback: false },
    result: { rule: { kind: 'json' } },
    artifact_ids: { rule: strings, fallback: [] },
    duration_s: { ...num, fallback: 0 }
  },
  step_output: {
    call_id: str,
    stream: { rule: oneOf(membersOf<StepOutput['stream']>({ stdout: true, stderr: true })) },
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
    created: bool,
    call_id: optNullString
  },
  guard: { reason: { rule: oneOf(REASON_CODES) }, message: str, call_id: optNullString },
  answer: { text: str, flagged: { rule: strings, fallback: [] } },
  turn_ended: {
    status: { rule: oneOf(TURN_END_STATUSES) },
    message: optNullString,
    counters: { rule: counts, fallback: {} },
    ledger: { rule: nullable(record(LEDGER)), fallback: null },
    citations: { rule: { kind: 'list', of: record(CITATION), lenient: true }, fallback: [] },
    unsupported: { rule: { kind: 'list', of: record(UNSUPPORTED), lenient: true }, fallback: [] },
    definitions: { rule: { kind: 'list', of: record(DEFINITION), lenient: true }, fallback: [] },
    suggestions: { rule: { kind: 'list', of: record(SUGGESTION), lenient: true }, fallback: [] }
  },
  context_usage: {
    call: int,
    tokens: int,
    budget: int,
    parts: { rule: counts },
    messages: int,
    turns: { rule: { kind: 'list', of: { kind: 'integer' } } },
    dropped_turns: int,
    summarized_through: int,
    assembly_ms: num,
    prompt_tokens: optNullInt,
    completion_tokens: optNullInt
  },
  memory: {
    origin: { rule: oneOf(membersOf<MemoryUpdated['origin']>({ summarizer: true })) },
    status: { rule: oneOf(membersOf<MemoryUpdated['status']>({ applied: true, failed: true })) },
    version: { ...int, fallback: 0 },
    changes: { rule: counts, fallback: {} },
    summarized_through: { ...int, fallback: 0 },
    message: optNullString,
    usage: { rule: nullable(record(USAGE)), fallback: null }
  },
  plan: {
    call_id: str,
    goal: { ...str, fallback: '' },
    stages: { rule: { kind: 'list', of: record(PLAN_STAGE) } }
  },
  plan_step: {
    call_id: str,
    step_id: str,
    step_call_id: str,
    status: {
      rule: oneOf(
        membersOf<PlanStepStatus>({
          running: true,
          ok: true,
          error: true,
          refused: true,
          skipped: true
        })
      )
    },
    reused: { ...bool, fallback: false },
    message: optNullString
  }
};

/** The tables of the records events carry, by the name of their schema. */
export const RECORD_FIELDS: Record<string, Fields> = {
  Usage: USAGE,
  Saved: SAVED,
  Price: PRICE,
  Ledger: LEDGER,
  PlanStepView: PLAN_STEP,
  PlanStageView: PLAN_STAGE,
  Citation: CITATION,
  Derivation: DERIVATION,
  OperandCell: OPERAND_CELL,
  UnsupportedClaim: UNSUPPORTED,
  DefinitionCitation: DEFINITION,
  MetricSuggestion: SUGGESTION
};

/** The event types the server emits. */
export const EVENT_TYPES = Object.keys(FIELDS) as EventType[];

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/** What `read` gives for a value that does not fit its rule. */
const REFUSED = Symbol('refused');

/** `value` as `rule` reads it (records with their defaults and only their own fields), or REFUSED. */
function read(rule: Rule, value: unknown): unknown {
  switch (rule.kind) {
    case 'string':
      return typeof value === 'string' ? value : REFUSED;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? value : REFUSED;
    case 'integer':
      return isInteger(value) ? value : REFUSED;
    case 'boolean':
      return typeof value === 'boolean' ? value : REFUSED;
    case 'scalar':
      return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
        ? value
        : REFUSED;
    case 'json':
      return isObject(value) ? value : REFUSED;
    case 'counts':
      return isObject(value) && Object.values(value).every(isInteger) ? value : REFUSED;
    case 'enum':
      return typeof value === 'string' && rule.values.includes(value) ? value : REFUSED;
    case 'nullable':
      return value === null ? null : read(rule.rule, value);
    case 'list': {
      if (!Array.isArray(value)) {
        return REFUSED;
      }
      const items = value.map(item => read(rule.of, item));
      if (rule.lenient) {
        return items.filter(item => item !== REFUSED);
      }
      return items.includes(REFUSED) ? REFUSED : items;
    }
    case 'record':
      return isObject(value) ? readFields(rule.fields, value) : REFUSED;
  }
}

/** The fields of `value` that `fields` names, each read by its rule or given its default. */
function readFields(
  fields: Fields,
  value: { [key: string]: unknown }
): { [key: string]: unknown } | typeof REFUSED {
  const out: { [key: string]: unknown } = {};
  for (const [name, spec] of Object.entries(fields)) {
    const field = value[name];
    const got =
      field === undefined && spec.fallback !== undefined
        ? copyOf(spec.fallback)
        : read(spec.rule, field);
    if (got === REFUSED) {
      return REFUSED;
    }
    out[name] = got;
  }
  return out;
}

/** A fresh copy of a default, so no two events share one. */
function copyOf(value: JsonValue): JsonValue {
  if (Array.isArray(value)) {
    return value.map(copyOf);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out: JsonObject = {};
  for (const [name, inner] of Object.entries(value)) {
    out[name] = copyOf(inner);
  }
  return out;
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
  const own = readFields(FIELDS[value.type], value);
  if (own === REFUSED) {
    return null;
  }
  // Every field of this type was read by its rule above.
  return {
    type: value.type,
    seq,
    thread_id: typeof value.thread_id === 'string' ? value.thread_id : '',
    turn_id: typeof value.turn_id === 'string' ? value.turn_id : '',
    ts: typeof value.ts === 'string' ? value.ts : '',
    ...own
  } as AnalystEvent;
}

/** The body of a stream's final `event: error` frame (a stream that ended without its turn's end). */
export type StreamError = { reason: string } & Pick<Schemas['Error'], 'message'>;

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
