/**
 * Proposed changes shown where the notebook is: each pending change of a proposal is drawn
 * on the cell it concerns (a replaced cell's source line by line, a deleted cell marked, a
 * new cell after the cell it follows), with Accept and Reject, and Accept all / Reject all
 * on the proposal's first change. Only the cells' DOM is decorated: the notebook's model
 * never holds a proposed cell, so saving it saves the user's cells alone, until the server
 * writes an accepted change into the file and the open notebook is reloaded from it.
 */

import type { Cell } from '@jupyterlab/cells';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import {
  proposalShown,
  undefinedNote,
  type IChangeShown,
  type IProposalShown,
  type ProposalView
} from '../model';
import { diffView, element, inlineDiff } from './diffView';

/** The class of every node drawn for a proposal (removed before drawing again). */
export const PROPOSAL_CLASS = 'jp-AnalystProposal';
const MARKED = ['jp-AnalystProposal-replaced', 'jp-AnalystProposal-deleted'];

/** What the buttons drawn in the notebook do. */
export interface IProposalActions {
  decide(proposalId: string, kind: 'accept' | 'reject', changeIds: string[] | 'all'): void;
  /** A decision is under way: the buttons are disabled. */
  busy: boolean;
  /** The server's last refusal of a decision, said in the notebook as in the panel. */
  error?: string | null;
}

/** The open notebook at `path`, if any. */
export function openNotebook(tracker: INotebookTracker, path: string): NotebookPanel | null {
  return tracker.find(panel => panel.context.path === path) ?? null;
}

function cellsById(panel: NotebookPanel): Map<string, Cell> {
  return new Map(panel.content.widgets.map(cell => [cell.model.id, cell]));
}

/** Remove what was drawn for `proposalId` (every proposal's when null). */
export function clearProposals(panel: NotebookPanel, proposalId: string | null = null): void {
  const selector =
    proposalId === null
      ? `.${PROPOSAL_CLASS}`
      : `.${PROPOSAL_CLASS}[data-proposal-id="${CSS.escape(proposalId)}"]`;
  panel.content.node.querySelectorAll(selector).forEach(node => node.remove());
  for (const cell of panel.content.widgets) {
    // A cell the notebook has not put in its node yet (it renders cells lazily) too.
    cell.node.querySelectorAll(selector).forEach(node => node.remove());
    const owner = cell.node.dataset.analystProposal;
    if (proposalId === null || owner === proposalId) {
      cell.node.classList.remove(...MARKED);
      delete cell.node.dataset.analystProposal;
    }
  }
}

function button(
  label: string,
  ariaLabel: string,
  actions: IProposalActions,
  act: () => void,
  primary = false
): HTMLButtonElement {
  const node = element(
    'button',
    `jp-AnalystProposal-button${primary ? ' jp-mod-accept' : ''}`,
    label
  );
  node.type = 'button';
  node.setAttribute('aria-label', ariaLabel);
  node.disabled = actions.busy;
  // The notebook's own keys (Enter, arrows, A, B, D...) must not act on the cell beneath.
  node.addEventListener('keydown', event => event.stopPropagation());
  node.addEventListener('click', event => {
    event.stopPropagation();
    act();
  });
  return node;
}

const TITLES: Record<IChangeShown['op'], string> = {
  insert: 'Proposed new cell',
  replace: 'Proposed change to this cell',
  delete: 'Proposed deletion of this cell'
};

/** The header of a proposal, drawn once above its first change: Accept all / Reject all. */
function proposalHeader(shown: IProposalShown, actions: IProposalActions): HTMLElement {
  const header = element('div', 'jp-AnalystProposal-header');
  const n = shown.pending.length;
  header.append(
    element(
      'span',
      'jp-AnalystProposal-summary',
      shown.failed
        ? `Proposal failed in the sandbox: ${n} change${n === 1 ? '' : 's'} to look at one by one`
        : `Proposal: ${n} change${n === 1 ? '' : 's'} from the Data analyst`
    )
  );
  // Not when it failed in the sandbox, nor when every change conflicts with an edit.
  if (!shown.failed && shown.pending.some(c => c.conflict === null)) {
    header.append(
      button(
        'Accept all',
        'Accept all proposed changes',
        actions,
        () => actions.decide(shown.proposalId, 'accept', 'all'),
        true
      )
    );
  }
  header.append(
    button('Reject all', 'Reject all proposed changes', actions, () =>
      actions.decide(shown.proposalId, 'reject', 'all')
    )
  );
  if (actions.error) {
    const refused = element('p', 'jp-AnalystProposal-refused', `Not applied: ${actions.error}`);
    refused.setAttribute('role', 'alert');
    header.append(refused);
  }
  return header;
}

/** One change: its title and reason, its source (as a diff), its sandbox outputs, its buttons. */
function changeBlock(change: IChangeShown, actions: IProposalActions): HTMLElement {
  const failed = change.run === 'error';
  const block = element(
    'section',
    `jp-AnalystProposal-change jp-AnalystProposal-${change.op}${failed ? ' jp-mod-failed' : ''}`
  );
  block.dataset.changeId = change.changeId;
  block.setAttribute('aria-label', `${TITLES[change.op]}: ${change.reason}`);
  const title = element('div', 'jp-AnalystProposal-title');
  title.append(element('strong', '', TITLES[change.op]));
  if (failed) {
    title.append(element('span', 'jp-AnalystProposal-failed', 'failed in the sandbox'));
  }
  title.append(element('span', 'jp-AnalystProposal-reason', change.reason));
  block.append(title);
  if (change.op === 'replace') {
    block.append(diffView(change));
  } else if (change.op === 'insert') {
    block.append(inlineDiff(change.lines));
  } else {
    block.append(
      element(
        'p',
        'jp-AnalystProposal-deleteNote',
        'Accepting removes this cell from the notebook.'
      )
    );
  }
  if (change.outputs.length > 0) {
    const outputs = element('pre', 'jp-AnalystProposal-outputs', change.outputs.join('\n'));
    outputs.setAttribute('aria-label', 'Its outputs in the sandbox');
    block.append(outputs);
  }
  const undefinedText = undefinedNote(change);
  if (undefinedText !== null) {
    // Accepting stays possible (the person may define them next), but not unknowingly.
    const note = element('p', 'jp-AnalystProposal-undefined', undefinedText);
    note.setAttribute('role', 'note');
    block.append(note);
  }
  if (change.conflict) {
    // Why Accept is disabled: the cell was edited (or removed) since the model read it.
    block.classList.add('jp-mod-conflict');
    const conflict = element('p', 'jp-AnalystProposal-conflict');
    conflict.append(element('strong', '', 'Conflict: '), change.conflict);
    block.append(conflict);
  }
  const buttons = element('div', 'jp-AnalystProposal-buttons');
  buttons.append(
    button(
      'Accept',
      `Accept: ${change.reason}`,
      { ...actions, busy: actions.busy || change.conflict !== null },
      () => actions.decide(change.proposalId, 'accept', [change.changeId]),
      true
    ),
    button('Reject', `Reject: ${change.reason}`, actions, () =>
      actions.decide(change.proposalId, 'reject', [change.changeId])
    )
  );
  block.append(buttons);
  return block;
}

/** Draw `proposal`'s pending changes on the open notebook (what was drawn for it before is replaced). */
export function drawProposal(
  panel: NotebookPanel,
  proposal: ProposalView,
  actions: IProposalActions
): IProposalShown | null {
  const focused = focusedControl(panel, proposal.proposal_id);
  clearProposals(panel, proposal.proposal_id);
  if (proposal.notebook !== panel.context.path) {
    return null;
  }
  const cells = cellsById(panel);
  const shown = proposalShown(proposal, id => cells.get(id)?.model.sharedModel.getSource() ?? '');
  let header: HTMLElement | null = shown.pending.length ? proposalHeader(shown, actions) : null;
  for (const change of shown.pending) {
    const top = change.op === 'insert' && change.anchor === '';
    const cell = top ? panel.content.widgets[0] : cells.get(change.anchor);
    if (cell === undefined) {
      continue;
    }
    const wrapper = element('div', PROPOSAL_CLASS);
    wrapper.dataset.proposalId = shown.proposalId;
    if (header !== null) {
      wrapper.append(header);
      header = null;
    }
    wrapper.append(changeBlock(change, actions));
    if (change.op !== 'insert') {
      cell.node.classList.add(`jp-AnalystProposal-${change.op}d`);
      cell.node.dataset.analystProposal = shown.proposalId;
    }
    if (top) {
      cell.node.prepend(wrapper);
    } else {
      cell.node.append(wrapper);
    }
  }
  if (focused !== null) {
    restoreFocus(panel, proposal.proposal_id, focused);
  }
  return shown;
}

/** Where the keyboard was among a proposal's controls: its change (or header) and button. */
interface IFocusedControl {
  changeId: string | null;
  index: number;
}

function focusedControl(panel: NotebookPanel, proposalId: string): IFocusedControl | null {
  const active = document.activeElement;
  const wrapper = active?.closest<HTMLElement>(`.${PROPOSAL_CLASS}`);
  if (!active || !wrapper || wrapper.dataset.proposalId !== proposalId) {
    return null;
  }
  if (!panel.content.node.contains(wrapper)) {
    return null;
  }
  const change = active.closest<HTMLElement>('.jp-AnalystProposal-change');
  const scope = change ?? wrapper.querySelector('.jp-AnalystProposal-header');
  const index = scope ? Array.from(scope.querySelectorAll('button')).indexOf(active as never) : -1;
  return index < 0 ? null : { changeId: change?.dataset.changeId ?? null, index };
}

/**
 * A redraw (the notebook changed under the proposal: a cell edited, a reload) replaces the
 * proposal's nodes; the keyboard is put back on the same control, so a person tabbing through
 * a change does not find themselves at the top of the page.
 */
function restoreFocus(panel: NotebookPanel, proposalId: string, focused: IFocusedControl): void {
  const wrapperSelector = `.${PROPOSAL_CLASS}[data-proposal-id="${CSS.escape(proposalId)}"]`;
  const scope = panel.content.node.querySelector(
    focused.changeId === null
      ? `${wrapperSelector} .jp-AnalystProposal-header`
      : `${wrapperSelector} .jp-AnalystProposal-change[data-change-id="${CSS.escape(focused.changeId)}"]`
  );
  scope?.querySelectorAll<HTMLButtonElement>('button')[focused.index]?.focus({
    preventScroll: true
  });
}

/**
 * Bring a change into view in its notebook and put the keyboard on its Accept (its
 * cell made the active one, in command mode, so the notebook keeps the focus there); the
 * button, or null when the change is not drawn.
 */
export function revealChange(panel: NotebookPanel, changeId: string): HTMLButtonElement | null {
  const block = panel.content.node.querySelector<HTMLElement>(
    `.jp-AnalystProposal-change[data-change-id="${CSS.escape(changeId)}"]`
  );
  if (block === null) {
    return null;
  }
  const index = panel.content.widgets.findIndex(cell => cell.node.contains(block));
  if (index >= 0) {
    panel.content.mode = 'command';
    panel.content.activeCellIndex = index;
  }
  block.scrollIntoView({ block: 'center' });
  // Its Accept (or Reject), not the switch of its diff's layout before them.
  const first = block.querySelector<HTMLButtonElement>('.jp-AnalystProposal-buttons button');
  first?.focus();
  return first;
}

/** How long, at most, the keyboard is kept in a revealed change against the notebook's own focus. */
export const KEEP_FOCUS_MS = 5000;

/**
 * Keep the keyboard in a revealed change while the notebook settles. Opening and activating
 * a notebook focuses its active cell once that cell is ready, which on a busy machine can be
 * long after the change's button was focused: whenever the notebook itself takes the focus
 * (its cell or its own node), it is put back on the control of the change that last had it.
 * Ends at the person's first click, or after `KEEP_FOCUS_MS`; returns what ends it sooner.
 */
export function keepFocusInChange(
  panel: NotebookPanel,
  changeId: string,
  first: HTMLElement
): () => void {
  const root = panel.content.node;
  const selector = `.jp-AnalystProposal-change[data-change-id="${CSS.escape(changeId)}"]`;
  let last: HTMLElement = first;
  let place = -1;
  const controls = (): HTMLElement[] =>
    Array.from(root.querySelector(selector)?.querySelectorAll<HTMLElement>('button') ?? []);
  const onFocusIn = (event: FocusEvent): void => {
    const target = event.target as HTMLElement;
    const change = root.querySelector(selector);
    if (change?.contains(target)) {
      last = target;
      place = controls().indexOf(target);
      return;
    }
    const notebooksOwn =
      target === root ||
      target.classList.contains('jp-Cell') ||
      target.classList.contains('jp-Notebook');
    if (!notebooksOwn) {
      return;
    }
    // The same control, or its place in a change drawn again since.
    const back = last.isConnected ? last : (controls()[place] ?? controls()[0]);
    back?.focus({ preventScroll: true });
  };
  const stop = (): void => {
    root.removeEventListener('focusin', onFocusIn);
    document.removeEventListener('pointerdown', stop, true);
    window.clearTimeout(timer);
  };
  root.addEventListener('focusin', onFocusIn);
  document.addEventListener('pointerdown', stop, true);
  const timer = window.setTimeout(stop, KEEP_FOCUS_MS);
  place = controls().indexOf(first);
  first.focus();
  return stop;
}

/** Save the user's unsaved edits first, so the server decides against what the user sees. */
export async function saveIfDirty(panel: NotebookPanel | null): Promise<void> {
  if (panel !== null && panel.context.model.dirty) {
    await panel.context.save();
  }
}

/**
 * Read the notebook again from its file after the server wrote it (an accepted change, a
 * revert): the open document then holds what the file holds, and saving it later raises no
 * "file changed on disk" conflict.
 */
export async function reloadNotebook(panel: NotebookPanel | null): Promise<void> {
  if (panel !== null) {
    await panel.context.revert();
  }
}
