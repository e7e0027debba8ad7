import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import type { Locator, Request } from '@playwright/test';
import * as path from 'path';

import { ask, DEMO_ANSWER, DEMO_QUESTION, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * At JupyterLab's default sidebar width, with the scripted model (data/lab_script.json):
 * the chip above the prompt says which notebook a question carries, and once detached the
 * question goes with none (the request names no notebook and the model's prompt holds no
 * outline).
 */

/** A question the scripted model has no script for: it answers at once, with no step. */
const QUICK_QUESTION = 'Which notebook do you see?';

interface IContextUsage {
  type: string;
  turn_id: string;
  parts: Record<string, number>;
}

/** The POST of a turn, caught as the question is asked; its JSON body. */
async function askCaught(
  page: IJupyterLabPageFixture,
  panel: Locator,
  prompt: string
): Promise<Record<string, unknown>> {
  const [request] = await Promise.all([
    page.waitForRequest(
      (r: Request) =>
        r.method() === 'POST' && /\/analyst\/api\/threads\/[^/?]+\/turns(\?|$)/.test(r.url())
    ),
    ask(panel, prompt)
  ]);
  return request.postDataJSON() as Record<string, unknown>;
}

/** The tokens of the notebook's outline in the prompt of each turn's first model call. */
async function notebookTokens(page: IJupyterLabPageFixture, threadId: string): Promise<number[]> {
  const reply = await page.request.get(`analyst/api/threads/${threadId}/events`);
  const events = ((await reply.json()) as { events: IContextUsage[] }).events;
  const firstCalls = new Map<string, number>();
  for (const event of events) {
    if (event.type === 'context_usage' && !firstCalls.has(event.turn_id)) {
      firstCalls.set(event.turn_id, event.parts.notebook ?? 0);
    }
  }
  return [...firstCalls.values()];
}

/** What a test reads of the notebook panel in front, in the page. */
interface INotebookInPage {
  context: { model: { dirty: boolean } };
  sessionContext: {
    kernelDisplayName: string;
    session: { kernel: { status: string } | null } | null;
  };
}

test.describe('the attached notebook', () => {
  test('the chip names the notebook a question carries; detached, the question carries none', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    const chip = panel.locator('.jp-AnalystAttach');

    // No notebook open: no chip.
    await expect(panel.getByRole('textbox', { name: 'Ask about your data' })).toBeVisible();
    await expect(chip).toHaveCount(0);

    await page.notebook.createNew('attached.ipynb');
    await page.notebook.setCell(0, 'markdown', '# Quarterly review');
    // The notebook's path in the Jupyter folder (galata opens it in the test's own folder).
    await expect(chip).toHaveAttribute('data-attached', /(^|\/)attached\.ipynb$/);
    const notebookPath = (await chip.getAttribute('data-attached')) ?? '';
    const name = chip.locator('.jp-AnalystAttach-chip');
    await expect(name).toHaveText(/attached\.ipynb/);
    await expect(name).toHaveAttribute(
      'title',
      `Your question carries ${notebookPath}: the model sees its outline and can read its cells. It follows the notebook in front. Click to choose another.`
    );
    // It fits the default width: the chip and its detach button inside the panel.
    const panelBox = (await panel.boundingBox())!;
    const detach = chip.getByRole('button', { name: 'Detach attached.ipynb' });
    const detachBox = (await detach.boundingBox())!;
    expect(detachBox.x + detachBox.width).toBeLessThanOrEqual(panelBox.x + panelBox.width);
    const chipShot = path.join(SCREENSHOTS, 'notebook-chip.png');
    await panel.screenshot({ path: chipShot });
    await testInfo.attach('notebook-chip', { path: chipShot, contentType: 'image/png' });

    // Attached: the question carries the notebook, and the model's prompt has its outline.
    expect(await askCaught(page, panel, QUICK_QUESTION)).toEqual({
      prompt: QUICK_QUESTION,
      notebook: notebookPath
    });
    await expect(panel.locator('.jp-AnalystTurn').nth(0)).toHaveAttribute(
      'data-status',
      'completed'
    );

    // The menu offers the open notebook, following the front, and none.
    await name.click();
    const menu = chip.getByRole('menu');
    await expect(menu.getByRole('menuitemradio')).toHaveText([
      /^The notebook in front\s*attached\.ipynb$/,
      'attached.ipynb',
      'No notebook'
    ]);
    const menuShot = path.join(SCREENSHOTS, 'notebook-chip-menu.png');
    await panel.screenshot({ path: menuShot });
    await testInfo.attach('notebook-chip-menu', { path: menuShot, contentType: 'image/png' });
    await page.keyboard.press('Escape');
    await expect(menu).toHaveCount(0);

    // Detached: a quiet "No notebook", and the question goes without one.
    await detach.click();
    await expect(chip).toHaveAttribute('data-choice', 'detached');
    await expect(name).toHaveText(/No notebook/);
    await expect(detach).toHaveCount(0);
    const detachedShot = path.join(SCREENSHOTS, 'notebook-chip-detached.png');
    await panel.screenshot({ path: detachedShot });
    await testInfo.attach('notebook-chip-detached', {
      path: detachedShot,
      contentType: 'image/png'
    });
    expect(await askCaught(page, panel, QUICK_QUESTION)).toEqual({ prompt: QUICK_QUESTION });
    await expect(panel.locator('.jp-AnalystTurn').nth(1)).toHaveAttribute(
      'data-status',
      'completed'
    );

    // The model saw the notebook's outline in the first turn, none in the second.
    const tokens = await notebookTokens(page, threadId);
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).toBeGreaterThan(0);
    expect(tokens[1]).toBe(0);
  });

  test('the audit notebook opens unchanged on the sandboxed kernel, and a question does not carry it', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    await expect(panel.locator('.jp-AnalystTurn').nth(0)).toContainText(DEMO_ANSWER);
    const actions = panel.locator('.jp-AnalystThreadActions');
    await actions.getByRole('button', { name: 'Export' }).click();
    const link = actions.locator('.jp-AnalystThreadActions-path');
    await expect(link).toHaveText(new RegExp(`-${threadId.slice(-8)}\\.ipynb$`));
    const auditPath = (await link.textContent()) ?? '';

    // Opened as anyone opens a file: from the file browser.
    await page.filebrowser.open(auditPath);
    const name = path.basename(auditPath);
    await expect(page.locator('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current')).toHaveText(
      new RegExp(name.replace('.', '\\.'))
    );
    // Its kernel started and idle: whatever the start writes into the notebook is written.
    await page.waitForFunction(() => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as INotebookInPage | null;
      return widget?.sessionContext?.session?.kernel?.status === 'idle';
    });
    const state = await page.evaluate(() => {
      const widget = window.jupyterapp.shell.currentWidget as unknown as INotebookInPage;
      return { dirty: widget.context.model.dirty, kernel: widget.sessionContext.kernelDisplayName };
    });
    expect(state).toEqual({ dirty: false, kernel: 'Python 3 (jupyter-analyst sandbox)' });
    await expect(page.locator('.jp-mod-dirty')).toHaveCount(0);
    const shot = path.join(SCREENSHOTS, 'audit-notebook-opened.png');
    await page.screenshot({ path: shot });
    await testInfo.attach('audit-notebook-opened', { path: shot, contentType: 'image/png' });

    // In front, yet the next question goes without it: it is the thread's record.
    await expect(panel.locator('.jp-AnalystAttach')).toHaveCount(0);
    expect(await askCaught(page, panel, QUICK_QUESTION)).toEqual({ prompt: QUICK_QUESTION });
  });
});
