/**
 * The panel at JupyterLab's default sidebar width says what a turn waits for while something
 * it needs starts (the server's `starting` event), before the step that needs it shows
 * anything; and the thread list shows a thread made elsewhere (here the REST API, as a chat
 * or the CLI would) without a reload, read again at the interval the settings give.
 */

import { expect, galata, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as path from 'path';

import { ask, DEMO_QUESTION, newThread, openPanel, SCREENSHOTS } from './lab';

const KERNEL_STARTING = 'Starting the sandboxed Python kernel…';

function turn(panel: Locator, index: number): Locator {
  return panel.locator('.jp-AnalystTurn').nth(index);
}

test.describe('while something a turn needs starts', () => {
  test('the status line says the kernel starts, before its step prints anything', async ({
    page
  }) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    await expect(turn(panel, 0)).toHaveAttribute('data-status', 'completed');
    // The summarizer's call after the answer joins the footer's figures, said apart.
    const cost = turn(panel, 0).locator('[data-summary="cost"]');
    await expect(cost.locator('[data-cost="summarizer"]')).toContainText(
      "of which the thread's summary, updated after the answer: 1 model call"
    );
    await expect(cost.locator('[data-cost="usage"]')).toContainText(/^\d+ model calls/);
    await cost.screenshot({ path: path.join(SCREENSHOTS, 'turn-cost-summarizer.png') });

    // The thread's kernel is shut down through Jupyter's own kernels API (as its culler or a
    // user in the kernel list would): the next Python step of the thread starts one, cold
    // (its folder holds the files of the first turn: no warm kernel is given to it).
    const shown = (await (await page.request.get(`analyst/api/threads/${threadId}`)).json()) as {
      kernel: { id: string } | null;
    };
    expect(shown.kernel).not.toBeNull();
    expect((await page.request.delete(`api/kernels/${shown.kernel!.id}`)).status()).toBe(204);

    // What the status line says, and when the new step first prints, in the order they come.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { analystSeen: string[] }).analystSeen = seen;
      const root = document.getElementById('jupyter-analyst-panel')!;
      const look = (): void => {
        const status = root.querySelector('.jp-AnalystConversation-status')?.textContent ?? '';
        if (status && seen[seen.length - 1] !== `status: ${status}`) {
          seen.push(`status: ${status}`);
        }
        const turns = root.querySelectorAll('.jp-AnalystTurn');
        const python = turns[1]?.querySelector('[data-card="python"]');
        if (python?.textContent?.includes('counted 1') && !seen.includes('printed')) {
          seen.push('printed');
        }
      };
      new MutationObserver(look).observe(root, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true
      });
    });

    await ask(panel, 'count slowly');
    const status = panel.locator('.jp-AnalystConversation-status');
    await expect(status).toHaveAttribute('data-starting', 'kernel');
    await expect(status).toHaveText(KERNEL_STARTING);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'starting-kernel.png') });

    const python = turn(panel, 1).locator('[data-card="python"]');
    await expect(python).toContainText('counted 1');
    await expect(status).not.toHaveAttribute('data-starting', 'kernel');
    const seen = await page.evaluate(
      () => (window as unknown as { analystSeen: string[] }).analystSeen
    );
    expect(seen).toContain(`status: ${KERNEL_STARTING}`);
    expect(seen.indexOf(`status: ${KERNEL_STARTING}`)).toBeLessThan(seen.indexOf('printed'));

    await panel.getByRole('button', { name: 'Stop the turn' }).click();
    await expect(turn(panel, 1)).toHaveAttribute('data-status', 'interrupted');
  });
});

test.describe('the thread list', () => {
  // Read again every second while shown (the documented setting), rather than every 15 s.
  test.use({
    mockSettings: {
      ...galata.DEFAULT_SETTINGS,
      'jupyter-analyst:plugin': { threadListRefresh: 1 }
    }
  });

  test('shows a thread made elsewhere without a reload', async ({ page }) => {
    const panel = await openPanel(page, { widen: false });
    const list = panel.locator('.jp-AnalystThreadList');
    await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
    // A mark on the page: a reload would lose it.
    await page.evaluate(() => {
      (window as unknown as { analystMark: number }).analystMark = 42;
    });

    const made = await page.request.post('analyst/api/threads', {
      data: { source: 'sales', title: 'Made elsewhere' }
    });
    expect(made.status()).toBe(201);
    const { thread_id: threadId } = (await made.json()) as { thread_id: string };

    const row = list.locator(`[data-thread-id="${threadId}"]`);
    // Well within two intervals of the setting; the default 15 s would not make it.
    await expect(row).toBeVisible({ timeout: 5_000 });
    await expect(row).toContainText('Made elsewhere');
    expect(
      await page.evaluate(() => (window as unknown as { analystMark?: number }).analystMark)
    ).toBe(42);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'thread-list-refreshed.png') });
  });
});

test.describe('a link to a thread', () => {
  test('opens the panel on it from untrusted markdown, with no trust dialog', async ({ page }) => {
    const made = await page.request.post('analyst/api/threads', {
      data: { source: 'sales', title: 'Linked from a chat' }
    });
    const { thread_id: threadId } = (await made.json()) as { thread_id: string };
    // The Analyst persona's last line, rendered as a chat renders it: untrusted markdown.
    await page.notebook.createNew('linked.ipynb');
    await page.notebook.setCell(
      0,
      'markdown',
      `[Open in the Data analyst panel](#jupyter-analyst-thread=${threadId})`
    );
    await page.notebook.runCell(0);
    const link = page.locator('.jp-RenderedMarkdown a', {
      hasText: 'Open in the Data analyst panel'
    });
    await expect(link).toBeVisible();
    await link.click();

    const panel = page.locator('#jupyter-analyst-panel');
    await expect(panel.locator('.jp-AnalystConversation')).toHaveAttribute(
      'data-thread-id',
      threadId
    );
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    expect(new URL(page.url()).hash).toBe('');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'thread-link-opened.png') });
  });
});
