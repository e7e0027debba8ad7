import * as React from 'react';

import type { ToolCard } from '../../model';
import { useSecondsSince } from '../../hooks/useSecondsSince';
import { elapsedText } from '../ThinkingLine';

/**
 * "Running · 12 s", counted from the step's start while it runs; "· 43 %" after it when the
 * engine estimates how much of its query is done (no estimate, no percentage).
 */
function RunningFor({ since, percent }: { since: string; percent: number | null }): JSX.Element {
  const took = elapsedText(useSecondsSince(since));
  const done = percent === null ? '' : ` · ${percent} %`;
  return (
    <span className="jp-AnalystStepProgress-running">
      Running{took ? ` · ${took}` : '…'}
      {done}
    </span>
  );
}

/**
 * A step before its result: how long it has run and what it has printed so far; after a
 * stop, what it printed before (its result never came, so this is all there is). Once the
 * result is in, the card shows the result's output instead: one voice per fact.
 */
export function StepProgress({ card }: { card: ToolCard }): JSX.Element | null {
  const running = card.status === 'pending' && card.startedAt !== null;
  const live = card.live;
  if (!running && !(card.status === 'unfinished' && live)) {
    return null;
  }
  const left = live
    ? [
        live.linesCut ? `${live.linesCut.toLocaleString()} earlier lines` : '',
        live.omitted ? `${live.omitted.toLocaleString()} characters not sent while it ran` : ''
      ].filter(Boolean)
    : [];
  return (
    <div className="jp-AnalystStepProgress" data-live={running ? 'running' : 'stopped'}>
      <div className="jp-AnalystStepProgress-head">
        {running && card.startedAt ? (
          <RunningFor since={card.startedAt} percent={card.percent} />
        ) : (
          <span>Printed before the turn stopped</span>
        )}
        {left.length > 0 && (
          <span className="jp-AnalystStepProgress-left"> ({left.join('; ')} left out)</span>
        )}
      </div>
      {live?.text && (
        <pre className="jp-AnalystCard-stdout" aria-label="Output so far">
          {live.text}
        </pre>
      )}
    </div>
  );
}
