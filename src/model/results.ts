/**
 * Typed views of the `result` of a tool_result event, for the cards.
 *
 * The result is what the model was told (jupyter_analyst/agent/tools.py), free-form JSON
 * on the wire. Each view reads only fields of the expected kind and leaves the rest
 * out, so a result of an unexpected shape gives a thinner card, never a broken one; the
 * raw JSON is always kept beside it (`ToolResultView.raw`).
 */

import type { JsonObject, ToolResult, ToolStatus } from './events';

/** A result as its event carries it: free-form (read from JSON, so each value a JSON value). */
type FreeObject = ToolResult['result'];

/** A tool's error (an AnalystError's `to_dict()`): reason code, message, maybe a hint. */
export interface ToolError {
  reason: string;
  message: string;
  hint?: string;
  /** Close names the server suggests (unknown table or column). */
  suggestions?: string[];
}

export interface ColumnView {
  name: string;
  type: string;
}

/** A check the step's result was held to (agent/expectations.py). */
export interface ExpectationView {
  status: string;
  rule: string;
  detail: string;
}

export interface SqlResultView {
  kind: 'sql';
  /** The dataset's variable name in the kernel. */
  dataset?: string;
  artifactId?: string;
  /** Rows in the dataset. */
  rows?: number;
  columns: ColumnView[];
  /** The first rows, for a table preview. */
  sample: JsonObject[];
  /** True when the row cap cut the result. */
  truncated: boolean;
  rowCap?: { cap: number; kept: number; dropped: number };
  /** One line on what the dataset means (tables, measures, dimensions, time range). */
  intentNote?: string;
  note?: string;
}

export interface PythonResultView {
  kind: 'python';
  stdout: string;
  stderr?: string;
  /** The repr of the cell's last expression. */
  value?: string;
  /** Artifacts the step made (figures, files). */
  artifacts: { id: string; name: string; type: string }[];
  filesNotStored: { path: string; reason: string }[];
  filesNote?: string;
}

export interface TablesResultView {
  kind: 'tables';
  tables: { name: string; kind: string; rows?: number }[];
}

export interface DescribeResultView {
  kind: 'describe';
  name?: string;
  columns: ColumnView[];
  rows?: number;
  sample: JsonObject[];
}

export interface ArtifactListView {
  kind: 'artifacts';
  artifacts: { id: string; name: string; type: string; fingerprint?: string; size?: number }[];
}

export interface FindResultView {
  kind: 'find';
  query?: string;
  matches: { kind: string; name: string; score?: number; id?: string; detail?: string }[];
  note?: string;
}

export interface ClarifyResultView {
  kind: 'clarify';
  question?: string;
  candidates: string[];
  /** The question as the user reads it. */
  text?: string;
}

/** A tool this client has no card for, or a result with nothing more to show. */
export interface OtherResultView {
  kind: 'other';
}

export type ResultDetail =
  | SqlResultView
  | PythonResultView
  | TablesResultView
  | DescribeResultView
  | ArtifactListView
  | FindResultView
  | ClarifyResultView
  | OtherResultView;

/** What a card shows of a result. */
export interface ToolResultView {
  detail: ResultDetail;
  /** The tool's error, for `error` and `refused` results (and a Python step that failed). */
  error?: ToolError;
  expectation?: ExpectationView;
  /** The result exactly as it came. */
  raw: FreeObject;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function objects(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Drops the keys whose value is undefined (views carry only what the result said). */
function defined<T extends object>(view: T): T {
  const out: { [key: string]: unknown } = {};
  for (const [key, value] of Object.entries(view)) {
    if (value !== undefined) {
      out[key] = value;
    }
  }
  return out as T;
}

function columns(value: unknown): ColumnView[] {
  const out: ColumnView[] = [];
  for (const c of objects(value)) {
    const name = text(c.name);
    if (name !== undefined) {
      out.push({ name, type: text(c.type) ?? '' });
    }
  }
  return out;
}

function readError(value: unknown): ToolError | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  const reason = text(value.reason);
  const message = text(value.message);
  if (reason === undefined && message === undefined) {
    return undefined;
  }
  const suggestions = strings(value.suggestions);
  return defined({
    reason: reason ?? 'error',
    message: message ?? '',
    hint: text(value.hint),
    suggestions: suggestions.length ? suggestions : undefined
  });
}

function readDetail(tool: string, r: FreeObject): ResultDetail {
  switch (tool) {
    case 'run_sql': {
      const cap = isObject(r.row_cap) ? r.row_cap : undefined;
      return defined<SqlResultView>({
        kind: 'sql',
        dataset: text(r.dataset),
        artifactId: text(r.artifact_id),
        rows: count(r.rows),
        columns: columns(r.columns),
        sample: objects(r.sample),
        truncated: r.truncated === true,
        rowCap: cap && {
          cap: count(cap.cap) ?? 0,
          kept: count(cap.kept) ?? 0,
          dropped: count(cap.dropped) ?? 0
        },
        intentNote: text(r.intent_note),
        note: text(r.note)
      });
    }
    case 'run_python':
      return defined<PythonResultView>({
        kind: 'python',
        stdout: text(r.stdout) ?? '',
        stderr: text(r.stderr),
        value: text(r.result),
        artifacts: objects(r.artifacts).map(a => ({
          id: text(a.id) ?? '',
          name: text(a.name) ?? '',
          type: text(a.type) ?? ''
        })),
        filesNotStored: objects(r.files_not_stored).map(f => ({
          path: text(f.path) ?? '',
          reason: text(f.reason) ?? ''
        })),
        filesNote: text(r.files_note)
      });
    case 'list_tables':
      return {
        kind: 'tables',
        tables: objects(r.tables).map(t =>
          defined({ name: text(t.name) ?? '', kind: text(t.kind) ?? 'table', rows: count(t.rows) })
        )
      };
    case 'describe_table':
      return defined<DescribeResultView>({
        kind: 'describe',
        name: text(r.name),
        columns: columns(r.columns),
        rows: count(r.rows),
        sample: objects(r.sample)
      });
    case 'list_artifacts':
      return {
        kind: 'artifacts',
        artifacts: objects(r.artifacts).map(a =>
          defined({
            id: text(a.id) ?? '',
            name: text(a.name) ?? '',
            type: text(a.type) ?? '',
            fingerprint: text(a.fingerprint),
            size: count(a.size)
          })
        )
      };
    case 'find':
      return defined<FindResultView>({
        kind: 'find',
        query: text(r.query),
        matches: objects(r.matches).map(m =>
          defined({
            kind: text(m.kind) ?? '',
            name: text(m.name) ?? '',
            score: count(m.score),
            id: text(m.id),
            detail: text(m.detail)
          })
        ),
        note: text(r.note)
      });
    case 'clarify':
      return defined<ClarifyResultView>({
        kind: 'clarify',
        question: text(r.asked),
        candidates: strings(r.candidates),
        text: text(r.question_for_user)
      });
    default:
      return { kind: 'other' };
  }
}

/**
 * The typed view of one tool result. A refused or failed call shows its error; its
 * detail is `other` unless the tool's fields are there (a failed Python step still has
 * its stdout).
 */
export function readResult(tool: string, status: ToolStatus, result: FreeObject): ToolResultView {
  const expectation = isObject(result.expectation)
    ? {
        status: text(result.expectation.status) ?? '',
        rule: text(result.expectation.rule) ?? '',
        detail: text(result.expectation.detail) ?? ''
      }
    : undefined;
  const onlyError = status !== 'ok' && Object.keys(result).every(k => k === 'error');
  return defined<ToolResultView>({
    detail: onlyError ? { kind: 'other' } : readDetail(tool, result),
    error: readError(result.error),
    expectation,
    raw: result
  });
}
