/**
 * What the browser tests share: the panel, where screenshots go, and the demo's question
 * (answered by the scripted model's data/lab_script.json).
 */

import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as path from 'path';

/** The panel's widget id (src/widgets/AnalystPanel.tsx): its sidebar tab is `[data-id="<id>"]`. */
export const PANEL_ID = 'jupyter-analyst-panel';
/** Each state's screenshot (git-ignored; the README's picture is in docs/images). */
export const SCREENSHOTS = path.join(__dirname, '..', 'screenshots');
export const DEMO_QUESTION = 'Revenue by region per month, with a chart';
export const DEMO_ANSWER = 'Revenue by region per month is in the dataset';

/**
 * The panel opened in the right sidebar, wide enough for its cards; at JupyterLab's default
 * width (as people first see it) when `widen` is false.
 */
export async function openPanel(
  page: IJupyterLabPageFixture,
  { widen = true }: { widen?: boolean } = {}
): Promise<Locator> {
  await page.sidebar.openTab(PANEL_ID);
  if (widen) {
    await page.sidebar.setWidth(560, 'right');
  }
  const panel = page.locator(`#${PANEL_ID}`);
  await expect(panel).toBeVisible();
  return panel;
}

/** A new thread on the demo's source; its id. */
export async function newThread(panel: Locator): Promise<string> {
  await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
  // Exactly: a thread never asked anything is listed as "New thread" too.
  await panel.getByRole('button', { name: 'New thread', exact: true }).click();
  const conversation = panel.locator('.jp-AnalystConversation');
  await expect(conversation).toBeVisible();
  return (await conversation.getAttribute('data-thread-id')) ?? '';
}

/** A prompt typed into the thread's box and sent with Enter. */
export async function ask(panel: Locator, prompt: string): Promise<void> {
  const box = panel.getByRole('textbox', { name: 'Ask about your data' });
  await box.fill(prompt);
  await box.press('Enter');
}
