/**
 * While something a turn needs starts (the engine, the SQL checker, its sandboxed kernel),
 * the status line says what, from the server's `starting` event, instead of "Working…";
 * once the turn tells anything else, the line goes back to the turn's state.
 */

import * as React from 'react';

import { TurnStatus } from '../../components/TurnStatus';
import { parseEvent, type AnalystEvent } from '../../model/events';
import { reduceAll } from '../../model/reducer';
import { initialThreadView, type ThreadView } from '../../model/view';
import { eventsOf } from '../helpers';
import { renderStatic } from '../staticMarkup';

function events(bodies: Record<string, unknown>[]): AnalystEvent[] {
  return eventsOf(bodies);
}

function status(view: ThreadView): Element | null {
  const host = renderStatic(<TurnStatus view={view} connection="live" stopping={false} />);
  return host.querySelector('[role="status"]');
}

const STARTED = { type: 'turn_started', prompt: 'revenue by region', model: 'm', rerun: false };
const KERNEL = {
  type: 'starting',
  what: 'kernel',
  message: 'Starting the sandboxed Python kernel…'
};

describe('the status line while something starts', () => {
  it('says what starts, then the state again once the turn goes on', () => {
    const asked = events([STARTED]);
    expect(status(reduceAll(initialThreadView(), asked))?.textContent).toBe('Working…');

    const engine = events([
      STARTED,
      {
        type: 'starting',
        what: 'engine',
        message: "Loading the analyst (the server's first question)…"
      }
    ]);
    const shown = status(reduceAll(initialThreadView(), engine));
    expect(shown?.textContent).toBe("Loading the analyst (the server's first question)…");
    expect(shown?.getAttribute('data-starting')).toBe('engine');

    const python = events([
      STARTED,
      { type: 'state', from_state: null, to_state: 'analyzing' },
      {
        type: 'tool_call',
        call_id: 'c1',
        tool: 'run_python',
        arguments: { code: 'print(1)' },
        step_key: null
      },
      KERNEL
    ]);
    expect(status(reduceAll(initialThreadView(), python))?.textContent).toBe(KERNEL.message);

    const printed = events([
      ...python.map(e => ({ ...e }) as unknown as Record<string, unknown>),
      { type: 'step_output', call_id: 'c1', stream: 'stdout', text: '1\n', elapsed_s: 0.1 }
    ]);
    const after = status(reduceAll(initialThreadView(), printed));
    expect(after?.textContent).not.toBe(KERNEL.message);
    expect(after?.hasAttribute('data-starting')).toBe(false);
  });

  it('drops a starting event that names nothing the server starts', () => {
    expect(
      parseEvent({ seq: 2, type: 'starting', what: 'rocket', message: 'Launching…' })
    ).toBeNull();
  });
});
