import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as path from 'path';

import { ask, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * Proposed cells where the notebook is, at JupyterLab's default sidebar width, with the
 * scripted model (data/lab_script.json: 'Propose cells' proposes two new cells after `load`
 * and a new source for `show`): the diff drawn on the notebook's cells, accept one, reject
 * one, revert the turn, each reflected in the open notebook as in its file, by keyboard from
 * the panel's links.
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
});
