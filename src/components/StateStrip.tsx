import * as React from 'react';

import { STATE_LABEL, TURN_END_LABEL, type TurnView } from '../model';

/**
 * Whether an ended turn's end is said after its states: not when its last state says it
 * already ("Completed", "Error"), so no state is said twice.
 */
export function endShown(turn: TurnView): boolean {
  if (turn.status === 'running') {
    return false;
  }
  const last = turn.states[turn.states.length - 1]?.state;
  return !(last !== undefined && last === turn.status);
}

/** The states the turn went through (planning → fetching data → ...), the current one marked. */
export function StateStrip({ turn }: { turn: TurnView }): JSX.Element {
  const ended = turn.status !== 'running';
  return (
    <ol
      className="jp-AnalystStates"
      aria-label="Turn progress"
      data-state={turn.state ?? ''}
      data-status={turn.status}
    >
      {turn.states.map((step, index) => {
        const current = !ended && index === turn.states.length - 1;
        return (
          <li
            key={step.seq}
            className={`jp-AnalystStates-step ${current ? 'jp-mod-current' : ''}`.trim()}
            data-state={step.state}
            aria-current={current ? 'step' : undefined}
            title={new Date(step.at).toLocaleTimeString()}
          >
            {STATE_LABEL[step.state]}
          </li>
        );
      })}
      {endShown(turn) && (
        <li
          className={`jp-AnalystStates-end jp-AnalystStates-${turn.status}`}
          data-end={turn.status}
        >
          {TURN_END_LABEL[turn.status as keyof typeof TURN_END_LABEL]}
        </li>
      )}
    </ol>
  );
}
