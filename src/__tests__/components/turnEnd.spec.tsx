/**
 * Specs of how a turn that did not complete says so under it: a turn that ran out of steps
 * and one whose model said nothing each end with their own line and the server's reason,
 * never as a plain completed turn.
 */

import * as React from 'react';

import { TurnList } from '../../components/TurnList';
import { parseEvent, type AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { renderStatic } from '../staticMarkup';

function event(seq: number, body: object): AnalystEvent {
  const parsed = parseEvent({
    seq,
    thread_id: 'thr_e',
    turn_id: 'turn_e',
    ts: `2026-01-01T00:00:0${seq}.000Z`,
    ...body
  });
  if (parsed === null) {
    throw new Error(`the event was not read: ${JSON.stringify(body)}`);
  }
  return parsed;
}

function ended(status: string, message: string, answer: string): HTMLElement {
  const events = [
    event(1, { type: 'turn_started', prompt: 'revenue by region?', model: 'm', rerun: false }),
    event(2, { type: 'answer', text: answer, flagged: [] }),
    event(3, {
      type: 'turn_ended',
      status,
      message,
      counters: {},
      ledger: null,
      citations: [],
      unsupported: [],
      definitions: [],
      suggestions: []
    })
  ];
  return renderStatic(<TurnList view={reduceAll(initialThreadView(), events)} threadId="thr_e" />);
}

describe('the end of a turn that did not complete', () => {
  it('says a turn ran out of steps, with why', () => {
    const host = ended(
      'step_limited',
      'the step budget (2 model calls with tools) ran out; the answer says what is unfinished',
      'North leads; the monthly split is unfinished.'
    );
    expect(host.querySelector('.jp-AnalystTurn')?.getAttribute('data-status')).toBe('step_limited');
    const end = host.querySelector('.jp-AnalystTurn-end');
    expect(end?.getAttribute('data-end')).toBe('step_limited');
    expect(end?.textContent).toBe(
      'Out of steps: the step budget (2 model calls with tools) ran out; the answer says what is unfinished'
    );
  });

  it('says the model gave no answer, with why', () => {
    const host = ended('no_answer', 'the model replied with nothing after its last step', '');
    const end = host.querySelector('.jp-AnalystTurn-end');
    expect(end?.getAttribute('data-end')).toBe('no_answer');
    expect(end?.textContent).toBe('No answer: the model replied with nothing after its last step');
  });
});
