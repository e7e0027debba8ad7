/**
 * Specs of the model thinking in the panel: a running turn whose latest model activity is a
 * thought says "Thinking…" with how long (from the event's time, counted on every second),
 * and the line goes when the model's text or a call arrives, or the turn ends.
 */

import * as React from 'react';
import { act } from 'react';

import { ThinkingLine, elapsedText } from '../../components/ThinkingLine';
import { TurnList } from '../../components/TurnList';
import type { AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { mountedRoot } from '../dom';
import { renderStatic } from '../staticMarkup';

const mounted = mountedRoot();

function event(seq: number, body: object): AnalystEvent {
  return {
    seq,
    thread_id: 'thr_t',
    turn_id: 'turn_a',
    ts: `2026-01-01T00:00:${String(seq).padStart(2, '0')}.000Z`,
    ...body
  } as AnalystEvent;
}

const started = event(1, { type: 'turn_started', prompt: 'why?', model: 'm', rerun: false });
const thought = event(3, { type: 'thinking' });

beforeEach(() => {
  jest.useFakeTimers({ now: Date.parse('2026-01-01T00:00:10.000Z') });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('the thinking line', () => {
  it('shows while the model of a running turn thinks, with the seconds since it began', () => {
    const view = reduceAll(initialThreadView(), [started, thought]);
    const line = renderStatic(<TurnList view={view} threadId="thr_t" />).querySelector(
      '.jp-AnalystTurn .jp-AnalystThinking'
    );
    expect(line?.textContent).toBe('Thinking…7 s');
    expect(line?.querySelector('.jp-AnalystThinking-elapsed')?.textContent).toBe('7 s');
  });

  it('goes when the text comes, when a call comes, and when the turn ends', () => {
    const after = (next: object): Element | null =>
      renderStatic(
        <TurnList
          view={reduceAll(initialThreadView(), [started, thought, event(4, next)])}
          threadId="thr_t"
        />
      ).querySelector('.jp-AnalystThinking');
    expect(after({ type: 'text_delta', text: 'The total is 42.' })).toBeNull();
    expect(
      after({
        type: 'tool_call',
        call_id: 'c1',
        tool: 'list_tables',
        arguments: {},
        step_key: null
      })
    ).toBeNull();
    expect(
      after({
        type: 'turn_ended',
        status: 'interrupted',
        message: null,
        counters: {},
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      })
    ).toBeNull();
  });

  it('counts on while it shows, and stops counting when it goes', () => {
    act(() => mounted.root().render(<ThinkingLine since="2026-01-01T00:00:10.000Z" />));
    const line = mounted.host().querySelector('.jp-AnalystThinking');
    // Under a second there is nothing to count yet.
    expect(line?.textContent).toBe('Thinking…');
    act(() => jest.advanceTimersByTime(2000));
    expect(line?.textContent).toBe('Thinking…2 s');
    act(() => jest.advanceTimersByTime(63_000));
    expect(line?.textContent).toBe('Thinking…1 min 5 s');
    expect(jest.getTimerCount()).toBe(1);
    act(() => mounted.root().render(<p>answered</p>));
    expect(jest.getTimerCount()).toBe(0);
  });

  it('says no time for a time it cannot read, and none to come for a clock behind the server', () => {
    act(() => mounted.root().render(<ThinkingLine since="" />));
    expect(mounted.host().textContent).toBe('Thinking…');
    expect(jest.getTimerCount()).toBe(0);
    act(() => mounted.root().render(<ThinkingLine since="2026-01-01T00:00:40.000Z" />));
    expect(mounted.host().textContent).toBe('Thinking…');
  });

  it('writes how long briefly', () => {
    expect([null, 0, 1, 59, 60, 61, 3600].map(elapsedText)).toEqual([
      '',
      '',
      '1 s',
      '59 s',
      '1 min',
      '1 min 1 s',
      '60 min'
    ]);
  });
});
