import * as React from 'react';

import { useProposal } from '../../hooks/useProposal';
import { PROPOSE_CELLS, type IChangeShown, type ProposeCellsView } from '../../model';
import { ToolCardFrame } from '../cards/ToolCardFrame';
import { toolCard, type IToolCardProps } from './card';

const OPS: Record<IChangeShown['op'], string> = {
  insert: 'New cell',
  replace: 'Changed cell',
  delete: 'Deleted cell'
};

/**
 * `propose_cells`: the proposal's pending changes, each a link to where the notebook shows
 * it (the notebook opened, the change scrolled into view, its Accept focused), Accept all /
 * Reject all, and Revert of the turn's accepted changes.
 */
function ProposeCellsCard({
  card,
  detail,
  threadId,
  context
}: IToolCardProps<ProposeCellsView>): JSX.Element {
  return (
    <ToolCardFrame kind="propose_cells" card={card} context={context}>
      {detail ? <Proposal threadId={threadId} proposalId={detail.proposal_id} /> : null}
    </ToolCardFrame>
  );
}

function Proposal({ threadId, proposalId }: { threadId: string; proposalId: string }): JSX.Element {
  const review = useProposal(threadId, proposalId);
  const { proposal, shown, state } = review;
  if (proposal === null || shown === null) {
    return <p className="jp-AnalystProposals-note">{state.error ?? 'Reading the proposal…'}</p>;
  }
  const busy = state.busy !== null;
  const { accepted, rejected, reverted, withdrawn } = shown.counts;
  const name = proposal.notebook.split('/').pop();
  return (
    <div
      className="jp-AnalystProposals"
      data-proposal-id={proposalId}
      data-failed={proposal.failed ? 'true' : 'false'}
    >
      <p className="jp-AnalystProposals-note">
        {proposal.failed ? 'Failed in the sandbox: ' : ''}
        {shown.pending.length} pending for <code>{name}</code>
        {accepted ? ` · ${accepted} accepted` : ''}
        {rejected ? ` · ${rejected} rejected` : ''}
        {reverted ? ` · ${reverted} reverted` : ''}
        {withdrawn ? ` · ${withdrawn} withdrawn by the model` : ''}
      </p>
      {shown.pending.length > 0 && (
        <ul className="jp-AnalystProposals-list" aria-label="Pending changes">
          {shown.pending.map(change => (
            <li key={change.changeId}>
              <button
                type="button"
                className="jp-AnalystProposals-link"
                data-change-id={change.changeId}
                onClick={() => void review.reveal(change.changeId)}
              >
                <span className={`jp-AnalystProposals-op jp-mod-${change.op}`}>
                  {OPS[change.op]}
                  {change.run === 'error' ? ' (failed)' : ''}
                  {change.conflict ? ' (conflict)' : ''}
                  {change.undefined.length ? ' (uses undefined names)' : ''}
                </span>{' '}
                {change.reason}
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="jp-AnalystProposals-actions">
        {shown.pending.some(c => c.conflict === null) && !proposal.failed && (
          <button
            type="button"
            className="jp-AnalystProposals-button jp-mod-accept"
            disabled={busy}
            onClick={() => void review.decide('accept', 'all')}
          >
            Accept all
          </button>
        )}
        {shown.pending.length > 0 && (
          <button
            type="button"
            className="jp-AnalystProposals-button"
            disabled={busy}
            onClick={() => void review.decide('reject', 'all')}
          >
            Reject all
          </button>
        )}
        {accepted > 0 && (
          <button
            type="button"
            className="jp-AnalystProposals-button"
            disabled={busy}
            title="Restore the notebook as it was before this turn's first accepted change"
            onClick={() => void review.revert()}
          >
            Revert this turn
          </button>
        )}
      </div>
      {state.error && (
        <p className="jp-AnalystProposals-error" role="alert">
          {state.error}
        </p>
      )}
    </div>
  );
}

export const PROPOSE_CELLS_CARD = toolCard(PROPOSE_CELLS, ProposeCellsCard);
