/**
 * Revert from the notebook itself: while a turn has accepted changes in an open notebook, the
 * notebook's toolbar has a button that restores the file from the checkpoint taken before the
 * turn's first accepted change (the same decision as the panel's "Revert this turn").
 */

import { ToolbarButton, undoIcon, type Toolbar } from '@jupyterlab/ui-components';
import type { Widget } from '@lumino/widgets';

export const REVERT_LABEL = 'Revert analyst changes';

/** Its hover text and accessible name (an icon button: JupyterLab names it by its tooltip). */
export const REVERT_TOOLTIP = `${REVERT_LABEL}: restore the notebook as it was before this turn's accepted changes`;

/** A button shown: the proposal that drew it, whether it is enabled, what it does now. */
interface IShown {
  owner: string;
  enabled: boolean;
  revert: () => void;
  widget: Widget;
}

/** The buttons shown per notebook, by turn. */
const shownButtons = new WeakMap<Toolbar, Map<string, IShown>>();

function buttonsOf(toolbar: Toolbar): Map<string, IShown> {
  let buttons = shownButtons.get(toolbar);
  if (buttons === undefined) {
    buttons = new Map();
    shownButtons.set(toolbar, buttons);
  }
  return buttons;
}

/** The toolbar item's name for a turn (one button per turn, whichever proposal drew it). */
export function revertItemName(turnId: string): string {
  return `analyst-revert-${turnId}`;
}

/**
 * Show (or refresh) the turn's Revert button on a notebook's `toolbar`, drawn for `owner` (a
 * proposal of the turn); `enabled` false while a decision is under way.
 */
export function showRevertButton(
  toolbar: Toolbar,
  turnId: string,
  owner: string,
  revert: () => void,
  enabled: boolean
): void {
  const buttons = buttonsOf(toolbar);
  const current = buttons.get(turnId);
  if (current !== undefined && current.enabled === enabled && !current.widget.isDisposed) {
    // Drawn again (the notebook's cells changed): the same button, so the keyboard stays on it.
    current.owner = owner;
    current.revert = revert;
    return;
  }
  hideRevertButton(toolbar, turnId, null);
  const widget = new ToolbarButton({
    className: 'jp-AnalystProposal-revert',
    icon: undoIcon,
    tooltip: REVERT_TOOLTIP,
    enabled,
    // Not while a decision is under way, whatever the element does with a click when disabled.
    onClick: () => {
      const shown = buttons.get(turnId);
      if (shown?.enabled) {
        shown.revert();
      }
    }
  });
  widget.node.dataset.turnId = turnId;
  const name = revertItemName(turnId);
  // An icon after Save: the toolbar hides what does not fit from its end, and this must
  // stay in sight while there is something to revert.
  if (!toolbar.insertAfter('save', name, widget)) {
    toolbar.insertItem(0, name, widget);
  }
  buttons.set(turnId, { owner, enabled, revert, widget });
}

/** Remove the turn's Revert button, if `owner` drew it (any proposal's when null). */
export function hideRevertButton(toolbar: Toolbar, turnId: string, owner: string | null): void {
  const buttons = buttonsOf(toolbar);
  const shown = buttons.get(turnId);
  if (shown !== undefined && (owner === null || shown.owner === owner)) {
    shown.widget.dispose();
    buttons.delete(turnId);
  }
}
