/**
 * What a card shows of the `result` of a tool_result event.
 *
 * The result is what the model was told (jupyter_analyst/agent/tools/), free-form JSON on
 * the wire; what each tool's holds is its generated result type (`ToolResults`), read by the
 * tool's own `parse` (src/model/tools/): a result of an unexpected shape gives a thinner
 * card, never a broken one, and the raw JSON is always kept beside it (`ToolResultView.raw`).
 */

import type { components } from './api.generated';
import type { ToolResult, ToolStatus } from './events';
import { toolModel } from './tools';
import { defined, isObject, strings, text } from './tools/read';

type Schemas = components['schemas'];

/** A result as its event carries it: free-form (read from JSON, so each value a JSON value). */
type FreeObject = ToolResult['result'];

/** A tool's error (an AnalystError's `to_dict()`): reason code, message, maybe a hint and close names. */
export type ToolError = Pick<
  Schemas['ToolErrorDetail'],
  'reason' | 'message' | 'hint' | 'suggestions'
>;

/** The verdict on a step's `expect` (guards/expectations.py). */
export type ExpectationView = Schemas['ExpectationVerdict'];

/** What a card shows of a result. */
export interface ToolResultView {
  /**
   * The tool's view of it (its model's `parse`): null for a tool the panel does not know,
   * and for a result with none of its tool's fields (a refused call: its error alone).
   */
  view: unknown;
  /** The tool's error, for `error` and `refused` results (and a Python step that failed). */
  error?: ToolError;
  expectation?: ExpectationView;
  /** The result exactly as it came. */
  raw: FreeObject;
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
  return defined<ToolError>({
    reason: reason ?? 'error',
    message: message ?? '',
    hint: text(value.hint),
    suggestions: suggestions.length ? suggestions : undefined
  });
}

function readExpectation(value: unknown): ExpectationView | undefined {
  if (!isObject(value)) {
    return undefined;
  }
  return {
    status: (text(value.status) ?? 'skipped') as ExpectationView['status'],
    rule: text(value.rule) ?? null,
    detail: text(value.detail) ?? ''
  };
}

/**
 * The view of one tool result. A refused or failed call shows its error; its view is null
 * unless the tool's fields are there (a failed Python step still has its stdout).
 */
export function readResult(tool: string, status: ToolStatus, result: FreeObject): ToolResultView {
  const onlyError =
    status !== 'ok' && Object.keys(result).every(k => k === 'error' || k === 'expectation');
  const model = toolModel(tool);
  return defined<ToolResultView>({
    view: onlyError || model === undefined ? null : model.parse(result),
    error: readError(result.error),
    expectation: readExpectation(result.expectation),
    raw: result
  });
}
