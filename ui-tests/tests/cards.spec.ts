import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { ask, DEMO_QUESTION, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * The cards at JupyterLab's default sidebar width, as people first see them: a dataset's
 * preview formatted as pandas shows a frame (numbers right-aligned, dates without their
 * midnight, one line a row), and a refused step that says why once and offers no cell.
 */

test.describe('the cards at the default sidebar width', () => {
  test('a preview table reads as pandas shows it; a refused DELETE offers no cell', async ({
    page
  }) => {
    const panel = await openPanel(page, { widen: false });
    const width = (await panel.boundingBox())?.width ?? 0;
    expect(width).toBeGreaterThan(200);
    expect(width).toBeLessThan(320);
    await newThread(panel);
    await ask(panel, 'Tidy up the orders, then a summary per region');
    const turn = panel.locator('.jp-AnalystTurn').first();
    await expect(turn).toHaveAttribute('data-status', 'completed');

    const [refused, summary] = await turn.locator('[data-card="sql"]').all();
    await expect(refused).toHaveAttribute('data-status', /^(refused|error)$/);
    // Said once: the guard's message and hint to the model do not say it again.
    await expect(refused.locator('.jp-AnalystCard-error')).toHaveText(
      'Refused: the query would change data (only read-only queries run)'
    );
    await expect(refused).not.toContainText('DELETE is not allowed');
    await expect(refused).not.toContainText('only one read-only SELECT');
    await expect(refused.locator('.jp-AnalystCard-header')).toContainText('Step 1 · SQL');
    await expect(refused.locator('.jp-AnalystCard-header .jp-AnalystBadge')).toHaveText('Refused');
    await expect(refused.getByRole('button', { name: 'Insert as cell' })).toHaveCount(0);

    await expect(summary).toHaveAttribute('data-status', 'ok');
    await expect(summary.getByRole('button', { name: 'Insert as cell' })).toBeVisible();
    const table = summary.locator('.jp-AnalystCard-table table.jp-AnalystTable');
    await expect(table.locator('tbody tr')).toHaveCount(5);
    await expect(table.locator('thead th')).toHaveText([
      'region',
      'orders',
      'total',
      'first_month',
      'note'
    ]);
    const cells = table.locator('tbody tr').first().locator('td');
    await expect(cells.nth(0)).toHaveText('Central');
    await expect(cells.nth(1)).toHaveText(/^\d+$/);
    // A float to its sensible precision: no 8684.080000000002.
    await expect(cells.nth(2)).toHaveText(/^\d+\.\d{1,2}$/);
    // A timestamp at midnight is a date.
    await expect(cells.nth(3)).toHaveText(/^2025-\d{2}-01$/);
    expect(await cells.nth(2).evaluate(td => getComputedStyle(td).textAlign)).toBe('right');
    // The long note is one clipped line, whole on hover.
    const note = cells.nth(4);
    await expect(note).toHaveAttribute('title', /^Orders of the Central region, .* as booked$/);
    expect(await note.evaluate(td => td.scrollWidth > td.clientWidth)).toBe(true);
    const rows = await table
      .locator('tbody tr')
      .evaluateAll(trs => trs.map(tr => tr.getBoundingClientRect().height));
    expect(Math.max(...rows)).toBeLessThan(30);

    // Wider than the card: the table scrolls sideways and a cue counts what is out of sight;
    // the query's long lines stay whole, scrolled, with a cue too.
    const cue = summary.locator('.jp-AnalystCard-table .jp-AnalystWideCue');
    await expect(cue).toHaveText(/^\d+ more columns? → scroll sideways$/);
    await expect(summary.locator('.jp-AnalystCode-frame .jp-AnalystWideCue')).toHaveText(
      'Wider than the card → scroll sideways'
    );
    const scroller = summary.locator('.jp-AnalystTable-scroll');
    await scroller.evaluate(node => node.scrollTo({ left: node.scrollWidth }));
    await expect(cue).toHaveCount(0);
    await scroller.evaluate(node => node.scrollTo({ left: 0 }));

    // The step's dataset offers its rows as CSV beside Download, inside the card at this width.
    const dataset = summary.locator('[data-card="artifact"][data-artifact-type="dataset"]');
    const csv = dataset.getByRole('link', { name: /as CSV$/ });
    await expect(csv).toHaveText('CSV');
    await expect(csv).toHaveAttribute('href', /\/content\?format=csv$/);
    await expect(csv).toHaveAttribute('download', /\.csv$/);
    const card = (await dataset.boundingBox())!;
    const link = (await csv.boundingBox())!;
    expect(link.x + link.width).toBeLessThanOrEqual(card.x + card.width);
    await dataset.screenshot({ path: path.join(SCREENSHOTS, 'default-width-dataset.png') });

    await summary.locator('.jp-AnalystCard-table').scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'default-width-panel.png') });
    await summary.screenshot({ path: path.join(SCREENSHOTS, 'default-width-table.png') });
    await refused.screenshot({ path: path.join(SCREENSHOTS, 'default-width-refused.png') });
  });

  test('a chart opens at full size over the page, and Escape closes it', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page, { widen: false });
    await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    const chart = panel.locator('[data-card="chart"]').first();
    const thumb = chart.locator('.jp-AnalystPreview img');
    await expect(thumb).toBeVisible();
    const small = (await thumb.boundingBox())!;

    // What the step printed keeps its lines, scrolled sideways rather than wrapped.
    const printed = panel.locator('.jp-AnalystCard-stdout').first();
    const text = (await printed.textContent()) ?? '';
    expect(await printed.evaluate(pre => getComputedStyle(pre).whiteSpace)).toBe('pre');
    const lineHeight = await printed.evaluate(pre => parseFloat(getComputedStyle(pre).lineHeight));
    const lines = text.replace(/\n$/, '').split('\n').length;
    const height = await printed.evaluate(pre => pre.scrollHeight);
    expect(height).toBeLessThan((lines + 1) * lineHeight + 16);

    const enlarge = chart.getByRole('button', { name: /^Enlarge / });
    await expect(enlarge).toBeVisible();
    await enlarge.click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    const large = dialog.locator('img');
    await expect(large).toBeVisible();
    const box = (await large.boundingBox())!;
    // Drawn at 8 x 4 inches: far wider than the sidebar's thumbnail, at its own proportions.
    expect(box.width).toBeGreaterThan(3 * small.width);
    expect(Math.abs(box.width / box.height - small.width / small.height)).toBeLessThan(0.05);
    await expect(dialog.getByRole('button', { name: 'Close' })).toBeFocused();
    const shot = path.join(SCREENSHOTS, 'chart-full-size.png');
    await page.screenshot({ path: shot });
    await testInfo.attach('chart-full-size', { path: shot, contentType: 'image/png' });

    await page.keyboard.press('Escape');
    await expect(dialog).toHaveCount(0);
    await expect(enlarge).toBeFocused();
    // A click on the thumbnail opens it too.
    await thumb.click();
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toHaveCount(0);
  });
});
