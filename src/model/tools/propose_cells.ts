/** The `propose_cells` tool: changes to the attached notebook, kept for a person to accept. */

import { objects, text } from './read';
import { builtin, type ViewOf } from './view';

/** `proposal_id` is the proposal made, or the one withdrawn by a call that only withdraws. */
export type ProposeCellsView = ViewOf<'propose_cells', 'changes'> & { proposal_id: string };

export const PROPOSE_CELLS = builtin<'propose_cells', ProposeCellsView>({
  tool: 'propose_cells',
  label: 'Proposed cells',
  parse: r => {
    const id = text(r.proposal_id) ?? text(r.withdrawn);
    if (id === undefined) {
      return null;
    }
    return {
      proposal_id: id,
      status: r.status === 'failed' || r.status === 'withdrawn' ? r.status : 'proposed',
      changes: objects(r.changes).map(c => ({
        change_id: text(c.change_id) ?? '',
        op: c.op === 'replace' || c.op === 'delete' ? c.op : 'insert'
      })),
      note: text(r.note) ?? ''
    };
  }
});
