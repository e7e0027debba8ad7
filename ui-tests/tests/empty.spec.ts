import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { DEMO_ANSWER, DEMO_QUESTION, SCREENSHOTS, newThread, openPanel } from './lab';

/**
 * A new thread at JupyterLab's default sidebar width: it lists the sample source's tables
 * with their row counts and the scripted model's questions; one of them, picked, fills the
 * prompt box, whose placeholder is whole, and is answered when sent; the model's name is whole.
 */
test('an empty thread offers its tables and questions that fill the prompt box', async ({
  page
}) => {
  const panel = await openPanel(page, { widen: false });
  await newThread(panel);

  const tables = panel.locator('.jp-AnalystEmpty-table');
  await expect(tables.first()).toBeVisible();
  await expect(panel.locator('.jp-AnalystEmpty-tables h3')).toHaveText('Tables in sales');
  await expect(tables.filter({ hasText: 'orders' })).toContainText(/\d[\d,]* rows/);
  const suggestions = panel.locator('.jp-AnalystEmpty-suggestion');
  await expect(suggestions.first()).toHaveText(DEMO_QUESTION);

  // The placeholder is not cut: it fits the box's lines at this width.
  const box = panel.getByRole('textbox', { name: 'Ask about your data' });
  const [scrolled, shown] = await box.evaluate((el: HTMLTextAreaElement) => {
    const value = el.value;
    el.value = el.placeholder;
    const sizes = [el.scrollHeight, el.clientHeight];
    el.value = value;
    return sizes;
  });
  expect(scrolled).toBeLessThanOrEqual(shown);

  // The model's name is read whole: wrapped, never cut or hidden behind an ellipsis.
  const model = panel.locator('.jp-AnalystModel-name');
  await expect(model).toContainText('scripted');
  const [wide, room] = await model.evaluate((el: HTMLElement) => [el.scrollWidth, el.clientWidth]);
  expect(wide).toBeLessThanOrEqual(room);
  await panel.screenshot({ path: path.join(SCREENSHOTS, 'empty-thread.png') });

  await suggestions.first().click();
  await expect(box).toHaveValue(DEMO_QUESTION);
  await expect(box).toBeFocused();
  await box.press('Enter');
  await expect(panel.locator('.jp-AnalystTurn').first()).toHaveAttribute(
    'data-status',
    'completed'
  );
  await expect(panel.locator('[data-card="answer"]')).toContainText(DEMO_ANSWER);
  await expect(panel.locator('.jp-AnalystEmpty')).toHaveCount(0);
});
