import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { PANEL_ID, SCREENSHOTS } from './lab';

test.describe('the Data analyst panel', () => {
  test('a new thread on sales answers the demo question, streamed', async ({ page }) => {
    await page.sidebar.openTab(PANEL_ID);
    const panel = page.locator(`#${PANEL_ID}`);
    await expect(panel).toBeVisible();

    // The server's configured sources are offered; the demo has one.
    await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
    await panel.getByRole('button', { name: 'New thread' }).click();

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
