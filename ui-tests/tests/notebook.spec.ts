import { expect, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { ask, DEMO_QUESTION, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * Into the notebook, in a real JupyterLab with the scripted model (data/lab_script.json):
 * "Insert as cell" on the demo's SQL card puts a runnable cell into the open notebook;
 * the thread's audit notebook opens in a tab and verifies; the artifacts view lists,
 * filters and previews the thread's inventory, naming each entry and its step as the cards do.
 */

/** A new thread on the demo's source with the demo turn answered; its id. */
async function demoThread(panel: Locator): Promise<string> {
  const threadId = await newThread(panel);
  await ask(panel, DEMO_QUESTION);
  await expect(panel.locator('.jp-AnalystTurn').first()).toHaveAttribute(
    'data-status',
    'completed'
  );
  return threadId;
}

/** A step's cell as "Insert as cell" writes it: who wrote it, then the SQL step. */
const MODEL_WRITTEN_STEP =
  /^# Written by a language model \(jupyter-analyst\); it runs here, outside the sandbox: read it first\.\nrevenue_by_region = analyst\.sql\("""/;

test.describe('into the notebook', () => {
  test('"Insert as cell" puts the SQL step into the open notebook, and it runs to its DataFrame', async ({
    page
  }) => {
    const panel = await openPanel(page);
    await demoThread(panel);
    const sql = panel.locator('[data-card="sql"]').first();
    const insert = sql.getByRole('button', { name: 'Insert as cell' });

    // No notebook open: the action waits for one, and says so.
    await expect(insert).toBeDisabled();
    await expect(insert).toHaveAttribute('title', 'Open a notebook to insert this step into it');
    await sql.screenshot({ path: path.join(SCREENSHOTS, 'insert-no-notebook.png') });

    await page.notebook.createNew('analysis.ipynb');
    await page.notebook.setCell(0, 'code', 'import pandas as pd');
    await expect(insert).toBeEnabled();
    await expect(insert).toHaveAttribute('title', /into analysis\.ipynb, below its active cell/);
    await insert.click();
    await expect(sql.locator('.jp-AnalystStepActions-note')).toHaveText(
      'Inserted into analysis.ipynb (cell 3)'
    );

    // The notebook never connected: a set-up cell first, then the step's cell, below cell 1.
    const notebook = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    expect(await page.notebook.getCellTextInput(1)).toContain('analyst.connect(');
    const step = await page.notebook.getCellTextInput(2);
    // The step, under the line that says the model wrote it and that it runs unsandboxed.
    expect(step).toMatch(MODEL_WRITTEN_STEP);
    expect(step).toMatch(/date_trunc\('month'/i);
    // The step's cell is the active one.
    await expect(notebook.locator('.jp-Cell').nth(2)).toHaveClass(/jp-mod-active/);

    await page.notebook.run();
    const output = notebook.locator('.jp-Cell').nth(2).locator('.jp-OutputArea');
    // The runtime helper's line (the dataset's name, rows and fingerprint), then the DataFrame.
    await expect(output).toContainText('revenue_by_region: 60 rows, sha256:');
    await expect(output.locator('table')).toBeVisible();
    await expect(output.locator('table')).toContainText('Central');
    await expect(output.locator('table thead')).toContainText('region');

    // A second insert: the notebook now connects above, so no second set-up cell.
    await insert.click();
    await expect(notebook.locator('.jp-Cell')).toHaveCount(4);
    expect(await page.notebook.getCellTextInput(3)).toMatch(MODEL_WRITTEN_STEP);

    await page.screenshot({ path: path.join(SCREENSHOTS, 'insert-as-cell.png') });
  });

  test('"Open audit notebook" opens the thread\'s notebook in a tab; "Export" links it; "Verify" shows all matched', async ({
    page
  }) => {
    // Verify re-runs the notebook in a kernel of its own: seconds more than the others.
    test.setTimeout(240 * 1000);
    const panel = await openPanel(page);
    const threadId = await demoThread(panel);
    const actions = panel.locator('.jp-AnalystThreadActions');
    const file = new RegExp(`-${threadId.slice(-8)}\\.ipynb$`);

    await actions.getByRole('button', { name: 'Open audit notebook' }).click();
    const tab = page.locator('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current');
    await expect(tab).toHaveText(file);
    const audit = page.locator('.jp-NotebookPanel:not(.lm-mod-hidden)');
    const summary = audit.locator('.jp-MarkdownOutput').first();
    await expect(summary).toContainText('Audit summary');
    await expect(summary).toContainText(threadId);
    // The data version the thread's turn read, not "not recorded".
    await expect(summary).not.toContainText('not recorded');
    await expect(
      audit.locator('.jp-CodeCell').filter({ hasText: 'analyst.sql(' }).first()
    ).toBeVisible();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'audit-notebook.png') });

    // Its tab closed (disposed, without the close's dialogs), then exported: the export's
    // link opens it again.
    await page.evaluate(() => {
      for (const widget of Array.from(window.jupyterapp.shell.widgets('main'))) {
        widget.dispose();
      }
    });
    await expect(
      page.locator('#jp-main-dock-panel .lm-TabBar-tab').filter({ hasText: file })
    ).toHaveCount(0);
    await actions.getByRole('button', { name: 'Export' }).click();
    const link = actions.locator('.jp-AnalystThreadActions-path');
    await expect(link).toHaveText(new RegExp(`^analyst/.*-${threadId.slice(-8)}\\.ipynb$`));
    await expect(actions).toContainText('Exported');
    await actions.screenshot({ path: path.join(SCREENSHOTS, 'export.png') });
    await link.click();
    await expect(tab).toHaveText(file);

    await actions.getByRole('button', { name: 'Verify' }).click();
    // A busy state while the notebook re-runs; the buttons wait.
    await expect(actions.locator('progress')).toBeVisible();
    await expect(actions.getByRole('button', { name: 'Verify' })).toBeDisabled();
    const report = actions.locator('.jp-AnalystVerify');
    await expect(report).toBeVisible({ timeout: 120 * 1000 });
    await expect(report).toHaveAttribute('data-ok', 'true');
    await expect(report.locator('.jp-AnalystVerify-verdict')).toContainText(
      /All \d+ artifacts matched/
    );
    const rows = report.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThanOrEqual(2);
    for (const row of await rows.all()) {
      await expect(row).toHaveAttribute('data-status', 'matched');
      // Expected and actual short fingerprints, the same.
      const [expected, actual] = await row.locator('code').allTextContents();
      expect(expected).toMatch(/^[0-9a-f]{12}$/);
      expect(actual).toBe(expected);
    }
    await expect(report.locator('tbody')).toContainText('revenue_by_region');
    await expect(actions.getByRole('button', { name: 'Verify' })).toBeEnabled();
    await actions.screenshot({ path: path.join(SCREENSHOTS, 'verify-matched.png') });
  });

  test('the artifacts view lists the dataset and the chart, filters by type and previews the chart', async ({
    page
  }) => {
    const panel = await openPanel(page);
    const threadId = await demoThread(panel);
    await panel.getByRole('tab', { name: 'Artifacts' }).click();
    const view = panel.locator('.jp-AnalystArtifacts');
    await expect(view).toBeVisible();
    // The conversation's body makes way for it.
    await expect(panel.locator('.jp-AnalystConversation-body')).toBeHidden();

    const reply = await page.request.get(`analyst/api/threads/${threadId}/artifacts`);
    const inventory = (
      (await reply.json()) as { artifacts: { artifact_id: string; type: string }[] }
    ).artifacts;
    const items = view.locator('.jp-AnalystInventory-item');
    await expect(items).toHaveCount(inventory.length);
    const dataset = view.locator('.jp-AnalystInventory-item[data-artifact-type="dataset"]');
    await expect(dataset).toContainText('revenue_by_region');
    // Named as the cards name them; the ids and the fingerprint behind Details.
    await expect(dataset.locator('.jp-AnalystInventory-item-step')).toHaveText('step 2');
    const chart = view.locator('.jp-AnalystInventory-item[data-artifact-type="image"]').first();
    await expect(chart).toBeVisible();
    await expect(chart.locator('.jp-AnalystInventory-item-step')).toHaveText('step 3');
    for (const item of await items.all()) {
      await expect(item.locator('.jp-AnalystInventory-item-head')).not.toContainText('call_');
      await expect(item.locator('.jp-AnalystInventory-item-facts')).not.toContainText(
        /call_|sha256|[0-9a-f]{12}/
      );
      await expect(item.locator('details.jp-AnalystDetails')).not.toHaveAttribute('open', '');
    }
    await dataset.locator('details.jp-AnalystDetails > summary').click();
    await expect(dataset.locator('details.jp-AnalystDetails dd')).toContainText([
      /^call_/,
      /^art_/,
      /^sha256:[0-9a-f]{64}$/
    ]);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'artifacts.png') });

    // Filter: images only.
    await view.getByRole('combobox').selectOption('image');
    await expect(items).toHaveCount(inventory.filter(a => a.type === 'image').length);
    await expect(
      view.locator('.jp-AnalystInventory-item[data-artifact-type="dataset"]')
    ).toHaveCount(0);

    // The chart's preview, rendered by rendermime as a notebook shows an image.
    await chart.getByRole('button', { name: 'Preview' }).click();
    const image = chart.locator('.jp-AnalystMimeView img');
    await expect(image).toBeVisible();
    await expect
      .poll(() => image.evaluate(img => (img as HTMLImageElement).naturalWidth))
      .toBeGreaterThan(0);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'artifacts-chart-preview.png') });

    // Download: the bytes through the API client, saved under the artifact's name.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      chart.getByRole('button', { name: 'Download' }).click()
    ]);
    expect(download.suggestedFilename()).toMatch(/\.png$/);

    // All types again, and the dataset's preview is a table.
    await view.getByRole('combobox').selectOption('');
    await dataset.getByRole('button', { name: 'Preview' }).click();
    await expect(dataset.locator('table.jp-AnalystTable')).toContainText('Central');
  });
});

test.describe('the artifacts view at the default width', () => {
  test('names the dataset, the chart and their steps as the cards do, ids behind Details; CSV downloads the rows', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page, { widen: false });
    await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    await expect(panel.locator('.jp-AnalystTurn').first()).toHaveAttribute(
      'data-status',
      'completed'
    );
    await panel.getByRole('tab', { name: 'Artifacts' }).click();
    const view = panel.locator('.jp-AnalystArtifacts');
    const dataset = view.locator('.jp-AnalystInventory-item[data-artifact-type="dataset"]');
    const chart = view.locator('.jp-AnalystInventory-item[data-artifact-type="image"]').first();
    await expect(dataset.locator('.jp-AnalystInventory-item-name')).toHaveText('revenue_by_region');
    await expect(dataset.locator('.jp-AnalystInventory-item-step')).toHaveText('step 2');
    await expect(chart.locator('.jp-AnalystInventory-item-step')).toHaveText('step 3');
    // What shows (not the closed details): no call id, no fingerprint.
    await expect(view).not.toContainText(/call_|sha256|[0-9a-f]{12}/, { useInnerText: true });

    await chart.locator('details.jp-AnalystDetails > summary').click();
    await expect(chart.locator('details.jp-AnalystDetails dt')).toHaveText([
      'Step id',
      'Artifact id',
      'Fingerprint'
    ]);
    await expect(chart.locator('details.jp-AnalystDetails dd').first()).toHaveText(/^call_/);

    // CSV beside Download on the dataset (not on the chart), inside the item at this width:
    // the rows converted by the server, saved as <name>.csv, its header the dataset's columns.
    await expect(chart.getByRole('button', { name: /as CSV$/ })).toHaveCount(0);
    const csvButton = dataset.getByRole('button', { name: 'Download revenue_by_region as CSV' });
    await expect(csvButton).toHaveText('CSV');
    const item = (await dataset.boundingBox())!;
    const button = (await csvButton.boundingBox())!;
    expect(button.x + button.width).toBeLessThanOrEqual(item.x + item.width);
    const [download] = await Promise.all([page.waitForEvent('download'), csvButton.click()]);
    expect(download.suggestedFilename()).toBe('revenue_by_region.csv');
    const artifactId = (await dataset.getAttribute('data-artifact-id'))!;
    const preview = (await (
      await page.request.get(`analyst/api/artifacts/${artifactId}/preview`)
    ).json()) as { metadata: { columns: { name: string }[]; rows: number } };
    const text = fs.readFileSync((await download.path())!, 'utf-8');
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe(preview.metadata.columns.map(c => `"${c.name}"`).join(','));
    expect(lines).toHaveLength(preview.metadata.rows + 1);
    const shot = path.join(SCREENSHOTS, 'artifacts-default-width.png');
    await panel.screenshot({ path: shot });
    await testInfo.attach('artifacts-default-width', { path: shot, contentType: 'image/png' });
  });
});
