import { expect, test } from '@jupyterlab/galata';
import type { Request } from '@playwright/test';
import * as path from 'path';

import { DEMO_QUESTION, PANEL_ID, SCREENSHOTS, ask, newThread, openPanel } from './lab';

test.describe('the Data analyst panel', () => {
  test('a new thread on sales answers the demo question, streamed', async ({ page }) => {
    await page.sidebar.openTab(PANEL_ID);
    const panel = page.locator(`#${PANEL_ID}`);
    await expect(panel).toBeVisible();

    // The server's configured sources are offered; the demo has one.
    await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
    await panel.getByRole('button', { name: 'New thread', exact: true }).click();

    const prompt = panel.getByRole('textbox', { name: 'Ask about your data' });
    await prompt.fill('Revenue by region per month, with a chart');
    await prompt.press('Enter');

    // The turn's events arrive as it runs: its start is shown while it works...
    await expect(panel.locator('.jp-AnalystTurn-prompt')).toContainText(
      'Revenue by region per month, with a chart'
    );
    await expect(panel.locator('.jp-AnalystConversation-status')).toBeVisible();
    // ...then the answer and the turn's end.
    await expect(panel.locator('[data-card="answer"]')).toContainText(
      'Revenue by region per month is in the dataset revenue_by_region'
    );
    await expect(panel.locator('.jp-AnalystTurn')).toHaveAttribute('data-status', 'completed');
    // Each streamed stretch of text once: the first events of the blocks shown are distinct.
    const seqs = await panel
      .locator('[data-seq]')
      .evaluateAll(items => items.map(item => item.getAttribute('data-seq')));
    expect(new Set(seqs).size).toBe(seqs.length);
    await expect(panel.locator('.jp-AnalystConversation-status')).toHaveCount(0);

    await panel.screenshot({ path: path.join(SCREENSHOTS, 'first-answer.png') });
  });
});

test.describe('the panel in the dark theme', () => {
  test("follows JupyterLab's theme through its CSS variables", async ({ page }) => {
    await page.sidebar.openTab(PANEL_ID);
    const panel = page.locator(`#${PANEL_ID}`);
    await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
    // The panel's colours are the theme's own variables, so they change with the theme.
    const colours = () =>
      panel.locator('.jp-AnalystSidebar').evaluate(element => {
        const style = getComputedStyle(element);
        const root = getComputedStyle(document.body);
        return {
          background: style.backgroundColor,
          text: style.color,
          themeText: root.getPropertyValue('--jp-ui-font-color1').trim()
        };
      });
    const light = await colours();
    await page.theme.setDarkTheme();
    await expect.poll(async () => (await colours()).text).not.toBe(light.text);
    const dark = await colours();
    // Light text on a dark page: the dark theme's first font colour is light.
    const level = (rgb: string) => {
      const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? ['0', '0', '0']).map(Number);
      return (r + g + b) / 3;
    };
    expect(level(dark.text)).toBeGreaterThan(level(light.text));
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'dark-theme.png') });
    await page.theme.setLightTheme();
  });
});

test.describe('threads at the sidebar width JupyterLab opens with', () => {
  test('a thread is titled by its question, renamed, found, reopened after a reload, deleted', async ({
    page
  }) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    await expect(panel.locator('.jp-AnalystTurn')).toHaveAttribute('data-status', 'completed');

    // A reload returns to the thread that was open.
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    await expect(panel.locator('.jp-AnalystConversation')).toHaveAttribute(
      'data-thread-id',
      threadId
    );
    // The header fits the default width: the title, then the audit actions on one row.
    const header = panel.locator('.jp-AnalystConversation-header');
    expect((await header.boundingBox())?.height ?? 0).toBeLessThan(80);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'conversation-default-width.png') });
    await panel.locator('.jp-AnalystConversation-back').click();

    // Listed by its first question, then renamed in place.
    const row = panel.locator('.jp-AnalystThreadList-row', {
      has: page.locator(`[data-thread-id="${threadId}"]`)
    });
    await expect(row.locator('.jp-AnalystThreadList-title')).toHaveText(
      'Revenue by region per month, with a chart'
    );
    const name = `Regional revenue ${Date.now()}`;
    await row.hover();
    await row.getByRole('button', { name: /^Rename/ }).click();
    const title = panel.getByRole('textbox', { name: /^New title for/ });
    await title.fill(name);
    await title.press('Enter');
    await expect(
      panel.locator(`[data-thread-id="${threadId}"] .jp-AnalystThreadList-title`)
    ).toHaveText(name);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'threads-renamed.png') });

    // Found by a word of its title when the list is long enough to search.
    const search = panel.getByRole('searchbox', { name: 'Search threads by title or source' });
    if (await search.count()) {
      await search.fill(name.split(' ').pop() ?? name);
      await expect(panel.locator('.jp-AnalystThreadList-title')).toHaveText([name]);
      await panel.screenshot({ path: path.join(SCREENSHOTS, 'threads-search.png') });
    }

    // Deleted after a confirmation in the row; the server no longer knows it.
    const renamed = panel.locator('.jp-AnalystThreadList-row', {
      has: page.locator(`[data-thread-id="${threadId}"]`)
    });
    await renamed.hover();
    await renamed.getByRole('button', { name: `Delete “${name}”` }).click();
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'threads-confirm-delete.png') });
    await panel
      .getByRole('group', { name: `Delete “${name}”?` })
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect(panel.locator(`[data-thread-id="${threadId}"]`)).toHaveCount(0);
    const gone = await page.request.get(`/analyst/api/threads/${threadId}`);
    expect(gone.status()).toBe(404);
  });
});

test.describe('room to read', () => {
  test('the panel opens in the main area on the thread that was open, and goes back', async ({
    page
  }) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    await expect(panel.locator('.jp-AnalystTurn')).toHaveAttribute('data-status', 'completed');

    const narrow = (await panel.boundingBox())?.width ?? 0;
    // Where the panel is goes into the user's settings (saved, then a reload may come).
    const saved = (): Promise<Request> =>
      page.waitForRequest(
        r => r.method() === 'PUT' && r.url().includes('/api/settings/jupyter-analyst')
      );
    await Promise.all([
      saved(),
      panel.getByRole('button', { name: 'Open in the main area' }).click()
    ]);
    const main = page.locator('#jupyter-analyst-main');
    await expect(main.locator('.jp-AnalystConversation')).toHaveAttribute(
      'data-thread-id',
      threadId
    );
    await expect(main.locator('[data-card="answer"]')).toContainText(
      'Revenue by region per month is in the dataset'
    );
    const width = (await main.boundingBox())?.width ?? 0;
    expect(width).toBeGreaterThan(2 * narrow);
    // The narrow copy steps aside while the wide one is open.
    await expect(panel).toBeHidden();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'main-area.png') });

    // Where it was put, it is after a reload (the browser's own: galata's waits for the
    // Launcher to be the main area's current tab, and here the panel is).
    await page.evaluate(() => window.location.reload());
    await expect(main.locator('.jp-AnalystConversation')).toHaveAttribute(
      'data-thread-id',
      threadId
    );
    await expect(main).toBeVisible();

    await Promise.all([saved(), main.getByRole('button', { name: 'Back to the sidebar' }).click()]);
    await expect(main).toHaveCount(0);
    await expect(panel).toBeVisible();
    await page.reload();
    await expect(page.locator('#jp-main-dock-panel')).toBeVisible();
    await page.sidebar.openTab('jupyter-analyst-panel');
    await expect(panel).toBeVisible();
    await expect(main).toHaveCount(0);
  });
});
