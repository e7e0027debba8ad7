import * as React from 'react';

import type { ThreadView } from '../model';
import { TURN_END_LABEL } from '../model/reasons';
import { useCardStops } from './cardStops';
import { CitedFocusProvider } from './receipts/citedFocus';
import { Turn } from './Turn';

/**
 * What a screen reader is told of the conversation: how its last turn stands, said once
 * when it changes ("Answering…", then "Completed"), never the stream of tokens, cells and
 * code that a live region over the whole conversation would read out.
 */
export function turnAnnouncement(view: ThreadView): string {
  const last = view.turns[view.turns.length - 1];
  if (last === undefined) {
    return '';
  }
  if (last.end === null) {
    return 'Answering…';
  }
  const label = TURN_END_LABEL[last.end.status];
  return last.end.status === 'error' && last.end.message ? `${label}: ${last.end.message}` : label;
}

/** The thread's turns, oldest first; each of their cards one tab stop (cardStops.ts). */
export function TurnList({ view, threadId }: { view: ThreadView; threadId: string }): JSX.Element {
  const cardStops = useCardStops();
  if (!view.turns.length) {
    return <p className="jp-AnalystTurns-empty">Ask a question about the data to start.</p>;
  }
  return (
    <div
      className="jp-AnalystTurns"
      aria-label="Conversation"
      ref={cardStops.ref}
      onKeyDown={cardStops.onKeyDown}
    >
      <div className="jp-AnalystSrOnly" role="status">
        {turnAnnouncement(view)}
      </div>
      <CitedFocusProvider>
        {view.turns.map(turn => (
          <Turn key={turn.turnId} turn={turn} view={view} threadId={threadId} />
        ))}
      </CitedFocusProvider>
    </div>
  );
}
