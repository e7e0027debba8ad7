import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { SCREENSHOTS, newThread, openPanel } from '../tests/lab';

/**
 * A server with no model: the panel says so, Ask is off with the reason, and a question
 * typed meanwhile is kept (never cleared by a send that cannot be answered).
 */
test('with no model configured, Ask is off and says why, and the typed question stays', async ({
  page
}) => {
  const panel = await openPanel(page);
  await newThread(panel);
  const box = panel.getByRole('textbox', { name: 'Ask about your data' });
  await box.fill('Revenue by region');
  const ask = panel.getByRole('button', { name: 'Ask', exact: true });
  await expect(ask).toBeDisabled();
  await expect(panel.locator('.jp-AnalystBanner-noModel')).toContainText('No model is configured');
  // The fix is the banner's: under the prompt, only that Ask is off.
  await expect(panel.locator('.jp-AnalystPrompt-unavailable')).toHaveText(
    'Ask is off until the server has a model (see above).'
  );
  const fix = ((await panel.locator('.jp-AnalystBanner-hint').textContent()) ?? '').replace(
    /^To fix: /,
    ''
  );
  expect(fix.length).toBeGreaterThan(10);
  expect(((await panel.textContent()) ?? '').split(fix).length - 1).toBe(1);
  await box.press('Enter');
  await expect(box).toHaveValue('Revenue by region');
  // The reason takes a line of its own: the box keeps its width.
  const [boxWidth, panelWidth] = [
    (await box.boundingBox())!.width,
    (await panel.boundingBox())!.width
  ];
  expect(boxWidth).toBeGreaterThan(panelWidth / 2);
  await expect(panel.locator('.jp-AnalystTurn')).toHaveCount(0);
  await panel.screenshot({ path: path.join(SCREENSHOTS, 'no-model.png') });
});
