/**
 * Plain words for the codes the cards show: what a guard did (a ReasonCode), the state
 * a turn is in, and how a turn ended. The codes are the generated event types' unions, so the
 * compiler refuses a table that leaves one of the server's codes out.
 */

import type { ReasonCode, State, TurnEndStatus } from './events';
import type { CardStatus, PlanStepItem } from './view';

/** What each guard reason means to the person reading the card. */
export const REASON_TEXT: { readonly [R in ReasonCode]: string } = {
  invalid_state: 'refused: this step cannot run at this point of the turn',
  duplicate_tool_call_skipped: 'skipped: the same step already ran',
  duplicate_artifact_prevented: 'not stored again: an identical artifact already exists',
  empty_python_payload_retried:
    'refused: the Python code was empty; the model was asked to send it again',
  empty_payload_refused: 'refused: the call came without its query or code',
  invalid_arguments: 'refused: the arguments could not be understood',
  unknown_tool: 'refused: there is no tool by that name',
  step_limit_reached: 'stopped: the turn reached its limit of steps',
  arguments_normalized: 'the arguments were corrected before running',
  unknown_name_refused: 'refused: it names a table, column or dataset that does not exist',
  invented_name_flagged: 'flagged: the answer cites something that does not exist',
  // The server's message names the numbers ("the answer states numbers no result holds:
  // ..."): the words say what was done of them, not that again.
  unsupported_claim_flagged: 'checked before the answer was final: the model was told once',
  expectation_failed: 'check failed: the result is not what the step was expected to give',
  clarification_asked: 'a question for you: the request could mean more than one thing',
  chat_mode: 'answered without running anything',
  plan_refused: 'refused: the plan cannot run as given; nothing in it ran',
  answer_cut_short: 'cut short: the answer may be incomplete',
  model_refused: 'the model declined to answer',
  context_file_invalid:
    "a file of the team's context folder was not read; the turn went on without it"
};

/** Plain words for a reason code; a code this client does not know is shown as it is. */
export function reasonText(reason: string): string {
  return Object.prototype.hasOwnProperty.call(REASON_TEXT, reason)
    ? REASON_TEXT[reason as ReasonCode]
    : reason.replace(/_/g, ' ');
}

/** The label of each turn state, for the state strip. */
export const STATE_LABEL: { readonly [S in State]: string } = {
  planning: 'Planning',
  data_fetching: 'Fetching data',
  analyzing: 'Analyzing',
  presenting: 'Presenting',
  completed: 'Completed',
  error: 'Error'
};

/** How a turn ended, in words. */
export const TURN_END_LABEL: { readonly [S in TurnEndStatus]: string } = {
  completed: 'Completed',
  needs_input: 'Waiting for your answer',
  step_limited: 'Out of steps',
  no_answer: 'No answer',
  budget_exhausted: 'Budget spent',
  error: 'Ended with an error',
  interrupted: 'Stopped'
};

/** The line under a turn that did not complete, before its message. */
export const TURN_END_LINE: { readonly [S in TurnEndStatus]: string } = {
  completed: 'Completed',
  needs_input: 'Waiting for your answer: your next message answers the question above',
  step_limited: 'Out of steps',
  no_answer: 'No answer',
  budget_exhausted: 'Budget spent',
  error: 'The turn ended with an error',
  interrupted: 'Stopped'
};

/** The badge of a tool card. */
export const TOOL_STATUS_LABEL: { readonly [S in CardStatus]: string } = {
  pending: 'Running',
  ok: 'Done',
  error: 'Failed',
  refused: 'Refused',
  unfinished: 'Not finished'
};

/** Where a step of a staged plan stands, in words. */
export const PLAN_STEP_LABEL: { readonly [S in PlanStepItem['status']]: string } = {
  pending: 'Waiting',
  running: 'Running',
  ok: 'Done',
  error: 'Failed',
  refused: 'Refused',
  skipped: 'Not run'
};

/**
 * Headings of a step's error, by the error's own code (an AnalystError's `reason`: the SQL
 * guard's, the kernel's, the checker's), as a person reads them. A code not here is said
 * as the guard reason's words when it is one, else as a sentence made of the code.
 */
export const ERROR_TEXT: { readonly [code: string]: string } = {
  sql_not_read_only: 'Refused: the query would change data (only read-only queries run)',
  sql_function_not_allowed: 'Refused: the query calls a function that is not allowed',
  sql_multiple_statements: 'Refused: more than one statement (one query at a time)',
  sql_parse_error: 'The query could not be read',
  sql_too_complex: 'Refused: the query is too complex',
  sql_too_large: 'Refused: the query is too long',
  sql_unsupported: 'Refused: the query uses SQL that is not supported',
  sql_worker_failed: 'The query could not be run',
  query_failed: 'The query failed',
  query_timeout: 'The query took too long and was stopped',
  unknown_table: 'Unknown table',
  unknown_column: 'Unknown column',
  python_error: 'The Python code raised an error',
  python_too_complex: 'Refused: the code is too complex to check',
  kernel_start_failed: 'The Python kernel could not start',
  kernel_timeout: 'The Python step took too long and was stopped',
  kernel_died: 'The Python kernel died while the step ran',
  kernel_runaway: 'The Python step left work running and was stopped',
  empty_payload: 'Refused: the call came without its query or code',
  argument_too_long: 'Refused: an argument is too long',
  arguments_too_large: 'Refused: the arguments are too large',
  arguments_too_deep: 'Refused: the arguments are nested too deeply',
  invalid_unicode: 'Refused: the arguments hold invalid text',
  invalid_plan: 'Refused: the plan cannot run as given',
  plan_cycle: 'Refused: the plan’s steps need each other in a circle',
  plan_order: 'Refused: a step of the plan needs one that runs later',
  plan_undefined_input: 'Refused: a step of the plan needs a step it does not define',
  no_source: 'No data source is connected',
  source_not_found: 'The data source was not found',
  source_unreadable: 'The data source could not be read',
  source_empty: 'The data source holds no tables',
  no_notebook: 'No notebook is open',
  thread_cap_reached: 'The thread has reached its limit'
};

/**
 * Whether an error's code says the step was refused before it ran (the SQL guard's, the
 * checker's): its card says "Refused", not "Failed", though the server counts it an error
 * the model may correct.
 */
export function isRefusal(reason: string | undefined): boolean {
  return (
    reason !== undefined &&
    Object.prototype.hasOwnProperty.call(ERROR_TEXT, reason) &&
    ERROR_TEXT[reason].startsWith('Refused')
  );
}

/**
 * Refusals whose heading says the whole fact: the message and hint the model was given
 * ("DELETE is not allowed: only queries (SELECT) may run", "only one read-only SELECT ...")
 * and the guard that refused the call say it again, so a card shows the heading alone.
 * Other refusals keep their message: it names what the heading cannot (the function, the step).
 */
const SAID_BY_HEADING: ReadonlySet<string> = new Set([
  'sql_not_read_only',
  'sql_multiple_statements',
  'sql_too_large',
  'empty_payload',
  'argument_too_long',
  'arguments_too_large',
  'arguments_too_deep',
  'invalid_unicode'
]);

/** Whether an error's heading says all a reader needs of it (see SAID_BY_HEADING). */
export function saidByHeading(reason: string | undefined): boolean {
  return reason !== undefined && SAID_BY_HEADING.has(reason);
}

/** A code as a sentence: `sql_not_read_only` reads "Sql not read only". */
function sentence(code: string): string {
  const words = code.replace(/_/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : 'Error';
}

/**
 * The heading of a step's error, in words: its code's (ERROR_TEXT), a guard reason's
 * (REASON_TEXT, capitalised), or the code made a sentence.
 */
export function errorHeading(reason: string): string {
  if (Object.prototype.hasOwnProperty.call(ERROR_TEXT, reason)) {
    return ERROR_TEXT[reason];
  }
  if (Object.prototype.hasOwnProperty.call(REASON_TEXT, reason)) {
    return sentence(REASON_TEXT[reason as ReasonCode]);
  }
  return sentence(reason);
}
