/**
 * "Verify this answer": which turns offer it, and what the panel says of what the server
 * wrote or of its refusal (not an editor: who may; a conflict: the server's reason).
 */

import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import {
  refusedOutcome,
  verifiable,
  verifiedOutcome,
  type VerifiedAnswer
} from '../../model/verifiedAnswer';
import { demoTurn, eventsOf } from '../helpers';

const WRITTEN: VerifiedAnswer = {
  thread_id: 'thr_1',
  turn: 1,
  call_id: 'call_1',
  query_file: 'queries/which_region_earned_the_most.sql',
  suite_file: 'suite.jsonl',
  task_id: 'which_region_earned_the_most',
  question: 'Which region earned the most?',
  gold_sql: 'SELECT region FROM orders LIMIT 1',
  answer: 'North',
  tolerance: 0,
  source: 'sales',
  verified_by: 'ann',
  verified_at: '2026-12-04',
  queries: 1
};

describe('verifiable', () => {
  it('offers a completed turn that answered from a query', () => {
    const [turn] = reduceAll(initialThreadView(), demoTurn()).turns;
    expect(turn.status).toBe('completed');
    expect(verifiable(turn)).toBe(true);
  });

  it('does not offer a turn that ran no query, or did not complete', () => {
    const chat = eventsOf([
      { type: 'turn_started', prompt: 'hello', model: 'm', rerun: false },
      { type: 'answer', text: 'Hello.', flagged: [] },
      { type: 'turn_ended', status: 'completed', message: null, counters: {} }
    ]);
    expect(verifiable(reduceAll(initialThreadView(), chat).turns[0])).toBe(false);
    const spent = demoTurn().map(e =>
      e.type === 'turn_ended' ? { ...e, status: 'budget_exhausted' as const } : e
    );
    expect(verifiable(reduceAll(initialThreadView(), spent).turns[0])).toBe(false);
  });
});

describe('the outcome of a verification', () => {
  it('names the query file and the suite task written, the answer and who verified it', () => {
    expect(verifiedOutcome(WRITTEN)).toEqual({
      kind: 'verified',
      text:
        'Verified: queries/which_region_earned_the_most.sql and task “which_region_earned_the_most” ' +
        'of suite.jsonl (answer North, by ann)',
      retry: false
    });
    expect(verifiedOutcome({ ...WRITTEN, answer: [[1], [2]] }).text).toContain(
      '(answer 2 rows, by ann)'
    );
  });

  it('says a user who is not an editor may not verify, and who may; that is not asked again', () => {
    const outcome = refusedOutcome({
      status: 403,
      reason: 'not_a_context_editor',
      message: "only the context folder's editors may verify answers",
      hint: 'an administrator names them in c.AnalystApp.context_editors'
    });
    expect(outcome).toEqual({
      kind: 'refused',
      text:
        'You may not verify answers: only the context folder’s editors may. ' +
        'An administrator names them in c.AnalystApp.context_editors.',
      retry: false
    });
  });

  it("says a conflict's reason, and may be asked again", () => {
    const outcome = refusedOutcome({
      status: 409,
      reason: 'gold_failed',
      message: 'the SQL fails on the data now: no table orders',
      hint: null
    });
    expect(outcome).toEqual({
      kind: 'refused',
      text: 'Not verified: the SQL fails on the data now: no table orders',
      retry: true
    });
  });
});
