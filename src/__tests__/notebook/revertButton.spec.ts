/**
 * Revert from the notebook's own toolbar (a real JupyterLab Toolbar): one button per turn,
 * after Save, doing what it was last given, disabled while a decision is under way,
 * removed by the proposal that drew it.
 */

import { Toolbar } from '@jupyterlab/ui-components';
import { MessageLoop } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';
import { act } from 'react';

import {
  hideRevertButton,
  REVERT_TOOLTIP,
  revertItemName,
  showRevertButton
} from '../../notebook/revertButton';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

/** Run `draw` and let the toolbar's React buttons render. */
async function drawn(draw: () => void): Promise<void> {
  await act(async () => {
    draw();
    MessageLoop.flush();
    await new Promise(resolve => setTimeout(resolve, 0));
  });
}

/** The toolbar's Revert buttons (JupyterLab's toolbar buttons are `jp-button` elements). */
function revertButtons(toolbar: Toolbar): HTMLElement[] {
  return Array.from(toolbar.node.querySelectorAll<HTMLElement>(`[aria-label="${REVERT_TOOLTIP}"]`));
}

function attached(): Toolbar {
  const toolbar = new Toolbar();
  toolbar.addItem('save', new Widget());
  toolbar.addItem('spacer', Toolbar.createSpacerItem());
  Widget.attach(toolbar, document.body);
  return toolbar;
}

describe('the notebook toolbar’s Revert', () => {
  it('is shown once per turn after Save, reverts, and goes when hidden', async () => {
    const toolbar = attached();
    const reverted: string[] = [];
    await drawn(() =>
      showRevertButton(toolbar, 'turn_1', 'prop_1', () => reverted.push('first'), true)
    );
    const [first] = revertButtons(toolbar);
    // Drawn again (the cells changed): the same button, doing what it was last given.
    await drawn(() =>
      showRevertButton(toolbar, 'turn_1', 'prop_1', () => reverted.push('again'), true)
    );
    expect(Array.from(toolbar.names())).toEqual(['save', revertItemName('turn_1'), 'spacer']);
    const [button] = revertButtons(toolbar);
    expect(revertButtons(toolbar)).toHaveLength(1);
    expect(button).toBe(first);
    act(() => button.click());
    expect(reverted).toEqual(['again']);

    // Another proposal's cleanup leaves it; its own removes it.
    await drawn(() => hideRevertButton(toolbar, 'turn_1', 'prop_other'));
    expect(Array.from(toolbar.names())).toContain(revertItemName('turn_1'));
    await drawn(() => hideRevertButton(toolbar, 'turn_1', 'prop_1'));
    expect(Array.from(toolbar.names())).toEqual(['save', 'spacer']);
    toolbar.dispose();
  });

  it('is disabled while a decision is under way', async () => {
    const toolbar = attached();
    const reverted: string[] = [];
    await drawn(() =>
      showRevertButton(toolbar, 'turn_1', 'prop_1', () => reverted.push('x'), false)
    );
    const [button] = revertButtons(toolbar);
    expect(button.getAttribute('aria-disabled')).toBe('true');
    act(() => button.click());
    expect(reverted).toEqual([]);
    await drawn(() =>
      showRevertButton(toolbar, 'turn_1', 'prop_1', () => reverted.push('y'), true)
    );
    expect(revertButtons(toolbar)[0].getAttribute('aria-disabled')).toBe('false');
    toolbar.dispose();
  });
});
