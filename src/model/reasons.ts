/**
 * Plain words for the codes the cards show: what a guard did (a ReasonCode), the state
 * a turn is in, and how a turn ended. A Python test (tests/contracts/test_ui_event_types.py)
 * checks that every ReasonCode of the server has its words here.
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
  expectation_failed: 'check failed: the result is not what the step was expected to give',
  clarification_asked: 'a question for you: the request could mean more than one thing',
  chat_mode: 'answered without running anything',
  plan_refused: 'refused: the plan cannot run as given; nothing in it ran',
  answer_cut_short: 'cut short: the answer may be incomplete',
  model_refused: 'the model declined to answer'
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
  error: 'Ended with an error',
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
