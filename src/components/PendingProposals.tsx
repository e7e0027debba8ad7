import * as React from 'react';

import { usePendingProposals } from '../hooks/usePendingProposals';
import type { IPendingProposal } from '../model';

export interface IPendingProposalsProps {
  threadId: string;
  /** How many proposals the thread's turns made (model/proposals.ts `proposalCalls`). */
  calls: number;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What one proposal's link says: its notebook, its pending changes, its conflicts. */
export function pendingLabel(p: IPendingProposal): string {
  const name = p.notebook.split('/').pop() ?? p.notebook;
  const conflicts = p.conflicts ? ` · ${plural(p.conflicts, 'conflict')}` : '';
  return `${name}: ${plural(p.pending, 'change')}${conflicts}${p.failed ? ' · failed in the sandbox' : ''}`;
}

/**
 * The thread's proposals with changes still to decide, above the prompt box wherever the
 * conversation is scrolled: each a link to its card (brought into view, the keyboard on its
 * first change, whose own link opens the change in the notebook). Nothing while none.
 */
export function PendingProposals({ threadId, calls }: IPendingProposalsProps): JSX.Element | null {
  const pending = usePendingProposals(threadId, calls);
  const ref = React.useRef<HTMLElement>(null);
  if (pending.length === 0) {
    return null;
  }
  const go = (proposalId: string): void => {
    const card = ref.current
      ?.closest('.jp-AnalystConversation')
      ?.querySelector<HTMLElement>(
        `.jp-AnalystProposals[data-proposal-id="${CSS.escape(proposalId)}"]`
      );
    if (!card) {
      return;
    }
    card.scrollIntoView({ block: 'center' });
    (card.querySelector<HTMLElement>('.jp-AnalystProposals-link') ?? card).focus();
  };
  return (
    <nav className="jp-AnalystPending" aria-label="Pending proposals" ref={ref}>
      <span className="jp-AnalystPending-title">Proposals to review:</span>
      <ul className="jp-AnalystPending-list">
        {pending.map(p => (
          <li key={p.proposalId}>
            <button
              type="button"
              className="jp-AnalystPending-link"
              data-proposal-id={p.proposalId}
              data-conflicts={p.conflicts}
              onClick={() => go(p.proposalId)}
            >
              {pendingLabel(p)}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
