import * as React from 'react';

import { ToolError } from '../../components/cards/ToolError';
import { TurnList, turnAnnouncement } from '../../components/TurnList';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { demoTurn } from '../helpers';
import { renderStatic } from '../staticMarkup';

describe('what a screen reader is told', () => {
  const events = demoTurn();
  const done = reduceAll(initialThreadView(), events);
  const running = reduceAll(
    initialThreadView(),
    events.filter(e => e.type !== 'turn_ended')
  );

  it('is how the last turn stands, not the stream', () => {
    expect(turnAnnouncement(running)).toBe('Answering…');
    expect(turnAnnouncement(done)).toBe('Completed');
    const html = renderStatic(<TurnList view={done} threadId="thr_t" />);
    // One small status region; the conversation itself is not read out as it streams.
    expect(html.querySelectorAll('[aria-live], [role="status"], [role="log"]')).toHaveLength(1);
    expect(html.querySelector('[role="status"]')?.textContent).toBe('Completed');
    expect(html.querySelector('.jp-AnalystTurns')?.hasAttribute('aria-live')).toBe(false);
  });

  it("does not read out a step's error again each time the thread is drawn", () => {
    const html = renderStatic(
      <ToolError error={{ reason: 'python_error', message: "KeyError: 'regoin'" }} />
    );
    expect(html.textContent).toContain("KeyError: 'regoin'");
    expect(html.querySelector('[role="alert"]')).toBeNull();
  });
});
