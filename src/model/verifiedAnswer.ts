/**
 * "Verify this answer": which turns may be verified into the team's context folder, and what
 * the panel says of the outcome (`POST threads/{id}/verified-answers`): the query file and
 * suite task written, or why not, in words that say what to do.
 */

import type { components } from './api.generated';
import type { TurnView } from './view';

type Schemas = components['schemas'];

/** `POST threads/{id}/verified-answers`'s body. */
export type VerifyAnswerBody = Schemas['VerifyAnswer'];
/** What a verification wrote: the query file, the suite's task, the answer computed. */
export type VerifiedAnswer = Schemas['VerifiedAnswer'];

/** A refusal of the API, as the panel knows it (status 0: no answer at all). */
export interface IRefusal {
  status: number;
  reason: string | null;
  message: string;
  hint: string | null;
}

/** What the panel says after a verification. */
export interface IVerifyOutcome {
  kind: 'verified' | 'refused';
  text: string;
  /** Whether asking again may go otherwise (not for a refusal of who the user is). */
  retry: boolean;
}

/**
 * Whether a turn is one to offer "Verify this answer" for: completed, with an answer, and
 * a query that ran (its SQL becomes the task's gold SQL; without one the server says `no_sql`).
 */
export function verifiable(turn: TurnView): boolean {
  if (turn.status !== 'completed') {
    return false;
  }
  const answered = turn.items.some(i => i.kind === 'answer');
  const queried = turn.items.some(
    i => i.kind === 'tool' && i.sql !== undefined && i.status === 'ok'
  );
  return answered && queried;
}

/** An answer in a few characters: a value, or how many values or rows. */
function shownAnswer(answer: unknown): string {
  if (Array.isArray(answer)) {
    return `${answer.length} ${answer.length === 1 ? 'row' : 'rows'}`;
  }
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

function sentence(text: string): string {
  const trimmed = text.trim().replace(/\.$/, '');
  return trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
}

/** The outcome of a verification that was written. */
export function verifiedOutcome(verified: VerifiedAnswer): IVerifyOutcome {
  return {
    kind: 'verified',
    text:
      `Verified: ${verified.query_file} and task “${verified.task_id}” of ${verified.suite_file} ` +
      `(answer ${shownAnswer(verified.answer)}, by ${verified.verified_by})`,
    retry: false
  };
}

/**
 * The outcome of a refused verification. Not an editor (403): the user may not verify here,
 * and who may; anything else the server's reason and what to do.
 */
export function refusedOutcome(refusal: IRefusal): IVerifyOutcome {
  if (refusal.reason === 'not_a_context_editor') {
    const who = refusal.hint ? ` ${sentence(refusal.hint)}.` : '';
    return {
      kind: 'refused',
      text: `You may not verify answers: only the context folder’s editors may.${who}`,
      retry: false
    };
  }
  const hint = refusal.hint ? ` (${refusal.hint})` : '';
  return { kind: 'refused', text: `Not verified: ${refusal.message}${hint}`, retry: true };
}
