import * as React from 'react';

import { STATE_LABEL, activeTurn, type ThreadView } from '../model';
import type { Connection } from '../transport/threadStream';

export interface ITurnStatusProps {
  view: ThreadView;
  connection: Connection;
  stopping: boolean;
}

/** One line on what the running turn is doing, or that its stream is being reopened. */
export function TurnStatus({ view, connection, stopping }: ITurnStatusProps): JSX.Element {
  const turn = activeTurn(view);
  let text = 'Working…';
  if (stopping) {
    text = 'Stopping…';
  } else if (connection === 'reconnecting') {
    text = 'Connection lost: reconnecting…';
  } else if (turn?.starting) {
    // What the turn waits for, as the server tells it ("Starting the sandboxed Python kernel…").
    text = turn.starting.message;
  } else if (connection === 'sending') {
    text = 'Asking…';
  } else if (turn?.state) {
    text = `${STATE_LABEL[turn.state]}…`;
  }
  return (
    <div
      className="jp-AnalystConversation-status"
      role="status"
      data-connection={connection}
      data-starting={turn?.starting?.what}
    >
      {text}
    </div>
  );
}
