import * as React from 'react';

import type { BudgetReply } from '../model/budget';
import type { AnalystClient } from '../transport/api';
import { budget } from '../transport/team';

/**
 * The caller's budgets as they stand for a thread (`GET budget?thread_id=`): read when the
 * thread opens, and again each time `spent` changes while no turn runs (a turn's end, and the
 * thread summary's update after it: its model call counts too). Null until read, and when it
 * cannot be (a server without the route): the line is then not shown.
 */
export function useBudget(
  client: AnalystClient,
  threadId: string,
  running: boolean,
  spent: number
): BudgetReply | null {
  const [reply, setReply] = React.useState<BudgetReply | null>(null);
  React.useEffect(() => {
    if (running) {
      return;
    }
    let live = true;
    budget(client, threadId).then(
      answer => live && setReply(answer),
      () => live && setReply(null)
    );
    return () => {
      live = false;
    };
  }, [client, threadId, running, spent]);
  return reply;
}
