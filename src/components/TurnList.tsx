import * as React from 'react';

import type { ThreadView } from '../model';
import { Turn } from './Turn';

/** The thread's turns, oldest first. */
export function TurnList({ view, threadId }: { view: ThreadView; threadId: string }): JSX.Element {
  if (!view.turns.length) {
    return <p className="jp-AnalystTurns-empty">Ask a question about the data to start.</p>;
  }
  return (
    <div className="jp-AnalystTurns" aria-label="Conversation" aria-live="polite">
      {view.turns.map(turn => (
        <Turn key={turn.turnId} turn={turn} view={view} threadId={threadId} />
      ))}
    </div>
  );
}
