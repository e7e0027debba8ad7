/**
 * The thread's proposals with changes still to decide, for the panel's list of them: read
 * when the thread has a proposal, again when another one is made (`calls` grows) and when a
 * decision is taken anywhere in the panel or the notebook (proposalChanges.ts).
 */

import * as React from 'react';

import { useAnalyst } from '../context';
import { pendingProposals, type IPendingProposal } from '../model';
import { listProposals } from '../transport/proposals';
import { onProposalsChanged } from './proposalChanges';

export function usePendingProposals(threadId: string, calls: number): IPendingProposal[] {
  const { client } = useAnalyst();
  const [pending, setPending] = React.useState<IPendingProposal[]>([]);
  React.useEffect(() => {
    if (calls === 0) {
      setPending([]);
      return;
    }
    let live = true;
    const load = (): void => {
      listProposals(client, threadId).then(
        proposals => {
          if (live) {
            setPending(pendingProposals(proposals));
          }
        },
        // The list is a way to the cards, which say a refusal themselves: kept as it was.
        () => undefined
      );
    };
    load();
    const stop = onProposalsChanged(threadId, load);
    return () => {
      live = false;
      stop();
    };
  }, [client, threadId, calls]);
  return pending;
}
