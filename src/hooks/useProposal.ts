/**
 * One proposal of a thread under review: read from the server, drawn on its notebook while
 * that notebook is open (drawn again when its cells change), decided on from the notebook or
 * the panel. After the server writes the notebook (an accepted change, a revert) the open
 * notebook is read again from its file, so what JupyterLab shows is what the file holds.
 */

import * as React from 'react';

import { useAnalyst } from '../context';
import {
  EMPTY_REVIEW,
  proposalShown,
  reviewReducer,
  type IProposalShown,
  type IReviewState,
  type ProposalView
} from '../model';
import {
  drawProposal,
  keepFocusInChange,
  openNotebook,
  clearProposals,
  reloadNotebook,
  revealChange,
  saveIfDirty
} from '../notebook/proposals';
import { hideRevertButton, showRevertButton } from '../notebook/revertButton';
import { onProposalsChanged, proposalsChanged } from './proposalChanges';
import { AnalystApiError } from '../transport/api';
import { decideChanges, listProposals, revertTurn } from '../transport/proposals';

export interface IProposalReview {
  state: IReviewState;
  /** The proposal, once read. */
  proposal: ProposalView | null;
  /** Its pending changes, as shown (their diffs against the open notebook, when it is open). */
  shown: IProposalShown | null;
  decide(kind: 'accept' | 'reject', changeIds: string[] | 'all'): Promise<void>;
  /** Undo the accepted changes of the proposal's turn. */
  revert(): Promise<void>;
  /** Open the notebook and bring the change into view, its Accept focused. */
  reveal(changeId: string): Promise<void>;
}

/** A refusal as said to the person: the server's message and, when it gives one, what to do. */
function messageOf(reason: unknown): string {
  if (reason instanceof AnalystApiError && reason.hint) {
    return `${reason.message} (${reason.hint})`;
  }
  return reason instanceof Error ? reason.message : String(reason);
}

export function useProposal(threadId: string, proposalId: string): IProposalReview {
  const { client, notebooks, commands } = useAnalyst();
  const [state, dispatch] = React.useReducer(reviewReducer, EMPTY_REVIEW);
  const [drawn, setDrawn] = React.useState<IProposalShown | null>(null);
  const proposal = state.proposals.find(p => p.proposal_id === proposalId) ?? null;

  const load = React.useCallback(async () => {
    try {
      dispatch({ type: 'loaded', proposals: await listProposals(client, threadId) });
    } catch (reason) {
      dispatch({ type: 'refused', message: messageOf(reason) });
    }
  }, [client, threadId]);

  React.useEffect(() => {
    void load();
    // A decision taken in another card of the thread (a revert of the turn) changes this one.
    return onProposalsChanged(threadId, () => void load());
  }, [load, threadId]);

  const panelOf = React.useCallback(
    () => (proposal && notebooks ? openNotebook(notebooks, proposal.notebook) : null),
    [proposal, notebooks]
  );

  const decide = React.useCallback(
    async (kind: 'accept' | 'reject', changeIds: string[] | 'all') => {
      dispatch({ type: 'deciding', decision: { kind, proposalId, changeIds } });
      try {
        const panel = panelOf();
        await saveIfDirty(panel);
        const updated = await decideChanges(client, threadId, proposalId, kind, changeIds);
        if (kind === 'accept') {
          await reloadNotebook(panel);
        }
        dispatch({ type: 'decided', proposal: updated });
        proposalsChanged(threadId);
      } catch (reason) {
        dispatch({ type: 'refused', message: messageOf(reason) });
        // Read again, here and in the rest of the panel, what the server holds now (the
        // notebook was saved): a change that conflicts with an edit says so on its cell, its
        // Accept disabled.
        proposalsChanged(threadId);
      }
    },
    [client, threadId, proposalId, panelOf]
  );

  const revert = React.useCallback(async () => {
    if (proposal === null) {
      return;
    }
    dispatch({ type: 'deciding', decision: { kind: 'revert', turnId: proposal.turn_id } });
    try {
      const panel = panelOf();
      await revertTurn(client, threadId, proposal.turn_id);
      await reloadNotebook(panel);
      dispatch({ type: 'decided' });
      proposalsChanged(threadId);
    } catch (reason) {
      dispatch({ type: 'refused', message: messageOf(reason) });
    }
  }, [client, threadId, proposal, panelOf]);

  // Drawn on the notebook while it is open: again when its cells change (a reload replaces
  // them), when it is opened later, and when the proposal changes.
  const busy = state.busy !== null;
  const error = state.error;
  React.useEffect(() => {
    if (proposal === null || notebooks === null) {
      return;
    }
    const actions = {
      busy,
      error,
      decide: (_p: string, k: 'accept' | 'reject', ids: string[] | 'all') => void decide(k, ids)
    };
    const revertible = proposal.changes.some(c => c.status === 'accepted');
    let frame = 0;
    const draw = (): void => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(() => {
        const panel = openNotebook(notebooks, proposal.notebook);
        setDrawn(panel ? drawProposal(panel, proposal, actions) : null);
        if (panel && revertible) {
          showRevertButton(
            panel.toolbar,
            proposal.turn_id,
            proposal.proposal_id,
            () => void revert(),
            !busy
          );
        } else if (panel) {
          hideRevertButton(panel.toolbar, proposal.turn_id, proposal.proposal_id);
        }
      });
    };
    draw();
    const watched = new Set<unknown>();
    const watch = (): void => {
      const panel = openNotebook(notebooks, proposal.notebook);
      const model = panel?.content.model;
      if (panel && model && !watched.has(model)) {
        watched.add(model);
        model.cells.changed.connect(draw);
        model.contentChanged.connect(draw);
      }
    };
    watch();
    const opened = (): void => {
      watch();
      draw();
    };
    notebooks.widgetAdded.connect(opened);
    return () => {
      cancelAnimationFrame(frame);
      notebooks.widgetAdded.disconnect(opened);
      const panel = openNotebook(notebooks, proposal.notebook);
      panel?.content.model?.cells.changed.disconnect(draw);
      panel?.content.model?.contentChanged.disconnect(draw);
      if (panel) {
        clearProposals(panel, proposal.proposal_id);
        hideRevertButton(panel.toolbar, proposal.turn_id, proposal.proposal_id);
      }
    };
  }, [proposal, notebooks, busy, error, decide, revert]);

  const reveal = React.useCallback(
    async (changeId: string) => {
      if (proposal === null || notebooks === null) {
        return;
      }
      let panel = openNotebook(notebooks, proposal.notebook);
      if (commands !== null) {
        await commands.execute('docmanager:open', { path: proposal.notebook });
        panel = openNotebook(notebooks, proposal.notebook);
      }
      if (panel === null) {
        return;
      }
      await panel.context.ready;
      let button = revealChange(panel, changeId);
      if (button === null) {
        drawProposal(panel, proposal, {
          busy,
          error,
          decide: (_p, k, ids) => void decide(k, ids)
        });
        button = revealChange(panel, changeId);
      }
      // Opening the notebook focuses its active cell once that cell is ready: the keyboard
      // stays in the change meanwhile (on the control the person last moved it to).
      if (button !== null) {
        keepFocusInChange(panel, changeId, button);
      }
    },
    [proposal, notebooks, commands, busy, error, decide]
  );

  const shown = drawn ?? (proposal ? proposalShown(proposal, () => '') : null);
  return { state, proposal, shown, decide, revert, reveal };
}
