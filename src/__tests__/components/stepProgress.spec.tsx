import * as React from 'react';

import { SqlCard } from '../../components/tools/run_sql';
import { StepProgress } from '../../components/cards/StepProgress';
import { parseEvent, type AnalystEvent, type EventBase } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { findCard, initialThreadView, LIVE_LINES, type ToolCard } from '../../model/view';
import { renderStatic } from '../staticMarkup';

type Without<E> = E extends AnalystEvent ? Omit<E, keyof EventBase> : never;

function numbered(bodies: Without<AnalystEvent>[]): AnalystEvent[] {
  return bodies.map(
    (body, i) =>
      ({
        ...body,
        seq: i + 1,
        thread_id: 'thr_t',
        turn_id: 'turn_1',
        ts: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z`
      }) as AnalystEvent
  );
}

const START: Without<AnalystEvent>[] = [
  { type: 'turn_started', prompt: 'load', model: 'm', rerun: false },
  {
    type: 'tool_call',
    call_id: 'c1',
    tool: 'run_python',
    arguments: { code: 'slow()' },
    step_key: null
  }
];

function printed(text: string, elapsed: number, omitted = 0): Without<AnalystEvent> {
  return {
    type: 'step_output',
    call_id: 'c1',
    stream: 'stdout',
    text,
    elapsed_s: elapsed,
    omitted
  };
}

function cardAfter(bodies: Without<AnalystEvent>[]): ToolCard {
  const found = findCard(reduceAll(initialThreadView(), numbered(bodies)), 'c1');
  if (found === null) {
    throw new Error('no card');
  }
  return found;
}

describe('a running step', () => {
  it('shows what it printed so far, pieces joined as they came', () => {
    const card = cardAfter([
      ...START,
      printed('loading 1 of 2', 0.5),
      printed('\nloading 2 of 2\n', 1)
    ]);
    expect(card.live).toEqual({
      text: 'loading 1 of 2\nloading 2 of 2\n',
      linesCut: 0,
      omitted: 0,
      elapsedS: 1
    });
    const html = renderStatic(<StepProgress card={card} />);
    expect(html.querySelector('[data-live="running"]')).not.toBeNull();
    expect(html.textContent).toContain('Running');
    expect(html.querySelector('pre')?.textContent).toBe('loading 1 of 2\nloading 2 of 2\n');
  });

  it('keeps its newest lines, and says how many it left out', () => {
    const many = Array.from({ length: LIVE_LINES + 50 }, (_, i) => `line ${i}\n`).join('');
    const card = cardAfter([...START, printed(many, 3, 1234)]);
    expect(card.live?.text.split('\n')).toHaveLength(LIVE_LINES);
    expect(card.live?.text.endsWith(`line ${LIVE_LINES + 49}\n`)).toBe(true);
    const html = renderStatic(<StepProgress card={card} />);
    expect(html.textContent).toContain('51 earlier lines; 1,234 characters not sent while it ran');
  });

  it('after a stop, keeps what it printed; with its result, the result speaks instead', () => {
    const stopped = cardAfter([
      ...START,
      printed('loaded 3 files\n', 0.4),
      {
        type: 'turn_ended',
        status: 'interrupted',
        message: 'cancelled by the user',
        counters: {},
        ledger: null,
        citations: [],
        unsupported: [],
        definitions: [],
        suggestions: []
      }
    ]);
    expect(stopped.status).toBe('unfinished');
    const html = renderStatic(<StepProgress card={stopped} />);
    expect(html.querySelector('[data-live="stopped"]')?.textContent).toContain(
      'Printed before the turn stopped'
    );
    expect(html.querySelector('pre')?.textContent).toBe('loaded 3 files\n');

    const done = cardAfter([
      ...START,
      printed('loaded 3 files\n', 0.4),
      {
        type: 'tool_result',
        call_id: 'c1',
        tool: 'run_python',
        status: 'ok',
        reused: false,
        result: { stdout: 'loaded 3 files\n', artifacts: [] },
        artifact_ids: [],
        duration_s: 0.5
      }
    ]);
    expect(renderStatic(<StepProgress card={done} />).innerHTML).toBe('');
  });
});

describe('a running SQL step', () => {
  const QUERY: Without<AnalystEvent>[] = [
    { type: 'turn_started', prompt: 'count', model: 'm', rerun: false },
    {
      type: 'tool_call',
      call_id: 'c1',
      tool: 'run_sql',
      arguments: { sql: 'SELECT 1', name: 'one' },
      step_key: null
    }
  ];

  function progressed(percent: number, elapsed: number): Without<AnalystEvent> {
    return { type: 'step_progress', call_id: 'c1', percent, elapsed_s: elapsed };
  }

  it('shows how much of its query is done beside how long it has run, on its card', () => {
    const events = numbered([...QUERY, progressed(12, 1), progressed(43, 1.5)]);
    const view = reduceAll(initialThreadView(), events);
    const card = findCard(view, 'c1');
    expect(card?.percent).toBe(43);
    const html = renderStatic(
      <SqlCard card={card as ToolCard} detail={null} view={view} threadId="thr_t" />
    );
    expect(html.querySelector('.jp-AnalystStepProgress-running')?.textContent).toMatch(
      /^Running · .+ · 43 %$/
    );
  });

  it('never goes back, and says no percentage where the engine told none', () => {
    const card = cardAfter([...QUERY, progressed(43, 1.5), progressed(12, 2)]);
    expect(card.percent).toBe(43);
    const silent = cardAfter(QUERY);
    expect(silent.percent).toBeNull();
    const text = renderStatic(<StepProgress card={silent} />).textContent ?? '';
    expect(text).toContain('Running');
    expect(text).not.toContain('%');
  });

  it('is read from the event as the server sends it', () => {
    const parsed = parseEvent({
      type: 'step_progress',
      seq: 5,
      call_id: 'c1',
      percent: 43,
      elapsed_s: 12.5
    });
    expect(parsed).toMatchObject({ type: 'step_progress', percent: 43, elapsed_s: 12.5 });
  });
});
