import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as path from 'path';

import { ask, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * Proposed cells where the notebook is, at JupyterLab's default sidebar width, with the
 * scripted model (data/lab_script.json: 'Propose cells' proposes two new cells after `load`
 * and a new source for `show`; 'Propose tidying the notebook' deletes `load` and gives `show`
 * a new source): the diff drawn on the notebook's cells, inline or side by side, accept one,
 * reject one, revert the turn from the panel or the notebook's toolbar, each reflected in the
 * open notebook as in its file, by keyboard from the panel's links; a change to a cell the
 * user edited since is refused, and both the notebook and the panel say why.
 */

const CELLS = [
  { id: 'intro', cell_type: 'markdown', source: '# Sales study' },
  { id: 'load', cell_type: 'code', source: 'x = 1\nprint(x)' },
  { id: 'show', cell_type: 'code', source: 'y = 2\nprint(y)' }
];

function notebookJson(): Record<string, unknown> {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }
    },
    cells: CELLS.map(c =>
      c.cell_type === 'code'
        ? { ...c, metadata: {}, execution_count: null, outputs: [] }
        : { ...c, metadata: {} }
    )
  };
}

/** The sources of the notebook's file, as the server reads it. */
async function fileSources(page: IJupyterLabPageFixture, file: string): Promise<string[]> {
  const reply = await page.request.get(`api/contents/${file}?content=1`);
  if (!reply.ok()) {
    // Polled while the server writes it: read again.
    return [`HTTP ${reply.status()}: ${await reply.text()}`];
  }
  const model = (await reply.json()) as { content: { cells: { source: string }[] } };
  return model.content.cells.map(c => c.source);
}

/** The sources of the notebook open in JupyterLab (its model, not its file). */
async function labSources(page: IJupyterLabPageFixture, file: string): Promise<string[]> {
  return page.evaluate(name => {
    interface ILabNotebook {
      context?: { path: string };
      content: { model: { sharedModel: { cells: { getSource(): string }[] } } };
    }
    const app = (
      window as unknown as { jupyterapp: { shell: { widgets(area: string): Iterable<unknown> } } }
    ).jupyterapp;
    for (const widget of app.shell.widgets('main')) {
      const nb = widget as ILabNotebook;
      if (nb.context?.path === name) {
        return nb.content.model.sharedModel.cells.map(c => c.getSource());
      }
    }
    return [];
  }, file);
}

async function proposedNotebook(
  page: IJupyterLabPageFixture,
  tmpPath: string,
  prompt: string
): Promise<{ panel: Locator; file: string; card: Locator; notebook: Locator }> {
  const file = `${tmpPath}/study.ipynb`;
  await page.contents.uploadContent(JSON.stringify(notebookJson()), 'text', file);
  const panel = await openPanel(page, { widen: false });
  await newThread(panel);
  await page.notebook.openByPath(file);
  await expect(panel.locator('.jp-AnalystAttach')).toHaveAttribute('data-attached', file);
  await ask(panel, prompt);
  await expect(panel.locator('.jp-AnalystTurn').last()).toHaveAttribute('data-status', 'completed');
  const card = panel.locator('[data-card="propose_cells"]');
  await expect(card).toBeVisible();
  const notebook = page.locator('.jp-NotebookPanel:visible');
  return { panel, file, card, notebook };
}

test.describe('proposed cells', () => {
  test('shown as diffs in the notebook; accept one, reject one, revert, by keyboard', async ({
    page,
    tmpPath
  }) => {
    const { panel, file, card, notebook } = await proposedNotebook(
      page,
      tmpPath,
      'Propose cells for the total'
    );
    const original = CELLS.map(c => c.source);

    // The panel lists the three pending changes; the notebook draws them on its cells.
    const links = card.locator('.jp-AnalystProposals-link');
    await expect(links).toHaveCount(3);
    await expect(links).toHaveText([
      /New cell\s+compute the total/,
      /New cell\s+say what the total is/,
      /Changed cell\s+print y with its name/
    ]);
    const changes = notebook.locator('.jp-AnalystProposal-change');
    await expect(changes).toHaveCount(3);
    const replaced = notebook.locator('.jp-AnalystProposal-replace');
    await expect(replaced.locator('.jp-AnalystProposal-line.jp-mod-del')).toHaveText([
      '- y = 2',
      '- print(y)'
    ]);
    await expect(replaced.locator('.jp-AnalystProposal-line.jp-mod-add')).toHaveText([
      '+ y = 3',
      "+ print('y is', y)"
    ]);
    const total = notebook.locator('.jp-AnalystProposal-insert').first();
    await expect(total.locator('.jp-AnalystProposal-outputs')).toHaveText('total is 42');
    await expect(notebook.locator('.jp-Cell[data-analyst-proposal]')).toHaveCount(1);
    await expect(
      notebook.getByRole('button', { name: 'Accept all proposed changes' })
    ).toBeVisible();
    // Nothing of it is in the notebook: not its file, not the model JupyterLab holds.
    expect(await fileSources(page, file)).toEqual(original);
    expect(await labSources(page, file)).toEqual(original);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-notebook.png') });
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'proposals-card.png') });

    // Keyboard: the panel's link brings the change into view, its Accept focused; Enter accepts.
    await links.nth(2).focus();
    await page.keyboard.press('Enter');
    const acceptReplace = notebook.getByRole('button', { name: 'Accept: print y with its name' });
    await expect(acceptReplace).toBeFocused();
    // Tab reaches its Reject, Shift+Tab comes back; the notebook's own keys do not act.
    await page.keyboard.press('Tab');
    await expect(
      notebook.getByRole('button', { name: 'Reject: print y with its name' })
    ).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(acceptReplace).toBeFocused();
    await page.keyboard.press('Enter');
    const accepted = [original[0], original[1], "y = 3\nprint('y is', y)"];
    await expect.poll(() => fileSources(page, file)).toEqual(accepted);
    // The open notebook holds what its file holds, unmodified: no "changed on disk" to resolve.
    await expect.poll(() => labSources(page, file)).toEqual(accepted);
    await expect(changes).toHaveCount(2);
    await expect(links).toHaveCount(2);
    await expect(card.locator('.jp-AnalystProposals-note')).toContainText('1 accepted');

    // Reject one: the notebook is not touched and the change is gone.
    await notebook.getByRole('button', { name: 'Reject: say what the total is' }).click();
    await expect(changes).toHaveCount(1);
    expect(await fileSources(page, file)).toEqual(accepted);
    await expect(card.locator('.jp-AnalystProposals-note')).toContainText('1 rejected');

    // Accept the other: a new cell after `load`.
    await notebook.getByRole('button', { name: 'Accept: compute the total' }).click();
    const withTotal = [
      original[0],
      original[1],
      "total = 40 + 2\nprint('total is', total)",
      accepted[2]
    ];
    await expect.poll(() => fileSources(page, file)).toEqual(withTotal);
    await expect.poll(() => labSources(page, file)).toEqual(withTotal);
    await expect(changes).toHaveCount(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-accepted.png') });

    // Saving the reloaded notebook raises no conflict with its file.
    await page.notebook.save();
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);

    // Revert the turn: the file and the open notebook as they were.
    await card.getByRole('button', { name: 'Revert this turn' }).click();
    await expect.poll(() => fileSources(page, file)).toEqual(original);
    await expect.poll(() => labSources(page, file)).toEqual(original);
    await expect(card.locator('.jp-AnalystProposals-note')).toContainText('2 reverted');
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'proposals-reverted.png') });
  });

  test('a proposal that failed in the sandbox shows its error and no Accept all', async ({
    page,
    tmpPath
  }) => {
    const { card, notebook } = await proposedNotebook(
      page,
      tmpPath,
      'Propose a failing cell in euros'
    );
    const failed = notebook.locator('.jp-AnalystProposal-change.jp-mod-failed');
    await expect(failed).toHaveCount(1);
    await expect(failed).toContainText('failed in the sandbox');
    await expect(failed.locator('.jp-AnalystProposal-outputs')).toContainText(
      'ValueError: no such column: revenue_eur'
    );
    await expect(notebook.getByRole('button', { name: 'Accept all proposed changes' })).toHaveCount(
      0
    );
    await expect(card.getByRole('button', { name: 'Accept all' })).toHaveCount(0);
    await expect(card.locator('.jp-AnalystProposals')).toHaveAttribute('data-failed', 'true');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-failed.png') });
  });

  test('a proposed cell reading a name only the sandbox has says so before it is accepted', async ({
    page,
    tmpPath
  }) => {
    const { card, notebook } = await proposedNotebook(
      page,
      tmpPath,
      'Propose a cell on what you computed'
    );
    const insert = notebook.locator('.jp-AnalystProposal-insert');
    // It ran in the sandbox, where the step before it made `rev` ...
    await expect(insert.locator('.jp-AnalystProposal-outputs')).toHaveText('revenue is 42');
    // ... and the notebook says no cell of its own defines `rev`, in the cell and in the panel.
    await expect(insert.getByRole('note')).toHaveText(
      "Uses rev, which no cell above it defines: it ran in the analyst's sandbox, where it exists; " +
        'in your kernel it raises NameError until a cell before it defines it.'
    );
    await expect(card.locator('.jp-AnalystProposals-link')).toHaveText([
      /New cell \(uses undefined names\)\s+print the revenue/
    ]);
    // The person decides: Accept is still offered.
    await expect(notebook.getByRole('button', { name: 'Accept: print the revenue' })).toBeEnabled();
    await insert.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-undefined-names.png') });
  });

  test('a replaced cell side by side, switched by keyboard, legible beside the panel', async ({
    page,
    tmpPath
  }) => {
    const { card, notebook } = await proposedNotebook(page, tmpPath, 'Propose cells for the total');
    const replaced = notebook.locator('.jp-AnalystProposal-replace');
    const layouts = replaced.getByRole('group', { name: 'Diff view: print y with its name' });
    const inline = layouts.getByRole('button', { name: 'Inline' });
    const split = layouts.getByRole('button', { name: 'Side by side' });
    await expect(inline).toHaveAttribute('aria-pressed', 'true');
    await expect(replaced.locator('.jp-AnalystProposal-diff')).toBeVisible();
    await expect(replaced.locator('.jp-AnalystProposal-split')).toBeHidden();

    // From the panel's link to the change's Accept, back one key to the switch.
    await card.locator('.jp-AnalystProposals-link').nth(2).focus();
    await page.keyboard.press('Enter');
    await expect(
      notebook.getByRole('button', { name: 'Accept: print y with its name' })
    ).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(split).toBeFocused();
    // The notebook changes under the proposal (another cell edited): the proposal is drawn
    // again, and the keyboard stays on the same control of the new drawing.
    await replaced.evaluate(node => node.setAttribute('data-before-edit', ''));
    await page.evaluate(() => {
      const widget = (
        window as unknown as {
          jupyterapp: {
            shell: {
              currentWidget: {
                content: { model: { sharedModel: { cells: { setSource(s: string): void }[] } } };
              };
            };
          };
        }
      ).jupyterapp.shell.currentWidget;
      widget.content.model.sharedModel.cells[0].setSource('# Sales study, edited');
    });
    await expect(notebook.locator('.jp-AnalystProposal-replace[data-before-edit]')).toHaveCount(0);
    await expect(replaced).toHaveCount(1);
    await expect(split).toBeFocused();
    // The notebook focuses its active cell late, as on a busy machine once the cell is ready:
    // the keyboard is put back on the switch.
    await notebook
      .locator('.jp-Cell.jp-mod-active')
      .evaluate(cell => (cell as HTMLElement).focus());
    await expect(split).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(split).toHaveAttribute('aria-pressed', 'true');
    await expect(inline).toHaveAttribute('aria-pressed', 'false');
    const table = replaced.getByRole('table', { name: 'The cell now and as proposed' });
    await expect(table).toBeVisible();
    await expect(replaced.locator('.jp-AnalystProposal-diff')).toBeHidden();
    await expect(table.getByRole('columnheader')).toHaveText(['Now', 'Proposed']);
    // The lines removed beside the lines that replace them, row by row.
    await expect(table.locator('tbody tr')).toHaveCount(2);
    await expect(table.locator('tbody tr').first().locator('td')).toHaveText([
      '- y = 2',
      '+ y = 3'
    ]);
    await expect(table.locator('tbody tr').nth(1).locator('td')).toHaveText([
      '- print(y)',
      "+ print('y is', y)"
    ]);
    // Legible at the notebook's width beside the panel: no line cut off, each side holds a
    // line of 20 characters of code without wrapping it.
    const fits = await table.evaluate(node => {
      const probe = document.createElement('span');
      probe.textContent = '- print(y) + z == 42';
      probe.style.whiteSpace = 'pre';
      node.querySelector('td')!.append(probe);
      const line = probe.getBoundingClientRect().width;
      probe.remove();
      return {
        overflow: node.scrollWidth - node.clientWidth,
        columns: Array.from(node.querySelectorAll('td')).map(td => td.clientWidth),
        line
      };
    });
    expect(fits.overflow).toBeLessThanOrEqual(0);
    for (const width of fits.columns) {
      expect(width).toBeGreaterThan(fits.line);
    }
    // The keyboard is still on the switch (nothing redrawn under it), and the notebook's own
    // keys did not act: the cells are as they were.
    await expect(split).toBeFocused();
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    await notebook.locator('.jp-AnalystProposal-replace').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-side-by-side.png') });

    // Back to inline with the other button of the switch.
    await page.keyboard.press('Shift+Tab');
    await expect(inline).toBeFocused();
    await page.keyboard.press('Space');
    await expect(inline).toHaveAttribute('aria-pressed', 'true');
    await expect(replaced.locator('.jp-AnalystProposal-diff')).toBeVisible();
    await expect(table).toBeHidden();
  });

  test('a deleted cell, reverted from the notebook; a change to a cell edited since is refused', async ({
    page,
    tmpPath
  }) => {
    const { panel, file, card, notebook } = await proposedNotebook(
      page,
      tmpPath,
      'Propose tidying the notebook'
    );
    const original = CELLS.map(c => c.source);
    await expect(card.locator('.jp-AnalystProposals-link')).toHaveText([
      /Deleted cell\s+drop the unused x/,
      /Changed cell\s+name y in its output/
    ]);

    // The panel lists the proposals with changes, wherever the conversation is
    // scrolled; the link goes to the proposal's card, the keyboard on its first change.
    const pending = panel.getByRole('navigation', { name: 'Pending proposals' });
    await expect(pending).toContainText('Proposals to review:');
    const toCard = pending.getByRole('button', { name: 'study.ipynb: 2 changes' });
    await toCard.focus();
    await page.keyboard.press('Enter');
    await expect(card.locator('.jp-AnalystProposals-link').first()).toBeFocused();

    // The deletion: the cell marked, the change says what Accept does.
    const deletion = notebook.locator('.jp-AnalystProposal-delete');
    await expect(deletion).toContainText('Proposed deletion of this cell');
    await expect(deletion).toContainText('Accepting removes this cell from the notebook.');
    const marked = notebook.locator('.jp-Cell.jp-AnalystProposal-deleted');
    await expect(marked).toHaveCount(1);
    await expect(marked.locator('.jp-Cell-inputWrapper')).toContainText('x = 1');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-delete.png') });

    // Accepted: the cell is gone from the file and from the open notebook.
    await notebook.getByRole('button', { name: 'Accept: drop the unused x' }).click();
    const deleted = [original[0], original[2]];
    await expect.poll(() => fileSources(page, file)).toEqual(deleted);
    await expect.poll(() => labSources(page, file)).toEqual(deleted);
    await expect(marked).toHaveCount(0);
    await expect(pending).toContainText('study.ipynb: 1 change');

    // Revert from the notebook's own toolbar: the file as it was before the accept.
    const revert = notebook.locator('.jp-Toolbar').getByRole('button', {
      name: /^Revert analyst changes/
    });
    await expect(revert).toBeVisible();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-revert-toolbar.png') });
    await revert.click();
    await expect.poll(() => fileSources(page, file)).toEqual(original);
    await expect.poll(() => labSources(page, file)).toEqual(original);
    await expect(revert).toHaveCount(0);
    await expect(card.locator('.jp-AnalystProposals-note')).toContainText('1 reverted');
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);

    // The user edits `show`; accepting the model's change to it is refused, said plainly in
    // the notebook and in the panel, and the user's edit is what the file keeps.
    await page.notebook.setCell(2, 'code', 'y = 20\nprint(y)');
    const change = notebook.locator('.jp-AnalystProposal-replace');
    await change.getByRole('button', { name: 'Accept: name y in its output' }).click();
    const edited = [original[0], original[1], 'y = 20\nprint(y)'];
    await expect.poll(() => fileSources(page, file)).toEqual(edited);
    const refused = notebook.locator('.jp-AnalystProposal-refused');
    await expect(refused).toHaveAttribute('role', 'alert');
    await expect(refused).toContainText("cell 'show' was edited since the model read it");
    await expect(change.locator('.jp-AnalystProposal-conflict')).toContainText(
      "Conflict: cell 'show' was edited since the model read it"
    );
    await expect(
      change.getByRole('button', { name: 'Accept: name y in its output' })
    ).toBeDisabled();
    // Nothing left that could be accepted: no Accept all, in the notebook or the card.
    await expect(notebook.getByRole('button', { name: 'Accept all proposed changes' })).toHaveCount(
      0
    );
    await expect(card.getByRole('button', { name: 'Accept all' })).toHaveCount(0);
    await expect(card.getByRole('alert')).toContainText(
      "cell 'show' was edited since the model read it"
    );
    await expect(card.locator('.jp-AnalystProposals-link')).toHaveText([
      /Changed cell \(conflict\)\s+name y in its output/
    ]);
    expect(await labSources(page, file)).toEqual(edited);
    await expect(pending).toContainText('study.ipynb: 1 change · 1 conflict');
    await change.scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'proposals-conflict.png') });
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'proposals-conflict-card.png') });

    // Rejected: the change is gone, the user's edit stays.
    await change.getByRole('button', { name: 'Reject: name y in its output' }).click();
    await expect(notebook.locator('.jp-AnalystProposal-change')).toHaveCount(0);
    expect(await fileSources(page, file)).toEqual(edited);
    await expect(pending).toHaveCount(0);
  });
});
